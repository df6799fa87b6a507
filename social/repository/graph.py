"""The follow graph and what following changes in home feeds."""

from __future__ import annotations

from collections.abc import Callable

import redis

from social import keys

from .base import (
    NamedReads,
    RepositoryBase,
    as_int,
    counts_from,
    decode_hash,
    now,
    page_bounds,
    queue_counts,
    user_from_hash,
)
from .errors import CannotFollowSelf, UserNotFound
from .models import FollowEntry, Page, Profile, User
from .posts import PostStore, post_counts_from, queue_post_counts
from .users import UserStore

# "Followed by people you follow" looks at this many of the viewer's newest followings.
MUTUAL_SCAN_LIMIT = 2000


class GraphStore(RepositoryBase):
    """Follow, unfollow, follower lists, and the profile page that shows them."""

    def __init__(
        self, client: redis.Redis, *, posts: PostStore, users: UserStore, **config
    ) -> None:
        super().__init__(client, **config)
        self.posts = posts
        self.users = users

    def follow(self, follower_id: int, followee_id: int, *, at: int | None = None) -> bool:
        """Make follower follow followee; merge followee's posts into the home feed
        (unless followee is a fan-out-on-read author, merged when the home page is read).

        Return False when already following (a no-op). The two sorted sets belong to two
        users, so they are written by one pipeline, not one MULTI: if the second ZADD is lost
        the pair is half-linked, and following again (ZADD NX on both) completes it.
        """
        if follower_id == followee_id:
            raise CannotFollowSelf()
        ts = now() if at is None else at
        pipe = self._pipe()
        pipe.exists(keys.user(followee_id))
        pipe.zadd(keys.following(follower_id), {followee_id: ts}, nx=True)
        pipe.zadd(keys.followers(followee_id), {follower_id: ts}, nx=True)
        pipe.zscore(keys.celebrities(), followee_id)
        exists, added, _, read_fanout = pipe.execute()
        if not exists:  # undo both ZADDs: no follower list may name a missing user
            pipe = self._pipe()
            pipe.zrem(keys.following(follower_id), followee_id)
            pipe.zrem(keys.followers(followee_id), follower_id)
            pipe.execute()
            raise UserNotFound(followee_id)
        if not added:
            return False
        if read_fanout is not None:  # their posts join the home page when it is read
            self.r.incr(keys.follows_total())
            return True
        pipe = self._pipe()
        pipe.incr(keys.follows_total())  # the dashboard's total: only a new edge counts
        pipe.lrange(keys.own_posts(followee_id), 0, self.home_feed_cap - 1)
        theirs = [int(i) for i in pipe.execute()[1]]
        self._rewrite_feed(follower_id, lambda feed: sorted(set(feed) | set(theirs), reverse=True))
        return True

    def unfollow(self, follower_id: int, followee_id: int) -> bool:
        """Stop following and drop followee's posts from the home feed; False if not following."""
        pipe = self._pipe()
        pipe.zrem(keys.following(follower_id), followee_id)
        pipe.zrem(keys.followers(followee_id), follower_id)
        removed, _ = pipe.execute()
        if not removed:
            return False
        self.r.decr(keys.follows_total())

        def without_theirs(feed: list[int]) -> list[int]:
            pipe = self._pipe()
            for post_id in feed:
                pipe.hget(keys.post(post_id), "user_id")
            authors = pipe.execute() if feed else []
            return [p for p, a in zip(feed, authors) if as_int(a) != followee_id]

        self._rewrite_feed(follower_id, without_theirs)
        return True

    def _rewrite_feed(self, user_id: int, change: Callable[[list[int]], list[int]]) -> None:
        """Replace user_id's home feed with change(feed), retrying if a post lands meanwhile.

        WATCH/MULTI on the one feed key: a post fanned out between our read and our write
        makes EXEC fail and we start again, so no post is lost.
        """
        cap = self.home_feed_cap
        self._rewrite_list(keys.home_feed(user_id), lambda feed: change(feed)[:cap])

    def follow_list(
        self, user_id: int, which: str, number: int = 1, per_page: int = 50
    ) -> Page[FollowEntry]:
        """Return a page of followers or following ("followers"/"following"), newest first."""
        key = {"followers": keys.followers, "following": keys.following}[which](user_id)
        start, stop = page_bounds(number, per_page)
        pipe = self._pipe()
        pipe.zrevrange(key, start, stop, withscores=True)
        pipe.zcard(key)
        rows, total = pipe.execute()
        rows = [(int(m), int(score)) for m, score in rows]
        users = self._users_by_ids(uid for uid, _ in rows[:per_page])
        entries = [
            FollowEntry(user=users[uid], since=since)
            for uid, since in rows[:per_page]
            if uid in users and not users[uid].is_suspended
        ]
        return Page(
            items=entries,
            number=number,
            has_next=len(rows) > per_page,
            total=total,
            per_page=per_page,
        )

    def profile_for_name(
        self,
        username: str,
        viewer: User | None,
        number: int = 1,
        per_page: int = 10,
        *,
        include_hidden: bool = False,
    ) -> Profile:
        """Return the profile page of the user called username (see user_id_for_name).

        The process remembers which id a name led to; the page's own first pipeline reads
        that user's hash, so the remembered id is used only if the hash still bears exactly
        that name (a name is never reused while its account exists). Otherwise, or the
        first time, the name is looked up: one round trip more.
        Raise UserNotFound when no such user exists.
        """
        remembered = self.cache.names.get(username)
        if remembered is not None:
            try:
                page = self.profile(
                    remembered, viewer, number, per_page, include_hidden=include_hidden
                )
            except UserNotFound:
                page = None
            if page is not None and page.user.username == username:
                return page
            self.cache.names.discard(username)
        user_id = self.users.user_id_for_name(username)
        if user_id is None:
            raise UserNotFound(username)
        page = self.profile(user_id, viewer, number, per_page, include_hidden=include_hidden)
        if page.user.username == username:
            self.cache.names.put(username, user_id)
        return page

    def profile(
        self,
        user_id: int,
        viewer: User | None,
        number: int = 1,
        per_page: int = 10,
        *,
        include_hidden: bool = False,
    ) -> Profile:
        """Return the profile page of user_id as `viewer` sees it.

        1) the owner's hash, a page of own posts, counts, the visibility version, whether
           viewer follows, viewer's followings;
        2) the posts as load_posts checks them (nothing when this process remembers them at
           that version) and which of viewer's followings follow user_id (ZMSCORE); skipped
           when neither is needed;
        3) the names of up to six of those mutuals, only when there are any.
        """
        start, stop = page_bounds(number, per_page)
        viewer_id = viewer.id if viewer is not None and viewer.is_authenticated else None
        reads = self.reads()
        reads.hgetall("owner", keys.user(user_id))
        reads.lrange("ids", keys.own_posts(user_id), start, stop)
        queue_counts(reads, user_id)
        reads.get("version", keys.visibility_version())
        if viewer_id is not None and viewer_id != user_id:
            reads.zscore("viewer_follows", keys.following(viewer_id), user_id)
            reads.zrevrange("viewer_following", keys.following(viewer_id), 0, MUTUAL_SCAN_LIMIT - 1)
        got = reads.execute()
        owner = user_from_hash(user_id, decode_hash(got["owner"]))
        if owner is None:
            raise UserNotFound(user_id)
        viewer_follows = got.get("viewer_follows") is not None
        candidates = [int(i) for i in got.get("viewer_following", [])]
        candidates = [c for c in candidates if c != user_id]
        raw_ids, version, counts = got["ids"], got["version"], counts_from(got)
        ids = [int(i) for i in raw_ids]

        shown = ids[:per_page]

        def mutual_check(reads: NamedReads) -> None:
            queue_post_counts(reads, shown, viewer_id)
            if candidates:
                reads.zmscore("mutual", keys.followers(user_id), candidates)

        posts, extra = self.posts.load_posts(
            shown,
            include_hidden=include_hidden,
            also=mutual_check,
            version=version,
            authors={owner.id: owner},
        )
        scores = extra.get("mutual", [])
        mutual = [c for c, sc in zip(candidates, scores) if sc is not None]
        users = self._users_by_ids(mutual[:6])
        names = [users[m].username for m in mutual[:6] if m in users and not users[m].is_suspended]
        return Profile(
            user=owner,
            posts=Page(
                items=posts,
                number=number,
                has_next=len(ids) > per_page,
                total=counts.posts,
                per_page=per_page,
                counts=post_counts_from(extra, shown, viewer_id),
            ),
            counts=counts,
            viewer_follows=viewer_follows,
            mutual_names=names[:3],
            mutual_count=len(mutual),
        )
