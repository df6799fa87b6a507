"""Notifications: follows, likes, replies, mentions and reposts of the reader's posts, newest
first, and where the reader stopped reading them (keys.markers).

Each event is pushed on the recipient's list (keys.notifications) by the write that makes
it, in that write's pipeline (notification_writes.queue_notification: the write stores
import that, never this reader), and counted in their user hash's `unread_notifications`:
the events newer than their `notifications` marker, set to the newest event when the page is
seen and to what an app saves (markers.py). The site's page and the client API read the list
here, with one parser and one grouping (notification_events.py), and load the posts through
the read path: events from accounts a block keeps apart, the reader mutes, or suspended, or
about posts the reader may not see or filters, are left out (visibility.may_notify). Every
read is a fixed number of round trips: the whole capped list (at most NOTIFICATIONS_CAP
short strings) with the marker, then the posts with the actors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Unpack

from social import keys

from ..base import (
    NamedReads,
    Pipe,
    Replies,
    RepositoryBase,
    StoreSettings,
    as_int,
    queue_users,
    users_from,
)
from ..models import Page, Post, User, as_datetime
from ..read.reader import PageRead, PageReader
from ..read.relations_of import queue_reader_sets, reader_relations
from ..read.sources import WITH_HIDDEN, Listed, PageExtras
from ..read.visibility import NO_RELATIONS, Viewer, may_hear_from, may_notify
from .notification_events import (
    GROUPED,
    KINDS,
    NAMES_SHOWN,
    Event,
    EventGroup,
    events_from,
    grouped,
    newer_than,
    older_than,
    unread_events,
)

# The kinds the Mentions tab shows (a reply to the reader names them: a mention too).
MENTION_KINDS = frozenset({"mention", "reply"})
# The user hash's field holding when the Mentions tab last counted its mentions as read:
# the notifications page leaves mentions and replies no newer unmarked ("New") too.
MENTIONS_SEEN_AT = "mentions_seen_at"


def replies_to_reader(post: Post, reader_id: int) -> bool:
    """Whether post answers one of the reader's posts (its parent's author is the reader:
    the name fixed with the reply is one it mentions as the reader)."""
    if post.reply_to is None or not post.reply_to_name:
        return False
    parent = post.reply_to_name.lower()
    return any(uid == reader_id and name.lower() == parent for name, uid in post.mentions)


@dataclass(frozen=True)
class NotificationGroup:
    """A group as the reader may see it: its events and their accounts, newest first.
    `kind` as shown: a mention in a reply to the reader's post is a reply. `post`: the
    reader's post (a like, a repost) or the reply or mention; None for follows."""

    key: str
    kind: str
    post: Post | None
    accounts: tuple[User, ...]  # each actor once
    events: tuple[Event, ...]
    unread: bool = False
    # Of a follow group's accounts, those the reader follows (the page's "Follow back" is
    # offered to the others); read only for the site's page (NotificationStore.page).
    followed: frozenset[int] = frozenset()

    @property
    def actors(self) -> tuple[User, ...]:
        return self.accounts[:NAMES_SHOWN]

    @property
    def others(self) -> int:
        return max(0, len(self.accounts) - NAMES_SHOWN)

    @property
    def time(self) -> int:
        return self.events[0].time

    @property
    def created(self) -> datetime | None:
        return as_datetime(self.time)


@dataclass(frozen=True)
class Listing:
    """The reader's events as read: newest first, none older than NOTIFICATIONS_DAYS; the
    id of the last one read (their marker, or else from the unread count) and the newest
    id of all."""

    events: list[Event]
    last_read: int
    newest: int | None
    marker: int | None
    unread_count: int
    mentions_seen_at: int = 0  # when the Mentions tab last counted mentions as read

    def unread(self) -> list[Event]:
        return unread_events(self.events, self.last_read)

    def unread_here(self) -> list[Event]:
        """The unread events the notifications page marks "New": the mentions and
        replies the Mentions tab showed are not among them."""
        seen_at = self.mentions_seen_at
        return [e for e in self.unread() if e.kind not in MENTION_KINDS or e.time > seen_at]


