"""Remote accounts: an account of another server kept here as an account of ours.

A remote actor gets a numeric id from `next_user_id`, like a sign-up, and a `user:<id>`
hash the site's pages read as they read any account's: `username` is `name@domain`, so every
page, link and card names it as the fediverse does, and `domain` says it is remote (the
User's `domain`). The hash adds what federation needs (docs/data-layout.md): `uri`, `url`,
`inbox`, `shared_inbox`, `outbox`, `followers_url`, `following_url`, `key_id`,
`public_key` (PEM), `actor_type`, `locked`, `summary` (the bio, sanitised HTML) and
`summary_text`, `avatar_url` and `header_url` (the remote pictures' addresses: the worker's
picture job will fetch them into `avatar`/`header`), `followers_count`, `following_count`,
`statuses_count` (as its server reports them), `fetched_at`; `signup` is its `published`.

Remote accounts are not in `users`, `users_lower`, `users_lex` or `users_by_time`: logging
in, the user count, sign-up's name rule and exact-name lookups are about local accounts
(and base._names_of_ids leaves them out of the walks that fill those). They are found by
three indexes of their own (keys.remote_actor_by_uri, _by_acct, _by_key), each entry a
pointer checked against the hash when read.

Upserting is idempotent and safe to race: the actor's id (a URL) is claimed once by a
one-key script (SET when absent), so two workers upserting one actor end with one account
(the loser's id from next_user_id stays unused, as a failed sign-up's does). Then the hash
is written by a one-key script that refuses a hash holding another account, then the
address and key indexes (and the display-name words search reads). Stopped between the
claim and the hash, the claimed id has no account yet: lookups find none, and the next
upsert writes it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import cast

import redis

from social import keys
from social.federation.actor_documents import ActorDocument
from social.federation.names import InvalidAddress, parse_address, url_domain

from ..accounts.name_words import queue_name_words
from ..base import STATUS_DELETED, STATUS_SUSPENDED, RepositoryBase, as_int, s
from ..errors import RepositoryError
from ..models import Counts
from .domains import queue_domain_index

REFRESH_AFTER = 24 * 3600  # an actor older than this is fetched again when next resolved
MANY_MAX = 200  # accounts read at once (get_many)

# What an upsert writes, from the ActorDocument (optional fields absent when empty).
REQUIRED = ("username", "domain", "uri", "inbox", "key_id", "public_key", "actor_type")
OPTIONAL = (
    "signup",
    "display_name",
    "summary",
    "summary_text",
    "url",
    "shared_inbox",
    "outbox",
    "followers_url",
    "following_url",
    "avatar_url",
    "header_url",
    "locked",
)
# Kept when an upsert does not know them (a count its server did not give this time).
COUNTS = ("followers_count", "following_count", "statuses_count")
READ_FIELDS = (*REQUIRED, *OPTIONAL, *COUNTS, "fetched_at", "status")

# KEYS[1]: keys.remote_actor_by_uri(uri). ARGV[1]: a new id (from next_user_id).
# Returns the id the actor has: the one held already, else ARGV[1], now held.
CLAIM_SCRIPT = """
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
"""

# KEYS[1]: user:<id>. ARGV[1]: the actor's uri; ARGV[2]: n, how many fields follow to
# delete; ARGV[3 .. 2+n]: those fields; then field, value pairs to set. Refuses (an error
# reply) a hash that holds a local account (a name and no uri) or another actor; returns
# the username and key id it held before, then the counts it holds now (COUNTS).
UPSERT_SCRIPT = """
local held = redis.call('HMGET', KEYS[1], 'username', 'uri', 'key_id')
if (held[1] and not held[2]) or (held[2] and held[2] ~= ARGV[1]) then
  return redis.error_reply('ACTOR user hash holds another account')
end
local n = tonumber(ARGV[2])
if n > 0 then redis.call('HDEL', KEYS[1], unpack(ARGV, 3, 2 + n)) end
redis.call('HSET', KEYS[1], unpack(ARGV, 3 + n))
local counts = redis.call('HMGET', KEYS[1], 'followers_count', 'following_count', 'statuses_count')
return {held[1], held[3], counts[1], counts[2], counts[3]}
"""

# KEYS[1]: an index entry (acct or key id). ARGV[1]: an id. Deletes the entry while it
# still names that id (the account moved off it; another may hold it since).
RELEASE_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class ActorConflict(RepositoryError):
    """The id an actor's uri points to holds another account: nothing was written."""


