"""Posts, their fan-out, and the newest-first lists that show them."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import redis
from redis.client import Pipeline
from redis.cluster import ClusterPipeline

from social import keys
from social.text import decode_mentions, encode_mentions, hashtags, mentioned_names

from .audit import REASON_MAX
from .base import (
    STATUS_DELETED,
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
from .errors import PostNotFound, PostPending
from .models import HomePage, Page, Post, PostCounts, TimelinePage, User
from .notices import NoticeStore, decode_notices

# Authors whose posts no one sees (staff aside): suspended, or deleted by their owner.
HIDDEN_STATUSES = (STATUS_SUSPENDED, STATUS_DELETED)

# What a reply reads of the post it answers.
PARENT_FIELDS = ("user_id", "deleted", "ancestors")
# A reply keeps the ids of this many posts above it (its permalink shows them).
ANCESTORS_KEPT = 5
TRENDING_HOUR_TTL = 25 * 60 * 60

# How long a form submission's token stands for its post (keys.post_token).
POST_TOKEN_TTL = 24 * 60 * 60

# What a feed reads of a post it has seen before: the checks (author, time) and the flag.
POST_CHECK_FIELDS = ("user_id", "time", "deleted", "deleted_reason", "deleted_by")
# What it reads of that post's author: the name (a check) and the status (suspended?).
AUTHOR_CHECK_FIELDS = ("username", "status")


def queue_visibility_version(pipe: Pipeline) -> None:
    """Queue giving the database a visibility version if it has none: a random start, so
    a database replaced under a running web process never shows the old one's version and
    the process re-checks what it remembers (cache.py)."""
    pipe.set(keys.visibility_version(), secrets.randbelow(2**62), nx=True)


def written_fields(post: Post) -> dict[str, str]:
    """Return the post-hash fields fixed when post was written (reply, mentions, tags), as
    stored: what a remembered post brings to a row instead of reading them again."""
    return {
        "reply_to": "" if post.reply_to is None else str(post.reply_to),
        "reply_to_name": post.reply_to_name,
        "mentions": encode_mentions(dict(post.mentions)),
        "tags": " ".join(post.tags),
    }


# Every listed post's reply and like counts in one command (one server only: its keys are
# in many cluster slots). KEYS: replies:<id>, likes:<id> for each post, in pairs.
COUNTS_SCRIPT = """
local out = {}
for i = 1, #KEYS, 2 do
  out[#out + 1] = redis.call('LLEN', KEYS[i])
  out[#out + 1] = redis.call('ZCARD', KEYS[i + 1])
end
return out
"""


def queue_post_counts(reads: NamedReads, ids: Sequence[int], viewer_id: int | None) -> None:
    """Queue each post's reply count, like count and (for a reader) whether they like it
    and whether they hold an open report on it: what changes about a listed post, read with
    the page (never remembered).

    On one server the counts are one EVAL (a 50-post timeline: one command, not 100); on a
    cluster, where the posts' keys are on every node, one LLEN and one ZCARD per post. The
    reader's likes and open reports are one ZMSCORE each on their own lists
    (keys.user_likes, keys.user_reported), so a card's Like and Report links show the
    reader's state on every page of posts at no round trip of their own; a visitor's pages
    read neither.
    """
    unique = list(dict.fromkeys(ids))
    if not unique:
        return
    if isinstance(reads.pipe, ClusterPipeline):
        for post_id in unique:
            reads.llen(f"replies:{post_id}", keys.replies(post_id))
            reads.zcard(f"likes:{post_id}", keys.likes(post_id))
    else:
        count_keys = [k for i in unique for k in (keys.replies(i), keys.likes(i))]
        reads.execute_command("counts", "EVAL", COUNTS_SCRIPT, len(count_keys), *count_keys)
    if viewer_id is not None:
        reads.zmscore("liked", keys.user_likes(viewer_id), unique)
        reads.zmscore("reported", keys.user_reported(viewer_id), unique)


def post_counts_from(got: dict, ids: Sequence[int], viewer_id: int | None) -> dict:
    """Return {post id: PostCounts} from what queue_post_counts read."""
    unique = list(dict.fromkeys(ids))
    if not unique:
        return {}
    if "counts" in got:
        flat = got["counts"]
        replies, likes = flat[0::2], flat[1::2]
    else:
        replies = [got[f"replies:{i}"] for i in unique]
        likes = [got[f"likes:{i}"] for i in unique]
    reported = got.get("reported") or [None] * len(unique)
    liked = got.get("liked") or [None] * len(unique)
    return {
        post_id: PostCounts(
            replies=int(r or 0),
            likes=int(n or 0),
            liked=viewer_id is not None and s is not None,
            reported=viewer_id is not None and rep is not None,
        )
        for post_id, r, n, s, rep in zip(unique, replies, likes, liked, reported)
    }


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

    def create_post(
        self,
        author_id: int,
        body: str,
        *,
        at: int | None = None,
        token: str | None = None,
        reply_to: int | None = None,
    ) -> int:
        """Store a post, fan its id out to every follower's home feed, and return its id.

        Round trips: one for the new id (with the author's follower count), one for the
        post and the author's lists, then one per batch of followers (each batch's pipeline
        also fetches the next batch of ids), so a user with 500,000 followers never has them
        all in memory. Followers are read by rank; an unfollow during a long fan-out can
        shift ranks and skip one copy, which the next follow/unfollow of that pair, or
        `manage.py rebuild_feeds`, repairs.

        token: the form submission's one-off token (one more round trip). The first
        submission claims it for its post id; a retry of the same submission (after a
        timeout or a 503 that came once the post was stored) gets that post's id back and
        posts nothing (raises PostPending while the first has not written the post yet).

        A fan-out is recorded in keys.fanouts_in_progress before its first write and
        struck off with its last, so a process killed half-way leaves a record that
        `manage.py repair` finishes (finish_fanouts).

        An author with at least fanout_read_threshold followers (or already among
        keys.celebrities) is not fanned out at all: the post is in their own list and the
        timeline, and followers' home pages merge it in when read (home_page). The author
        joins keys.celebrities then, in the same pipeline that writes the post.

        What the text means is settled here, once (social/text.py): the @names of
        existing users (looked up in the first round trip) and the #tags are stored in the
        post hash, the post is filed under each tag and in each mentioned user's mentions.
        reply_to makes it a reply (PostNotFound if that post is gone or hidden).
        """
        ts = now() if at is None else at
        names = mentioned_names(body)
        pipe = self._pipe()
        pipe.incr(keys.next_post_id())
        pipe.zscore(keys.celebrities(), author_id)
        pipe.zcard(keys.followers(author_id))
        for name in names:  # the one name rule (UserStore.user_ids_for_names): exact wins
            pipe.hget(keys.users(), name)
            pipe.hget(keys.usernames_lower(), name.lower())
        if reply_to is not None:
            pipe.hmget(keys.post(reply_to), PARENT_FIELDS)
        new_id, listed, follower_count, *found = pipe.execute()
        post_id = int(new_id)
        fields = self._reply_fields(reply_to, found.pop()) if reply_to is not None else {}
        pairs = iter(found)
        mentions = {
            name: user_id
            for name, exact, lower in zip(names, pairs, pairs)
            if (user_id := as_int(exact if exact is not None else lower)) is not None
        }
        tags = hashtags(body)
        if mentions:
            fields["mentions"] = encode_mentions(mentions)
        if tags:
            fields["tags"] = " ".join(tags)
        if token is not None:
            claimed = self._claim_token(author_id, token, post_id)
            if claimed != post_id:
                return claimed
        read_fanout = listed is not None or follower_count >= self.fanout_read_threshold
        fan_out = follower_count > 0 and not read_fanout
        pipe = self._pipe()
        if fan_out:  # first: a post half-written is then always on record
            pipe.zadd(keys.fanouts_in_progress(), {post_id: ts})
        self.queue_post_writes(pipe, post_id, author_id, body, ts, fields)
        self.queue_conversation(pipe, post_id, author_id, ts, reply_to, mentions, tags)
        pipe.lpush(keys.home_feed(author_id), post_id)
        pipe.ltrim(keys.home_feed(author_id), 0, self.home_feed_cap - 1)
        pipe.lpush(keys.timeline(), post_id)
        pipe.ltrim(keys.timeline(), 0, self.timeline_cap - 1)
        self._count_event(pipe, "posts", ts)
        self._mark_active(pipe, author_id, ts)
        if listed is None and read_fanout:
            self.queue_promotion(pipe, author_id, ts)
        if fan_out:
            pipe.zrange(keys.followers(author_id), 0, self.fanout_batch - 1)
        replies = pipe.execute()
        if listed is None and read_fanout:
            self.bump_visibility_version()  # after joining: processes re-read the set
        batch = replies[-1] if fan_out else []
        start = 0
        while batch:
            start += self.fanout_batch
            pipe = self._pipe()
            for follower in batch:
                pipe.lpush(keys.home_feed(int(follower)), post_id)
                pipe.ltrim(keys.home_feed(int(follower)), 0, self.home_feed_cap - 1)
            if len(batch) < self.fanout_batch or start >= follower_count:
                # The last batch (followers who came since read the post from the
                # author's list when they followed): every copy is written.
                pipe.zrem(keys.fanouts_in_progress(), post_id)
                pipe.execute()
                break
            pipe.zrange(keys.followers(author_id), start, start + self.fanout_batch - 1)
            batch = pipe.execute()[-1]
        else:
            if fan_out:  # the followers left before the first batch was read
                self.r.zrem(keys.fanouts_in_progress(), post_id)
        return post_id

    def _claim_token(self, author_id: int, token: str, post_id: int) -> int:
        """Claim a submission's token for post_id; return the post id it stands for (ours,
        or an earlier submission's whose post is stored). One round trip, two when the
        token was claimed before."""
        key = keys.post_token(author_id, token)
        pipe = self._pipe()
        pipe.set(key, post_id, nx=True, ex=POST_TOKEN_TTL)
        pipe.get(key)
        _, holder = pipe.execute()
        claimed = int(holder) if holder is not None else post_id
        if claimed != post_id and not self.r.exists(keys.post(claimed)):
            raise PostPending(claimed)
        return claimed

    def interrupted_fanouts(self, older_than: int = 60, *, at: int | None = None) -> list[int]:
        """Return the ids of posts whose fan-out began more than older_than seconds ago
        and has not ended (see finish_fanouts)."""
        cutoff = (now() if at is None else at) - older_than
        return [int(i) for i in self.r.zrangebyscore(keys.fanouts_in_progress(), "-inf", cutoff)]

    def finish_fanouts(self, older_than: int = 60, *, at: int | None = None) -> list[int]:
        """Finish the fan-outs begun more than older_than seconds ago and not ended (their
        process died, or Redis went away mid-way); return their post ids.

        For each: the author's lists and the timeline get the post if they lack it, then
        every follower's feed that lacks it gets it in its place by id (a WATCH/MULTI
        rewrite of that one feed, so posts arriving meanwhile are kept), and the record
        goes. A post whose hash was never written is only struck off. Safe to run again.
        """
        done = []
        for post_id in self.interrupted_fanouts(older_than, at=at):
            author_id = as_int(self.r.hget(keys.post(post_id), "user_id"))
            if author_id is not None:
                self._insert_missing(keys.own_posts(author_id), post_id, cap=None)
                self._insert_missing(keys.home_feed(author_id), post_id, self.home_feed_cap)
                self._insert_missing(keys.timeline(), post_id, self.timeline_cap)
                if self.r.zscore(keys.celebrities(), author_id) is None:
                    self._finish_followers(author_id, post_id)
            self.r.zrem(keys.fanouts_in_progress(), post_id)
            done.append(post_id)
        return done

    def _finish_followers(self, author_id: int, post_id: int) -> None:
        """Give post_id to every follower's feed that lacks it (LPOS in batches)."""
        start = 0
        while True:
            batch = [
                int(f)
                for f in self.r.zrange(
                    keys.followers(author_id), start, start + self.fanout_batch - 1
                )
            ]
            if not batch:
                return
            pipe = self._pipe()
            for follower in batch:
                pipe.lpos(keys.home_feed(follower), post_id)
            for follower, found in zip(batch, pipe.execute()):
                if found is None:
                    self._insert_missing(keys.home_feed(follower), post_id, self.home_feed_cap)
            start += self.fanout_batch

    def _insert_missing(self, key: str, post_id: int, cap: int | None) -> None:
        """Put post_id into the newest-first list at key in its place by id, unless it is
        there or (capped) would fall past the cap."""

        def merged(ids: list[int]) -> list[int]:
            if post_id in ids:
                return ids
            new = sorted([*ids, post_id], reverse=True)
            return new if cap is None else new[:cap]

        self._rewrite_list(key, merged)

    def queue_promotion(self, pipe: Pipeline, author_id: int, ts: int) -> None:
        """Queue adding author_id to keys.celebrities (no-op if there); the caller then
        moves the visibility version (bump_visibility_version), so every web process
        re-reads the set before its next home page. Membership only grows: posts written
        while an author was in the set are in no follower's feed, so leaving it would hide
        them (docs/scaling.md)."""
        pipe.zadd(keys.celebrities(), {author_id: ts}, nx=True)

    def _reply_fields(self, reply_to: int, parent: list) -> dict[str, str]:
        """Return the post-hash fields of a reply to reply_to, from the parent's PARENT_FIELDS;
        raise PostNotFound when the parent is missing, deleted or by a suspended author."""
        author_id, deleted, ancestors = as_int(parent[0]), s(parent[1]), s(parent[2])
        known = self.cache.posts.get(int(reply_to))
        if known is not None and known.post.author_id == author_id:
            author = User(id=author_id, username=known.post.author_name)
        else:
            author = self._users_by_ids([author_id] if author_id else []).get(author_id)
        if author_id is None or deleted == "1" or author is None:
            raise PostNotFound(reply_to)
        if known is None or known.post.author_suspended:
            state = self.r.hget(keys.user(author_id), "status")
            if s(state) in HIDDEN_STATUSES:
                raise PostNotFound(reply_to)
        chain = [*(ancestors or "").split(), str(reply_to)][-ANCESTORS_KEPT:]
        return {
            "reply_to": str(reply_to),
            "reply_to_user": str(author_id),
            "reply_to_name": author.username,
            "ancestors": " ".join(chain),
        }

    def queue_conversation(
        self,
        pipe: Pipeline,
        post_id: int,
        author_id: int,
        ts: int,
        reply_to: int | None,
        mentions: dict[str, int],
        tags: list[str],
    ) -> None:
        """Queue filing post_id as a reply, in mentioned users' mentions and under tags."""
        if reply_to is not None:
            pipe.rpush(keys.replies(reply_to), post_id)
        for user_id in dict.fromkeys(mentions.values()):
            if user_id == author_id:
                continue
            pipe.zadd(keys.mentions(user_id), {post_id: ts})
            pipe.zremrangebyrank(keys.mentions(user_id), 0, -keys.MENTIONS_CAP - 1)
            pipe.hincrby(keys.user(user_id), "unread_mentions", 1)
        hour = keys.trending_hour(time.strftime("%Y%m%d%H", time.gmtime(ts)))
        for tag in tags:
            pipe.lpush(keys.tag_posts(tag), post_id)
            pipe.ltrim(keys.tag_posts(tag), 0, keys.TAG_CAP - 1)
            pipe.zincrby(hour, 1, tag)
        if tags:
            pipe.expire(hour, TRENDING_HOUR_TTL)

    def queue_post_writes(
        self,
        pipe,
        post_id: int,
        author_id: int,
        body: str,
        ts: int,
        fields: dict[str, str] | None = None,
        *,
        with_version: bool = True,
    ) -> None:
        """Queue the post hash and the author's own-posts entry (the hash first), and make
        sure the database has a visibility version (with_version=False: the caller queues
        queue_visibility_version once for a whole batch). fields: more of the hash (a
        reply's parent, mentions, tags)."""
        pipe.hset(
            keys.post(post_id),
            mapping={"user_id": author_id, "time": ts, "body": body, **(fields or {})},
        )
        pipe.lpush(keys.own_posts(author_id), post_id)
        if with_version:
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
            user_id, ts, deleted, reason, deleted_by = map(s, reply)
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
                 "deleted_reason": reason or "", "deleted_by": deleted_by or "",
                 "_checked": "1", **written_fields(was)}
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
            author_id: User(id=author_id, username=name, is_suspended=status in HIDDEN_STATUSES)
            for author_id, (name, status) in author_state.items()
            if name
        }
        unknown = {as_int(row.get("user_id")) for row in rows if "_checked" not in row}
        unknown.discard(None)
        users.update(self._users_by_ids(unknown - users.keys()))
        posts = self.build_posts(ids, rows, users, include_hidden=True)
        # Remembered at the version the caller read in an earlier round trip when there is
        # one: it surely came before these flags were read. The one read in this pipeline
        # came first on one server, but on a cluster its node may answer after the posts'
        # nodes, and a change written between would be remembered at the newer version.
        at_version = checked_at if version is UNREAD else version
        for post in posts:
            self.cache.posts.put(post.id, RememberedPost(post, at_version))
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
                deleted_by_author=bool(h.get("deleted_by"))
                and h.get("deleted_by") == str(author.id),
                reply_to=as_int(h.get("reply_to")),
                reply_to_name=h.get("reply_to_name") or "",
                mentions=decode_mentions(h.get("mentions")),
                tags=tuple((h.get("tags") or "").split()),
            )
            if include_hidden or not (post.is_deleted or post.author_suspended):
                posts.append(post)
        return posts

    def _page(
        self,
        raw_ids: list,
        number: int,
        per_page: int,
        viewer_id: int | None,
        *,
        guessed: tuple[tuple[int, ...], dict] = ((), {}),
        **kwargs,
    ) -> Page[Post]:
        """Turn an LRANGE of per_page + 1 ids into a page of loaded posts with their counts:
        those read with the ids when `guessed` (the ids guessed, what their counts read
        gave) guessed right (guess_counts), else read in load_posts' round trip."""
        ids = [int(i) for i in raw_ids]
        shown = ids[:per_page]
        guess, got = guessed
        if guess and tuple(shown) == guess:
            posts, _ = self.load_posts(shown, **kwargs)
        else:
            posts, got = self.load_posts(
                shown, also=lambda reads: queue_post_counts(reads, shown, viewer_id), **kwargs
            )
        return Page(
            items=posts,
            number=number,
            has_next=len(ids) > per_page,
            per_page=per_page,
            counts=post_counts_from(got, shown, viewer_id),
        )

    def guess_counts(self, reads: NamedReads, key: tuple, viewer_id: int | None) -> tuple:
        """Queue the counts of the posts this process last showed on the page `key` (a
        reader's home page, the timeline) on the pipeline that reads the page's ids, and
        return those ids. While the page lists the same posts, which is most requests, the
        counts then cost no round trip of their own (_page, guessed=)."""
        guess = self.cache.shown.get(key) or ()
        if guess:
            queue_post_counts(reads, guess, viewer_id)
        return guess

    def counts(self, ids: Sequence[int], viewer_id: int | None) -> dict[int, PostCounts]:
        """Return the counts of ids in one round trip (for a page remembered without them)."""
        if not ids:
            return {}
        reads = self.reads()
        queue_post_counts(reads, ids, viewer_id)
        return post_counts_from(reads.execute(), ids, viewer_id)

    def get_post(self, post_id: int, *, include_hidden: bool = False) -> Post:
        """Return the post or raise PostNotFound (also when hidden from this reader)."""
        posts, _ = self.load_posts([post_id], include_hidden=include_hidden)
        if not posts:
            raise PostNotFound(post_id)
        return posts[0]

    def home_page(self, user_id: int, number: int = 1, per_page: int = 10) -> HomePage:
        """Return the logged-in home page: feed page, counts, notices (home_page_with)."""
        return self.home_page_with(user_id, number, per_page)[0]

    def home_page_with(
        self,
        user_id: int,
        number: int = 1,
        per_page: int = 10,
        *,
        if_empty: Callable[[NamedReads], None] | None = None,
    ) -> tuple[HomePage, dict[str, object]]:
        """Return the logged-in home page (feed page, counts, notices) and, by name, the
        replies of the reads `if_empty` queued on its first pipeline: it is called when the
        page may well show no posts (this process does not remember it showing any), for
        what an empty feed shows instead (GraphStore.home_page); the replies lack its names
        when it was not called.

        One round trip when this process remembers the page's posts as they are now and
        last showed this reader the same page (the posts' reply and like counts come with
        the ids: guess_counts); two when they need checking or the page changed, three
        with posts it has not seen (see load_posts). A user
        who follows fan-out-on-read authors (keys.celebrities) pays one more: their newest
        posts are read and merged with the feed by id (ids grow with time), and two more
        when this process does not know the current set of such authors yet.
        """
        start, stop = page_bounds(number, per_page)
        known = self.cache.celebrities
        reads = self.reads()
        shown_key = ("home", user_id, number, per_page)
        guess = self.guess_counts(reads, shown_key, user_id)
        reads.lrange("ids", keys.home_feed(user_id), start, stop)
        queue_counts(reads, user_id)
        reads.lrange("notices", keys.notices(user_id), 0, 4)
        reads.get("version", keys.visibility_version())
        reads.zcard("celebrities", keys.celebrities())
        if known and known[1]:
            reads.zmscore("followed", keys.following(user_id), list(known[1]))
        if if_empty is not None and not guess:
            if_empty(reads)
        got = reads.execute()
        ids = got["ids"]
        if got["celebrities"]:
            followed = self._followed_celebrities(user_id, got, known)
            if followed:
                ids = self._merge_celebrities(user_id, ids, followed, start, stop)
        feed = self._page(
            ids, number, per_page, user_id, guessed=(guess, got), version=got["version"]
        )
        self.cache.shown.put(shown_key, tuple(int(i) for i in ids[:per_page]))
        home = HomePage(feed=feed, counts=counts_from(got), notices=decode_notices(got["notices"]))
        return home, got

    def _followed_celebrities(
        self, user_id: int, got: dict, known: tuple[bytes, tuple[int, ...]] | None
    ) -> list[int]:
        """Return the fan-out-on-read authors user_id follows, from the home page's first
        round trip when the remembered set is current (its version and size match what it
        read), otherwise after re-reading the set (two round trips)."""
        version = got["version"]
        if (
            known is not None
            and version is not None
            and known[0] == version
            and len(known[1]) == got["celebrities"]
        ):
            scores = got.get("followed") or []
            return [c for c, score in zip(known[1], scores) if score is not None]
        ids = tuple(int(i) for i in self.r.zrange(keys.celebrities(), 0, -1))
        if version is not None:
            self.cache.celebrities = (version, ids)
        if not ids:
            return []
        scores = self.r.zmscore(keys.following(user_id), list(ids))
        return [c for c, score in zip(ids, scores) if score is not None]

    def _merge_celebrities(
        self, user_id: int, feed_ids: list, followed: list[int], start: int, stop: int
    ) -> list[int]:
        """Return ids[start:stop + 1] of the home feed merged with the newest posts of the
        followed fan-out-on-read authors, newest (highest id) first. One round trip; it
        re-reads the feed from its head for pages after the first."""
        pipe = self._pipe()
        for author_id in followed:
            pipe.lrange(keys.own_posts(author_id), 0, stop)
        if start:
            pipe.lrange(keys.home_feed(user_id), 0, stop)
        lists = pipe.execute()
        if start:
            feed_ids = lists.pop()
        merged = {int(i) for i in feed_ids}
        for theirs in lists:
            merged.update(int(i) for i in theirs)
        return sorted(merged, reverse=True)[: self.home_feed_cap][start : stop + 1]

    def timeline_page(
        self,
        number: int = 1,
        per_page: int = 50,
        latest_users: int = 10,
        viewer_id: int | None = None,
    ) -> TimelinePage:
        """Return a page of the global timeline plus the newest sign-ups.

        Everyone sees the same page, so a process that built it from the same ids, names
        and visibility version (a suspension or deletion moves it) reuses it, and the
        posts' counts (which change without moving the version) are read with those ids
        for the posts it last showed: one round trip. Otherwise two or three, as
        load_posts says.
        """
        start, stop = page_bounds(number, per_page)
        key = ("timeline", number, per_page, latest_users)
        before = self.cache.pages.get(key)  # (fingerprint, page) as last built, or None
        guess = tuple(before[0][0][:per_page]) if before is not None else ()
        reads = self.reads()
        reads.lrange("ids", keys.timeline(), start, stop)
        reads.zrevrange("names", keys.users_by_time(), 0, latest_users * 2 - 1)
        reads.get("version", keys.visibility_version())
        if guess:
            queue_post_counts(reads, guess, viewer_id)
        got = reads.execute()
        ids = [int(i) for i in got["ids"]]
        names = [s(n) for n in got["names"]]
        version = got["version"]
        fingerprint = (tuple(ids), tuple(names), version)
        shown = ids[:per_page]
        if before is not None and before[0] == fingerprint:  # the same ids: guess == shown
            remembered = before[1]
            posts = replace(remembered.posts, counts=post_counts_from(got, shown, viewer_id))
            return replace(remembered, posts=posts)

        def suspended_check(reads: NamedReads) -> None:
            queue_post_counts(reads, shown, viewer_id)
            if names:
                reads.zmscore("suspended", keys.suspended_users(), names)

        posts, extra = self.load_posts(shown, also=suspended_check, version=version)
        hidden = extra.get("suspended", [])
        visible = [n for n, score in zip(names, hidden) if score is None]
        page = TimelinePage(
            posts=Page(items=posts, number=number, has_next=len(ids) > per_page, per_page=per_page),
            latest_users=visible[:latest_users],
        )
        self.cache.remember_page(key, fingerprint, page)
        counted = replace(page.posts, counts=post_counts_from(extra, shown, viewer_id))
        return replace(page, posts=counted)

    def latest_posts(self, count: int = 5) -> list[Post]:
        """Return the newest visible posts of the global timeline (latest_page's posts)."""
        return self.latest_page(count).items

    def latest_page(self, count: int = 5) -> Page[Post]:
        """Return the newest visible posts of the global timeline with their counts as a
        visitor sees them (the welcome page), remembered like the timeline page: one round
        trip while nothing changed, the counts included."""
        key = ("latest", count)
        before = self.cache.pages.get(key)
        guess = [p.id for p in before[1]] if before is not None else []
        reads = self.reads()
        reads.lrange("ids", keys.timeline(), 0, count * 2 - 1)
        reads.get("version", keys.visibility_version())
        if guess:
            queue_post_counts(reads, guess, None)
        got = reads.execute()
        ids = [int(i) for i in got["ids"]]
        fingerprint = (tuple(ids), got["version"])
        if before is not None and before[0] == fingerprint:
            posts = list(before[1])
            return Page(
                items=posts, number=1, has_next=False, per_page=count,
                counts=post_counts_from(got, guess, None),
            )  # fmt: skip
        posts, extra = self.load_posts(
            ids, also=lambda reads: queue_post_counts(reads, ids, None), version=got["version"]
        )
        posts = posts[:count]
        self.cache.remember_page(key, fingerprint, tuple(posts))
        return Page(
            items=posts, number=1, has_next=False, per_page=count,
            counts=post_counts_from(extra, ids, None),
        )  # fmt: skip

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
        short timeline page or one untold author, nothing a reader trips over. The caller
        moves the visibility version once the pipeline has run (bump_visibility_version).
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
        snippet = body if len(body) <= 40 else body[:39] + "…"
        self.notices.queue_notice(
            pipe,
            author_id,
            f"Your post “{snippet}” was removed by moderators. Reason: {reason}",
            at=ts,
            kind="post_removed",  # said in the reader's language (home.html)
            snippet=snippet,
            reason=reason,
        )
