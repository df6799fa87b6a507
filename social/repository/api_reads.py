"""What the client API reads besides pages of posts (which it reads on the read path):
accounts with their counts and relationships for many ids at once, the position of a post
in a list (Mastodon pages by id, the read path by offset), and likers. Every method is a
fixed number of round trips whatever the number of items, but `position`, which may
bisect a list (Source.position).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Unpack, cast

from redis.cluster import ClusterPipeline

from social import keys

from .base import (
    USER_FIELDS,
    Client,
    RepositoryBase,
    StoreSettings,
    as_int,
    counts_from,
    queue_counts,
    queue_users,
    s,
    user_from_hash,
    users_from,
)
from .models import Counts, Page, User
from .oauth import RememberedToken, StaleToken, queue_token_check, token_holds
from .reader import NamedReads, PageRead, PageReader
from .sources import ListPolicy, Source
from .visibility import Viewer

# Accounts with their counts in one command (one server only: the keys are in many cluster
# slots). KEYS: user:<id>, followers:<id>, following:<id>, user_posts:<id> for each
# account; ARGV: the user hash's fields (base.USER_FIELDS). Returns, for each account, its
# fields then its followers, following and posts.
ACCOUNTS_SCRIPT = """
local out = {}
for i = 1, #KEYS, 4 do
  local fields = redis.call('HMGET', KEYS[i], unpack(ARGV))
  for j = 1, #ARGV do out[#out + 1] = fields[j] end
  out[#out + 1] = redis.call('ZCARD', KEYS[i + 1])
  out[#out + 1] = redis.call('ZCARD', KEYS[i + 2])
  out[#out + 1] = redis.call('LLEN', KEYS[i + 3])
end
return out
"""


def queue_accounts(reads: NamedReads, ids: Sequence[int], names: Sequence[str] = ()) -> None:
    """Queue the accounts ids with their counts (see accounts_from): on one server one
    EVAL (ACCOUNTS_SCRIPT), as a page's post counts are; on a cluster a command a key.
    And the ids of names (names_from), by the one name rule (UserStore)."""
    for name in names:
        reads.hget(f"exact:{name}", keys.users(), name)
        reads.hget(f"lower:{name}", keys.usernames_lower(), name.lower())
    if not ids:
        return
    if isinstance(reads.pipe, ClusterPipeline):
        for uid in ids:
            reads.hmget(f"acct:{uid}", keys.user(uid), USER_FIELDS)
            reads.zcard(f"acct:followers:{uid}", keys.followers(uid))
            reads.zcard(f"acct:following:{uid}", keys.following(uid))
            reads.llen(f"acct:posts:{uid}", keys.own_posts(uid))
        return
    account_keys = [
        key
        for uid in ids
        for key in (keys.user(uid), keys.followers(uid), keys.following(uid), keys.own_posts(uid))
    ]
    reads.execute_command(
        "accounts", "EVAL", ACCOUNTS_SCRIPT, len(account_keys), *account_keys, *USER_FIELDS
    )


def names_from(got: dict, names: Sequence[str]) -> dict[str, int]:
    """{name: id} for those of names queue_accounts found."""
    found = {}
    for name in names:
        user_id = as_int(got[f"exact:{name}"])
        user_id = user_id if user_id is not None else as_int(got[f"lower:{name}"])
        if user_id is not None:
            found[name] = user_id
    return found


def accounts_from(got: dict, ids: Sequence[int]) -> dict[int, AccountRow]:
    """{id: AccountRow} for those of ids that exist, from what queue_accounts read."""
    if not ids:
        return {}
    width = len(USER_FIELDS) + 3
    reply = got.get("accounts")
    rows = {}
    for n, uid in enumerate(ids):
        if reply is not None:
            row = reply[n * width : (n + 1) * width]
            fields, counts = row[: len(USER_FIELDS)], row[-3:]
        else:
            fields = got[f"acct:{uid}"]
            counts = [got[f"acct:{name}:{uid}"] for name in ("followers", "following", "posts")]
        user = user_from_hash(uid, dict(zip(USER_FIELDS, map(s, fields))))
        if user is not None:
            rows[uid] = AccountRow(user, Counts(*(int(c) for c in counts)))
    return rows


@dataclass(frozen=True)
class AccountRow:
    """An account with its counts, as an API Account shows it."""

    user: User
    counts: Counts


@dataclass(frozen=True)
class Relationship:
    """The reader's relation to one account."""

    id: int
    following: bool = False
    followed_by: bool = False
    blocking: bool = False
    blocked_by: bool = False
    muting: bool = False


class ApiReadStore(RepositoryBase):
    """The client API's reads (see the module docstring)."""

    def __init__(
        self, client: Client, *, reader: PageReader, **config: Unpack[StoreSettings]
    ) -> None:
        super().__init__(client, **config)
        self.reader = reader

    def accounts(
        self, ids: Sequence[int], names: Sequence[str] = ()
    ) -> tuple[dict[int, AccountRow], dict[str, int]]:
        """Return {id: AccountRow} for the ids that exist, and {name: id} for names (the
        accounts a page's replies answer, by the name stored with each), in one round
        trip."""
        unique = list(dict.fromkeys(int(i) for i in ids))
        wanted = [n for n in dict.fromkeys(names) if 0 < len(n) <= 64]
        if not unique and not wanted:
            return {}, {}
        reads = self.reads()
        queue_accounts(reads, unique, wanted)
        got = reads.execute()
        return accounts_from(got, unique), names_from(got, wanted)

    def account(self, user_id: int) -> AccountRow | None:
        """One account with its counts, or None (one round trip)."""
        reads = self.reads()
        queue_users(reads, [user_id])
        queue_counts(reads, user_id)
        got = reads.execute()
        user = users_from(got, [user_id]).get(user_id)
        return AccountRow(user, counts_from(got)) if user is not None else None

    def relationships(self, viewer_id: int, ids: Sequence[int]) -> dict[int, Relationship]:
        """The reader's relation to each id, in one round trip (five ZMSCOREs)."""
        listed = list(dict.fromkeys(int(i) for i in ids))
        if not listed:
            return {}
        reads = self.reads()
        reads.zmscore("following", keys.following(viewer_id), listed)
        reads.zmscore("followed_by", keys.followers(viewer_id), listed)
        reads.zmscore("blocking", keys.blocks(viewer_id), listed)
        reads.zmscore("blocked_by", keys.blocked_by(viewer_id), listed)
        reads.zmscore("muting", keys.mutes(viewer_id), listed)
        got = reads.execute()
        return {
            uid: Relationship(
                uid,
                *(
                    cast(list, got[name])[i] is not None
                    for name in ("following", "followed_by", "blocking", "blocked_by", "muting")
                ),
            )  # fmt: skip
            for i, uid in enumerate(listed)
        }

    def position(self, source: Source, post_id: int) -> tuple[int, bool] | None:
        """Where post_id is in source's list, as the source finds it (Source.position)."""
        return self.reader.run(source.position(post_id))

    def page_from(
        self,
        source: Source,
        viewer: Viewer,
        offset: int,
        count: int,
        check: RememberedToken | None = None,
        *,
        shows: ListPolicy,
    ) -> tuple[PageRead, dict[int, AccountRow], dict[str, int]]:
        """Read `count` posts of source from `offset` on, on the read path; and the
        accounts the posts this process last listed there name (their authors, those of
        the posts their reposts share, and those their replies answer, by name), read on
        the page's first pipeline: when the page lists what it listed last, its accounts
        cost no round trip more. check: the caller's token as remembered, checked on the
        same pipeline (raise StaleToken when it no longer holds: nothing was shown)."""
        remembered = self.reader.last_listed(source, 1, count, offset=offset)
        authors = list(dict.fromkeys(post.author_id for post in remembered))
        named = {post.author_name for post in remembered}
        replied = (p.reply_to_name for p in remembered if p.reply_to_name not in named)
        names = [name for name in dict.fromkeys(replied) if name]

        def first(reads: NamedReads) -> None:
            queue_accounts(reads, authors, names)
            if check is not None:
                queue_token_check(reads, check)

        wanted = remembered or check is not None
        read = self.reader.page(
            source, viewer, 1, count, shows=shows, offset=offset, first=first if wanted else None
        )
        if check is not None and not token_holds(check, read.got):
            self.cache.tokens.discard(check.token.digest)
            raise StaleToken(check.token.digest)
        return read, accounts_from(read.got, authors), names_from(read.got, names)

    def likers(self, post_id: int, number: int, per_page: int) -> Page[User]:
        """The accounts that like post_id, most recent first (two round trips)."""
        return self._accounts_page(keys.likes(post_id), number, per_page)
