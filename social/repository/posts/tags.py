"""Tags as the client API shows them: a tag's last days of use (Mastodon's Tag `history`),
read from the tag's own list of posts (keys.tag_posts, the newest keys.TAG_CAP) and those
posts' times and authors; and the tags a person uses most (featured tag suggestions), from
their newest posts. Each costs two round trips whatever the data: one list, then one
HMGET a post."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import cast

from social import keys

from ..base import Fields, RepositoryBase, as_int, now, s

HISTORY_DAYS = 7  # Mastodon's
USED_SCAN = 200  # a person's newest posts looked at for the tags they use most


@dataclass(frozen=True)
class Day:
    """One UTC day of a tag's use: its midnight (unix seconds), the posts with the tag
    written that day and their distinct authors."""

    day: int
    uses: int
    accounts: int


@dataclass(frozen=True)
class TagUse:
    """A tag the site knows (used at least once) and its last HISTORY_DAYS days, today
    first."""

    name: str
    history: tuple[Day, ...]


def midnight(ts: int) -> int:
    """The unix time of the UTC midnight that starts ts's day."""
    return ts // 86400 * 86400


class TagStore(RepositoryBase):
    """Tags and their use (see the module docstring)."""

    def use(self, tag: str, *, at: int | None = None) -> TagUse | None:
        """The tag (normalised: text.normal_tag) and its history, or None when no post
        has it and the search index does not know it. Deleted posts do not count."""
        today = midnight(now() if at is None else at)
        since = today - (HISTORY_DAYS - 1) * 86400
        reads = self.reads()
        reads.lrange("ids", keys.tag_posts(tag), 0, keys.TAG_CAP - 1)
        reads.zscore("indexed", keys.tag_index(), tag)
        got = reads.execute()
        ids = [int(i) for i in got.members("ids")]
        if not ids and got["indexed"] is None:
            return None
        uses: Counter[int] = Counter()
        authors: dict[int, set[int]] = {}
        for time, author in self._times_and_authors(ids, since):
            day = midnight(time)
            uses[day] += 1
            authors.setdefault(day, set()).add(author)
        days = [today - n * 86400 for n in range(HISTORY_DAYS)]
        return TagUse(tag, tuple(Day(d, uses[d], len(authors.get(d, ()))) for d in days))

    def _times_and_authors(self, ids: list[int], since: int) -> list[tuple[int, int]]:
        """(time, author) of each of ids written since `since` and not deleted: one
        pipeline for all of them (at most keys.TAG_CAP), rather than a round trip per
        page of the list until a day too old."""
        if not ids:
            return []
        pipe = self._pipe()
        for post_id in ids:
            pipe.hmget(keys.post(post_id), ["time", "user_id", "deleted"])
        found = []
        for fields in cast(list[Fields], pipe.execute()):
            time, author, deleted = (as_int(v) for v in fields)
            if time is not None and author is not None and not deleted and time >= since:
                found.append((time, author))
        return found

    def most_used(self, user_id: int, limit: int = 10) -> list[tuple[str, int]]:
        """The tags user_id used most in their newest USED_SCAN posts, with how often,
        most first (ties: the most recently used first)."""
        ids = self.r.lrange(keys.own_posts(user_id), 0, USED_SCAN - 1)
        if not ids:
            return []
        pipe = self._pipe()
        for post_id in cast(list[bytes], ids):
            pipe.hmget(keys.post(int(post_id)), ["tags", "deleted"])
        counts: Counter[str] = Counter()
        for tags, deleted in cast(list[Fields], pipe.execute()):
            if tags and not deleted:
                counts.update(s(tags).split())
        return counts.most_common(limit)