@dataclass
class GroupPage:
    """A page of groups for the client API, and the cursors of its neighbours (the id of
    a group's newest event, shown or not)."""

    groups: list[NotificationGroup] = field(default_factory=list)
    read: PageRead | None = None
    next_max: int | None = None
    prev_min: int | None = None


@dataclass(frozen=True)
class Query:
    """What the client API asks for: our kinds, the kinds it groups, from whom."""

    kinds: frozenset[str] = frozenset(KINDS)
    grouped_kinds: frozenset[str] = frozenset(GROUPED)
    account_id: int | None = None

    def keeps(self, event: Event) -> bool:
        return event.kind in self.kinds and self.account_id in (None, event.actor_id)


@dataclass
class ActorReads(PageExtras):
    """What a page of notifications reads with its posts: the actors' user hashes, which
    of `followers` the reader follows ("followed"), and the caller's `also`."""

    reader_id: int
    actor_ids: tuple[int, ...]
    followers: tuple[int, ...]
    also: Callable[[NamedReads], None] | None = None

    def then(self, reads: NamedReads, got: Replies, ids: Sequence[int]) -> None:
        queue_users(reads, self.actor_ids)
        if self.followers:
            reads.zmscore("followed", keys.following(self.reader_id), list(self.followers))
        if self.also is not None:
            self.also(reads)


def queue_marker_save(pipe: Pipe, user_id: int, timeline: str, last_read: int, at: int) -> None:
    """Queue saving a marker (keys.markers: `<timeline>`, `<timeline>:version`,
    `<timeline>:at`)."""
    pipe.hset(keys.markers(user_id), mapping={timeline: last_read, f"{timeline}:at": at})
    pipe.hincrby(keys.markers(user_id), f"{timeline}:version", 1)


