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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Unpack

from social import keys

from .base import Client, NamedReads, Reply, RepositoryBase, StoreSettings, as_int, s
from .base import Replies as Got
from .bus import KINDS, NOTIFICATION
from .models import Post, PostCounts
from .notifications import Event, NotificationGroup, NotificationStore, event_from, grouped
from .reader import PageReader
from .sources import HOME, PUBLIC, Known, Listing, Source, Steps
from .visibility import Viewer


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


FOLLOWS = Reply[float | None]("follows")  # whether the reader follows the author


@dataclass(frozen=True)
class Delivered(Source):
    """The one post an event names, read for a listener's reader as the timeline (PUBLIC)
    or a home feed (HOME) lists it: hidden posts, blocked, muted and filtered authors left
    out, a repost as the post it shares."""

    post_id: int
    has_reposts: ClassVar[bool] = True
    reads_ids: ClassVar[bool] = False

    @property
    def remembered(self) -> bool:
        return False

    def list_key(self) -> None:
        return None

    def ids(self, got: Got, start: int, stop: int, known: Known) -> Steps[Listing]:
        return Listing([self.post_id] if start == 0 else [])
        yield


@dataclass(frozen=True)
class Delivery:
    """A post as one reader may be told of it: the post (a repost with `original`), its
    counts and the reader's relation to it (PostCounts by post id)."""

    post: Post
    counts: dict[int, PostCounts]


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
        """The post of an update event as viewer may see it, or None. home: only when it
        enters their home feed (their own, or by an account they follow: fan-out on write
        or on read alike). One page read on the read path (its first pipeline also reads
        the follow)."""
        if event.post_id is None or event.author_id is None:
            return None
        author = event.author_id
        follows = home and viewer.id is not None and viewer.id != author

        def first(reads: NamedReads) -> None:
            if follows and viewer.id is not None:
                reads.zscore(FOLLOWS, keys.following(viewer.id), author)

        shows = HOME if home else PUBLIC
        read = self.reader.page(Delivered(event.post_id), viewer, 1, 1, shows=shows, first=first)
        if home and viewer.id is None or follows and read.got.get(FOLLOWS) is None:
            return None
        if not read.page.items:
            return None
        post = read.page.items[0]
        return Delivery(post, dict(read.page.counts))

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
