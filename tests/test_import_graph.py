"""No import circle among the site's modules, type-only imports counted: every import of a
module of social/, at the top, under TYPE_CHECKING or inside a function, is an edge."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def modules(package: str = "social") -> dict[str, Path]:
    """Return every module of package, by dotted name (a package by its own name)."""
    found = {}
    for path in (ROOT / package).rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Return the modules of known that module name imports (a name from a package counts
    as its module when it is one)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in known and t != name)
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            if component:
                found.append(sorted([node, *component]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_of_the_site_imports_itself_round_a_circle():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}

    assert (
        len(graph) > 100
        and "social.repository.clients.oauth" in graph["social.repository.read.api_reads"]
    )
    assert circles(graph) == []


def test_a_circle_is_found_even_when_one_edge_is_only_for_types():
    graph = {"audit": {"base"}, "base": {"cache"}, "cache": {"oauth"}, "oauth": {"audit"}}
    assert circles(graph) == [["audit", "base", "cache", "oauth"]]
    assert circles({**graph, "cache": set()}) == []


# The stores the write path runs through (a local post's or, later, a remote one's): each
# queues its writes on its own pipeline, and none may sit above the read path.
WRITE_STORES = (
    "social.repository.posts.posting",
    "social.repository.posts.reposts",
    "social.repository.posts.likes",
    "social.repository.posts.fanout",
    "social.repository.posts.attachments",
    "social.repository.relations.graph",
    "social.repository.relations.blocks",
    "social.repository.targets",
    "social.repository.live.bus",
    "social.repository.live.notification_events",
    "social.repository.live.notification_writes",
)
READ = "social.repository.read."
# What of the read package a write store may import: the one policy (visibility: pure
# functions, so a write refuses what a page would hide by the same rule; relations_of:
# where a reader's or an actor's Relations come from, with the list policies of sources
# it names) and the front page's version (front: a counter a write moves on its own
# pipeline). Never a reader: reader, pages, loading, the API's and search's reads, ...
WRITES_MAY_REACH = {READ + name for name in ("visibility", "relations_of", "sources", "front")}
# The live tier's readers: the notifications page and the listeners' decisions.
LIVE_READERS = {"social.repository.live.notifications", "social.repository.live.live"}


def reached(graph: dict[str, set[str]], start: str) -> set[str]:
    """Return every module start imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for other in graph[todo.pop()] - seen:
            seen.add(other)
            todo.append(other)
    return seen


def test_no_write_store_imports_a_reader_directly_or_through_another_module():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}

    assert set(graph) >= set(WRITE_STORES) | WRITES_MAY_REACH
    assert "social.repository.live.notification_writes" in graph["social.repository.posts.likes"]
    for store in WRITE_STORES:
        direct = {m for m in graph[store] if m.startswith(READ)}
        assert direct <= WRITES_MAY_REACH, store
        found = reached(graph, store)
        assert not {m for m in found if m.startswith(READ)} - WRITES_MAY_REACH, store
        assert not found & LIVE_READERS, store


def test_reached_follows_imports_through_other_modules():
    graph = {"likes": {"writes"}, "writes": {"bus"}, "bus": set(), "reader": {"bus"}}
    assert reached(graph, "likes") == {"writes", "bus"}
    assert "reader" not in reached(graph, "likes")