@dataclass(frozen=True)
class RemoteActor:
    """A remote account as stored: the account's id here and what federation keeps of it."""

    id: int
    username: str  # name@domain
    domain: str
    uri: str
    inbox: str
    key_id: str
    public_key: str  # PEM
    actor_type: str = "Person"
    url: str = ""
    shared_inbox: str = ""
    outbox: str = ""
    followers_url: str = ""
    following_url: str = ""
    display_name: str = ""
    summary_html: str = ""  # sanitised when stored (actor_documents.py)
    summary_text: str = ""
    avatar_url: str = ""
    header_url: str = ""
    locked: bool = False
    published: int | None = None
    followers_count: int | None = None
    following_count: int | None = None
    statuses_count: int | None = None
    fetched_at: int = 0
    is_suspended: bool = False  # suspended by staff, or gone (the user hash's status)

    @property
    def name(self) -> str:
        """The name part of name@domain (its preferredUsername)."""
        return self.username.partition("@")[0]

    @property
    def acct(self) -> str:
        return self.username

    @property
    def profile_url(self) -> str:
        """Its page on its own server: `url`, else its id."""
        return self.url or self.uri

    @property
    def delivery_inbox(self) -> str:
        """Where activities for it go: its server's shared inbox when it has one."""
        return self.shared_inbox or self.inbox

    @property
    def is_bot(self) -> bool:
        return self.actor_type in ("Service", "Application")

    @property
    def is_group(self) -> bool:
        return self.actor_type == "Group"

    def is_stale(self, now: float | None = None, max_age: int = REFRESH_AFTER) -> bool:
        """Whether it was fetched longer than max_age ago (refetch when next resolved)."""
        return (time.time() if now is None else now) - self.fetched_at > max_age


def reported_counts(counts: Counts, actor: RemoteActor) -> Counts:
    """A remote account's counts as its server reports them, ours where it gives none."""
    return Counts(
        followers=counts.followers if actor.followers_count is None else actor.followers_count,
        following=counts.following if actor.following_count is None else actor.following_count,
        posts=counts.posts if actor.statuses_count is None else actor.statuses_count,
    )


def acct_key(acct: str) -> str | None:
    """The address index entry of `name@domain` (or `@name@domain`, `acct:...`), or None
    when it is no remote address: lower-cased, the domain in its one spelling."""
    try:
        address = parse_address(acct)
    except InvalidAddress:
        return None
    return keys.remote_actor_by_acct(str(address).lower())


def document_fields(actor: ActorDocument, fetched_at: int) -> tuple[dict[str, str], list[str]]:
    """Return (fields to set, optional fields to delete) of the user hash for actor."""
    values: dict[str, object] = {
        "username": actor.acct,
        "domain": actor.domain,
        "uri": actor.uri,
        "inbox": actor.inbox,
        "key_id": actor.key_id,
        "public_key": actor.public_key,
        "actor_type": actor.actor_type,
        "signup": actor.published or "",
        "display_name": actor.display_name,
        "summary": actor.summary_html,
        "summary_text": actor.note_text,
        "url": actor.url,
        "shared_inbox": actor.shared_inbox,
        "outbox": actor.outbox,
        "followers_url": actor.followers_url,
        "following_url": actor.following_url,
        "avatar_url": actor.avatar_url,
        "header_url": actor.header_url,
        "locked": "1" if actor.locked else "",
        "followers_count": actor.followers_count,
        "following_count": actor.following_count,
        "statuses_count": actor.statuses_count,
        "fetched_at": fetched_at,
    }
    kept = {name: str(value) for name, value in values.items() if value not in ("", None)}
    return kept, [name for name in OPTIONAL if name not in kept]


def actor_from_hash(user_id: int, h: Mapping[str, str | None]) -> RemoteActor | None:
    """Build a RemoteActor from the fields of its user hash, or None when the hash holds
    no remote account (none at all, a local one, or one not yet written)."""
    username, domain, uri = h.get("username"), h.get("domain"), h.get("uri")
    if not (username and domain and uri):
        return None
    return RemoteActor(
        id=int(user_id),
        username=username,
        domain=domain,
        uri=uri,
        inbox=h.get("inbox") or "",
        key_id=h.get("key_id") or "",
        public_key=h.get("public_key") or "",
        actor_type=h.get("actor_type") or "Person",
        url=h.get("url") or "",
        shared_inbox=h.get("shared_inbox") or "",
        outbox=h.get("outbox") or "",
        followers_url=h.get("followers_url") or "",
        following_url=h.get("following_url") or "",
        display_name=h.get("display_name") or "",
        summary_html=h.get("summary") or "",
        summary_text=h.get("summary_text") or "",
        avatar_url=h.get("avatar_url") or "",
        header_url=h.get("header_url") or "",
        locked=h.get("locked") == "1",
        published=as_int(h.get("signup")),
        followers_count=as_int(h.get("followers_count")),
        following_count=as_int(h.get("following_count")),
        statuses_count=as_int(h.get("statuses_count")),
        fetched_at=as_int(h.get("fetched_at")) or 0,
        is_suspended=h.get("status") in (STATUS_SUSPENDED, STATUS_DELETED),
    )


