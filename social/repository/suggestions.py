"""People to follow, shown on an empty home page: active authors of the timeline's newest
posts, not followed by the reader, not the reader, not suspended or deleted.

The candidates are the same for everyone, so the process keeps them for
SUGGESTION_REFRESH seconds (ProcessCache.suggestions). Which of them the reader follows,
and which were suspended or deleted since, is read on the home page's own first pipeline
(three ZMSCOREs), queued only when that page may well be empty: no round trip of its own.
Building the candidates again (once a minute at most) reads the timeline's ids on that same
pipeline, then loads those posts (one or two round trips, which a page of posts would have
spent) and, for a reader who follows anyone, checks them against the reader's followings
(one more). A page the process remembered showing posts that is now empty reads what it did
not queue in one round trip more, once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Unpack

from social import keys

from .base import Client, NamedReads, RepositoryBase, StoreSettings
from .loading import PostLoader
from .models import User
from .users import name_has_url

# The authors of the newest SUGGESTION_SCAN posts of the timeline, up to SUGGESTION_POOL
# of them, remembered by the process for SUGGESTION_REFRESH seconds; SUGGESTIONS_SHOWN shown.
SUGGESTION_SCAN = 50
SUGGESTION_POOL = 20
SUGGESTION_REFRESH = 60
SUGGESTIONS_SHOWN = 5


class Suggestions(RepositoryBase):
    """People to follow for a reader whose home page is empty."""

    def __init__(
        self, client: Client, *, loader: PostLoader, **config: Unpack[StoreSettings]
    ) -> None:
        super().__init__(client, **config)
        self.loader = loader

    def _pool(self, clock: float) -> tuple[User, ...] | None:
        """The candidates as remembered, while fresh; None when they must be built."""
        remembered = self.cache.suggestions
        if remembered is not None and clock - remembered[0] < SUGGESTION_REFRESH:
            return remembered[1]
        return None

    def queue(self, reads: NamedReads, user_id: int, *, at: float | None = None) -> None:
        """Queue on a home page's first pipeline what for_reader needs."""
        pool = self._pool(time.time() if at is None else at)
        if pool is None:
            reads.lrange("suggest_ids", keys.timeline(), 0, SUGGESTION_SCAN - 1)
        elif pool:
            self._queue_checks(reads, user_id, pool)

    def for_reader(self, user_id: int, got: dict, *, at: float | None = None) -> list[User]:
        """Return up to SUGGESTIONS_SHOWN people for user_id, from what queue() read (or
        reading it now when it was not queued)."""
        clock = time.time() if at is None else at
        pool = self._pool(clock)
        if pool is not None:
            if not pool:
                return []
            if "suggest_followed" not in got:  # not queued: the page showed posts last time
                reads = self.reads()
                self._queue_checks(reads, user_id, pool)
                got = reads.execute()
            return self._cleared(got, user_id, pool)
        raw = got.get("suggest_ids")
        if raw is None:
            raw = self.r.lrange(keys.timeline(), 0, SUGGESTION_SCAN - 1)
        pool = self._build([int(i) for i in raw], got.get("version"))
        self.cache.suggestions = (clock, pool)
        others = [u for u in pool if u.id != user_id]
        if others and got.get("following"):
            scores = self.r.zmscore(keys.following(user_id), [str(u.id) for u in others])
            others = [u for u, score in zip(others, scores) if score is None]
        return others[:SUGGESTIONS_SHOWN]

    def _build(self, post_ids: Sequence[int], version: bytes | None) -> tuple[User, ...]:
        """Return the authors of the visible posts among post_ids, most posts first then
        most recent, up to SUGGESTION_POOL; only names a URL leads to (the Follow button
        needs one)."""
        posts = [p for p in self.loader.load(post_ids, version=version).posts if not p.is_hidden]
        tally: dict[int, list] = {}
        for post in posts:  # newest first: the first post seen is the author's newest
            entry = tally.setdefault(post.author_id, [0, len(tally), post])
            entry[0] += 1
        ranked = sorted(tally.items(), key=lambda item: (-item[1][0], item[1][1]))
        # Names and avatars as their posts were read (remembered for SUGGESTIONS' time).
        return tuple(
            User(
                id=author_id,
                username=post.author_name,
                display_name=post.author_display,
                avatar=post.author_avatar,
            )
            for author_id, (_, _, post) in ranked
            if name_has_url(post.author_name)
        )[:SUGGESTION_POOL]

    @staticmethod
    def _queue_checks(reads: NamedReads, user_id: int, pool: Sequence[User]) -> None:
        """Queue which of pool user_id follows and which were suspended or deleted since."""
        ids = [u.id for u in pool]
        reads.zmscore("suggest_followed", keys.following(user_id), ids)
        reads.zmscore("suggest_suspended", keys.suspended_users(), [u.username for u in pool])
        reads.zmscore("suggest_deleted", keys.deleted_users(), ids)

    @staticmethod
    def _cleared(got: dict, user_id: int, pool: Sequence[User]) -> list[User]:
        """Return up to SUGGESTIONS_SHOWN of pool that _queue_checks cleared."""
        checks = zip(
            pool, got["suggest_followed"], got["suggest_suspended"], got["suggest_deleted"]
        )
        return [
            user
            for user, followed, suspended, deleted in checks
            if user.id != user_id and followed is None and suspended is None and deleted is None
        ][:SUGGESTIONS_SHOWN]
