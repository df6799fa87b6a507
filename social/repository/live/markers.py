"""Markers: where a reader stopped reading their home feed and their notifications
(Mastodon's markers, keys.markers). The notifications page saves `notifications` when it is
seen (notifications.py); apps save either (POST /api/v1/markers). Saving `notifications`
also sets the user hash's `unread_notifications` to the events newer than it, so the
site's count follows what an app read and the other way round.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from social import keys

from ..base import RepositoryBase, as_int, decode_hash
from .notification_events import events_from, unread_events
from .notifications import queue_marker_save

TIMELINES = ("home", "notifications")


@dataclass(frozen=True)
class Marker:
    """One timeline's marker: the last read id, how many times it was saved, when."""

    timeline: str
    last_read_id: int
    version: int
    updated: int


def markers_from(fields: Mapping[str, str]) -> dict[str, Marker]:
    """{timeline: Marker} from a markers hash (timelines never saved left out)."""
    found = {}
    for timeline in TIMELINES:
        last_read = as_int(fields.get(timeline))
        if last_read is not None:
            version = as_int(fields.get(f"{timeline}:version")) or 0
            updated = as_int(fields.get(f"{timeline}:at")) or 0
            found[timeline] = Marker(timeline, last_read, version, updated)
    return found


class MarkerStore(RepositoryBase):
    """The reader's markers."""

    def get(self, user_id: int) -> dict[str, Marker]:
        """{timeline: Marker} for the timelines the user saved (one round trip)."""
        return markers_from(decode_hash(self.r.hgetall(keys.markers(user_id))))

    def save(
        self, user_id: int, last_read: Mapping[str, int], at: int | None = None
    ) -> dict[str, Marker]:
        """Save the markers of last_read ({timeline: id}, timelines of TIMELINES) and
        return them as saved. With `notifications`, the unread count becomes the number of
        events newer than it (counted from the list read in the same round trip; an event
        pushed in between is counted again by its own push: at most one too many), and
        the unread mentions among them. One round trip, two with `notifications`."""
        when = int(time.time()) if at is None else at
        wanted = {t: int(i) for t, i in last_read.items() if t in TIMELINES}
        if not wanted:
            return {}
        pipe = self._pipe()
        for timeline, last_read_id in wanted.items():
            queue_marker_save(pipe, user_id, timeline, last_read_id, when)
        pipe.hgetall(keys.markers(user_id))
        if "notifications" in wanted:
            pipe.lrange(keys.notifications(user_id), 0, -1)
            *_, fields, raw = pipe.execute()
            unread = unread_events(events_from(raw), wanted["notifications"])
            # and the unread mentions the Mentions tab would take off it (notifications.py)
            mentions = sum(1 for e in unread if e.kind in ("mention", "reply"))
            self.r.hset(
                keys.user(user_id),
                mapping={"unread_notifications": len(unread), "unread_mentions": mentions},
            )
        else:
            *_, fields = pipe.execute()
        saved = markers_from(decode_hash(fields))
        return {t: saved[t] for t in wanted if t in saved}
