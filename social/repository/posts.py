"""Posts, their fan-out, and the newest-first lists that show them."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence

import redis
from redis.client import Pipeline

from social import keys

from .audit import REASON_MAX
from .base import (
    STATUS_SUSPENDED,
    NamedReads,
    RepositoryBase,
    as_int,
    counts_from,
    decode_hash,
    now,
    page_bounds,
    queue_counts,
    s,
)
from .cache import UNREAD, RememberedPost
from .errors import PostNotFound
from .models import HomePage, Page, Post, TimelinePage, User
from .notices import NoticeStore, decode_notices

# What a feed reads of a post it has seen before: the checks (author, time) and the flag.
POST_CHECK_FIELDS = ("user_id", "time", "deleted", "deleted_reason")
# What it reads of that post's author: the name (a check) and the status (suspended?).
AUTHOR_CHECK_FIELDS = ("username", "status")


def queue_visibility_version(pipe: Pipeline) -> None:
    """Queue giving the database a visibility version if it has none: a random start, so
    a database replaced under a running web process never shows the old one's version and
    the process re-checks what it remembers (cache.py)."""
    pipe.set(keys.visibility_version(), secrets.randbelow(2**62), nx=True)


def visible(posts: list[Post], include_hidden: bool = False) -> list[Post]:
    """Return posts without the deleted ones and those of suspended authors (unless
    include_hidden)."""
    if include_hidden:
        return posts
    return [p for p in posts if not (p.is_deleted or p.author_suspended)]


class PostStore(RepositoryBase):
    """Writing posts (and soft-deleting them) and reading pages of them.

    Given the notices store, to tell an author their post was removed.
    """

    def __init__(self, client: redis.Redis, *, notices: NoticeStore, **config) -> None:
        super().__init__(client, **config)
        self.notices = notices

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
        """Queue the post hash and the author's own-posts entry (the hash first), and make
        sure the database has a visibility version."""
        pipe.hset(keys.post(post_id), mapping={"user_id": author_id, "time": ts, "body": body})
        pipe.lpush(keys.own_posts(author_id), post_id)
        queue_visibility_version(pipe)

    def load_posts(
        self,
        ids: Sequence[int],
        *,
        include_hidden: bool = False,
        also: Callable[[NamedReads], None] | None = None,
        version: bytes | None | object = UNREAD,
        authors: dict[int, User] | None = None,
    ) -> tuple[list[Post], dict[str, object]]:
        """Return the posts for ids (in order) and, by name, the replies of the reads `also`
        queued on the same pipeline (a NamedReads).

        What this process remembers (cache.py) decides the cost:
        - every post remembered as checked at the caller's `version` (the visibility
          version it read with the ids): no round trip at all (one for `also`'s reads);
        - every post remembered: one round trip that checks them (a small HMGET per post
          for its `deleted` flag, its author and time; one per author for name and status)
          and reads the visibility version they are then remembered at;
        - posts not seen before: their hashes come whole in that round trip, their authors
          in a second, unless the caller passes them in `authors` (just read, e.g. a
          profile's owner).
        Deleted posts and posts by suspended authors are left out unless include_hidden.
        """
        known = [self.cache.posts.get(int(post_id)) for post_id in ids]
        if (
            version is not UNREAD
            and version is not None  # a database without one (e.g. the reference's)
            and all(k is not None and k.version == version for k in known)
        ):
            posts = visible([k.post for k in known], include_hidden)
            if also is None:
                return posts, {}
            reads = self.reads()
            also(reads)
            return posts, reads.execute()

        author_ids = list(dict.fromkeys(k.post.author_id for k in known if k is not None))
        pipe = self._pipe()
        pipe.get(keys.visibility_version())  # first: the flags read after are at least as new
        for post_id, k in zip(ids, known):
            if k is None:
                pipe.hgetall(keys.post(post_id))
            else:
                pipe.hmget(keys.post(post_id), POST_CHECK_FIELDS)
        for author_id in author_ids:
            pipe.hmget(keys.user(author_id), AUTHOR_CHECK_FIELDS)
        extra = NamedReads(pipe)  # named, after the posts and authors read by position
        if also is not None:
            also(extra)
        replies = pipe.execute()
        checked_at, replies = replies[0], replies[1:]
        n = len(ids)
        author_state = {
            a: tuple(map(s, r)) for a, r in zip(author_ids, replies[n : n + len(author_ids)])
        }

        rows: list[dict[str, str] | None] = []
        for k, reply in zip(known, replies[:n]):
            if k is None:
                rows.append(decode_hash(reply))
                continue
            user_id, ts, deleted, reason = map(s, reply)
            name, status = author_state[k.post.author_id]
            was = k.post
            if (
                as_int(user_id) != was.author_id
                or as_int(ts) != was.time
                or name != was.author_name
            ):
                self.cache.posts.discard(was.id)  # another database: read it afresh
                rows.append(None)
                continue
            rows.append(
                {"user_id": user_id, "time": ts, "body": was.body, "deleted": deleted or "",
                 "deleted_reason": reason or "", "_checked": "1"}
            )  # fmt: skip
        stale = [post_id for post_id, row in zip(ids, rows) if row is None]
        if stale:  # rare: re-read whole what no longer matched what was remembered
            pipe = self._pipe()
            for post_id in stale:
                pipe.hgetall(keys.post(post_id))
            fresh = iter([decode_hash(h) for h in pipe.execute()])
            rows = [row if row is not None else next(fresh) for row in rows]

        users = dict(authors or {})
        users |= {
            author_id: User(id=author_id, username=name, is_suspended=status == STATUS_SUSPENDED)
            for author_id, (name, status) in author_state.items()
            if name
        }
        unknown = {as_int(row.get("user_id")) for row in rows if "_checked" not in row}
        unknown.discard(None)
        users.update(self._users_by_ids(unknown - users.keys()))
        posts = self.build_posts(ids, rows, users, include_hidden=True)
        for post in posts:
            self.cache.posts.put(post.id, RememberedPost(post, checked_at))
        return visible(posts, include_hidden), extra.replies_from(replies, offset=1)

    def build_posts(
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
        posts, _ = self.load_posts(ids[:per_page], **kwargs)
        return Page(items=posts, number=number, has_next=len(ids) > per_page, per_page=per_page)

    def get_post(self, post_id: int, *, include_hidden: bool = False) -> Post:
        """Return the post or raise PostNotFound (also when hidden from this reader)."""
        posts, _ = self.load_posts([post_id], include_hidden=include_hidden)
        if not posts:
            raise PostNotFound(post_id)
        return posts[0]

    def home_page(self, user_id: int, number: int = 1, per_page: int = 10) -> HomePage:
        """Return the logged-in home page: feed page, counts, notices.

        One round trip when this process remembers the page's posts as they are now; two
        when they need checking, three with posts it has not seen (see load_posts).
        """
        start, stop = page_bounds(number, per_page)
        reads = self.reads()
        reads.lrange("ids", keys.home_feed(user_id), start, stop)
        queue_counts(reads, user_id)
        reads.lrange("notices", keys.notices(user_id), 0, 4)
        reads.get("version", keys.visibility_version())
        got = reads.execute()
        return HomePage(
            feed=self._page(got["ids"], number, per_page, version=got["version"]),
            counts=counts_from(got),
            notices=decode_notices(got["notices"]),
        )

    def timeline_page(
        self, number: int = 1, per_page: int = 50, latest_users: int = 10
    ) -> TimelinePage:
        """Return a page of the global timeline plus the newest sign-ups.

        Everyone sees the same page, so a process that built it from the same ids, names
        and visibility version (a suspension or deletion moves it) reuses it: one round trip.
        Otherwise two or three, as load_posts says.
        """
        start, stop = page_bounds(number, per_page)
        pipe = self._pipe()
        pipe.lrange(keys.timeline(), start, stop)
        pipe.zrevrange(keys.users_by_time(), 0, latest_users * 2 - 1)
        pipe.get(keys.visibility_version())
        raw_ids, raw_names, version = pipe.execute()
        ids = [int(i) for i in raw_ids]
        names = [s(n) for n in raw_names]
        key = ("timeline", number, per_page, latest_users)
        fingerprint = (tuple(ids), tuple(names), version)
        remembered = self.cache.page(key, fingerprint)
        if remembered is not None:
            return remembered

        def suspended_check(reads: NamedReads) -> None:
            if names:
                reads.zmscore("suspended", keys.suspended_users(), names)

        posts, extra = self.load_posts(ids[:per_page], also=suspended_check, version=version)
        hidden = extra.get("suspended", [])
        visible = [n for n, score in zip(names, hidden) if score is None]
        page = TimelinePage(
            posts=Page(items=posts, number=number, has_next=len(ids) > per_page, per_page=per_page),
            latest_users=visible[:latest_users],
        )
        self.cache.remember_page(key, fingerprint, page)
        return page

    def latest_posts(self, count: int = 5) -> list[Post]:
        """Return the newest visible posts of the global timeline (remembered like the
        timeline page: one round trip while nothing changed)."""
        pipe = self._pipe()
        pipe.lrange(keys.timeline(), 0, count * 2 - 1)
        pipe.get(keys.visibility_version())
        raw_ids, version = pipe.execute()
        ids = [int(i) for i in raw_ids]
        key, fingerprint = ("latest", count), (tuple(ids), version)
        remembered = self.cache.page(key, fingerprint)
        if remembered is not None:
            return list(remembered)
        posts, _ = self.load_posts(ids, version=version)
        self.cache.remember_page(key, fingerprint, tuple(posts[:count]))
        return posts[:count]

    def queue_soft_delete(
        self,
        pipe: Pipeline,
        post_id: int,
        author_id: int,
        body: str,
        actor: User,
        reason: str,
        ts: int,
    ) -> None:
        """Queue marking a post deleted, dropping it from the timeline, and telling its author.

        The hash keeps its content for the record; readers skip it by the `deleted` flag, so
        home feeds and the author's own list keep the id. Only the timeline drops it (LREM on
        a list of 1000), so the global page stays full. The flag goes first: once it is
        written the post is gone everywhere, and a lost LREM or notice after it costs one
        short timeline page or one untold author, nothing a reader trips over.
        """
        pipe.hset(
            keys.post(post_id),
            mapping={
                "deleted": "1",
                "deleted_reason": reason[:REASON_MAX],
                "deleted_by": actor.id,
                "deleted_at": ts,
            },
        )
        pipe.lrem(keys.timeline(), 0, post_id)
        pipe.incr(keys.visibility_version())  # after the flag: remembered pages re-read
        snippet = body if len(body) <= 40 else body[:39] + "…"
        self.notices.queue_notice(
            pipe,
            author_id,
            f"Your post “{snippet}” was removed by moderators. Reason: {reason}",
            at=ts,
        )
