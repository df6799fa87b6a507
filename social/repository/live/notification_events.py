"""Notification events: their kinds, the one entry format (`<kind>|<actor>|<post>|<time>`
on keys.notifications), its one parser (event_from) and the one grouping (grouped: likes
and reposts per post, follows per day, replies and mentions each alone). No Redis here:
the writes are notification_writes.py's, the reads notifications.py's."""

from __future__ import annotations

import zlib
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from ..base import (
    as_int,
    s,
)

# The kinds of notification, as stored, and the type Mastodon's API names each (a reply
# names the author it answers: a mention there). The one list: the API's types, filters
# and entities are read from it.
MASTODON_TYPES = {
    "follow": "follow",
    "like": "favourite",
    "reply": "mention",
    "mention": "mention",
    "repost": "reblog",
}
KINDS = tuple(MASTODON_TYPES)
# The kinds whose events group (a like's or repost's by post, a follow's by day:
# group_key); a reply or a mention is a post of its own, shown alone.
GROUPED = ("like", "repost", "follow")
NAMES_SHOWN = 3  # actors named in a group; the rest are counted ("and 3 others")


def event_key(kind: str, actor: int, post_id: int | None) -> str:
    """What an event is, whenever it happened: `<kind>|<actor>|<post>` (no post: empty)."""
    return f"{kind}|{actor}|{post_id or ''}"


def entry_of(kind: str, actor: int, post_id: int | None, ts: int) -> str:
    """A notifications:<id> entry, `<kind>|<actor>|<post>|<time>` (read by event_from)."""
    return f"{event_key(kind, actor, post_id)}|{ts}"


@dataclass(frozen=True)
class Event:
    """One notification as stored: kind, who, about which post (a like's or repost's: the
    reader's post; a reply's or mention's: the reply or the mention), when; and its id
    (its time and a checksum of the entry: stable, ordered by time to the second)."""

    id: int
    kind: str
    actor_id: int
    post_id: int | None
    time: int


def event_from(raw: bytes | str) -> Event | None:
    """Decode one notifications:<id> entry (entry_of), or None for junk: the one parser,
    for the page, the API, the markers and the live bus."""
    text = s(raw) or ""
    parts = text.split("|")
    if len(parts) != 4:
        return None
    kind, actor, post, ts = parts
    actor_id, when = as_int(actor), as_int(ts)
    if kind not in KINDS or actor_id is None or when is None:
        return None
    if kind != "follow" and as_int(post) is None:
        return None
    checksum = zlib.crc32(text.encode()) % 1_000_000
    return Event(when * 1_000_000 + checksum, kind, actor_id, as_int(post), when)


def events_from(raw: Iterable[bytes | str]) -> list[Event]:
    """The entries of a notifications list as events, newest first, each once (an entry
    pushed twice in one second is one event)."""
    events = (e for e in map(event_from, raw) if e is not None)
    return list({e.id: e for e in events}.values())


def group_key(event: Event, grouped_kinds: Collection[str] = GROUPED) -> str:
    """The key of the group event belongs to: `like-<post>`, `repost-<post>`,
    `follow-<day>` (UTC days since 1970), else `ungrouped-<event id>`."""
    if event.kind in grouped_kinds:
        if event.kind == "follow":
            return f"follow-{event.time // 86400}"
        return f"{event.kind}-{event.post_id}"
    return f"ungrouped-{event.id}"


@dataclass(frozen=True)
class EventGroup:
    """Events of one group as stored, newest first (before visibility)."""

    key: str
    events: tuple[Event, ...]

    @property
    def kind(self) -> str:
        return self.events[0].kind

    @property
    def post_id(self) -> int | None:
        return self.events[0].post_id if self.kind != "follow" else None


def grouped(events: Iterable[Event], grouped_kinds: Collection[str] = GROUPED) -> list[EventGroup]:
    """The grouping the page and the API show: events (newest first) in groups by
    group_key, each group at the place of its newest event."""
    groups: dict[str, list[Event]] = {}
    for event in events:
        groups.setdefault(group_key(event, grouped_kinds), []).append(event)
    return [EventGroup(key, tuple(members)) for key, members in groups.items()]


def unread_events(events: Sequence[Event], last_read: int) -> list[Event]:
    """The events newer than the one whose id is last_read: those above it in the list
    (events of one second keep the list's order), or by id when it is gone."""
    at = next((i for i, e in enumerate(events) if e.id == last_read), None)
    return list(events[:at]) if at is not None else [e for e in events if e.id > last_read]


def older_than(groups: Sequence[EventGroup], event_id: int, events: Sequence[Event]) -> int:
    """Where the groups strictly older than the event event_id start (groups ordered by
    their newest event): by the event's place in the list, or by id when it is gone."""
    place = {e.id: i for i, e in enumerate(events)}
    mark = place.get(event_id)
    for n, group in enumerate(groups):
        newest = group.events[0]
        if (place[newest.id] > mark) if mark is not None else (newest.id < event_id):
            return n
    return len(groups)


def newer_than(groups: Sequence[EventGroup], event_id: int, events: Sequence[Event]) -> int:
    """How many groups are newer than the event event_id (see older_than)."""
    place = {e.id: i for i, e in enumerate(events)}
    mark = place.get(event_id)
    for n, group in enumerate(groups):
        newest = group.events[0]
        if (place[newest.id] >= mark) if mark is not None else (newest.id <= event_id):
            return n
    return len(groups)