class RemoteActorStore(RepositoryBase):
    """Remote accounts (user:<id> hashes with a `domain`) and their three indexes."""

    def upsert(self, actor: ActorDocument, *, now: int | None = None) -> RemoteActor:
        """Write actor as a remote account (a new one, or the one its uri already has) and
        return it as stored. Idempotent; two racing upserts of one uri end with one id.
        Raise ActorConflict when the uri's id holds another account (nothing written)."""
        fetched_at = int(time.time()) if now is None else now
        user_id = self._claim(actor.uri)
        fields, gone = document_fields(actor, fetched_at)
        pairs = [item for pair in fields.items() for item in pair]
        try:
            before = self.r.execute_command(
                "EVAL", UPSERT_SCRIPT, 1, keys.user(user_id), actor.uri, len(gone), *gone, *pairs
            )
        except redis.ResponseError as error:  # the script's refusal
            if "ACTOR" not in str(error):
                raise
            message = f"user:{user_id} holds another account than {actor.uri}"
            raise ActorConflict(message) from None
        old_name, old_key, *counts = (s(v) for v in cast("list[bytes | None]", before))
        self._index(user_id, actor, old_name, old_key)
        stored = {**fields, **dict(zip(COUNTS, counts))}  # counts kept from before included
        return cast(RemoteActor, actor_from_hash(user_id, stored))

    def _claim(self, uri: str) -> int:
        """Return the id uri has, handing it a new one when it has none."""
        key = keys.remote_actor_by_uri(uri)
        held = as_int(self.r.get(key))
        if held is not None:
            return held
        new_id = int(self.r.incr(keys.next_user_id()))
        return int(self.r.execute_command("EVAL", CLAIM_SCRIPT, 1, key, new_id))

    def _index(
        self, user_id: int, actor: ActorDocument, old_name: str | None, old_key: str | None
    ) -> None:
        """Point the address and key id at user_id (the newest upsert holding them wins),
        release the ones it held before when they changed, index its display name's words
        (as a profile save does: search finds it by them) and file it under its domains
        (what a domain block suspends). One round trip."""
        pipe = self._pipe()
        pipe.set(keys.remote_actor_by_acct(actor.acct.lower()), user_id)
        pipe.set(keys.remote_actor_by_key(actor.key_id), user_id)
        if old_name and old_name.lower() != actor.acct.lower():
            old = keys.remote_actor_by_acct(old_name.lower())
            pipe.execute_command("EVAL", RELEASE_SCRIPT, 1, old, user_id)
        if old_key and old_key != actor.key_id:
            old = keys.remote_actor_by_key(old_key)
            pipe.execute_command("EVAL", RELEASE_SCRIPT, 1, old, user_id)
        queue_name_words(pipe, user_id, actor.display_name)
        queue_domain_index(pipe, user_id, [actor.domain, url_domain(actor.uri)])  # domains.py
        pipe.execute()

    def get(self, user_id: int) -> RemoteActor | None:
        """Return the remote account user_id, or None (no such account, or a local one)."""
        return self.get_many([user_id]).get(int(user_id))

    def get_many(self, ids: Iterable[int]) -> dict[int, RemoteActor]:
        """Return {id: RemoteActor} for the remote accounts among ids (at most MANY_MAX),
        in one round trip (none for no ids)."""
        wanted = list(dict.fromkeys(int(i) for i in ids))[:MANY_MAX]
        if not wanted:
            return {}
        pipe = self._pipe()
        for user_id in wanted:
            pipe.hmget(keys.user(user_id), READ_FIELDS)
        found: dict[int, RemoteActor] = {}
        for user_id, values in zip(wanted, pipe.execute()):
            actor = actor_from_hash(user_id, dict(zip(READ_FIELDS, map(s, values))))
            if actor is not None:
                found[user_id] = actor
        return found

    def by_uri(self, uri: str) -> RemoteActor | None:
        """Return the remote account whose actor id is uri, or None. Two round trips."""
        actor = self._pointed(keys.remote_actor_by_uri(uri))
        return actor if actor is not None and actor.uri == uri else None

    def by_acct(self, acct: str) -> RemoteActor | None:
        """Return the remote account called acct (`name@domain`, `@name@domain`,
        `acct:name@domain`; ignoring case), or None. Two round trips (one for no address)."""
        key = acct_key(acct)
        actor = self._pointed(key) if key is not None else None
        if actor is None or acct_key(actor.username) != key:
            return None
        return actor

    def by_key_id(self, key_id: str) -> RemoteActor | None:
        """Return the remote account whose public key has this id, or None. Two round
        trips."""
        actor = self._pointed(keys.remote_actor_by_key(key_id))
        return actor if actor is not None and actor.key_id == key_id else None

    def _pointed(self, index_key: str) -> RemoteActor | None:
        user_id = as_int(self.r.get(index_key))
        return self.get(user_id) if user_id is not None else None


__all__ = [
    "REFRESH_AFTER",
    "ActorConflict",
    "RemoteActor",
    "RemoteActorStore",
    "acct_key",
    "actor_from_hash",
    "reported_counts",
]
