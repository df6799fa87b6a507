"""Posts, their fan-out, and the newest-first lists that show them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from redis.client import Pipeline

from social import keys

from .base import STATUS_SUSPENDED, RepositoryBase, as_int, decode_hash, now, s
from .cache import KnownPost
from .errors import PostNotFound
from .models import Counts, HomePage, Page, Post, TimelinePage, User
from .notices import decode_notices

# What a feed reads of a post it has seen before: the checks (author, time) and the flag.
POST_CHECK_FIELDS = ("user_id", "time", "deleted", "deleted_reason")
# What it reads of that post's author: the name (a check) and the status (suspended?).
AUTHOR_CHECK_FIELDS = ("username", "status")


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
        also: Callable[[Pipeline], None] | None = None,
    ) -> tuple[list[Post], list]:
        """Return the posts for ids (in order) and the replies of whatever `also` queued.

        One round trip when this process has seen every post before (cache.py): a small
        HMGET per post for what can change (the `deleted` flag) and for the checks, and one
        per author for their status and name. Posts not seen before cost a second round
        trip: their hashes come whole in the first, their authors in the second. Deleted
        posts and posts by suspended authors are left out unless include_hidden.
        """
        known = [self.cache.posts.get(int(post_id)) for post_id in ids]
        authors = list(dict.fromkeys(k.author_id for k in known if k is not None))
        pipe = self._pipe()
        for post_id, k in zip(ids, known):
            if k is None:
                pipe.hgetall(keys.post(post_id))
            else:
                pipe.hmget(keys.post(post_id), POST_CHECK_FIELDS)
        for author_id in authors:
            pipe.hmget(keys.user(author_id), AUTHOR_CHECK_FIELDS)
        if also is not None:
            also(pipe)
        replies = pipe.execute() if len(pipe) else []
        n = len(ids)
        author_state = dict(zip(authors, replies[n : n + len(authors)]))

        rows: list[dict[str, str] | None] = []
        for post_id, k, reply in zip(ids, known, replies[:n]):
            if k is None:
                rows.append(decode_hash(reply))
                continue
            user_id, ts, deleted, reason = map(s, reply)
            name, status = map(s, author_state[k.author_id])
            if as_int(user_id) != k.author_id or as_int(ts) != k.time or name != k.author_name:
                self.cache.posts.discard(int(post_id))  # another database: read it afresh
                rows.append(None)
                continue
            rows.append(
                {
                    "user_id": user_id,
                    "time": ts,
                    "body": k.body,
                    "deleted": deleted,
                    "deleted_reason": reason,
                    "_status": status,
                    "_name": name,
                }
            )
        stale = [post_id for post_id, row in zip(ids, rows) if row is None]
        if stale:  # rare: re-read whole what no longer matched what we remembered
            pipe = self._pipe()
            for post_id in stale:
                pipe.hgetall(keys.post(post_id))
            fresh = iter(decode_hash(h) for h in pipe.execute())
            rows = [row if row is not None else next(fresh) for row in rows]

        users = {
            author_id: User(
                id=author_id,
                username=s(name),
                is_suspended=s(status) == STATUS_SUSPENDED,
            )
            for author_id, (name, status) in author_state.items()
            if name
        }
        unknown = {as_int(row.get("user_id")) for row in rows if "_name" not in row}
        unknown.discard(None)
        users.update(self._users_by_ids(unknown - users.keys()))
        posts = self._build_posts(ids, rows, users, include_hidden=include_hidden)
        for post in posts:
            if post.id not in self.cache.posts:
                self.cache.posts.put(
                    post.id, KnownPost(post.author_id, post.time, post.body, post.author_name)
                )
        return posts, replies[n + len(authors) :]

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
        posts, _ = self._load_posts(ids[:per_page], **kwargs)
        return Page(items=posts, number=number, has_next=len(ids) > per_page, per_page=per_page)

    def get_post(self, post_id: int, *, include_hidden: bool = False) -> Post:
        """Return the post or raise PostNotFound (also when hidden from this reader)."""
        posts, _ = self._load_posts([post_id], include_hidden=include_hidden)
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

        posts, extra = self._load_posts(ids[:per_page], also=suspended_check)
        hidden = extra[0] if names else []
        visible = [n for n, score in zip(names, hidden) if score is None]
        return TimelinePage(
            posts=Page(items=posts, number=number, has_next=len(ids) > per_page, per_page=per_page),
            latest_users=visible[:latest_users],
        )

    def latest_posts(self, count: int = 5) -> list[Post]:
        """Return the newest visible posts of the global timeline."""
        ids = [int(i) for i in self.r.lrange(keys.timeline(), 0, count * 2 - 1)]
        posts, _ = self._load_posts(ids)
        return posts[:count]
