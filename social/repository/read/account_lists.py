"""Pages of accounts a person reads: followers and following, "followed by people you
follow", who likes and who reposts a post, the reader's blocks and mutes. Every one through
the account reader (account_reader.py) and the policy (visibility.py); the write stores
(graph, likes, reposts, blocks) write these sets and read none of these pages."""

from __future__ import annotations

from typing import Unpack

from social import keys

from ..base import Client, RepositoryBase, StoreSettings, decode_hash, user_from_hash
from ..models import FollowEntry, Page, User
from .account_reader import AccountReader, AccountSource
from .visibility import ANONYMOUS, Viewer, may_see_account

# "Followed by people you follow" looks at the viewer's newest MUTUAL_SCAN_LIMIT followings
# (pages.py counts them the same way).
MUTUAL_SCAN_LIMIT = 2000


class AccountListStore(RepositoryBase):
    """The pages of accounts above, as a viewer may see them listed."""

    def __init__(
        self, client: Client, *, accounts: AccountReader, **config: Unpack[StoreSettings]
    ) -> None:
        super().__init__(client, **config)
        self.accounts = accounts

    def follow_list(
        self,
        user_id: int,
        which: str,
        number: int = 1,
        per_page: int = 50,
        viewer: Viewer = ANONYMOUS,
        *,
        counts: bool = False,
    ) -> Page[FollowEntry]:
        """Return a page of followers or following ("followers"/"following"), newest first,
        as viewer may see them listed (account_reader.py: two round trips)."""
        key = {"followers": keys.followers, "following": keys.following}[which](user_id)
        return self.accounts.page(AccountSource.zset(key), viewer, number, per_page, counts=counts)

    def mutuals(
        self, user_id: int, viewer: Viewer, number: int = 1, per_page: int = 50
    ) -> tuple[User | None, Page[FollowEntry]]:
        """Return user_id's account (None: none, or hidden from viewer) and a page of the
        accounts viewer follows that follow it ("Followed by people you follow"), those
        viewer followed last first, each with when it followed user_id: among the viewer's
        newest MUTUAL_SCAN_LIMIT followings, as the profile counts them.

        Three round trips whatever the numbers: the account with the viewer's followings;
        which of them follow user_id (one ZMSCORE: the two sets may be on two cluster
        nodes); the page's accounts and the viewer's relations to them, as follow_list."""
        pipe = self._pipe()
        pipe.hgetall(keys.user(user_id))
        if viewer.id is not None:
            pipe.zrevrange(keys.following(viewer.id), 0, MUTUAL_SCAN_LIMIT - 1)
        owner_hash, *followings = pipe.execute()
        owner = user_from_hash(user_id, decode_hash(owner_hash))
        empty = Page[FollowEntry](items=[], number=number, has_next=False, total=0)
        if owner is not None and not may_see_account(viewer, owner):
            owner = None
        candidates = [int(i) for i in (followings[0] if followings else ()) if int(i) != user_id]
        if owner is None or not candidates:
            return owner, empty
        scores = self.r.zmscore(keys.followers(user_id), [str(i) for i in candidates])
        found = [(i, int(score)) for i, score in zip(candidates, scores or ()) if score is not None]
        return owner, self.accounts.page(AccountSource.given(rows=found), viewer, number, per_page)

    def likers(
        self, post_id: int, viewer: Viewer, number: int = 1, per_page: int = 40
    ) -> Page[FollowEntry]:
        """The accounts that like post_id as viewer may see them listed, most recent first,
        with their counts (account_reader.py: two round trips)."""
        source = AccountSource.zset(keys.likes(post_id))
        return self.accounts.page(source, viewer, number, per_page, counts=True)

    def reposted_by(
        self, post_id: int, viewer: Viewer, number: int = 1, per_page: int = 40
    ) -> Page[FollowEntry]:
        """The accounts that repost post_id as viewer may see them listed, most recent
        first, with their counts (account_reader.py: two round trips)."""
        source = AccountSource.zset(keys.reposts(post_id))
        return self.accounts.page(source, viewer, number, per_page, counts=True)

    def blocks_page(
        self, user_id: int, number: int = 1, per_page: int = 50, *, counts: bool = False
    ) -> Page[FollowEntry]:
        """The accounts user_id blocks, newest first, paged (every one: account_reader.py)."""
        source = AccountSource.zset(keys.blocks(user_id), own=True)
        return self.accounts.page(source, Viewer(user_id), number, per_page, counts=counts)

    def mutes_page(
        self, user_id: int, number: int = 1, per_page: int = 50, *, counts: bool = False
    ) -> Page[FollowEntry]:
        """The accounts user_id mutes, newest first, paged (every one: account_reader.py)."""
        source = AccountSource.zset(keys.mutes(user_id), own=True)
        return self.accounts.page(source, Viewer(user_id), number, per_page, counts=counts)
