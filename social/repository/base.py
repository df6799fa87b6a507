"""Shared plumbing for the repository modules: the client, decoding, small helpers."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from typing import Any, Generic, TypeAlias, TypedDict, TypeVar, cast, overload

import redis
from redis.client import Pipeline
from redis.cluster import ClusterPipeline, RedisCluster

from social import keys
from social.text import decode_mentions

from .cache import ProcessCache
from .models import Counts, User

log = logging.getLogger(__name__)

WATCH_RETRIES = 5  # attempts at a WATCH/MULTI rewrite before giving up

# How a user hash spells its flags (fields added to the reference layout).
STATUS_SUSPENDED = "suspended"
# An account its owner deleted: hidden everywhere, like a suspended one, until purged.
STATUS_DELETED = "deleted"
# Authors whose posts no one sees (staff aside): suspended, or deleted by their owner.
HIDDEN_STATUSES = (STATUS_SUSPENDED, STATUS_DELETED)
USER_FIELDS = (
    "username",
    "signup",
    "staff",
    "status",
    "last_login",
    "last_login_ip",
    "suspended_reason",
    "unread_mentions",
    "relations",
    "unread_notifications",
    # The profile (profiles.py): additions a reference reader never looks at.
    "display_name",
    "note",
    "note_mentions",
    "note_tags",
    "avatar",
    "header",
    "domain",  # a remote account's (repository/federation/actors.py)
)


# The client every store is given (social/redis_client.py): one server's, or a cluster's,
# which answers the same commands; and the pipelines they make.
Client: TypeAlias = redis.Redis | RedisCluster
Pipe: TypeAlias = Pipeline | ClusterPipeline

# What Redis hands back, typed at the edge where it is read. The clients never decode
# (bytes), and redis-py types replies loosely (str or bytes; a ZRANGE's members or its
# scored pairs alike), so the repository names the shape of each command's reply where it
# reads it (Replies' accessors, or a cast of a direct call's reply): nothing is checked or
# copied at runtime.
Bulk: TypeAlias = bytes | None  # GET, HGET: a value or nil
Members: TypeAlias = list[bytes]  # LRANGE, ZRANGE, ZREVRANGE, ZRANGEBYSCORE, ZRANGEBYLEX
Scored: TypeAlias = list[tuple[bytes, float]]  # ZRANGE ... WITHSCORES (and its kin)
Scores: TypeAlias = list[float | None]  # ZMSCORE: a score per member, None where absent
Fields: TypeAlias = list[bytes | None]  # HMGET: a value per field, None where absent
Hash: TypeAlias = dict[bytes, bytes]  # HGETALL
Entries: TypeAlias = list[tuple[bytes, Hash]]  # XRANGE, XREVRANGE: (id, fields) pairs

T = TypeVar("T")
D = TypeVar("D")


R = TypeVar("R", covariant=True)


@dataclass(frozen=True)
class Reply(Generic[R]):
    """A typed handle on one read of a pipeline (NamedReads): declared once with the shape
    of its reply, queued under it, taken back typed.

        OWNER = Reply[Hash]("owner")
        reads.hgetall(OWNER, keys.user(user_id))
        got[OWNER]  # a Hash, for mypy too; got.get(OWNER): None when it was not queued
    """

    name: str


@overload
def s(value: bytes | str) -> str: ...
@overload
def s(value: None) -> None: ...
@overload
def s(value: bytes | str | None) -> str | None: ...
def s(value: bytes | str | None) -> str | None:
    """Decode a Redis reply to str; None stays None."""
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)


def as_int(value: bytes | str | int | float | None) -> int | None:
    """Decode a Redis reply to int (scores come back as floats); None stays None."""
    if value is None or value == b"" or value == "":
        return None
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


def decode_hash(raw: Mapping[bytes, bytes] | Mapping[bytes | str, bytes | str]) -> dict[str, str]:
    """Decode an HGETALL reply into a str -> str dict (read by name: Hash; from a direct
    call: as redis-py types it)."""
    return {s(k): s(v) for k, v in raw.items()}


def _count(value: str) -> int:
    return max(0, as_int(value) or 0)


def _flag(value: str) -> bool:
    return value == "1"


def _words(value: str) -> tuple[str, ...]:
    return tuple(value.split())


# How user_from_hash decodes each field of a user hash (but `username`, and `status`, which
# gives two): the User attribute it fills and its decoder (None: the text as it is), given
# a non-empty value; an absent or empty field leaves the attribute's default. A table, so
# that a hash with few fields (HMGET, a script's reply) costs little more than the User.
USER_DECODERS: dict[str, tuple[str, Callable[[str], object] | None]] = {
    "signup": ("signup_time", as_int),
    "staff": ("is_staff", _flag),
    "last_login": ("last_login", as_int),
    "last_login_ip": ("last_login_ip", None),
    "suspended_reason": ("suspended_reason", None),
    "unread_mentions": ("unread_mentions", _count),
    "relations": ("has_relations", _flag),
    "unread_notifications": ("unread_notifications", _count),
    "display_name": ("display_name", None),
    "note": ("note", None),
    "note_mentions": ("note_mentions", decode_mentions),
    "note_tags": ("note_tags", _words),
    "avatar": ("avatar", None),
    "header": ("header", None),
    "domain": ("domain", None),
}


def user_from_hash(user_id: int, h: Mapping[str, str | None]) -> User | None:
    """Build a User from a decoded user hash, or some of its fields (HMGET, a script's
    reply: those absent read as empty), or None when it has no name (no such account).
    The one place a user hash becomes a User (USER_DECODERS)."""
    name = h.get("username")
    if not name:
        return None
    found: dict[str, Any] = {}
    for field, value in h.items():
        if value and (decoder := USER_DECODERS.get(field)) is not None:
            attribute, decode = decoder
            found[attribute] = value if decode is None else decode(value)
    status = h.get("status")
    if status in HIDDEN_STATUSES:
        found["is_suspended"] = True
        found["is_deleted"] = status == STATUS_DELETED
    return User(int(user_id), name, **found)


def page_bounds(number: int, per_page: int) -> tuple[int, int]:
    """Return the LRANGE start and stop for page `number`, one extra item to detect more."""
    start = (max(1, number) - 1) * per_page
    return start, start + per_page  # inclusive stop: per_page + 1 items


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Yield lists of up to size items (itertools.batched is Python 3.12+)."""
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


