"""Bulk writes: the site's own write paths, batched, for seeding and rebuilding feeds.

`manage.py seed` and `rebuild_feeds` write through these methods so seeded data has
exactly the layout the site writes: accounts go through UserStore.queue_user_writes after the
same HSETNX name claim, posts through PostStore.queue_post_writes. What changes is the number
of round trips: ids come from one INCRBY per batch and everything else goes in
non-transactional pipelines. Nothing here uses MULTI, since every batch touches several users'
keys (a Redis Cluster keeps those on different nodes).

These methods expect a quiet database (seeding) or accept the races their docstrings name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, islice
from typing import TypeVar

import redis

from social import keys

from .base import RepositoryBase, utc_day
from .errors import UserNotFound
from .models import User
from .posts import PostStore
from .users import UserStore, new_secret

T = TypeVar("T")
Progress = Callable[[int], None]

USER_BATCH = 1000  # accounts per claim pipeline
FOLLOW_BATCH = 50_000  # follow pairs grouped into one pipeline of ZADDs
ZADD_CHUNK = 1000  # members per ZADD, so one command never gets huge
POST_BATCH = 5000  # posts per INCRBY + pipeline
FEED_BATCH = 250  # home feeds rebuilt per round of pipelines
FEED_CACHE_IDS = 2_000_000  # own-posts ids kept between feed batches before the cache resets


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Yield lists of up to size items (itertools.batched is Python 3.12+)."""
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


