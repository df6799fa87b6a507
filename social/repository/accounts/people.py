"""Who is here and who knows whom, for the client API: the profile directory (the newest
accounts, or the recently active ones) and "familiar followers" (which of the accounts a
reader follows follow someone). Every account listed goes through the account read path
(account_reader.py): suspended and deleted accounts, and those a block keeps apart from
the reader, are left out there, as from every list.

Bounded whatever the data: the directory reads one page of sign-ups, or the authors of the
timeline's posts (the timeline keeps RETWIS_TIMELINE_CAP, 1,000); familiar followers read
at most FAMILIAR_SCAN of the reader's follows and of each account's followers, in two or
three round trips (then the accounts) whatever the number of ids asked about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Unpack, cast

from social import keys

from ..base import Client, Members, RepositoryBase, Scores, StoreSettings, as_int, s
from ..models import FollowEntry
from ..read.account_reader import AccountReader, AccountSource
from ..read.visibility import Viewer
from .users import UserStore

# The reader's follows (newest first) held against each account's followers; past it, an
# account with more followers than this is compared with the reader's newest follows only.
FAMILIAR_SCAN = 1000
FAMILIAR_SHOWN = 40  # accounts answered for one account at most


@dataclass(frozen=True)
class Familiar:
    """An account asked about and the accounts the reader follows that follow it."""

    id: int
    accounts: list[FollowEntry]


class PeopleStore(RepositoryBase):
    """The profile directory and familiar followers (see the module docstring)."""

    def __init__(
        self,
        client: Client,
        *,
        accounts: AccountReader,
        users: UserStore,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.accounts = accounts
        self.users = users

    def listed(self, ids: Sequence[int], viewer: Viewer) -> list[FollowEntry]:
        """ids as the account read path lists them for viewer, with their counts, in
        order (one round trip; none for no ids)."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return []
        source = AccountSource.given(ids)
        return self.accounts.page(source, viewer, 1, len(ids), counts=True).items

    def newest(self, viewer: Viewer, offset: int, limit: int) -> list[FollowEntry]:
        """Accounts by sign-up, newest first, from `offset`: three round trips (the names,
        their ids, the accounts)."""
        names = cast(Members, self.r.zrevrange(keys.users_by_time(), offset, offset + limit - 1))
        ids = self.users.user_ids_for_names([s(n) for n in names])
        return self.listed([i for i in ids if i is not None], viewer)

    def recently_active(self, viewer: Viewer, offset: int, limit: int) -> list[FollowEntry]:
        """The authors of the timeline's posts (the site's newest, reposts not among
        them), the most recent poster first, from `offset`: three round trips (the ids,
        the posts' authors, the accounts). Someone whose newest post has left the
        timeline is not among them."""
        ids = cast(Members, self.r.lrange(keys.timeline(), 0, -1))
        if not ids:
            return []
        pipe = self._pipe()
        for post_id in ids:
            pipe.hget(keys.post(int(post_id)), "user_id")
        authors = (as_int(author) for author in pipe.execute())
        ordered = list(dict.fromkeys(a for a in authors if a is not None))
        return self.listed(ordered[offset : offset + limit], viewer)

    def familiar_followers(self, reader_id: int, ids: Sequence[int]) -> dict[int, list[int]]:
        """For each of ids, the accounts reader_id follows that follow it, most recently
        followed by the reader first, at most FAMILIAR_SHOWN (ids only: list them with
        `listed`). Two round trips when the reader follows at most FAMILIAR_SCAN accounts
        (their follows with every account's follower count; then one ZMSCORE an account),
        three when they follow more and an account has at most FAMILIAR_SCAN followers
        (those followers read, then held against the reader's follows); past both, the
        reader's newest FAMILIAR_SCAN follows are the ones compared."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        reads = self.reads()
        reads.zcard("following", keys.following(reader_id))
        reads.zrevrange("newest", keys.following(reader_id), 0, FAMILIAR_SCAN - 1)
        for uid in ids:
            reads.zcard(f"followers:{uid}", keys.followers(uid))
        got = reads.execute()
        follows = [int(i) for i in got.members("newest")]
        if not follows:
            return {uid: [] for uid in ids}
        all_read = got.count("following") <= FAMILIAR_SCAN
        small = [
            uid
            for uid in ids
            if not all_read and 0 < got.count(f"followers:{uid}") <= FAMILIAR_SCAN
        ]
        found: dict[int, list[int]] = {}
        reads = self.reads()
        for uid in ids:
            if uid in small:  # read its followers: held against all the reader follows
                reads.zrange(f"of:{uid}", keys.followers(uid), 0, -1)
            elif got.count(f"followers:{uid}"):
                reads.zmscore(f"in:{uid}", keys.followers(uid), follows)
        got = reads.execute()
        for uid in ids:
            scores = got.get(f"in:{uid}")
            hits = zip(follows, cast(Scores, scores)) if scores is not None else ()
            found[uid] = [f for f, score in hits if score is not None and f != uid]
        if small:
            found.update(self._held_against_follows(reader_id, small, got))
        return {uid: found.get(uid, [])[:FAMILIAR_SHOWN] for uid in ids}

    def _held_against_follows(
        self, reader_id: int, small: list[int], got: dict
    ) -> dict[int, list[int]]:
        """For accounts with few followers (read in `got` as "of:<id>"), those of their
        followers reader_id follows, most recently followed first (one round trip)."""
        followers = {uid: [int(i) for i in cast(Members, got[f"of:{uid}"])] for uid in small}
        reads = self.reads()
        for uid, theirs in followers.items():
            if theirs:
                reads.zmscore(f"mine:{uid}", keys.following(reader_id), theirs)
        mine = reads.execute()
        found = {}
        for uid, theirs in followers.items():
            scores = cast(Scores, mine.get(f"mine:{uid}") or [])
            followed = [(score, f) for f, score in zip(theirs, scores) if score is not None]
            found[uid] = [f for _, f in sorted(followed, reverse=True) if f != uid]
        return found