def now() -> int:
    """Return the current unix time in whole seconds (the reference's unit)."""
    return int(time.time())


def utc_day(ts: int) -> datetime:
    """Return the UTC date of unix time ts."""
    return datetime.fromtimestamp(ts, tz=UTC)


class Replies(dict[str, object]):
    """A pipeline's replies by name (NamedReads.execute), each read with the accessor of
    the command that queued it: `got.count("followers")` for a ZCARD, `got.members("ids")`
    for an LRANGE. The accessors only say what Redis hands back (see Members and its kin
    above); a reply is looked up as from any dict, nothing checked or copied. A typed handle
    (Reply) takes its reply typed: `got[OWNER]`, `got.get(OWNER)`, `OWNER in got`."""

    @overload
    def __getitem__(self, key: Reply[T]) -> T: ...
    @overload
    def __getitem__(self, key: str) -> object: ...
    def __getitem__(self, key: Reply[Any] | str) -> object:
        return super().__getitem__(key.name if isinstance(key, Reply) else key)

    @overload
    def get(self, key: Reply[T], default: None = None) -> T | None: ...
    @overload
    def get(self, key: Reply[T], default: D) -> T | D: ...
    @overload
    def get(self, key: str, default: object = None) -> object: ...
    def get(self, key: Reply[Any] | str, default: object = None) -> object:
        return super().get(key.name if isinstance(key, Reply) else key, default)

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key.name if isinstance(key, Reply) else key)

    def count(self, name: str) -> int:
        """An integer reply: ZCARD, LLEN, HLEN, DBSIZE."""
        return cast(int, self[name])

    def value(self, name: str) -> Bulk:
        """A value or nil: GET, HGET."""
        return cast(Bulk, self[name])

    def members(self, name: str) -> Members:
        """LRANGE, ZRANGE, ZREVRANGE, ZRANGEBYLEX (without scores)."""
        return cast(Members, self[name])

    def scored(self, name: str) -> Scored:
        """ZRANGE, ZREVRANGE ... WITHSCORES: (member, score) pairs."""
        return cast(Scored, self[name])

    def scores_if_read(self, key: str | Reply[Scores], members: int) -> Scores:
        """ZMSCORE of `members` members, or None for each when it was not queued (the set
        needed no reading: none of them is in it)."""
        return cast(Scores, self[key]) if key in self else [None] * members

    def fields(self, name: str) -> Fields:
        """HMGET: a value per field asked for, None where absent."""
        return cast(Fields, self[name])

    def hash(self, name: str) -> Hash:
        """HGETALL."""
        return cast(Hash, self[name])