class BulkStore(RepositoryBase):
    """Batched writes for seeding, and the rebuild of every home feed from the graph.

    Given the users and posts stores: their queue_user_writes and queue_post_writes are the
    one definition of what an account and a post are made of.
    """

    def __init__(
        self, client: redis.Redis, *, posts: PostStore, users: UserStore, **config
    ) -> None:
        super().__init__(client, **config)
        self.posts = posts
        self.users = users

    # --- Accounts --------------------------------------------------------------------------

    def create_users_bulk(
        self,
        accounts: Sequence[tuple[str, int]],
        password_hash: str,
        *,
        progress: Progress | None = None,
    ) -> list[User]:
        """Create accounts from (username, signup time) pairs sharing one password hash.

        Return the users created, in order. Same rule as create_user: each name is claimed
        ignoring case with HSETNX (and checked against legacy `users` entries) before
        its writes are queued; a taken name is skipped and its id left unused, as a failed
        sign-up leaves one. Three round trips per USER_BATCH accounts.
        """
        created: list[User] = []
        for batch in batched(accounts, USER_BATCH):
            last = int(self.r.incrby(keys.next_user_id(), len(batch)))
            ids = range(last - len(batch) + 1, last + 1)
            pipe = self._pipe()
            for (name, _), user_id in zip(batch, ids):
                self.users.queue_claim(pipe, name, user_id)
            replies = pipe.execute()
            pipe = self._pipe()
            for i, ((name, ts), user_id) in enumerate(zip(batch, ids)):
                claimed, legacy_ids = replies[2 * i], replies[2 * i + 1]
                if not self.users.claim_won(user_id, claimed, legacy_ids):
                    if claimed:
                        pipe.hdel(keys.usernames_lower(), name.lower())
                    continue
                self.users.queue_user_writes(pipe, user_id, name, password_hash, new_secret(), ts)
                created.append(User(id=user_id, username=name, signup_time=ts))
            pipe.execute()
            if progress:
                progress(len(created))
        return created

    # --- Follow graph ----------------------------------------------------------------------

    def add_follows_bulk(
        self, follows: Iterable[tuple[int, int, int]], *, progress: Progress | None = None
    ) -> int:
        """Add (follower, followee, time) pairs to both sorted sets; return how many were new.

        ZADD NX on both sides as follow() does; self-follows are skipped. Home feeds are not
        touched: call rebuild_home_feeds afterwards. Raise UserNotFound (before writing that
        batch) if an id has no user hash.
        """
        added = done = 0
        known: set[int] = set()
        for batch in batched(follows, FOLLOW_BATCH):
            following: dict[int, dict[int, int]] = defaultdict(dict)
            followers: dict[int, dict[int, int]] = defaultdict(dict)
            for follower, followee, ts in batch:
                if follower != followee:
                    following[follower][followee] = ts
                    followers[followee][follower] = ts
            known |= self._require_users((following.keys() | followers.keys()) - known)
            pipe = self._pipe()
            n_following = self._queue_zadds(pipe, keys.following, following)
            self._queue_zadds(pipe, keys.followers, followers)
            new = sum(pipe.execute()[:n_following])
            if new:
                self.r.incrby(keys.follows_total(), new)  # as follow() does, per batch
            added += new
            done += len(batch)
            if progress:
                progress(done)
        return added

    def _require_users(self, user_ids: Iterable[int]) -> set[int]:
        """Return the ids, or raise UserNotFound if one has no user hash (one round trip)."""
        ids = list(user_ids)
        pipe = self._pipe()
        for user_id in ids:
            pipe.exists(keys.user(user_id))
        for user_id, exists in zip(ids, pipe.execute() if ids else []):
            if not exists:
                raise UserNotFound(user_id)
        return set(ids)

    @staticmethod
    def _queue_zadds(pipe, key_for: Callable[[int], str], sets: dict[int, dict[int, int]]) -> int:
        """Queue ZADD NX of each user's members in chunks; return how many were queued."""
        queued = 0
        for user_id, members in sets.items():
            items = list(members.items())
            for i in range(0, len(items), ZADD_CHUNK):
                pipe.zadd(key_for(user_id), dict(items[i : i + ZADD_CHUNK]), nx=True)
                queued += 1
        return queued

    # --- Posts -----------------------------------------------------------------------------

    def create_posts_bulk(
        self, posts: Sequence[tuple[int, str, int]], *, progress: Progress | None = None
    ) -> range:
        """Store (author id, body, time) posts, oldest first, and return their ids.

        Ids are handed out in the order given, so the posts must be sorted by time: ids then
        increase with time, as the site's do (home feeds are ordered by id). Each post is
        written by queue_post_writes (hash, then the author's own-posts list); daily counters
        are added per day rather than per post. The global timeline gets the newest
        timeline_cap. There is no per-post fan-out: call rebuild_home_feeds afterwards.
        """
        if any(posts[i][2] > posts[i + 1][2] for i in range(len(posts) - 1)):
            raise ValueError("posts must be sorted by time, oldest first")
        first = last = 0
        for batch in batched(posts, POST_BATCH):
            last = int(self.r.incrby(keys.next_post_id(), len(batch)))
            first = first or last - len(batch) + 1
            pipe = self._pipe()
            per_day: dict = defaultdict(int)
            active: dict = defaultdict(set)
            for post_id, (author_id, body, ts) in enumerate(batch, last - len(batch) + 1):
                self.posts.queue_post_writes(pipe, post_id, author_id, body, ts)
                day = utc_day(ts).date()
                per_day[day] += 1
                active[day].add(author_id)
            self._queue_daily_stats(pipe, "posts", per_day, active)
            pipe.execute()
            if progress:
                progress(last - first + 1)
        if not posts:
            return range(0)
        newest = range(max(first, last - self.timeline_cap + 1), last + 1)
        pipe = self._pipe()
        pipe.lpush(keys.timeline(), *newest)  # ascending LPUSH leaves the newest at the head
        pipe.ltrim(keys.timeline(), 0, self.timeline_cap - 1)
        pipe.execute()
        return range(first, last + 1)

    def _queue_daily_stats(self, pipe, metric: str, per_day: dict, active: dict) -> None:
        """Queue a daily counter (`metric`) and the active-user HyperLogLogs: one INCRBY and
        one PFADD per day, each with the bounded lifetime _count_event gives them."""
        ttl = keys.STATS_TTL_DAYS * 86400
        for day, count in per_day.items():
            pipe.incrby(keys.daily_counter(metric, day), count)
            pipe.expire(keys.daily_counter(metric, day), ttl)
            pipe.pfadd(keys.daily_active(day), *map(str, active[day]))
            pipe.expire(keys.daily_active(day), ttl)

    def record_logins_bulk(self, logins: Sequence[tuple[int, int, str]]) -> int:
        """Record past (user id, time, IP) logins, as record_login does, in batches.

        Each user's newest login goes to last_login/last_login_ip; the daily login counters
        get one INCRBY per day and the active-user HyperLogLogs one PFADD per day. Return how
        many logins were counted.
        """
        newest: dict[int, tuple[int, str]] = {}
        per_day: dict = defaultdict(int)
        active: dict = defaultdict(set)
        for user_id, ts, ip in logins:
            if ts >= newest.get(user_id, (-1, ""))[0]:
                newest[user_id] = (ts, ip)
            day = utc_day(ts).date()
            per_day[day] += 1
            active[day].add(user_id)
        for batch in batched(newest.items(), USER_BATCH):
            pipe = self._pipe()
            for user_id, (ts, ip) in batch:
                pipe.hset(keys.user(user_id), mapping={"last_login": ts, "last_login_ip": ip})
            pipe.execute()
        pipe = self._pipe()
        self._queue_daily_stats(pipe, "logins", per_day, active)
        pipe.execute()
        return sum(per_day.values())

    # --- Home feeds ------------------------------------------------------------------------

    def rebuild_home_feeds(
        self, user_ids: Iterable[int], *, progress: Progress | None = None
    ) -> int:
        """Recompute each user's home feed from the follow graph; return the ids written.

        posts:<id> becomes the newest home_feed_cap ids of the user's own posts and their
        followees' (from the own-posts lists), newest first, written as DEL + RPUSH in
        pipelines of FEED_BATCH users: three round trips per batch. Not atomic: a reader may
        see an empty feed for a moment, and a post fanned out to a feed between its read and
        its rewrite is dropped from that feed only (the post stays in the timeline and on the
        profile). Run it on a quiet site, or run it again.
        """
        cache: dict[int, list[int]] = {}
        written = done = 0
        for batch in batched(user_ids, FEED_BATCH):
            pipe = self._pipe()
            for user_id in batch:
                pipe.zrange(keys.following(user_id), 0, -1)
            followees = {
                uid: [int(f) for f in fs if int(f) != uid] for uid, fs in zip(batch, pipe.execute())
            }
            if sum(map(len, cache.values())) > FEED_CACHE_IDS:
                cache.clear()
            self._load_own_posts(cache, chain(batch, *followees.values()))
            pipe = self._pipe()
            for user_id in batch:
                lists = [cache[user_id], *(cache[f] for f in followees[user_id])]
                # Authors are distinct, so are their posts: one sort, no de-duplication.
                feed = sorted(chain.from_iterable(lists), reverse=True)[: self.home_feed_cap]
                pipe.delete(keys.home_feed(user_id))
                if feed:
                    pipe.rpush(keys.home_feed(user_id), *feed)
                written += len(feed)
            pipe.execute()
            done += len(batch)
            if progress:
                progress(done)
        return written

    def _load_own_posts(self, cache: dict[int, list[int]], authors: Iterable[int]) -> None:
        """Fill cache with the newest home_feed_cap own-post ids of authors not yet in it."""
        missing = [a for a in dict.fromkeys(authors) if a not in cache]
        pipe = self._pipe()
        for author_id in missing:
            pipe.lrange(keys.own_posts(author_id), 0, self.home_feed_cap - 1)
        for author_id, ids in zip(missing, pipe.execute() if missing else []):
            cache[author_id] = [int(i) for i in ids]
