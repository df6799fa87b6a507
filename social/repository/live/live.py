"""The live bus: the events the streaming API tells (social/streaming/), on one Redis stream.

A write that makes an event queues it with `queue_event` on the pipeline it sends anyway
(bus.py; no round trip more), ONCE per event: a post names its author, never its followers. Who
hears of it is decided by each listener for its own reader when it arrives, with the read
path's one visibility policy (`LiveStore.update_for`, `LiveStore.notification_for`).
RepositoryBase.send logs an error of the XADD and never raises it: telling listeners never
fails a write. The streaming process reads the stream with redis-py's asyncio client
(`LiveBus`), resuming after the last id it read when Redis comes back. Why a stream
rather than pub/sub: docs/architecture.md, "The live bus".
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Unpack, cast

from social import keys

from ..base import (
    STATUS_DELETED,
    STATUS_SUSPENDED,
    Client,
    NamedReads,
    Replies,
    RepositoryBase,
    StoreSettings,
    as_int,
    s,
)
from ..clients.oauth import digest
from ..models import Post, PostCounts
from ..read.reader import PageReader
from ..read.relations_of import (
    Listeners,
    OwnRules,
    post_counts,
    queue_author_sets,
    queue_listeners,
    rules_read,
    shown,
)
from ..read.sources import HOME, PUBLIC
from ..read.visibility import NO_RELATIONS, Relations, Viewer
from .bus import KINDS, NOTIFICATION
from .notification_events import Event, event_from, grouped
from .notifications import NotificationGroup, NotificationStore


@dataclass(frozen=True)
class Credential:
    """What a connection proved who it listens as by: an API token, or (the site's pages)
    the `auth` cookie's secret, and the user it stood for."""

    user_id: int
    token: str = ""
    secret: str = ""


@dataclass(frozen=True)
class LiveEvent:
    """One event as read from the bus; `id` is its stream id (ordered by time)."""

    id: str
    kind: str
    post_id: int | None = None
    author_id: int | None = None
    repost_of: int | None = None
    tags: tuple[str, ...] = ()
    user_id: int | None = None
    entry: str = ""

    @property
    def notification(self) -> Event | None:
        """The notification event it tells (kind NOTIFICATION), or None."""
        return event_from(self.entry) if self.kind == NOTIFICATION else None


def live_event_from(entry_id: bytes | str, raw: Mapping[Any, Any]) -> LiveEvent | None:
    """Decode one stream entry, or None for junk (an unknown kind)."""
    fields = {s(k): s(v) for k, v in raw.items()}
    kind = fields.get("kind") or ""
    if kind not in KINDS:
        return None
    return LiveEvent(
        id=s(entry_id),
        kind=kind,
        post_id=as_int(fields.get("post")),
        author_id=as_int(fields.get("author")),
        repost_of=as_int(fields.get("repost_of")),
        tags=tuple((fields.get("tags") or "").split()),
        user_id=as_int(fields.get("user")),
        entry=fields.get("entry") or "",
    )


class LiveBus:
    """The streaming process's reader of the bus, on redis-py's asyncio client (a server's
    or a cluster's: the stream is one key, so one node)."""

    def __init__(self, client: Any) -> None:
        self.r = client

    async def last_id(self) -> str:
        """The id of the newest event, or "0-0" when there is none: read after it."""
        newest = await self.r.xrevrange(keys.live_events(), count=1)
        return s(newest[0][0]) if newest else "0-0"

    async def read(self, after: str, *, block_ms: int, count: int = 500) -> list[LiveEvent]:
        """The events after id `after` (at most count), waiting up to block_ms for one."""
        got = await self.r.xread({keys.live_events(): after}, count=count, block=block_ms)
        events = []
        for _stream, entries in got or []:
            for entry_id, raw in entries:
                event = live_event_from(entry_id, raw)
                events.append(event or LiveEvent(id=s(entry_id), kind=""))
        return events


@dataclass(frozen=True)
class Delivery:
    """A post as one reader may be told of it: the post (a repost with `original`), its
    counts and the reader's relation to it (PostCounts by post id)."""

    post: Post
    counts: dict[int, PostCounts]


@dataclass(frozen=True)
class UpdateRead:
    """What deciding an update event reads (LiveStore._read_update): the post, the posts
    loaded with it (the one it shares) by id with their counts, its readers' sets from the
    author's side, and which of its home readers follow the author."""

    post: Post
    posts: list[Post]
    by_id: dict[int, Post]
    counts: dict[int, tuple[int, int, int]]
    listeners: Listeners
    followers: frozenset[int]


class LiveStore(RepositoryBase):
    """What a listener reads at delivery time, for its reader (sync: the streaming process
    calls it in a thread, asyncio.to_thread)."""

    def __init__(
        self,
        client: Client,
        *,
        reader: PageReader,
        notifications: NotificationStore,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.reader = reader
        self.notifications = notifications

    def update_for(self, viewer: Viewer, event: LiveEvent, *, home: bool) -> Delivery | None:
        """The post of an update event as viewer may see it, or None (updates_for, for one
        reader)."""
        return self.updates_for([(viewer, home)], event).get((viewer, home))

    def updates_for(
        self,
        readers: Iterable[tuple[Viewer, bool]],
        event: LiveEvent,
        filters: ListenerFilters | None = None,
    ) -> dict[tuple[Viewer, bool], Delivery]:
        """The post of an update event as each (viewer, home) of readers may see it (those
        who may not are left out). home: only when it enters the viewer's home feed (their
        own, or by an account they follow: fan-out on write or on read alike); else as the
        timeline lists it.

        The read path's decision (relations_of.shown and post_counts: visibility.py's
        policy, the timeline's or a home feed's ListPolicy), with each reader's relations
        read from the other side (relations_of.Listeners): whether the author is kept apart
        from them or muted is one ZMSCORE of each of the author's own sets naming every
        reader (and of its followers for home), their likes, reposts and reports of the
        post one each of its sets; only their word filters are read per reader, but only
        those `filters` (the streaming process's ListenerFilters) does not hold. All on the
        post's load pipeline: two
        round trips whatever the readers (the post with those reads, then its author, as
        the loader reads a new post); one more for a repost of another's post (that
        author's sets). Two steps: _read_update reads, _decide_updates decides."""
        readers = list(dict.fromkeys(readers))
        read = self._read_update(readers, event, filters)
        return {} if read is None else self._decide_updates(readers, read)

    def _read_update(
        self,
        readers: list[tuple[Viewer, bool]],
        event: LiveEvent,
        filters: ListenerFilters | None,
    ) -> UpdateRead | None:
        """Read what deciding an update event for readers takes (updates_for's first
        step): the post (and the post it shares) with their counts, and the readers'
        sets from the author's side, on the load's pipeline; the shared post's author's
        sets one round trip more. None when the event names no post, or the post is gone
        or not its author's."""
        if event.post_id is None or event.author_id is None:
            return None
        author = event.author_id
        ids = list(dict.fromkeys(v.id for v, _home in readers if v.id is not None))
        home_ids = list(dict.fromkeys(v.id for v, home in readers if v.id is not None and home))
        wanted = [event.post_id, *([event.repost_of] if event.repost_of else [])]
        held = filters.held(ids) if filters is not None else {}
        unknown = [i for i in ids if i not in held]

        def reads(more: NamedReads) -> None:
            queue_listeners(more, author, wanted, ids, unknown)
            if home_ids:
                more.zmscore("followers", keys.followers(author), home_ids)

        loaded = self.reader.loader.load(wanted, counts=True, also=reads)
        got = Replies(loaded.got)
        read = rules_read(got, unknown)
        if filters is not None:
            filters.keep(read)
        held.update(read)
        by_id = {post.id: post for post in loaded.posts}
        post = by_id.get(event.post_id)
        if post is None or post.author_id != author:
            return None
        listeners = Listeners.read(got, author, wanted, ids, held)
        scores = cast("list | None", got.get("followers")) or [None] * len(home_ids)
        followers = frozenset(i for i, score in zip(home_ids, scores) if score is not None)
        original = by_id.get(post.repost_of) if post.repost_of is not None else None
        if original is not None and original.author_id not in listeners.authors and ids:
            more = self.reads()
            queue_author_sets(more, original.author_id, ids)
            listeners.add_author(more.execute(), original.author_id)
        return UpdateRead(post, loaded.posts, by_id, loaded.counts, listeners, followers)

    def _decide_updates(
        self, readers: list[tuple[Viewer, bool]], read: UpdateRead
    ) -> dict[tuple[Viewer, bool], Delivery]:
        """Decide what each of readers is told of the post read (updates_for's second
        step; no round trip): by the read path's policy, a home feed's rules or the
        timeline's, with each reader's Relations from the author's side; those in none of
        the author's or the post's sets are decided once for all of them."""
        post, author = read.post, read.post.author_id
        policies = {True: HOME, False: PUBLIC}  # a home feed's rules, or the timeline's
        at = time.time()
        plain = read.listeners.plain()
        decided: dict[tuple[bool, bool], Delivery | None] = {}

        def decide(viewer: Viewer, home: bool, relations: Relations) -> Delivery | None:
            shows = policies[home]
            found = shown(read.posts, {post.id}, read.by_id, viewer, relations, shows, reposts=True)
            if not found:
                return None
            counts = post_counts(read.by_id.values(), read.counts, relations, viewer, shows)
            return Delivery(found[0], counts)

        told: dict[tuple[Viewer, bool], Delivery] = {}
        for viewer, home in readers:
            if viewer.id is None:
                found = None if home else decide(viewer, home, NO_RELATIONS)
            elif home and viewer.id != author and viewer.id not in read.followers:
                continue
            elif viewer.id in plain:  # the empty Relations: decided once for all of them
                shape = (home, viewer.is_staff)
                if shape not in decided:
                    decided[shape] = decide(viewer, home, NO_RELATIONS)
                found = decided[shape]
            else:
                found = decide(viewer, home, read.listeners.relations(viewer, at=at))
            if found is not None:
                told[viewer, home] = found
        return told

    def holding(self, credentials: Sequence[Credential]) -> list[bool]:
        """Whether each credential still stands for its user (the token not revoked, the
        secret still the user's, the account neither suspended nor deleted): one round trip
        for all of a streaming process's connections."""
        reads = self.reads()
        users = sorted({c.user_id for c in credentials})
        for uid in users:
            reads.hmget(f"u{uid}", keys.user(uid), ["username", "status", "auth"])
        for n, c in enumerate(credentials):
            if c.token:
                reads.hget(f"t{n}", keys.oauth_token(digest(c.token)), "user_id")
        got = reads.execute() if users else {}
        found = []
        for n, c in enumerate(credentials):
            name, status, auth = map(s, cast(list, got[f"u{c.user_id}"]))
            holds = bool(name) and status not in (STATUS_SUSPENDED, STATUS_DELETED)
            if c.token:
                holds = holds and as_int(s(cast("bytes | None", got[f"t{n}"]))) == c.user_id
            else:
                holds = holds and secrets.compare_digest((auth or "").encode(), c.secret.encode())
            found.append(holds)
        return found

    def notification_for(
        self, viewer: Viewer, event: Event
    ) -> tuple[NotificationGroup, dict[int, PostCounts]] | None:
        """The notification as viewer may see it (a group of one, as the notifications
        page and the API decide: notifications.visible_group), with its post's counts, or
        None."""
        shown, read = self.notifications.show(viewer, grouped([event], ()))
        if not shown:
            return None
        return shown[0], dict(read.page.counts) if read else {}


class ListenerFilters:
    """The own rules of a streaming process's listeners as last read (relations_of.OwnRules:
    their word filters; expiry is applied when each event is decided), so that an update
    reads only those it does not hold. The hub forgets a reader's when the bus
    tells their filters changed (the change's own event comes before any post decided
    after it), everyone's when it reconnects to the bus, and each after MAX_AGE seconds
    (bounding what a lost event could leave stale)."""

    MAX_AGE = 300.0

    def __init__(self) -> None:
        self._held: dict[int, tuple[float, OwnRules]] = {}
        self._pruned = time.monotonic()

    def held(self, ids: Iterable[int]) -> dict[int, OwnRules]:
        oldest = time.monotonic() - self.MAX_AGE
        found = {}
        for reader in ids:
            entry = self._held.get(reader)
            if entry is not None and entry[0] > oldest:
                found[reader] = entry[1]
        return found

    def keep(self, read: Mapping[int, OwnRules]) -> None:
        at = time.monotonic()
        self._held.update((reader, (at, raw)) for reader, raw in read.items())
        if at - self._pruned > self.MAX_AGE:  # those who left: dropped once too old
            self._pruned = at
            old = [r for r, (when, _raw) in self._held.items() if when < at - self.MAX_AGE]
            for reader in old:
                del self._held[reader]

    def forget(self, reader: int | None = None) -> None:
        """Forget one reader's filters (None: everyone's)."""
        if reader is None:
            self._held.clear()
        else:
            self._held.pop(reader, None)

    def __len__(self) -> int:
        return len(self._held)