class NamedReads:
    """Reads queued on one pipeline under names, and their replies handed back by name.

        reads = NamedReads(self._pipe())
        reads.lrange("ids", keys.home_feed(user_id), 0, 10)
        reads.zcard("followers", keys.followers(user_id))
        got = reads.execute()  # Replies: {"ids": [...], "followers": 12}
        got.members("ids"), got.count("followers")  # typed: list[bytes], int

    Any pipeline command works: `reads.<command>(name, *args)`. Names must be unique. A
    pipeline that mixes several reads is read this way, never by position.
    """

    def __init__(self, pipe: Pipe) -> None:
        self.pipe = pipe
        self._slots: dict[str, int] = {}

    def __getattr__(self, command: str) -> Callable[..., None]:
        queue = getattr(self.pipe, command)

        def read(handle: str | Reply[Any], *args, **kwargs) -> None:
            name = handle.name if isinstance(handle, Reply) else handle
            if name in self._slots:
                raise ValueError(f"{name!r} is read twice in one pipeline")
            queue(*args, **kwargs)
            self._slots[name] = len(self.pipe) - 1

        return read

    def __contains__(self, handle: object) -> bool:
        return (handle.name if isinstance(handle, Reply) else handle) in self._slots

    def execute(self, *, raise_on_error: bool = True) -> Replies:
        """Send the pipeline (one round trip) and return {name: reply}; with
        raise_on_error=False a refused command's reply is its exception (check with
        isinstance before an accessor)."""
        replies = self.pipe.execute(raise_on_error=raise_on_error) if len(self.pipe) else []
        return Replies({name: replies[slot] for name, slot in self._slots.items()})


# A pipeline's marks, read by RepositoryBase.send: it holds a change that hides or shows
# listed posts (queue_hiding), so send() moves the visibility version after it; and the
# places of the live bus's XADDs in it (bus.queue_event), whose errors send() logs and never
# raises, so telling listeners never fails a write.
HIDING_MARK = "_retwis_hides_posts"
EVENTS_MARK = "_retwis_live_events"


def queue_hiding(pipe: Pipe) -> None:
    """Mark pipe as writing a change that hides or shows posts already listed (a post's
    `deleted` flag, an account's status, a promotion to fan-out on read): RepositoryBase.send
    moves the visibility version once it has run, so web processes re-check what they
    remember (cache.py)."""
    setattr(pipe, HIDING_MARK, True)


# The counts queue_counts reads: a page's pager may take its total from POST_COUNT.
FOLLOWER_COUNT = Reply[int]("followers")
FOLLOWING_COUNT = Reply[int]("following")
POST_COUNT = Reply[int]("posts")


def queue_visibility_version(pipe: Pipe) -> None:
    """Queue giving the database a visibility version if it has none (the one place it is
    created: a new post's pipeline, and before each move): a random start, so a database
    replaced under a running web process never shows the old one's version and the process
    re-checks what it remembers (cache.py)."""
    pipe.set(keys.visibility_version(), secrets.randbelow(2**62), nx=True)


