"""People to follow, shown on an empty home page: the authors of the timeline's newest
posts as a visitor may see them listed (the read path: reader.py), most posts first, not
the reader nor whom they follow, each as a list of accounts shows it to the reader
(visibility.listable_accounts: not suspended or deleted, not across a block).

The candidates are the same for everyone, so the process keeps them for
SUGGESTION_REFRESH seconds (ProcessCache.suggestions). Which of them the reader follows,
and which were suspended or deleted since, is read on the home page's own first pipeline
(three ZMSCOREs), queued only when that page may well be empty: no round trip of its own.
Building the candidates again (once a minute at most) reads the timeline's ids on that same
pipeline, then those posts on the read path (one or two round trips, which a page of posts
would have spent) and, for a reader who follows anyone, checks them against the reader's
followings (one more). A page the process remembered showing posts that is now empty
reads what it did not queue in one round trip more, once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Unpack

from social import keys

from ..accounts.users import name_has_url
from ..base import Client, NamedReads, RepositoryBase, StoreSettings
from ..models import User
from .reader import PageReader
from .sources import PLAIN, Listed
from .visibility import ANONYMOUS, Relations, Viewer, listable_accounts

# The authors of the newest SUGGESTION_SCAN posts of the timeline, up to SUGGESTION_POOL
# of them, remembered by the process for SUGGESTION_REFRESH seconds; SUGGESTIONS_SHOWN shown.
SUGGESTION_SCAN = 50
SUGGESTION_POOL = 20
SUGGESTION_REFRESH = 60
SUGGESTIONS_SHOWN = 5


class Suggestions(RepositoryBase):
    """People to follow for a reader whose home page is empty."""

    def __init__(
        self, client: Client, *, reader: PageReader, **config: Unpack[StoreSettings]
    ) -> None:
        super().__init__(client, **config)
        self.reader = reader

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

    def for_reader(
        self, viewer: Viewer, got: dict, relations: Relations, *, at: float | None = None
    ) -> list[User]:
        """Return up to SUGGESTIONS_SHOWN people for viewer, whose relations the home page
        read, from what queue() read (or reading it now when it was not queued)."""
        assert viewer.id is not None
        user_id = viewer.id
        clock = time.time() if at is None else at
        pool = self._pool(clock)
        if pool is not None:
            if not pool:
                return []
            if "suggest_followed" not in got:  # not queued: the page showed posts last time
                reads = self.reads()
                self._queue_checks(reads, user_id, pool)
                got = reads.execute()
            return self._listed(viewer, relations, self._checked(got, pool))
        raw = got.get("suggest_ids")
        if raw is None:
            raw = self.r.lrange(keys.timeline(), 0, SUGGESTION_SCAN - 1)
        pool = self._build([int(i) for i in raw])
        self.cache.suggestions = (clock, pool)
        others = [u for u in pool if u.id != user_id]
        if others and got.get("following"):
            scores = self.r.zmscore(keys.following(user_id), [str(u.id) for u in others])
            others = [u for u, score in zip(others, scores) if score is None]
        return self._listed(viewer, relations, others)

    @staticmethod
    def _listed(viewer: Viewer, relations: Relations, users: Sequence[User]) -> list[User]:
        """The first SUGGESTIONS_SHOWN of users (the reader aside) a list shows viewer."""
        others = (user for user in users if user.id != viewer.id)
        return listable_accounts(viewer, others, relations)[:SUGGESTIONS_SHOWN]

    def _build(self, post_ids: Sequence[int]) -> tuple[User, ...]:
        """Return the authors of the posts among post_ids that a visitor may see listed,
        most posts first then most recent, up to SUGGESTION_POOL; only names a URL leads
        to (the Follow button needs one)."""
        listed = Listed(tuple(post_ids))
        posts = self.reader.page(
            listed, ANONYMOUS, 1, max(1, len(post_ids)), shows=PLAIN
        ).page.items
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
    def _checked(got: dict, pool: Sequence[User]) -> list[User]:
        """Those of pool the reader does not follow, suspended or deleted since as such
        (what _queue_checks read)."""
        checks = zip(
            pool, got["suggest_followed"], got["suggest_suspended"], got["suggest_deleted"]
        )
        return [
            replace(user, is_suspended=suspended is not None or deleted is not None)
            for user, followed, suspended, deleted in checks
            if followed is None
        ]
