"""Notification writes: the one event a write tells its recipient of (queue_notification),
the claim that tells a like, repost or follow once (queue_notification_claim) and the undo
(unqueue_notification), each queued on the write's own pipeline. The write stores (posts,
reposts, likes, follows) import this module and never the read path: the page and the API
read the events in notifications.py; their one entry format is notification_events.py's."""

from __future__ import annotations

from social import keys

from ..base import Pipe
from .bus import NOTIFICATION, queue_event
from .notification_events import entry_of, event_key

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
        event_key(kind, actor, post_id), ts, ts - window, keys.NOTIFICATIONS_CAP, window,
    )  # fmt: skip


def queue_notification(
    pipe: Pipe, recipient: int, kind: str, actor: int, post_id: int | None, ts: int
) -> None:
    """Queue one event for recipient (never for their own actions), and tell the live bus
    (the pipeline goes through send()). A like, repost or follow is told only by the write
    whose queue_notification_claim won."""
    if recipient == actor:
        return
    entry = entry_of(kind, actor, post_id, ts)
    pipe.lpush(keys.notifications(recipient), entry)
    pipe.ltrim(keys.notifications(recipient), 0, keys.NOTIFICATIONS_CAP - 1)
    pipe.hincrby(keys.user(recipient), "unread_notifications", 1)
    queue_event(pipe, NOTIFICATION, user_id=recipient, entry=entry)


def unqueue_notification(
    pipe: Pipe, recipient: int, kind: str, actor: int, post_id: int | None, ts: int
) -> None:
    """Queue taking back the event queue_notification pushed with these very fields (an
    undone repost). The unread count is left: it clears when the page is seen."""
    pipe.lrem(keys.notifications(recipient), 1, entry_of(kind, actor, post_id, ts))