def queue_counts(reads: NamedReads, user_id: int) -> None:
    """Queue the follower, following and own-post counts of user_id (see counts_from)."""
    reads.zcard(FOLLOWER_COUNT, keys.followers(user_id))
    reads.zcard(FOLLOWING_COUNT, keys.following(user_id))
    reads.llen(POST_COUNT, keys.own_posts(user_id))


def queue_users(reads: NamedReads, ids: Sequence[int]) -> None:
    """Queue each id's user hash fields (see users_from), on a pipeline a page sends anyway."""
    for uid in ids:
        reads.hmget(f"user:{uid}", keys.user(uid), USER_FIELDS)


def users_from(got: Mapping[str, object], ids: Sequence[int]) -> dict[int, User]:
    """Return {id: User} for the ids queue_users read that exist."""
    fields = cast("Mapping[str, Fields]", got)  # the HMGETs queue_users named
    found: dict[int, User] = {}
    for uid in ids:
        user = user_from_hash(uid, dict(zip(USER_FIELDS, map(s, fields[f"user:{uid}"]))))
        if user is not None:
            found[uid] = user
    return found


def counts_from(got: Replies) -> Counts:
    """Return the Counts that queue_counts read."""
    return Counts(got[FOLLOWER_COUNT], got[FOLLOWING_COUNT], got[POST_COUNT])


class FeedShape(TypedDict, total=False):
    """The feed shapes (settings.RETWIS_*): RepositoryBase.__init__ says what each is."""

    home_feed_cap: int
    timeline_cap: int
    fanout_batch: int
    fanout_read_threshold: int


class StoreSettings(FeedShape, total=False):
    """What every store is given besides its client (RepositoryBase.__init__): the feed
    shapes and the process cache. Stores pass it on as **config."""

    cache: ProcessCache | None


