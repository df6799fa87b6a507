"""OAuth scopes as Mastodon spells them, and which granted scopes cover which.

A token holds top-level scopes (`read`, `write`, `follow`, `push`, `profile`) and/or
sub-scopes (`read:statuses`...). An endpoint names the one sub-scope it needs; a token
covers it with that sub-scope or its top-level scope, and `follow` (Mastodon's legacy
scope) covers the follow, block and mute sub-scopes. `push` is accepted (clients ask for
it by default) but nothing here needs it: the site sends no Web Push.
"""

from __future__ import annotations

from collections.abc import Iterable

READ = (
    "accounts", "blocks", "bookmarks", "favourites", "filters", "follows", "lists", "mutes",
    "notifications", "search", "statuses",
)  # fmt: skip
WRITE = (
    "accounts", "blocks", "bookmarks", "conversations", "favourites", "filters", "follows",
    "lists", "media", "mutes", "notifications", "reports", "statuses",
)  # fmt: skip
TOP = ("read", "write", "follow", "push", "profile")
FOLLOW_COVERS = frozenset(
    ("read:blocks", "write:blocks", "read:follows", "write:follows", "read:mutes", "write:mutes")
)
KNOWN = frozenset((*TOP, *(f"read:{name}" for name in READ), *(f"write:{name}" for name in WRITE)))
DEFAULT = ("read",)  # what a client gets when it asks for none (Mastodon's default)
MAX_SCOPES = 40  # a scope string holds at most this many


def parse(text: str | None) -> tuple[str, ...] | None:
    """Return the scopes in a space- (or, as some clients send, plus- or comma-)
    separated string, in order and once each; None when one is unknown or there are too
    many. An empty string gives ()."""
    if text is None:
        return ()
    names = text.replace("+", " ").replace(",", " ").split()
    if len(names) > MAX_SCOPES or any(name not in KNOWN for name in names):
        return None
    return tuple(dict.fromkeys(names))


def covers(granted: Iterable[str], wanted: str) -> bool:
    """Whether scopes granted include wanted (a top-level scope or a sub-scope)."""
    held = set(granted)
    if wanted in held:
        return True
    top = wanted.partition(":")[0]
    if top != wanted and top in held:
        return True
    return "follow" in held and wanted in FOLLOW_COVERS


def within(granted: Iterable[str], asked: Iterable[str]) -> bool:
    """Whether every scope asked for is covered by those granted (an app's registration
    bounds what its tokens may hold)."""
    held = tuple(granted)
    return all(covers(held, scope) for scope in asked)
