"""Publishing on the live bus (keys.live_events): one XADD per event, queued on the write's
own pipeline. Kept apart from live.py (the listeners' reads) so that every write path may
import it without importing the read path."""

from __future__ import annotations

from collections.abc import Iterable

from social import keys

from ..base import EVENTS_MARK, Pipe

UPDATE = "update"  # a post or repost entered home feeds (and the timeline, its tags)
DELETE = "delete"  # a post deleted (by its author, staff, an account's purge)
NOTIFICATION = "notification"  # an event pushed on a reader's notifications list
FILTERS_CHANGED = "filters_changed"  # a reader's word filters changed
KINDS = (UPDATE, DELETE, NOTIFICATION, FILTERS_CHANGED)


def queue_event(
    pipe: Pipe,
    kind: str,
    *,
    post_id: int | None = None,
    author_id: int | None = None,
    repost_of: int | None = None,
    tags: Iterable[str] = (),
    user_id: int | None = None,
    entry: str | None = None,
) -> None:
    """Queue one event on the bus (keys.live_events), on pipe: the write's own pipeline,
    sent with RepositoryBase.send, which logs an error of this XADD and never raises it.

    update: post_id, author_id (the reposter for a repost), repost_of, tags. delete:
    post_id. notification: user_id (the recipient) and entry (as stored on their list).
    filters_changed: user_id."""
    fields = {
        "kind": kind,
        "post": post_id,
        "author": author_id,
        "repost_of": repost_of,
        "tags": " ".join(tags) or None,
        "user": user_id,
        "entry": entry,
    }
    marked: set[int] = getattr(pipe, EVENTS_MARK, None) or set()
    marked.add(len(pipe))  # this command's place among the pipeline's replies
    setattr(pipe, EVENTS_MARK, marked)
    pipe.xadd(
        keys.live_events(),
        {name: str(value) for name, value in fields.items() if value is not None},
        maxlen=keys.LIVE_EVENTS_CAP,
        approximate=True,
    )