class RepositoryBase:
    """What every store holds: the client, the feed shapes and the process cache, and the
    helpers they share (pipelines, named reads, counters, the WATCH/MULTI list rewrite,
    taking a hash once)."""

    def __init__(
        self,
        client: Client,
        *,
        home_feed_cap: int = 1000,
        timeline_cap: int = 1000,
        fanout_batch: int = 1000,
        fanout_read_threshold: int = 10_000,
        cache: ProcessCache | None = None,
    ) -> None:
        self.r = client
        # Facts that never change, remembered between requests (cache.py).
        self.cache = cache if cache is not None else ProcessCache()
        self.home_feed_cap = home_feed_cap
        self.timeline_cap = timeline_cap
        self.fanout_batch = fanout_batch
        # Authors with at least this many followers are merged into home pages when read
        # instead of being copied into every follower's feed (docs/scaling.md).
        self.fanout_read_threshold = fanout_read_threshold
        # A Redis Cluster: a script may name keys of one slot only (no cross-node scripts).
        self.on_cluster = isinstance(client, RedisCluster)

    def _pipe(self) -> Pipe:
        """Return a non-transactional pipeline: one round trip, no cross-key atomicity.

        Most writes here touch keys of several users (or a user and a global index), which on
        a Redis Cluster live on different nodes, so they cannot share a MULTI. Each such write
        is ordered so that a partial failure leaves nothing a reader trips over; where that is
        not enough, the method says what repairs it.
        """
        return self.r.pipeline(transaction=False)

    def _take_hash(self, key: str) -> dict[str, str] | None:
        """Read and delete the hash at key (HGETALL and DEL in one MULTI on that one key);
        return its fields, or None when there was none: a link or code is taken once,
        even by two requests at the same moment."""
        # transaction=True: a cluster pipeline is plain by default; one key, one slot.
        with self.r.pipeline(transaction=True) as pipe:
            pipe.hgetall(key)
            pipe.delete(key)
            raw, deleted = pipe.execute()
        return decode_hash(raw) if deleted else None

    def _rewrite_list(
        self, key: str, change: Callable[[list[int]], list[int]]
    ) -> tuple[list[int], list[int]]:
        """Replace the list of ids at key with change(ids) atomically; return (old, new).

        WATCH/MULTI on that one key (never two users' keys): a write landing between our
        read and our write makes EXEC fail and we start again, so nothing is lost.
        """
        for _ in range(WATCH_RETRIES):
            # transaction=True: a cluster pipeline is plain by default and refuses WATCH.
            with self.r.pipeline(transaction=True) as pipe:
                try:
                    pipe.watch(key)
                    old = [int(i) for i in pipe.lrange(key, 0, -1)]
                    new = change(old)
                    pipe.multi()
                    pipe.delete(key)
                    if new:
                        pipe.rpush(key, *new)
                    pipe.execute()
                    return old, new
                except redis.WatchError:
                    continue
        raise RuntimeError(f"{key} kept changing; gave up")

    def send(self, pipe: Pipe) -> list:
        """Execute a pipeline of writes and return its replies; when it holds a change that
        hides or shows listed posts (queue_hiding marked it), then move the visibility
        version. The one place the version moves: every kind of hiding (a post's flag, an
        account's status, a promotion to fan-out on read) marks its pipeline where it queues
        its write, so none can forget it (tests/test_visibility_version.py)."""
        events: set[int] | None = getattr(pipe, EVENTS_MARK, None)
        if events is None:
            replies = pipe.execute()
        else:
            replies = pipe.execute(raise_on_error=False)
            for index, reply in enumerate(replies):
                if isinstance(reply, Exception) and index in events:
                    log.warning("live event not published: %s", reply)
                elif isinstance(reply, Exception):
                    raise reply
        if getattr(pipe, HIDING_MARK, False):
            self._bump_visibility_version()
        return replies

    def _bump_visibility_version(self) -> None:
        """Move the visibility version (keys.visibility_version; a random start if the
        database has none). Its own round trip, never queued with the change: on a Redis
        Cluster a pipeline's commands on different nodes run in no set order, and a reader
        must never see the new version while the change is not yet there (cache.py)."""
        pipe = self._pipe()
        queue_visibility_version(pipe)
        pipe.incr(keys.visibility_version())
        pipe.execute()

    def _count_event(self, pipe: Pipe, metric: str, ts: int) -> None:
        """Queue INCR of today's `metric` counter with its bounded lifetime."""
        key = keys.daily_counter(metric, utc_day(ts).date())
        pipe.incr(key)
        pipe.expire(key, keys.STATS_TTL_DAYS * 86400)

    def _mark_active(self, pipe: Pipe, user_id: int, ts: int) -> None:
        """Queue PFADD of user_id into today's active-users HyperLogLog."""
        key = keys.daily_active(utc_day(ts).date())
        pipe.pfadd(key, str(user_id))
        pipe.expire(key, keys.STATS_TTL_DAYS * 86400)

    def reads(self) -> NamedReads:
        """Return named reads on a fresh non-transactional pipeline (see NamedReads)."""
        return NamedReads(self._pipe())

    def _users_by_ids(self, ids: Iterable[int]) -> dict[int, User]:
        """Return {id: User} for the ids that exist, in one round trip."""
        unique = list(dict.fromkeys(int(i) for i in ids))
        if not unique:
            return {}
        reads = self.reads()
        queue_users(reads, unique)
        return users_from(reads.execute(), unique)

    def _names_of_ids(self, ids: Sequence[int]) -> list[tuple[str, int]]:
        """Return (username, id) for the ids whose user hash has a name, in one round trip
        (a batch of a walk over every id up to next_user_id). Remote accounts (a `domain`)
        are left out: the walks fill the local name indexes (users_lower, the trigrams)."""
        pipe = self._pipe()
        for user_id in ids:
            pipe.hmget(keys.user(user_id), ["username", "domain"])
        found = zip(ids, pipe.execute())
        return [(s(name), i) for i, (name, domain) in found if name and not domain]
