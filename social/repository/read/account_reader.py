"""The read path for pages of accounts: followers, following, "followed by people you
follow", likers, reposters, the reader's blocks and mutes, search results, suggestions and
the client API's lists, each read from an account source for a viewer and shown as
visibility.may_list_account says; nothing else decides which accounts a list shows.

    page = repo.account_reader.page(AccountSource.zset(keys.followers(uid)), viewer, 1, 50)

A list kept in a sorted set costs two round trips (its page of ids, newest first, with its
size; then the accounts), accounts given by id one. The reader's own sets (relations_of.py's
reader side, as a page of posts reads them) and whether they follow each account
and are followed by it ride on the accounts' pipeline, which reaches every node they might
be on (a cluster), as the read path of posts reads them with its posts (reader.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from social import keys

from ..accounts.users import accounts_from, queue_accounts
from ..base import Reply, RepositoryBase, Scored, Scores, page_bounds, queue_users, users_from
from ..models import FollowEntry, Page
from .relations_of import queue_reader_sets, reader_relations
from .visibility import Viewer, may_list_account

# A sorted set's page of (account, since) rows and its size; then whether the reader follows
# each account listed and is followed by it (a score per account, None where not).
ROWS = Reply[Scored]("rows")
SIZE = Reply[int]("size")
VIEWER_FOLLOWS = Reply[Scores]("viewer_follows")
FOLLOWS_VIEWER = Reply[Scores]("follows_viewer")


@dataclass(frozen=True)
class AccountSource:
    """Where a page's accounts come from: the sorted set at `key`, highest score (newest)
    first, or `rows` given as (account id, since) in order. `own`: the reader's own list
    of blocks or mutes (may_list_account shows every account in it)."""

    key: str | None = None
    rows: tuple[tuple[int, int], ...] = ()
    own: bool = False

    @classmethod
    def zset(cls, key: str, *, own: bool = False) -> AccountSource:
        return cls(key=key, own=own)

    @classmethod
    def given(cls, ids: Sequence[int] = (), rows: Sequence[tuple[int, int]] = ()) -> AccountSource:
        """Accounts named by id (search results, suggestions), or (id, since) rows."""
        return cls(rows=(*rows, *((i, 0) for i in ids)))


class AccountReader(RepositoryBase):
    """The one read seam for pages of accounts (see the module docstring)."""

    def page(
        self,
        source: AccountSource,
        viewer: Viewer,
        number: int = 1,
        per_page: int = 50,
        *,
        counts: bool = False,
    ) -> Page[FollowEntry]:
        """Return page `number` of source's accounts as viewer may see them listed, each
        with when it joined the list and whether viewer follows it and is followed by it;
        counts: with its follower, following and post counts (the client API's accounts,
        search), on the same pipeline."""
        start, stop = page_bounds(number, per_page)
        if source.key is None:
            rows, total = list(source.rows[start : stop + 1]), len(source.rows)
        else:
            reads = self.reads()
            reads.zrevrange(ROWS, source.key, start, stop, withscores=True)
            reads.zcard(SIZE, source.key)
            got = reads.execute()
            rows, total = [(int(member), int(score)) for member, score in got[ROWS]], got[SIZE]
        has_next = len(rows) > per_page
        rows = rows[:per_page]
        return Page(
            items=self._entries(rows, source, viewer, counts=counts),
            number=number,
            has_next=has_next,
            total=total,
            per_page=per_page,
        )

    def _entries(
        self, rows: list[tuple[int, int]], source: AccountSource, viewer: Viewer, *, counts: bool
    ) -> list[FollowEntry]:
        """The rows as viewer may see them listed: one round trip (none for no rows)."""
        listed = list(dict.fromkeys(uid for uid, _ in rows))
        if not listed:
            return []
        reads = self.reads()
        if counts:
            queue_accounts(reads, listed)
        else:
            queue_users(reads, listed)
        if viewer.id is not None:
            reads.zmscore(VIEWER_FOLLOWS, keys.following(viewer.id), listed)
            reads.zmscore(FOLLOWS_VIEWER, keys.followers(viewer.id), listed)
            if not source.own:
                queue_reader_sets(reads, viewer)
        got = reads.execute()
        relations = reader_relations(viewer, got)
        if counts:
            found = accounts_from(got, listed)
            users = {uid: row.user for uid, row in found.items()}
        else:
            users = users_from(got, listed)
        n = len(listed)
        follows = dict(zip(listed, got.scores_if_read(VIEWER_FOLLOWS, n)))
        followed_by = dict(zip(listed, got.scores_if_read(FOLLOWS_VIEWER, n)))
        return [
            FollowEntry(
                user=users[uid],
                since=since,
                viewer_follows=follows[uid] is not None,
                follows_viewer=followed_by[uid] is not None,
                counts=found[uid].counts if counts else None,
            )
            for uid, since in rows
            if uid in users and may_list_account(viewer, users[uid], relations, own=source.own)
        ]
