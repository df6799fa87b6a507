"""Bulk writes: the site's own write paths, batched, for seeding and rebuilding feeds.

`manage.py seed` and `rebuild_feeds` write through these methods so seeded data has
exactly the layout the site writes: accounts go through UserStore.queue_user_writes after the
same HSETNX name claim; posts through PostStore.queue_post_writes and queue_conversation, with
their replies, mentions and tags settled as create_post settles them; likes into the two
sorted sets LikeStore.like writes. What changes is the number of round trips: ids
come from one INCRBY per batch and everything else goes in non-transactional pipelines.
Nothing here uses MULTI, since every batch touches several users' keys (a Redis Cluster keeps
those on different nodes).

These methods expect a quiet database (seeding) or accept the races their docstrings name.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, Unpack

from social import keys
from social.text import encode_mentions, hashtags, mentioned_names

from ..accounts.name_words import queue_new_name_words
from ..accounts.users import UserStore, new_secret
from ..base import (
    Client,
    RepositoryBase,
    StoreSettings,
    batched,
    queue_visibility_version,
    utc_day,
)
from ..errors import PostNotFound, UserNotFound
from ..models import User
from ..posts.posting import ANCESTORS_KEPT, TRENDING_HOUR_TTL, PostStore

T = TypeVar("T")
Progress = Callable[[int], None]

USER_BATCH = 1000  # accounts per claim pipeline
FOLLOW_BATCH = 250_000  # follow pairs grouped into one pipeline of ZADDs (one per user)
ZADD_CHUNK = 1000  # members per ZADD, so one command never gets huge
POST_BATCH = 5000  # posts per INCRBY + pipeline
LIKE_BATCH = 200_000  # likes grouped into one pipeline of ZADDs (a user's: one per batch)


BulkPost = tuple[int, str, int] | tuple[int, str, int, int | None]


@dataclass(frozen=True)
class PostsWritten:
    """What create_posts_bulk stored: the ids, in the order given; how many posts reply
    to another; how many mentions were filed (a post naming two others files two; naming
    oneself files none); how many posts have tags, and how many tags they have in all."""

    ids: list[int]
    replies: int = 0
    mentions: int = 0
    tagged: int = 0
    tags: int = 0


def _checked_parents(posts: Sequence[BulkPost]) -> dict[int, int]:
    """Return {index: parent index} of the replies; raise ValueError unless the posts are
    sorted by time and every parent is an earlier post of the list."""
    if any(posts[i][2] > posts[i + 1][2] for i in range(len(posts) - 1)):
        raise ValueError("posts must be sorted by time, oldest first")
    parents = {}
    for i, post in enumerate(posts):
        parent = post[3] if len(post) > 3 else None
        if parent is None:
            continue
        if isinstance(parent, bool) or not (isinstance(parent, int) and 0 <= parent < i):
            raise ValueError(f"post {i} replies to {parent!r}: not the index of an earlier post")
        parents[i] = parent
    return parents


def _text_of(body: str) -> tuple[list[str], list[str]]:
    """Return the @names and #tags of body (social/text.py); most posts have neither, and
    the test for "@" and "#" is what keeps 200,000 posts cheap."""
    return (
        mentioned_names(body) if "@" in body else [],
        hashtags(body) if "#" in body else [],
    )


class _PostBatches:
    """What create_posts_bulk carries from batch to batch: the ids handed out so far, the
    names and parents' authors looked up, each reply's ancestors, and the counts."""

    def __init__(self, posts: Sequence[BulkPost], parents: dict[int, int]) -> None:
        self.posts, self.parents = posts, parents
        self.ids: list[int] = []
        self.names: dict[str, int | None] = {}
        self.authors: dict[int, str] = {}
        self.chains: dict[int, str] = {}  # a reply's index -> its `ancestors` field
        self.tally = dict.fromkeys(("replies", "mentions", "tagged", "tags"), 0)

    def reply_fields(self, i: int) -> dict[str, str]:
        """Return post i's reply fields (none if it replies to nothing), as
        PostStore._reply_fields makes them, and keep its chain for its own replies."""
        parent = self.parents.get(i)
        if parent is None:
            return {}
        above = [*self.chains.get(parent, "").split(), str(self.ids[parent])]
        self.chains[i] = " ".join(above[-ANCESTORS_KEPT:])
        parent_author = self.posts[parent][0]
        return {
            "reply_to": str(self.ids[parent]),
            "reply_to_user": str(parent_author),
            "reply_to_name": self.authors[parent_author],
            "ancestors": self.chains[i],
        }

    def count(
        self, author_id: int, parent_id: int | None, mentions: dict[str, int], tags: list[str]
    ) -> None:
        """Count one post's reply, mentions filed (not the author's own) and tags."""
        self.tally["replies"] += parent_id is not None
        self.tally["mentions"] += len(set(mentions.values()) - {author_id})
        self.tally["tagged"] += bool(tags)
        self.tally["tags"] += len(tags)


class BulkStore(RepositoryBase):
    """Batched writes for seeding (home feeds are rebuilt after: FanoutStore.rebuild_home_feeds).

    Given the users and posts stores: their queue_user_writes, queue_post_writes and
    queue_conversation are the one definition of what an account and a post are made of.
    """

    def __init__(
        self,
        client: Client,
        *,
        posts: PostStore,
        users: UserStore,
        **config: Unpack[StoreSettings],
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
        touched: call fanouts.rebuild_home_feeds afterwards. Raise UserNotFound (before writing that
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
        """Queue ZADD NX of each key's members in chunks; return how many were queued."""
        queued = 0
        for user_id, members in sets.items():
            items = list(members.items())
            for i in range(0, len(items), ZADD_CHUNK):
                pipe.zadd(key_for(user_id), dict(items[i : i + ZADD_CHUNK]), nx=True)
                queued += 1
        return queued

    # --- Likes -----------------------------------------------------------------------------

    def add_likes_bulk(
        self, likes: Iterable[tuple[int, int, int]], *, progress: Progress | None = None
    ) -> int:
        """Add (user id, post id, time) likes to both sorted sets; return how many were new.

        ZADD NX on the post's likes and the user's likes, as like() does (so a like
        already there keeps its time), grouped per key: one ZADD per post and one per user
        in each pipeline of LIKE_BATCH likes (likes given post by post make the fewest).
        Raise UserNotFound if a user id has no hash, PostNotFound if a post id was never
        handed out (above next_post_id), before writing that batch. That a post hash
        exists, is not deleted and its author not suspended is not checked, which would
        cost a command per post: this is for seeding the posts just written.
        """
        added = done = 0
        known: set[int] = set()
        last_id = int(self.r.get(keys.next_post_id()) or 0)
        for batch in batched(likes, LIKE_BATCH):
            by_post: dict[int, dict[int, int]] = defaultdict(dict)
            by_user: dict[int, dict[int, int]] = defaultdict(dict)
            for user_id, post_id, ts in batch:  # the first time given wins, as with NX
                by_post[post_id].setdefault(user_id, ts)
                by_user[user_id].setdefault(post_id, ts)
            known |= self._require_users(by_user.keys() - known)
            if unknown := [p for p in by_post if not 0 < p <= last_id]:
                raise PostNotFound(unknown[0])
            pipe = self._pipe()
            n_posts = self._queue_zadds(pipe, keys.likes, by_post)  # first, as like() does
            self._queue_zadds(pipe, keys.user_likes, by_user)
            new = pipe.execute()[:n_posts]
            added += sum(new)
            gained: dict[int, int] = defaultdict(int)  # ZADDs were queued in chunks per post
            chunks = (p for p, m in by_post.items() for _ in range(0, len(m), ZADD_CHUNK))
            for post_id, n in zip(chunks, new):
                gained[post_id] += n
            pipe = self._pipe()  # the posts' counters (loading.COUNT_FIELDS)
            for post_id, n in gained.items():
                if n:
                    pipe.hincrby(keys.post(post_id), "likes", n)
            pipe.execute()
            done += len(batch)
            if progress:
                progress(done)
        return added

    # --- Posts -----------------------------------------------------------------------------

    def create_posts_bulk(
        self,
        posts: Sequence[BulkPost],
        *,
        progress: Progress | None = None,
        pauses: Mapping[int, Callable[[list[int]], object]] | None = None,
    ) -> PostsWritten:
        """Store posts, oldest first, as create_post does; return their ids and counts.

        A post is (author id, body, time) or (author id, body, time, parent): parent is
        None or the index in posts of the earlier post it replies to. Ids are handed out in
        the order given, so the posts must be sorted by time (ids then increase with time,
        as the site's do: home feeds are ordered by id) and a parent must come before its
        replies (ValueError, before anything is written, otherwise).

        Each post is written by queue_post_writes (hash, then the author's own-posts list)
        with the fields create_post settles: a reply's parent, its author and the ancestors,
        the @mentions of existing users (the one name rule, UserStore.user_ids_for_names)
        and the #tags; queue_conversation files it in its parent's replies, the mentioned
        users' mentions and its tags' lists and trending hours. Per POST_BATCH posts: one
        INCRBY for the ids, one round trip for the names and one for the parents' authors
        not looked up yet (UserNotFound, before that batch is written, for a parent whose
        author has no account), then one pipeline. Daily counters are added per day rather
        than per post; a trending hour expires when it would have had its posts been written
        live (TRENDING_HOUR_TTL after its last one, so older hours are gone at once). The
        global timeline gets the newest timeline_cap. There is no per-post fan-out: call
        fanouts.rebuild_home_feeds afterwards. Parents are not checked for deletion or suspension,
        as create_post does: this is for seeding a quiet database.

        pauses: {i: call}: once the posts before index i are written, call(their ids); what
        it writes through the site (seeding's reposts) takes the ids between, so ids still
        grow with time.
        """
        batches = _PostBatches(posts, _checked_parents(posts))
        pauses = pauses or {}
        edges = sorted({0, len(posts), *(min(max(i, 0), len(posts)) for i in pauses)})
        for lo, hi in zip(edges, [*edges[1:], None]):
            for i in (i for i in pauses if min(max(i, 0), len(posts)) == lo):
                pauses[i](batches.ids)
            for batch in batched(range(lo, lo if hi is None else hi), POST_BATCH):
                last = int(self.r.incrby(keys.next_post_id(), len(batch)))
                batches.ids.extend(range(last - len(batch) + 1, last + 1))
                self._write_posts(batches, batch)
                if progress:
                    progress(len(batches.ids))
        if batches.ids:
            pipe = self._pipe()
            # Ascending LPUSH leaves the newest at the head.
            pipe.lpush(keys.timeline(), *batches.ids[-self.timeline_cap :])
            pipe.ltrim(keys.timeline(), 0, self.timeline_cap - 1)
            pipe.execute()
        return PostsWritten(batches.ids, **batches.tally)

    def _write_posts(self, batches: _PostBatches, batch: list[int]) -> None:
        """Write the posts at these indexes (their ids handed out): the names and parents'
        authors first (up to two round trips), then one pipeline."""
        posts, parents = batches.posts, batches.parents
        found = {i: _text_of(posts[i][1]) for i in batch}
        new_names = {n: None for mentioned, _ in found.values() for n in mentioned}
        self._resolve_names(batches.names, new_names)
        self._resolve_authors(
            batches.authors, {posts[j][0] for j in map(parents.get, batch) if j is not None}
        )
        pipe = self._pipe()
        per_day: dict = defaultdict(int)
        active: dict = defaultdict(set)
        hours: dict[str, int] = {}
        for i in batch:
            author_id, body, ts = posts[i][:3]
            mentioned, tags = found[i]
            mentions = {n: uid for n in mentioned if (uid := batches.names[n]) is not None}
            fields = batches.reply_fields(i)
            if mentions:
                fields["mentions"] = encode_mentions(mentions)
            if tags:
                fields["tags"] = " ".join(tags)
                hours[time.strftime("%Y%m%d%H", time.gmtime(ts))] = ts
            parent_id = batches.ids[parents[i]] if i in parents else None
            self.posts.queue_post_writes(
                pipe, batches.ids[i], author_id, body, ts, fields, with_version=False
            )
            if fields:  # most posts file nothing: skip the call (it formats the hour first)
                self.posts.queue_conversation(
                    pipe, batches.ids[i], author_id, ts, parent_id, mentions, tags
                )
                batches.count(author_id, parent_id, mentions, tags)
            day = utc_day(ts).date()
            per_day[day] += 1
            active[day].add(author_id)
        queue_visibility_version(pipe)  # once a batch, not once a post
        for hour, newest in hours.items():  # after queue_conversation's EXPIREs
            pipe.expireat(keys.trending_hour(hour), newest + TRENDING_HOUR_TTL)
        self._queue_daily_stats(pipe, "posts", per_day, active)
        pipe.execute()

    def _resolve_names(self, names: dict[str, int | None], wanted: Iterable[str]) -> None:
        """Add the user id (or None) of each name not in names yet: one round trip, none
        when every name is known."""
        new = [name for name in wanted if name not in names]
        if new:
            names.update(zip(new, self.users.user_ids_for_names(new)))

    def _resolve_authors(self, authors: dict[int, str], wanted: set[int]) -> None:
        """Add the username of each user id not in authors yet (one round trip, none when
        all are known); raise UserNotFound for one that has no account."""
        new = wanted - authors.keys()
        found = self._users_by_ids(new)
        for user_id in new:
            if user_id not in found:
                raise UserNotFound(user_id)
            authors[user_id] = found[user_id].username

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

    def set_profiles_bulk(self, profiles: Sequence[tuple[int, str, str]]) -> int:
        """Give (user id, display name, bio) profiles to new accounts, in batches (the
        bios' #tags recorded as ProfileStore does; seeded bios mention no one). Return how
        many were set."""
        for batch in batched(profiles, USER_BATCH):
            pipe = self._pipe()
            for user_id, name, note in batch:
                tags = " ".join(hashtags(note))
                pipe.hset(
                    keys.user(user_id),
                    mapping={"display_name": name, "note": note, "note_tags": tags},
                )
                queue_new_name_words(pipe, user_id, name)  # found by its words
            pipe.execute()
        return len(profiles)
