"""NamedReads: a pipeline's replies read by name, on real Redis and on fakeredis."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest


def test_named_reads_hand_back_each_reply_by_its_name(any_repo):
    any_repo.r.rpush("l", "a", "b")
    reads = any_repo.posts.reads()
    reads.lrange("items", "l", 0, -1)
    reads.llen("length", "l")
    reads.get("missing", "nothing-here")

    assert reads.execute() == {"items": [b"a", b"b"], "length": 2, "missing": None}
    assert any_repo.posts.reads().execute() == {}


def test_a_name_read_twice_in_one_pipeline_is_refused(any_repo):
    reads = any_repo.posts.reads()
    reads.get("x", "a")

    with pytest.raises(ValueError):
        reads.get("x", "b")


# The read seam's modules read every reply by a typed handle (base.Reply), never by a
# string: a misspelt string is a KeyError at run time and its reply's shape is unchecked;
# a handle's name is written once and mypy checks its shape. Their reads objects are named
# as READS says, their replies as REPLIES says (checked too: a new name cannot slip past).
TYPED_MODULES = (
    "social/repository/read/reader.py",
    "social/repository/read/sources.py",
    "social/repository/read/account_reader.py",
)
READS = {"reads", "later"}  # NamedReads
REPLIES = {"got", "read", "sets", "later", "then", "replies"}  # Replies, and PageRead's
ACCESSORS = {"get", "count", "value", "members", "scored", "scores_if_read", "fields", "hash"}


def _named_by_string(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def _root(node: ast.expr) -> str:
    """The name an expression ends in: `got` for got, `read.then` -> `then`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def string_named_reads(source: str) -> list[str]:
    """Return each read of source queued or taken by a string name, in order, with its line:
    a call on a reads object whose first argument is a str (or f-string), an accessor call
    or a subscript of replies with one, `"name" in replies`; and each reads or replies
    object whose name READS and REPLIES do not know (a parameter annotated NamedReads,
    Replies or Got, or a variable given self.reads(), *.execute() or a step's replies)."""
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(ast.parse(source)):
        problem = ""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            receiver, method = _root(node.func.value), node.func.attr
            if _named_by_string(node.args[0]) and (
                receiver in READS or (receiver in REPLIES and method in ACCESSORS)
            ):
                problem = ast.unparse(node)
        elif isinstance(node, ast.Subscript) and _root(node.value) in REPLIES:
            if _named_by_string(node.slice):
                problem = ast.unparse(node)
        elif isinstance(node, ast.Compare) and _named_by_string(node.left):
            if any(_root(c) in REPLIES for c in node.comparators):
                problem = ast.unparse(node)
        elif isinstance(node, ast.arg) and node.annotation is not None:
            kind = ast.unparse(node.annotation)
            if "NamedReads" in kind and node.arg not in READS:
                problem = f"reads object named {node.arg}"
            elif ("Got" in kind or "Replies" in kind) and node.arg not in REPLIES:
                problem = f"replies named {node.arg}"
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = _root(node.targets[0]), node.value
            called = _root(value.func) if isinstance(value, ast.Call) else ""
            if called == "reads" and target not in READS:
                problem = f"reads object named {target}"
            elif (called == "execute" or isinstance(value, ast.Yield)) and target not in REPLIES:
                problem = f"replies named {target}"
        if problem:
            line = getattr(node, "lineno", 0)
            found.append((line, getattr(node, "col_offset", 0), f"line {line}: {problem}"))
    return [text for _, _, text in sorted(found)]


@pytest.mark.parametrize("module", TYPED_MODULES)
def test_the_read_seam_reads_every_reply_by_a_typed_handle(module):
    source = (Path(__file__).resolve().parent.parent / module).read_text(encoding="utf-8")

    assert string_named_reads(source) == []


def test_the_check_finds_each_kind_of_string_named_read():
    source = textwrap.dedent(
        """
        def page(self, reads: NamedReads, got: Got, more: Replies) -> None:
            reads.get("version", keys.visibility_version())
            reads.lrange(f"own:{author_id}", key, 0, 10)
            reads.get(VERSION, keys.visibility_version())
            got["ids"], got.members("ids"), got.get("liked"), read.then["open"]
            "ids" in got
            got[IDS], got.get(LIKED), IDS in got, h.get("username"), h["username"]
            pipe = self.reads()
            answer = pipe.execute()
        """
    )

    assert [found.split(": ", 1)[1] for found in string_named_reads(source)] == [
        "replies named more",
        "reads.get('version', keys.visibility_version())",
        "reads.lrange(f'own:{author_id}', key, 0, 10)",
        "got['ids']",
        "got.members('ids')",
        "got.get('liked')",
        "read.then['open']",
        "'ids' in got",
        "reads object named pipe",
        "replies named answer",
    ]