class NotificationStore(RepositoryBase):
    """The reader's notifications."""

    def __init__(self, client, *, reader: PageReader, **config: Unpack[StoreSettings]) -> None:
        super().__init__(client, **config)
        self.reader = reader

    def listing(self, viewer: Viewer, *, at: float | None = None, seen: bool = False) -> Listing:
        """The reader's events with their marker and unread count, and without those of
        accounts the reader may not hear from (visibility.may_hear_from, may_notify's first
        clause, with the reader's Relations read with the list as a page reads them:
        relations_of), so that pages are full however many such events there are; the
        rest of may_notify decides when they are shown (show). seen: the unread count is
        set to 0 with the read (an event pushed after is counted by its own push). One
        round trip."""
        assert viewer.id is not None
        reads = self.reads()
        reads.lrange("events", keys.notifications(viewer.id), 0, -1)
        reads.hget("marker", keys.markers(viewer.id), "notifications")
        reads.hget("unread", keys.user(viewer.id), "unread_notifications")
        if seen:
            reads.hset("seen", keys.user(viewer.id), "unread_notifications", 0)
            # The Mentions tab's count is seen too (one user hash: no node more).
            reads.hset("mentions", keys.user(viewer.id), "unread_mentions", 0)
            reads.hget("seen_at", keys.user(viewer.id), MENTIONS_SEEN_AT)
        queue_reader_sets(reads, viewer)
        got = reads.execute()
        found = listing_from(got.members("events"), got.value("marker"), got.value("unread"), at)
        if seen:
            found = replace(found, mentions_seen_at=as_int(got.value("seen_at")) or 0)
        relations = reader_relations(viewer, got)
        if relations != NO_RELATIONS:
            heard = [e for e in found.events if may_hear_from(e.actor_id, relations)]
            found = replace(found, events=heard)
        return found

    def page(
        self, viewer: Viewer, number: int = 1, per_page: int = 20, *, at: float | None = None
    ) -> Page[NotificationGroup]:
        """A page of the reader's notification groups, newest first, those newer than
        their marker `unread`; marks them all seen (the marker moves to the newest event,
        the unread count to 0). Each post's counts (a mention's card: Reply, Like) and,
        for follows, which of the followers the reader follows back. Round trips: the list
        with the marker, then the read path's (the posts, with the actors, the reader's
        follows among them and the marker's save)."""
        assert viewer.id is not None
        listing = self.listing(viewer, at=at, seen=True)
        groups = grouped(listing.events)
        start = (max(1, number) - 1) * per_page
        unread = {e.id for e in listing.unread_here()}
        seen = self._seen(viewer.id, listing)
        shown, read = self.show(viewer, groups[start : start + per_page], also=seen, follows=True)
        items = [replace(g, unread=any(e.id in unread for e in g.events)) for g in shown]
        return Page(
            items=items,
            number=number,
            has_next=len(groups) > start + per_page,
            per_page=per_page,
            counts=read.page.counts if read is not None else {},
        )

    def mentions_seen(self, user_id: int, mentions: int, unread: int) -> int:
        """Count the reader's unread mentions as read (the Mentions tab shows them):
        `mentions` (the user hash's `unread_mentions`, the posts filed in their mentions
        since that tab or the notifications page was seen) off their `unread` notifications
        count, the other kinds left unread and the notifications page's marker where it
        is; return the count left. One round trip on the user hash, which the tab's own
        read of the mentions zeroes `unread_mentions` on; two when a notifications page
        seen meanwhile set the count below what was taken (set back to 0).

        A mention a blocked account wrote is filed but not told: counting it off takes
        one unread notification of another kind with it, until the notifications page is
        seen."""
        taken = min(mentions, unread)
        if taken <= 0:
            return max(0, unread)
        pipe = self._pipe()
        pipe.hincrby(keys.user(user_id), "unread_notifications", -taken)
        pipe.hset(keys.user(user_id), MENTIONS_SEEN_AT, int(time.time()))
        left, _ = pipe.execute()
        if left < 0:
            self.r.hset(keys.user(user_id), "unread_notifications", 0)
        return max(0, left)

    def _seen(self, user_id: int, listing: Listing) -> Callable[[NamedReads], None] | None:
        """The marker's save past every event read (queued with the page's reads); None
        when it is there already."""
        newest = listing.newest
        if newest is None or newest == listing.marker:
            return None

        def queue(reads: NamedReads) -> None:
            queue_marker_save(reads.pipe, user_id, "notifications", newest, int(time.time()))

        return queue

    def groups(
        self,
        viewer: Viewer,
        query: Query,
        *,
        limit: int,
        max_id: int | None = None,
        since_id: int | None = None,
        min_id: int | None = None,
        at: float | None = None,
    ) -> GroupPage:
        """The page of groups Mastodon's paging asks for (GET /api/v2/notifications; with
        no kind grouped, /api/v1/notifications): those older than max_id, newer than
        since_id, or the `limit` just newer than min_id. Groups the reader may not see are
        skipped: up to twice `limit` are read to fill the page."""
        assert viewer.id is not None
        listing = self.listing(viewer, at=at)
        events = [e for e in listing.events if query.keeps(e)]
        groups = grouped(events, query.grouped_kinds)
        low, high = 0, len(groups)
        if max_id is not None:
            low = older_than(groups, max_id, events)
        floor = min_id if min_id is not None else since_id
        if floor is not None:
            high = max(low, newer_than(groups, floor, events))
        upward = min_id is not None
        window = groups[max(low, high - 2 * limit) : high] if upward else groups[low:high]
        candidates = window if upward else window[: 2 * limit]
        shown, read = self.show(viewer, candidates)
        page = shown[-limit:] if upward else shown[:limit]
        beyond = not upward and (len(shown) > limit or low + len(candidates) < high)
        if not page:  # all hidden: the next page starts past them
            last = candidates[-1].events[0].id if beyond and candidates else None
            return GroupPage(read=read, next_max=last, prev_min=min_id if upward else None)
        raw = {g.key: g for g in candidates}
        return GroupPage(
            groups=page,
            read=read,
            next_max=raw[page[-1].key].events[0].id if beyond or upward else None,
            prev_min=raw[page[0].key].events[0].id,
        )

    def group(
        self, viewer: Viewer, key: str, *, at: float | None = None
    ) -> tuple[NotificationGroup, PageRead] | None:
        """The group whose key is key (GET /api/v2/notifications/:group_key) as the reader
        may see it, with its post's read; or None."""
        assert viewer.id is not None
        events = self.listing(viewer, at=at).events
        if key.startswith("ungrouped-"):
            found = [EventGroup(key, (e,)) for e in events if f"ungrouped-{e.id}" == key]
        else:
            found = [g for g in grouped(events) if g.key == key]
        shown, read = self.show(viewer, found[:1])
        return (shown[0], read) if shown and read is not None else None

    def unread_count(
        self, viewer: Viewer, query: Query, *, limit: int, at: float | None = None
    ) -> int:
        """How many of the reader's groups (none grouped: events) are newer than their
        marker and may be seen, counting at most `limit`."""
        assert viewer.id is not None
        unread = [e for e in self.listing(viewer, at=at).unread() if query.keeps(e)]
        candidates = grouped(unread, query.grouped_kinds)[:limit]
        return len(self.show(viewer, candidates)[0]) if candidates else 0

    def show(
        self,
        viewer: Viewer,
        groups: Sequence[EventGroup],
        also: Callable[[NamedReads], None] | None = None,
        *,
        follows: bool = False,
    ) -> tuple[list[NotificationGroup], PageRead | None]:
        """Groups as the reader may see them, with their posts loaded on the read path and
        their actors read with the posts (also: more to queue there; follows: which of
        the follow groups' accounts the reader follows, NotificationGroup.followed)."""
        if not groups and also is None:
            return [], None
        reader_id = viewer.id
        assert reader_id is not None
        post_ids = tuple(dict.fromkeys(g.post_id for g in groups if g.post_id is not None))
        actor_ids = list(dict.fromkeys(e.actor_id for g in groups for e in g.events))
        followers = (
            list(dict.fromkeys(e.actor_id for g in groups if g.kind == "follow" for e in g.events))
            if follows
            else []
        )

        extras = ActorReads(reader_id, tuple(actor_ids), tuple(followers), also)
        read = self.reader.page(
            Listed(post_ids), viewer, 1, max(1, len(post_ids)), shows=WITH_HIDDEN, extras=extras
        )
        users = users_from(read.then, actor_ids) if actor_ids else {}
        scores = read.then.scores_if_read("followed", len(followers))
        followed = frozenset(a for a, score in zip(followers, scores) if score is not None)
        shown = []
        for group in groups:
            found = visible_group(viewer, group, users, read)
            if found is not None and found.kind == "follow" and followed:
                found = replace(found, followed=followed & {u.id for u in found.accounts})
            if found is not None:
                shown.append(found)
        return shown, read

    def clear(self, user_id: int) -> None:
        """Delete all of the user's notifications (the client API's
        /api/v1/notifications/clear) and their unread count. One round trip."""
        pipe = self._pipe()
        pipe.delete(keys.notifications(user_id))
        pipe.hset(keys.user(user_id), mapping={"unread_notifications": 0, "unread_mentions": 0})
        pipe.execute()


