"""Conversations around posts: replies, mentions, hashtags, likes, and deleting your own.

Writing a reply, a mention or a tag happens with the post (PostStore.create_post files it);
this store reads those lists as pages of posts, counts replies and likes for any page of
posts in the round trip that loads them, keeps the likes, and deletes a post for its author.
Every list is read a page at a time and loaded through PostStore.load_posts, so deleted
posts and suspended authors drop out the same way everywhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import redis
from django.utils.translation import gettext_noop

from social import keys
from social.text import normal_tag

from .base import (
    NamedReads,
    RepositoryBase,
    as_int,
    decode_hash,
    now,
    page_bounds,
    s,
    user_from_hash,
)
from .errors import NotAllowed, PostNotFound
from .models import Page, Post, PostCounts, User
from .posts import (
    HIDDEN_STATUSES,
    PostStore,
    post_counts_from,
    queue_post_counts,
)

TRENDING_SHOWN = 10
TRENDING_REFRESH = 60  # seconds a process keeps the trending tags before summing again
DELETED_BY_AUTHOR = "Deleted by its author."


@dataclass(frozen=True)
class Conversation:
    """A post in its conversation: the posts above it (oldest first, up to the bound kept
    when it was written) and a page of its direct replies (oldest first)."""

    post: Post
    ancestors: list[Post]
    replies: Page[Post]
    counts: dict[int, PostCounts]


class ConversationStore(RepositoryBase):
    """Replies, mentions, tag lists, likes, trending tags, and deleting one's own post."""

    def __init__(self, client: redis.Redis, *, posts: PostStore, **config) -> None:
        super().__init__(client, **config)
        self.posts = posts

    # --- Pages of posts with their counts ----------------------------------------------

    def page_of(
        self,
        raw_ids: list,
        number: int,
        per_page: int,
        viewer_id: int | None,
        *,
        version: object,
        also: Callable[[NamedReads], None] | None = None,
    ) -> tuple[Page[Post], dict]:
        """Turn per_page + 1 ids into a page of visible posts with their counts, in the
        round trips load_posts needs (none of its own: counts ride with the posts)."""
        ids = [int(i) for i in raw_ids][:per_page]

        def with_counts(reads: NamedReads) -> None:
            queue_post_counts(reads, ids, viewer_id)
            if also is not None:
                also(reads)

        posts, got = self.posts.load_posts(ids, also=with_counts, version=version)
        page = Page(
            items=posts,
            number=number,
            has_next=len(raw_ids) > per_page,
            per_page=per_page,
            counts=post_counts_from(got, ids, viewer_id),
        )
        return page, got

    def counts(self, ids: Sequence[int], viewer_id: int | None) -> dict[int, PostCounts]:
        """Return the counts of ids in one round trip (for pages built without them)."""
        if not ids:
            return {}
        reads = self.reads()
        queue_post_counts(reads, ids, viewer_id)
        return post_counts_from(reads.execute(), ids, viewer_id)

    def conversation(
        self, post_id: int, viewer_id: int | None, number: int = 1, per_page: int = 20
    ) -> Conversation:
        """Return post_id with the posts above it and a page of its replies (oldest first).

        Two round trips (three with posts this process has not seen): the post's ancestor
        ids and a page of reply ids; then the posts, their authors and every count. Raise
        PostNotFound when the post is missing (hidden posts come back with their flags: the
        view decides who may see them).
        """
        start, stop = page_bounds(number, per_page)
        reads = self.reads()
        reads.hget("ancestors", keys.post(post_id), "ancestors")
        reads.lrange("replies", keys.replies(post_id), start, stop)
        reads.get("version", keys.visibility_version())
        got = reads.execute()
        above = [int(i) for i in (s(got["ancestors"]) or "").split() if i.isdigit()]
        below = [int(i) for i in got["replies"]]
        ids = [*above, post_id, *below[:per_page]]
        loaded, counted = self.posts.load_posts(
            ids,
            include_hidden=True,
            version=got["version"],
            also=lambda reads: queue_post_counts(reads, ids, viewer_id),
        )
        by_id = {p.id: p for p in loaded}
        if post_id not in by_id:
            raise PostNotFound(post_id)
        shown = [by_id[i] for i in above if i in by_id]
        replies = [by_id[i] for i in below[:per_page] if i in by_id]
        return Conversation(
            post=by_id[post_id],
            ancestors=[p for p in shown if not (p.is_deleted or p.author_suspended)],
            replies=Page(
                items=[p for p in replies if not (p.is_deleted or p.author_suspended)],
                number=number,
                has_next=len(below) > per_page,
                per_page=per_page,
            ),
            counts=post_counts_from(counted, ids, viewer_id),
        )

    def mentions_page(self, user_id: int, number: int = 1, per_page: int = 10) -> Page[Post]:
        """Return a page of the posts mentioning user_id, newest first, and mark them seen
        (the unread count clears). Two round trips warm."""
        start, stop = page_bounds(number, per_page)
        reads = self.reads()
        reads.zrevrange("ids", keys.mentions(user_id), start, stop)
        reads.get("version", keys.visibility_version())
        reads.hset("seen", keys.user(user_id), "unread_mentions", 0)
        got = reads.execute()
        page, _ = self.page_of(got["ids"], number, per_page, user_id, version=got["version"])
        return page

    def tag_page(
        self, tag: str, viewer_id: int | None, number: int = 1, per_page: int = 20
    ) -> Page[Post]:
        """Return a page of the newest posts with #tag. Two round trips warm."""
        start, stop = page_bounds(number, per_page)
        normal = normal_tag(tag)
        if not normal:  # nothing a tag may hold is left: no post can carry it
            return Page(items=[], number=number, has_next=False, per_page=per_page)
        reads = self.reads()
        reads.lrange("ids", keys.tag_posts(normal), start, stop)
        reads.get("version", keys.visibility_version())
        got = reads.execute()
        page, _ = self.page_of(got["ids"], number, per_page, viewer_id, version=got["version"])
        return page

    def likes_page(
        self, user_id: int, viewer_id: int | None, number: int = 1, per_page: int = 10
    ) -> tuple[User | None, Page[Post]]:
        """Return the account (None if there is none) and a page of the posts it likes, most
        recently liked first. The account comes with the ids: two round trips warm."""
        start, stop = page_bounds(number, per_page)
        reads = self.reads()
        reads.hgetall("owner", keys.user(user_id))
        reads.zrevrange("ids", keys.user_likes(user_id), start, stop)
        reads.get("version", keys.visibility_version())
        got = reads.execute()
        owner = user_from_hash(user_id, decode_hash(got["owner"]))
        if owner is None:
            return None, Page(items=[], number=number, has_next=False, per_page=per_page)
        page, _ = self.page_of(got["ids"], number, per_page, viewer_id, version=got["version"])
        return owner, page

    # --- Likes --------------------------------------------------------------------------

    def like(self, user_id: int, post_id: int, *, at: int | None = None) -> bool:
        """Like a visible post; False if already liked (a no-op). Raise PostNotFound."""
        self._visible_author(post_id)
        ts = now() if at is None else at
        pipe = self._pipe()  # the post's set first: the like counts once it is there
        pipe.zadd(keys.likes(post_id), {user_id: ts}, nx=True)
        pipe.zadd(keys.user_likes(user_id), {post_id: ts}, nx=True)
        added, _ = pipe.execute()
        return bool(added)

    def unlike(self, user_id: int, post_id: int) -> bool:
        """Take a like back; False if there was none (a no-op)."""
        pipe = self._pipe()
        pipe.zrem(keys.user_likes(user_id), post_id)
        pipe.zrem(keys.likes(post_id), user_id)
        _, removed = pipe.execute()
        return bool(removed)

    def _visible_author(self, post_id: int) -> int:
        """Return the author id of a post anyone may see; raise PostNotFound otherwise."""
        author_id, deleted = self.r.hmget(keys.post(post_id), ["user_id", "deleted"])
        author = as_int(author_id)
        if author is None or s(deleted) == "1":
            raise PostNotFound(post_id)
        if s(self.r.hget(keys.user(author), "status")) in HIDDEN_STATUSES:
            raise PostNotFound(post_id)
        return author

    # --- Trending -------------------------------------------------------------------------

    def trending(self, *, at: float | None = None) -> list[tuple[str, int]]:
        """Return the TRENDING_SHOWN tags used most in the last 24 hours, with counts.

        The hourly buckets (keys.trending_hour) are summed with one ZUNIONSTORE into
        keys.trending_day, at most once a minute per process: one round trip then, none
        the rest of the minute.
        """
        clock = time.time() if at is None else at
        remembered = self.cache.trending
        if remembered is not None and clock - remembered[0] < TRENDING_REFRESH:
            return remembered[1]
        hour = int(clock) // 3600 * 3600
        buckets = [
            keys.trending_hour(time.strftime("%Y%m%d%H", time.gmtime(hour - h * 3600)))
            for h in range(24)
        ]
        pipe = self._pipe()
        pipe.zunionstore(keys.trending_day(), buckets)
        pipe.expire(keys.trending_day(), 2 * TRENDING_REFRESH)
        pipe.zrevrange(keys.trending_day(), 0, TRENDING_SHOWN - 1, withscores=True)
        top = [(s(tag), int(score)) for tag, score in pipe.execute()[-1]]
        self.cache.trending = (clock, top)
        return top

    # --- Deleting one's own post ------------------------------------------------------------

    def delete_own_post(self, user_id: int, post_id: int, *, at: int | None = None) -> None:
        """Delete user_id's own post: gone from every feed, the timeline, its tags' lists and
        the mentions of those it named. Raise PostNotFound (missing or already deleted) or
        NotAllowed (someone else's).

        The post hash is flagged, as moderators delete (readers skip it wherever it is
        still listed: home feeds, replies, likes), then the lists that show posts by recency
        drop it (the timeline, its tags, the author's own list, so the profile's count
        drops by one), and the visibility version moves so remembered pages are
        re-read. One pipeline after one read.
        """
        fields = ["user_id", "deleted", "tags", "mentions"]
        author, deleted, tags, mentions = map(s, self.r.hmget(keys.post(post_id), fields))
        if as_int(author) is None or deleted == "1":
            raise PostNotFound(post_id)
        if as_int(author) != user_id:
            raise NotAllowed(gettext_noop("You can only delete your own posts."))
        ts = now() if at is None else at
        pipe = self._pipe()
        pipe.hset(
            keys.post(post_id),
            mapping={
                "deleted": "1",
                "deleted_by": user_id,
                "deleted_reason": DELETED_BY_AUTHOR,
                "deleted_at": ts,
            },
        )
        pipe.lrem(keys.timeline(), 0, post_id)
        # Off the author's own list too: their profile's count and pages no longer hold it
        # (staff still reach it by its permalink and through reports).
        pipe.lrem(keys.own_posts(user_id), 0, post_id)
        for tag in (tags or "").split():
            pipe.lrem(keys.tag_posts(tag), 0, post_id)
        for item in (mentions or "").split():
            mentioned = item.partition(":")[0]
            if mentioned.isdigit():
                pipe.zrem(keys.mentions(int(mentioned)), post_id)
        pipe.execute()
        self.bump_visibility_version()  # after the flag: remembered pages re-read
