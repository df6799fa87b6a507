"""Posts, their fan-out, and the newest-first lists that show them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from redis.client import Pipeline

from social import keys

from .base import RepositoryBase, as_int, decode_hash, now, s
from .errors import PostNotFound
from .models import Counts, HomePage, Page, Post, TimelinePage, User
from .notices import decode_notices


def page_bounds(number: int, per_page: int) -> tuple[int, int]:
    """Return the LRANGE start and stop for page `number`, one extra item to detect more."""
    start = (max(1, number) - 1) * per_page
    return start, start + per_page  # inclusive stop: per_page + 1 items


class PostStore(RepositoryBase):
    """Writing posts and reading pages of them."""

    def create_post(self, author_id: int, body: str, *, at: int | None = None) -> int:
        """Store a post, fan its id out to every follower's home feed, and return its id.

        Round trips: INCR, one pipeline for the post and the author's lists, then one per
        batch of followers (each batch's pipeline also fetches the next batch of ids), so a
        user with 500,000 followers never has them all in memory. Followers are read by rank;
        an unfollow during a long fan-out can shift ranks and skip one copy, which the next
        follow/unfollow of that pair, or `manage.py rebuild_feeds`, repairs.
        """
        ts = now() if at is None else at
        post_id = int(self.r.incr(keys.next_post_id()))
        pipe = self._pipe()
        self.queue_post_writes(pipe, post_id, author_id, body, ts)
        pipe.lpush(keys.home_feed(author_id), post_id)
        pipe.ltrim(keys.home_feed(author_id), 0, self.home_feed_cap - 1)
        pipe.lpush(keys.timeline(), post_id)
        pipe.ltrim(keys.timeline(), 0, self.timeline_cap - 1)
        self._count_event(pipe, "posts", ts)
        self._mark_active(pipe, author_id, ts)
        pipe.zrange(keys.followers(author_id), 0, self.fanout_batch - 1)
        batch = pipe.execute()[-1]
        start = 0
        while batch:
            start += self.fanout_batch
            pipe = self._pipe()
            for follower in batch:
                pipe.lpush(keys.home_feed(int(follower)), post_id)
                pipe.ltrim(keys.home_feed(int(follower)), 0, self.home_feed_cap - 1)
            if len(batch) < self.fanout_batch:
                pipe.execute()
                break
            pipe.zrange(keys.followers(author_id), start, start + self.fanout_batch - 1)
            batch = pipe.execute()[-1]
        return post_id

    def queue_post_writes(self, pipe, post_id: int, author_id: int, body: str, ts: int) -> None:
        """Queue the post hash and the author's own-posts entry (the hash first)."""
        pipe.hset(keys.post(post_id), mapping={"user_id": author_id, "time": ts, "body": body})
        pipe.lpush(keys.own_posts(author_id), post_id)

    def _load_posts(
        self,
        ids: Sequence[int],
        *,
        include_hidden: bool = False,
        extra_users: Sequence[int] = (),
        also: Callable[[Pipeline], None] | None = None,
    ) -> tuple[list[Post], dict[int, User], list]:
        """Return the posts for ids (in order), their authors, and `also`'s replies.

        Two round trips whatever len(ids): the post hashes (plus whatever `also` queues on
        that pipeline), then the authors (plus `extra_users`). Deleted posts and posts by
        suspended authors are left out unless include_hidden.
        """
        pipe = self._pipe()
        for post_id in ids:
            pipe.hgetall(keys.post(post_id))
        if also is not None:
            also(pipe)
        replies = pipe.execute() if len(pipe) else []
        hashes = [decode_hash(h) for h in replies[: len(ids)]]
        author_ids = [as_int(h.get("user_id")) for h in hashes]
        users = self._users_by_ids([a for a in author_ids if a is not None] + list(extra_users))
        posts = self._build_posts(ids, hashes, users, include_hidden=include_hidden)
        return posts, users, replies[len(ids) :]

    def _build_posts(
        self,
        ids: Sequence[int],
        hashes: Sequence[dict[str, str]],
        users: dict[int, User],
        *,
        include_hidden: bool = False,
    ) -> list[Post]:
        """Build Posts from decoded post hashes and their loaded authors, in order."""
        posts = []
        for post_id, h in zip(ids, hashes):
            author_id = as_int(h.get("user_id"))
            author = users.get(author_id) if author_id is not None else None
            if author is None:
                continue  # a dangling id (post or author missing): nothing to show
            post = Post(
                id=int(post_id),
                author_id=author.id,
                author_name=author.username,
                time=as_int(h.get("time")) or 0,
                body=h.get("body") or "",
                is_deleted=h.get("deleted") == "1",
                author_suspended=author.is_suspended,
                deleted_reason=h.get("deleted_reason") or "",
            )
            if include_hidden or not (post.is_deleted or post.author_suspended):
                posts.append(post)
        return posts

    def _page(self, raw_ids: list, number: int, per_page: int, **kwargs) -> Page[Post]:
        """Turn an LRANGE of per_page + 1 ids into a page of loaded posts."""
        ids = [int(i) for i in raw_ids]
        posts, _, _ = self._load_posts(ids[:per_page], **kwargs)
        return Page(items=posts, number=number, has_next=len(ids) > per_page, per_page=per_page)

    def get_post(self, post_id: int, *, include_hidden: bool = False) -> Post:
        """Return the post or raise PostNotFound (also when hidden from this reader)."""
        posts, _, _ = self._load_posts([post_id], include_hidden=include_hidden)
        if not posts:
            raise PostNotFound(post_id)
        return posts[0]

    def home_page(self, user_id: int, number: int = 1, per_page: int = 10) -> HomePage:
        """Return the logged-in home page: feed page, counts, notices. Three round trips."""
        start, stop = page_bounds(number, per_page)
        pipe = self._pipe()
        pipe.lrange(keys.home_feed(user_id), start, stop)
        pipe.zcard(keys.followers(user_id))
        pipe.zcard(keys.following(user_id))
        pipe.llen(keys.own_posts(user_id))
        pipe.lrange(keys.notices(user_id), 0, 4)
        ids, n_followers, n_following, n_posts, raw_notices = pipe.execute()
        return HomePage(
            feed=self._page(ids, number, per_page),
            counts=Counts(followers=n_followers, following=n_following, posts=n_posts),
            notices=decode_notices(raw_notices),
        )

    def timeline_page(
        self, number: int = 1, per_page: int = 50, latest_users: int = 10
    ) -> TimelinePage:
        """Return a page of the global timeline plus the newest sign-ups. Three round trips."""
        start, stop = page_bounds(number, per_page)
        pipe = self._pipe()
        pipe.lrange(keys.timeline(), start, stop)
        pipe.zrevrange(keys.users_by_time(), 0, latest_users * 2 - 1)
        raw_ids, raw_names = pipe.execute()
        ids = [int(i) for i in raw_ids]
        names = [s(n) for n in raw_names]

        def suspended_check(pipe: Pipeline) -> None:
            if names:
                pipe.zmscore(keys.suspended_users(), names)

        posts, _, extra = self._load_posts(ids[:per_page], also=suspended_check)
        hidden = extra[0] if names else []
        visible = [n for n, score in zip(names, hidden) if score is None]
        return TimelinePage(
            posts=Page(items=posts, number=number, has_next=len(ids) > per_page, per_page=per_page),
            latest_users=visible[:latest_users],
        )

    def latest_posts(self, count: int = 5) -> list[Post]:
        """Return the newest visible posts of the global timeline."""
        ids = [int(i) for i in self.r.lrange(keys.timeline(), 0, count * 2 - 1)]
        posts, _, _ = self._load_posts(ids)
        return posts[:count]