def listing_from(raw: Iterable[bytes | str], marker, unread, at: float | None = None) -> Listing:
    """A Listing from the list's entries, the marker's id and the unread count. Without a
    marker (saved by neither the page nor an app yet), the newest `unread` are unread."""
    oldest = (time.time() if at is None else at) - keys.NOTIFICATIONS_DAYS * 86400
    every = events_from(raw)
    count = max(0, as_int(unread) or 0)
    saved = as_int(marker)
    fallback = every[count].id if count < len(every) else 0
    last_read = saved if saved is not None else fallback
    return Listing(
        events=[e for e in every if e.time >= oldest],
        last_read=last_read,
        newest=every[0].id if every else None,
        marker=saved,
        unread_count=count,
    )


def visible_group(
    viewer: Viewer, group: EventGroup, users: dict[int, User], read: PageRead
) -> NotificationGroup | None:
    """The group as viewer may see it (only the events visibility.may_notify lets
    through), or None when none is left."""
    assert viewer.id is not None
    post = read.loaded.get(group.post_id) if group.post_id is not None else None
    about_post = group.kind != "follow"
    events = tuple(
        e
        for e in group.events
        if may_notify(viewer, users.get(e.actor_id), post, read.relations, about_post=about_post)
    )
    if not events:
        return None
    kind = group.kind
    if kind == "mention" and post is not None and replies_to_reader(post, viewer.id):
        kind = "reply"
    accounts = tuple(users[a] for a in dict.fromkeys(e.actor_id for e in events))
    return NotificationGroup(group.key, kind, post, accounts, events)
