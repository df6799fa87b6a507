"""Notifications: follows, likes, replies, mentions and reposts of the reader's posts, newest first,
grouped per post and kind ("alice and 3 others liked your post").

Each event is pushed on the recipient's list (keys.notifications) by the write that makes
it, in that write's pipeline (queue_notification), and counted in their user hash's
`unread_notifications` (cleared when the page is seen). Reading takes the whole capped
list (at most NOTIFICATIONS_CAP short strings), groups it, and loads the posts through the
read path's loader: groups from accounts a block keeps apart or the reader mutes, or about
posts the reader may not see or filters, are left out (visibility.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Unpack

from social import keys

from .base import Pipe, RepositoryBase, StoreSettings, as_int, queue_users, s, users_from
from .models import Page, Post, User, as_datetime
from .reader import PageReader
from .sources import Listed
from .visibility import Viewer, may_notify

KINDS = ("follow", "like", "reply", "mention", "repost")
NAMES_SHOWN = 3  # actors named in a group; the rest are counted ("and 3 others")


# KEYS[1]: keys.notified(recipient). ARGV: the event ("<kind>|<actor>|<post>"), its time,
# the oldest time still kept, how many are kept, the key's TTL. Return 1 when the event was
# not there (the caller tells the recipient), 0 when they were told of it before. One key:
# a cluster routes it by that key.
CLAIM_SCRIPT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
local new = redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -tonumber(ARGV[4]) - 1)
redis.call('EXPIRE', KEYS[1], ARGV[5])
return new
"""


def queue_notification_claim(
    pipe: Pipe, recipient: int, kind: str, actor: int, post_id: int | None, ts: int
) -> None:
    """Queue claiming the one notification of (kind, actor, post) for recipient, beside
    the write's own claim (the ZADD NX of a like, follow or repost): its reply is 1 when
    they were not told of it yet (the write, if new, tells them: queue_notification in its
    next pipeline), 0 when they were (a like, repost or follow undone and made again,
    within NOTIFICATIONS_DAYS and the newest NOTIFICATIONS_CAP of theirs). A process that
    dies between the claim and the telling, or a simultaneous second write that wins this
    claim but not its own, leaves that one event untold. The caller skips one's own
    actions (nothing to tell)."""
    window = keys.NOTIFICATIONS_DAYS * 86400
    # A raw EVAL: a cluster pipeline refuses eval(), and routes this by its one key.
    pipe.execute_command(
        "EVAL", CLAIM_SCRIPT, 1, keys.notified(recipient),
        f"{kind}|{actor}|{post_id or ''}", ts, ts - window, keys.NOTIFICATIONS_CAP, window,
    )  # fmt: skip


def queue_notification(
    pipe: Pipe, recipient: int, kind: str, actor: int, post_id: int | None, ts: int
) -> None:
    """Queue one event for recipient (never for their own actions). A like, repost or
    follow is told only by the write whose queue_notification_claim won."""
    if recipient == actor:
        return
    pipe.lpush(keys.notifications(recipient), f"{kind}|{actor}|{post_id or ''}|{ts}")
    pipe.ltrim(keys.notifications(recipient), 0, keys.NOTIFICATIONS_CAP - 1)
    pipe.hincrby(keys.user(recipient), "unread_notifications", 1)


def unqueue_notification(
    pipe: Pipe, recipient: int, kind: str, actor: int, post_id: int | None, ts: int
) -> None:
    """Queue taking back the event queue_notification pushed with these very fields (an
    undone repost). The unread count is left: it clears when the page is seen."""
    pipe.lrem(keys.notifications(recipient), 1, f"{kind}|{actor}|{post_id or ''}|{ts}")


@dataclass(frozen=True)
class NotificationGroup:
    """Events of one kind about one post (or, for follows, one day), newest first."""

    kind: str
    post: Post | None
    actors: list[User]  # the newest NAMES_SHOWN
    others: int  # how many more
    time: int

    @property
    def created(self) -> datetime | None:
        return as_datetime(self.time)


class NotificationStore(RepositoryBase):
    """The reader's notifications."""

    def __init__(self, client, *, reader: PageReader, **config: Unpack[StoreSettings]) -> None:
        super().__init__(client, **config)
        self.reader = reader

    def page(
        self, viewer: Viewer, number: int = 1, per_page: int = 20, *, at: float | None = None
    ) -> Page[NotificationGroup]:
        """A page of the reader's notification groups, newest first; marks them seen. Three
        round trips: the list (and the unread count cleared), the posts (the read path's
        load, with the reader's sets), the actors."""
        assert viewer.id is not None
        clock = time.time() if at is None else at
        oldest = clock - keys.NOTIFICATIONS_DAYS * 86400
        pipe = self._pipe()
        pipe.lrange(keys.notifications(viewer.id), 0, -1)
        pipe.hset(keys.user(viewer.id), "unread_notifications", 0)
        raw, _ = pipe.execute()
        groups: dict[tuple, list[tuple[int, int]]] = {}
        for item in raw:
            parts = (s(item) or "").split("|")
            if len(parts) != 4:
                continue  # not ours
            kind, actor, post, ts = parts
            when, actor_id = as_int(ts) or 0, as_int(actor)
            if kind not in KINDS or actor_id is None or when < oldest:
                continue
            key = (kind, as_int(post) if kind != "follow" else when // 86400)
            groups.setdefault(key, []).append((actor_id, when))
        ordered = list(groups.items())  # newest first: the list is
        start = (max(1, number) - 1) * per_page
        shown = ordered[start : start + per_page]
        post_ids = tuple(k[1] for (k, _) in shown if k[0] != "follow" and k[1] is not None)
        read = self.reader.page(Listed(post_ids), viewer, 1, max(1, len(post_ids)))
        actor_ids = list(dict.fromkeys(a for _, events in shown for a, _ in events))
        reads = self.reads()
        queue_users(reads, actor_ids)
        users = users_from(reads.execute(), actor_ids)
        relations = read.relations
        items = []
        for (kind, ref), events in shown:
            actors = [
                users[a]
                for a in dict.fromkeys(a for a, _ in events)
                if may_notify(viewer, users.get(a), None, relations, about_post=False)
            ]
            about_post = kind != "follow"
            post = read.loaded.get(ref) if about_post else None
            if not actors or not may_notify(
                viewer, actors[0], post, relations, about_post=about_post
            ):
                continue
            items.append(
                NotificationGroup(
                    kind,
                    post,
                    actors[:NAMES_SHOWN],
                    len(actors) - NAMES_SHOWN if len(actors) > NAMES_SHOWN else 0,
                    events[0][1],
                )
            )
        return Page(
            items=items, number=number, has_next=len(ordered) > start + per_page, per_page=per_page
        )

    def clear(self, user_id: int) -> None:
        """Delete all of the user's notifications (the client API's
        /api/v1/notifications/clear) and their unread count. One round trip."""
        pipe = self._pipe()
        pipe.delete(keys.notifications(user_id))
        pipe.hset(keys.user(user_id), "unread_notifications", 0)
        pipe.execute()
