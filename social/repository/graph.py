"""The follow graph and what following changes in home feeds."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

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
    queue_users,
    user_from_hash,
    users_from,
)
from .errors import CannotFollowSelf, UserNotFound
from .models import FollowEntry, HomePage, Page, Profile, User
from .posts import PostStore, post_counts_from, queue_post_counts
from .users import UserStore, name_has_url

# "Followed by people you follow" looks at this many of the viewer's newest followings.
MUTUAL_SCAN_LIMIT = 2000

# People to follow on an empty home page (GraphStore.home_page): the authors of the newest
# SUGGESTION_SCAN posts of the timeline, up to SUGGESTION_POOL of them, remembered by the
# process for SUGGESTION_REFRESH seconds; SUGGESTIONS_SHOWN of them shown.
SUGGESTION_SCAN = 50
SUGGESTION_POOL = 20
SUGGESTION_REFRESH = 60
SUGGESTIONS_SHOWN = 5
SUGGESTION_CACHE_KEY = ("suggestions",)  # in ProcessCache.pages: ((built at,), pool)


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
        self,
        user_id: int,
        which: str,
        number: int = 1,
        per_page: int = 50,
        viewer_id: int | None = None,
    ) -> Page[FollowEntry]:
        """Return a page of followers or following ("followers"/"following"), newest first.

        Two round trips: the page of ids and the total; the listed accounts and, for a
        logged-in viewer, whether the viewer follows each and each follows the viewer
        (one ZMSCORE each on the viewer's own two sets).
        """
        key = {"followers": keys.followers, "following": keys.following}[which](user_id)
        start, stop = page_bounds(number, per_page)
        pipe = self._pipe()
        pipe.zrevrange(key, start, stop, withscores=True)
        pipe.zcard(key)
        rows, total = pipe.execute()
        has_next = len(rows) > per_page
        rows = [(int(m), int(score)) for m, score in rows[:per_page]]
        listed = list(dict.fromkeys(uid for uid, _ in rows))
        reads = self.reads()
        queue_users(reads, listed)
        if viewer_id is not None and listed:
            reads.zmscore("viewer_follows", keys.following(viewer_id), listed)
            reads.zmscore("follows_viewer", keys.followers(viewer_id), listed)
        got = reads.execute()
        users = users_from(got, listed)
        follows = dict(zip(listed, got.get("viewer_follows") or [None] * len(listed)))
        followed_by = dict(zip(listed, got.get("follows_viewer") or [None] * len(listed)))
        entries = [
            FollowEntry(
                user=users[uid],
                since=since,
                viewer_follows=follows[uid] is not None,
                follows_viewer=followed_by[uid] is not None,
            )
            for uid, since in rows
            if uid in users and not users[uid].is_suspended
        ]
        return Page(
            items=entries,
            number=number,
            has_next=has_next,
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
           viewer follows and is followed ("Follows you"), viewer's followings;
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
            # "Follows you": the owner's following set, whose size the counts read already.
            reads.zscore("follows_viewer", keys.following(user_id), viewer_id)
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
            follows_viewer=got.get("follows_viewer") is not None,
        )

    # --- The home page, and people to follow when it is empty ------------------------------

    def home_page(
        self, user_id: int, number: int = 1, per_page: int = 10, *, at: float | None = None
    ) -> HomePage:
        """Return the home page (PostStore.home_page) with, when its first page shows no
        posts, up to SUGGESTIONS_SHOWN people to follow: active (they wrote one of the
        newest SUGGESTION_SCAN posts of the timeline, most posts there first), not followed
        by user_id, not user_id, not suspended or deleted.

        The candidates are the same for everyone, so the process keeps them for
        SUGGESTION_REFRESH seconds (ProcessCache.pages). Which of them the reader follows,
        and which were suspended or deleted since, is read on the home page's own first
        pipeline (three ZMSCOREs), queued only when that page may well be empty
        (home_page_with's if_empty): no round trip of its own. Building the candidates
        again (once a minute at most) reads the timeline's ids on that same pipeline, then
        loads those posts (as load_posts: one or two round trips, which a page of posts
        would have spent) and, for a reader who follows anyone, checks them against the
        reader's followings (one more). A page the process remembered showing posts that
        is now empty reads what it did not queue in one round trip more, once.
        """
        clock = time.time() if at is None else at
        remembered = self.cache.pages.get(SUGGESTION_CACHE_KEY)
        fresh = remembered is not None and clock - remembered[0][0] < SUGGESTION_REFRESH
        pool: tuple[User, ...] = remembered[1] if fresh else ()

        def if_empty(reads: NamedReads) -> None:
            if not fresh:
                reads.lrange("suggest_ids", keys.timeline(), 0, SUGGESTION_SCAN - 1)
            elif pool:
                self._queue_suggestion_checks(reads, user_id, pool)

        home, got = self.posts.home_page_with(
            user_id, number, per_page, if_empty=if_empty if number == 1 else None
        )
        if number != 1 or home.feed.items or (fresh and not pool):
            return home
        if fresh:
            if "suggest_followed" not in got:  # not queued: the page showed posts last time
                reads = self.reads()
                self._queue_suggestion_checks(reads, user_id, pool)
                got = reads.execute()
            return replace(home, suggestions=self._suggested(got, user_id, pool))
        raw = got.get("suggest_ids")
        if raw is None:
            raw = self.r.lrange(keys.timeline(), 0, SUGGESTION_SCAN - 1)
        pool = self._suggestion_pool([int(i) for i in raw], got["version"])
        self.cache.pages.put(SUGGESTION_CACHE_KEY, ((clock,), pool))
        others = [u for u in pool if u.id != user_id]
        if others and got["following"]:
            scores = self.r.zmscore(keys.following(user_id), [u.id for u in others])
            others = [u for u, score in zip(others, scores) if score is None]
        return replace(home, suggestions=others[:SUGGESTIONS_SHOWN])

    def _suggestion_pool(self, post_ids: Sequence[int], version: object) -> tuple[User, ...]:
        """Return the authors of the visible posts among post_ids (those of suspended or
        deleted accounts are not), most posts first then most recent, up to
        SUGGESTION_POOL; only names a URL leads to (the Follow button needs one)."""
        posts, _ = self.posts.load_posts(post_ids, version=version)
        tally: dict[int, list] = {}
        for post in posts:  # newest first: the first post seen is the author's newest
            entry = tally.setdefault(post.author_id, [0, len(tally), post.author_name])
            entry[0] += 1
        ranked = sorted(tally.items(), key=lambda item: (-item[1][0], item[1][1]))
        return tuple(
            User(id=author_id, username=name)
            for author_id, (_, _, name) in ranked
            if name_has_url(name)
        )[:SUGGESTION_POOL]

    @staticmethod
    def _queue_suggestion_checks(reads: NamedReads, user_id: int, pool: Sequence[User]) -> None:
        """Queue which of pool user_id follows and which were suspended or deleted since."""
        ids = [u.id for u in pool]
        reads.zmscore("suggest_followed", keys.following(user_id), ids)
        reads.zmscore("suggest_suspended", keys.suspended_users(), [u.username for u in pool])
        reads.zmscore("suggest_deleted", keys.deleted_users(), ids)

    @staticmethod
    def _suggested(got: dict, user_id: int, pool: Sequence[User]) -> list[User]:
        """Return up to SUGGESTIONS_SHOWN of pool that _queue_suggestion_checks cleared."""
        checks = zip(
            pool, got["suggest_followed"], got["suggest_suspended"], got["suggest_deleted"]
        )
        return [
            user
            for user, followed, suspended, deleted in checks
            if user.id != user_id and followed is None and suspended is None and deleted is None
        ][:SUGGESTIONS_SHOWN]
