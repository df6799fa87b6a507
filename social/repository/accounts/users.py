"""Accounts: sign-up, lookup, credentials, the auth secret; accounts with their counts and
the reader's relationships to them, many at a time (the client API's entities)."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from redis.cluster import ClusterPipeline

from social import keys

from ..base import (
    USER_FIELDS,
    NamedReads,
    RepositoryBase,
    as_int,
    counts_from,
    decode_hash,
    now,
    queue_counts,
    queue_users,
    s,
    user_from_hash,
    users_from,
)
from ..errors import UsernameTaken
from ..models import Counts, Credentials, User

# Sign-up looks again at this many ids below users_lower_checked: an account whose hash was
# not yet written when the mark moved past its id (a reference sign-up in flight).
LEGACY_RECHECK = 50
CLAIM_BATCH = 1000  # ids looked at per pipeline when claiming legacy names

# The longest name a lookup considers. Ours have at most 20 characters; the reference Retwis
# set no limit, but nothing longer is looked up (a bound on what a URL can make us read).
NAME_LOOKUP_MAX = 64


def new_secret() -> str:
    """Return a fresh unguessable auth secret (160 bits, hex like the reference)."""
    return secrets.token_hex(20)


def name_has_url(name: str) -> bool:
    """Return whether a URL path segment (/u/<name>/) leads back to the account called name.

    The reference Retwis took any name. A segment cannot be empty or hold a "/", browsers
    resolve "." and ".." away, and lookups ignore names longer than NAME_LOOKUP_MAX: pages
    show such names unlinked and staff open those accounts by id (`manage.py repair` lists
    them).
    """
    return 0 < len(name) <= NAME_LOOKUP_MAX and "/" not in name and name not in {".", ".."}


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


class UserStore(RepositoryBase):
    """Accounts and the `auth` secret."""

    def create_user(self, username: str, password_hash: str, *, at: int | None = None) -> User:
        """Create an account and return it; raise UsernameTaken if the name (any case) is used.

        The name is claimed with HSETNX before anything else is written, so two simultaneous
        sign-ups with one name give exactly one account. If the process dies between the claim
        and the writes, the claim points at an id with no user hash: `manage.py repair` frees
        such claims.
        """
        ts = now() if at is None else at
        self.claim_legacy_names()
        user_id = int(self.r.incr(keys.next_user_id()))
        self._claim_username(username, user_id)
        pipe = self._pipe()
        self.queue_user_writes(pipe, user_id, username, password_hash, new_secret(), ts)
        pipe.execute()
        return User(id=user_id, username=username, signup_time=ts)

    def _claim_username(self, username: str, user_id: int) -> None:
        """Claim username (ignoring case) for user_id or raise UsernameTaken.

        When the claim was ours but a legacy account has the name, the claim is handed to
        that account (it had none): the name is claimed on first sight.
        """
        pipe = self._pipe()
        self.queue_claim(pipe, username, user_id)
        claimed, legacy_ids = pipe.execute()
        if not self.claim_won(user_id, claimed, legacy_ids):
            if claimed:
                holder = next(int(i) for i in legacy_ids if i is not None and int(i) != user_id)
                self.r.hset(keys.usernames_lower(), username.lower(), holder)
            raise UsernameTaken(username)

    def claim_legacy_names(self) -> int:
        """Claim in users_lower the names of accounts created since the last call; return
        how many claims were written.

        The reference Retwis writes `users` but not users_lower, so without this a new
        "legacybob" could sign up beside a legacy "LegacyBob" until `manage.py repair` ran.
        Ids come from the one counter both share (next_user_id), so the accounts created
        since the last look are the ids above users_lower_checked, and the last
        LEGACY_RECHECK below it are looked at again. Sign-up calls this first: after a
        database's first call (every id once, CLAIM_BATCH per pipeline) it costs four
        round trips. Two sign-ups doing it at once write the same claims (HSETNX).
        """
        pipe = self._pipe()
        pipe.get(keys.usernames_lower_checked())
        pipe.get(keys.next_user_id())
        checked, top = (as_int(reply) or 0 for reply in pipe.execute())
        claimed = 0
        for start in range(max(1, checked - LEGACY_RECHECK + 1), top + 1, CLAIM_BATCH):
            ids = range(start, min(top, start + CLAIM_BATCH - 1) + 1)
            claimed += self._claim_names(self._names_of_ids(ids))
        if top > checked:
            self.r.set(keys.usernames_lower_checked(), top)
        return claimed

    def ids_after_claiming(self, names: Sequence[str]) -> dict[str, int]:
        """Claim the names of accounts the reference Retwis wrote since the last look
        (claim_legacy_names), then return {name: id} for those of names now claimed
        ignoring case. For a mention of "@legacylee" whose account the reference wrote as
        "LegacyLee": an exact look-up misses it and users_lower does not know it yet."""
        if not names or not self.claim_legacy_names():
            return {}
        claimed = self.r.hmget(keys.usernames_lower(), [name.lower() for name in names])
        return {
            name: user_id
            for name, found in zip(names, claimed)
            if (user_id := as_int(found)) is not None
        }

    def _claim_names(self, accounts: Sequence[tuple[str, int]]) -> int:
        """Claim each (name, id) in users_lower (HSETNX: a claim held already stays) and
        index it for staff search; return how many claims were written. One round trip."""
        if not accounts:
            return 0
        pipe = self._pipe()
        for name, user_id in accounts:
            pipe.hsetnx(keys.usernames_lower(), name.lower(), user_id)
            pipe.zadd(keys.username_index(), {name.lower(): 0})
        return sum(pipe.execute()[::2])

    def queue_claim(self, pipe, username: str, user_id: int) -> None:
        """Queue the claim of username (ignoring case) for user_id: two replies for claim_won.

        A legacy (reference-written) account has no users_lower entry, so the name is also
        looked up in `users` as typed and lower-cased (a mixed-case legacy name stays
        reachable by its exact name).
        """
        pipe.hsetnx(keys.usernames_lower(), username.lower(), user_id)
        pipe.hmget(keys.users(), [username, username.lower()])

    @staticmethod
    def claim_won(user_id: int, claimed: int, legacy_ids: list) -> bool:
        """Return whether queue_claim's replies give user_id the name.

        When the HSETNX won but a legacy account holds the name, the caller must release
        the claim (HDEL users_lower) before giving up.
        """
        return bool(claimed) and all(i is None or int(i) == user_id for i in legacy_ids)

    def queue_user_writes(
        self, pipe, user_id: int, username: str, password_hash: str, secret: str, ts: int
    ) -> None:
        """Queue every write of a new account after its name was claimed.

        The user hash goes first: the indexes only ever point at a complete hash.
        """
        pipe.hset(
            keys.user(user_id),
            mapping={"username": username, "password": password_hash, "auth": secret, "signup": ts},
        )
        pipe.hset(keys.users(), username, user_id)
        pipe.hset(keys.auths(), secret, user_id)
        pipe.zadd(keys.users_by_time(), {username: ts})
        pipe.zadd(keys.username_index(), {username.lower(): 0})
        self._count_event(pipe, "signups", ts)

    def user_id_for_name(self, username: str) -> int | None:
        """Return the id of username (ignoring case), or None. One round trip."""
        return self.user_ids_for_names([username])[0]

    def user_ids_for_names(self, names: Sequence[str]) -> list[int | None]:
        """Return the id of each name (ignoring case), or None, in one round trip.

        The one rule for a name: the account whose name is exactly that wins (a legacy
        "Bob" written by the reference Retwis must not be shadowed by a newer "bob"), else
        the account that claimed it ignoring case. Empty names and names longer than any
        username are nobody's. A legacy name found here unclaimed is claimed for its
        account (one round trip more, once), so no "bob" can sign up beside "Bob" from then.
        """
        wanted = [name for name in names if 0 < len(name) <= NAME_LOOKUP_MAX]
        if not wanted:
            return [None] * len(names)
        pipe = self._pipe()
        for name in wanted:
            pipe.hget(keys.users(), name)  # exact: also accounts written by the reference
            pipe.hget(keys.usernames_lower(), name.lower())
        replies = iter(pipe.execute())
        found: dict[str, int | None] = {}
        unclaimed: list[tuple[str, int]] = []
        for name, exact, lower in zip(wanted, replies, replies):
            exact_id = as_int(exact)
            found[name] = exact_id if exact_id is not None else as_int(lower)
            if exact_id is not None and lower is None:
                unclaimed.append((name, exact_id))
        self._claim_names(unclaimed)
        return [found.get(name) for name in names]

    def get_user(self, user_id: int) -> User | None:
        """Return the user with this id, or None."""
        return user_from_hash(user_id, decode_hash(self.r.hgetall(keys.user(user_id))))

    def get_user_by_name(self, username: str) -> User | None:
        """Return the user called username (ignoring case), or None."""
        user_id = self.user_id_for_name(username)
        return None if user_id is None else self.get_user(user_id)

    def get_credentials(self, username: str) -> Credentials | None:
        """Return the user and stored password field for username, or None."""
        user_id = self.user_id_for_name(username)
        if user_id is None:
            return None
        h = decode_hash(self.r.hgetall(keys.user(user_id)))
        user = user_from_hash(user_id, h)
        if user is None:
            return None
        return Credentials(user=user, password=h.get("password") or "")

    def set_password_hash(self, user_id: int, password_hash: str) -> None:
        """Store a new password hash (e.g. upgrading a legacy plain-text password)."""
        self.r.hset(keys.user(user_id), "password", password_hash)

    def user_for_secret(self, secret: str) -> User | None:
        """Return the user whose current auth secret is `secret`, or None.

        `auths` may hold stale secrets (written by the reference, or left by a crash during
        rotation), so the secret is checked against user:<id>.auth in constant time. That
        check is the truth, so the process remembers which user a valid secret belongs to
        and a returning cookie costs one round trip (the user hash), not two; a page of
        posts pays none (remembered_user: the read path checks it on its own pipeline).
        """
        if not secret or len(secret) > 128:
            return None
        known = self.cache.secrets.get(secret)
        user_id = known.id if known is not None else as_int(self.r.hget(keys.auths(), secret))
        if user_id is None:
            return None
        return self.checked_user(secret, user_id, self.r.hgetall(keys.user(user_id)))

    def remembered_user(self, secret: str) -> User | None:
        """The user this process last found behind `secret`, unchecked (no round trip):
        only for a read that checks it on its own first pipeline (visibility.ViewerCheck,
        reader.py)."""
        return self.cache.secrets.get(secret) if 0 < len(secret) <= 128 else None

    def checked_user(self, secret: str, user_id: int, raw: Mapping) -> User | None:
        """Return the user of user_id's hash (an HGETALL reply) when its current secret is
        `secret` (compared in constant time) and the account is not suspended, else None;
        remember the user for the secret, or forget the secret."""
        h = decode_hash(raw)
        user = user_from_hash(user_id, h)
        if user is None or not secrets.compare_digest(
            (h.get("auth") or "").encode(), secret.encode()
        ):
            self.cache.secrets.discard(secret)
            return None
        if user.is_suspended:
            self.cache.secrets.discard(secret)
            return None
        self.cache.secrets.put(secret, user)
        return user

    def record_login(self, user_id: int, ip: str = "", *, at: int | None = None) -> str:
        """Note a successful login (time, IP, daily counters) and return the auth secret."""
        ts = now() if at is None else at
        pipe = self._pipe()
        pipe.hset(keys.user(user_id), mapping={"last_login": ts, "last_login_ip": ip[:64]})
        pipe.hget(keys.user(user_id), "auth")
        self._count_event(pipe, "logins", ts)
        self._mark_active(pipe, user_id, ts)
        secret = s(pipe.execute()[1])
        if not secret:  # an account written without a secret: give it one
            return self.rotate_secret(user_id)
        # Make sure `auths` leads to it: on a Redis Cluster a rotation's writes to the user
        # hash and to `auths` land on different nodes, and one may have been lost.
        self.r.hset(keys.auths(), secret, user_id)
        return secret

    def rotate_secret(self, user_id: int) -> str:
        """Give the user a new auth secret (logging out every device) and return it."""
        old = s(self.r.hget(keys.user(user_id), "auth"))
        pipe = self._pipe()
        secret = self.queue_secret_rotation(pipe, user_id, old)
        pipe.execute()
        return secret

    def queue_secret_rotation(self, pipe, user_id: int, old: str | None) -> str:
        """Queue replacing user_id's secret `old` with a new one; return the new one.

        The new secret is written to the user hash and `auths` before the old `auths` entry
        is removed; a crash in between, or a rotation racing this one, leaves a stale
        `auths` entry that user_for_secret already rejects (it is not user:<id>.auth).
        """
        secret = new_secret()
        pipe.hset(keys.user(user_id), "auth", secret)
        pipe.hset(keys.auths(), secret, user_id)
        if old:
            pipe.hdel(keys.auths(), old)
        return secret

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
