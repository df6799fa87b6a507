"""Home feeds: how a new post reaches its author's followers (its Reach, settled with its
id), the copies into their feeds in batches (FanoutStore.deliver: the write path's last
step, for a post and a repost, a local author's or a remote one's), finishing fan-outs that
a dead process or a lost Redis left half done (`manage.py repair`; keys.fanouts_in_progress
records them), and rebuilding every home feed from the follow graph (`manage.py
rebuild_feeds`, `seed`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import cast

from social import keys

from ..base import Members, Pipe, RepositoryBase, as_int, batched, now, queue_hiding
from ..read.front import queue_front_change

FEED_BATCH = 250  # home feeds rebuilt per round of pipelines
FEED_CACHE_IDS = 2_000_000  # own-posts ids kept between feed batches before the cache resets


@dataclass(frozen=True)
class Reach:
    """How a new post reaches its author's followers, settled when its id is taken
    (new_post_id): copied into each follower's home feed now (fan-out on write), or merged
    into their home pages when read (the author is among keys.celebrities, or joins them
    with this post: promote)."""

    followers: int  # how many followed the author when the id was taken
    copied: bool = False
    promote: bool = False


def queue_new_post_id(pipe: Pipe, author_id: int) -> None:
    """Queue taking a new post id with what settles its reach: three replies, for
    new_post_id."""
    pipe.incr(keys.next_post_id())
    pipe.zscore(keys.celebrities(), author_id)
    pipe.zcard(keys.followers(author_id))


def new_post_id(replies: Sequence, read_threshold: int) -> tuple[int, Reach]:
    """Return the new post id and its Reach from queue_new_post_id's three replies: an
    author with read_threshold followers or more is fanned out on read from now on."""
    new_id, listed, followers = replies
    on_read = listed is not None or followers >= read_threshold
    return int(new_id), Reach(
        followers, copied=followers > 0 and not on_read, promote=on_read and listed is None
    )


def queue_promotion(pipe: Pipe, author_id: int, ts: int) -> None:
    """Queue adding author_id to keys.celebrities (no-op if there); send() then moves the
    visibility version, so every web process re-reads the set before its next home page.
    Membership only grows: posts written while an author was in the set are in no
    follower's feed, so leaving it would hide them (docs/scaling.md)."""
    pipe.zadd(keys.celebrities(), {str(author_id): ts}, nx=True)
    queue_hiding(pipe)  # web processes re-read the set


@dataclass(frozen=True)
class Delivery:
    """The copies of a written post still to make (FanoutStore.deliver): into the home
    feeds of its author's followers, from `first` (the first batch, read on the write's own
    round trip) until `followers` of them (the count when its id was taken: those who
    followed since read the post from the author's list when they did). followers 0:
    nothing to copy (none, or fanned out on read), nothing on record."""

    post_id: int
    author_id: int
    followers: int = 0
    first: tuple[int, ...] = ()
    # A repost: followers who follow any of these (the shared post's author, its earlier
    # reposters) have the post in their feed already, and get no copy.
    skip_if_following: tuple[int, ...] = ()


def queue_fanout_record(pipe: Pipe, post_id: int, reach: Reach, ts: int) -> None:
    """Queue recording the fan-out of post_id as begun (keys.fanouts_in_progress), first on
    the write's pipeline, when it is copied: a post half-written is then always on record
    for `manage.py repair` (finish_fanouts). deliver strikes it off with its last copies."""
    if reach.copied:
        pipe.zadd(keys.fanouts_in_progress(), {str(post_id): ts})


def queue_first_batch(pipe: Pipe, author_id: int, reach: Reach, batch: int) -> None:
    """Queue reading the first batch of author_id's followers, last on the write's
    pipeline, when the post is copied (its reply is Delivery.first)."""
    if reach.copied:
        pipe.zrange(keys.followers(author_id), 0, batch - 1)


def delivery_of(
    post_id: int,
    author_id: int,
    reach: Reach,
    replies: Sequence,
    skip_if_following: Sequence[int] = (),
) -> Delivery:
    """Return the Delivery of a post written with queue_first_batch last on its pipeline
    (replies: that pipeline's)."""
    if not reach.copied:
        return Delivery(post_id, author_id)
    first = tuple(int(f) for f in cast(Members, replies[-1]))
    return Delivery(post_id, author_id, reach.followers, first, tuple(skip_if_following))


class FanoutStore(RepositoryBase):
    """The copies of a new post into followers' home feeds, the record of fan-outs in
    progress, finishing the interrupted ones, and the rebuild of every home feed."""

    def deliver(self, delivery: Delivery) -> None:
        """Copy a written post into its author's followers' home feeds, a batch of
        fanout_batch a round trip (each batch's pipeline also reads the next; a repost's
        batch one round trip more: which of them follow an account in skip_if_following),
        and strike its record off with the last copies. Followers are read by rank: an
        unfollow during a long fan-out can shift ranks and skip one copy, which the next
        follow of that pair, or `manage.py rebuild_feeds`, repairs."""
        batch, start = list(delivery.first), 0
        while batch:
            start += self.fanout_batch
            pipe = self._pipe()
            for follower in self._wanted(batch, delivery.skip_if_following):
                pipe.lpush(keys.home_feed(follower), delivery.post_id)
                pipe.ltrim(keys.home_feed(follower), 0, self.home_feed_cap - 1)
            if len(batch) < self.fanout_batch or start >= delivery.followers:
                pipe.zrem(keys.fanouts_in_progress(), delivery.post_id)  # every copy made
                pipe.execute()
                return
            pipe.zrange(keys.followers(delivery.author_id), start, start + self.fanout_batch - 1)
            batch = [int(f) for f in pipe.execute()[-1]]
        if delivery.followers:  # the followers left before their batch was read
            self.r.zrem(keys.fanouts_in_progress(), delivery.post_id)

    def _wanted(self, batch: list[int], skip_if_following: Sequence[int]) -> list[int]:
        """The followers of batch who follow none of skip_if_following (nor are one): one
        round trip, none when there is nothing to skip."""
        if not skip_if_following:
            return batch
        skipped = [str(i) for i in skip_if_following]  # as members
        pipe = self._pipe()
        for follower in batch:
            pipe.zmscore(keys.following(follower), skipped)
        return [
            follower
            for follower, scores in zip(batch, pipe.execute())
            if follower not in skip_if_following and all(score is None for score in scores)
        ]

    def interrupted_fanouts(self, older_than: int = 60, *, at: int | None = None) -> list[int]:
        """Return the ids of posts whose fan-out began more than older_than seconds ago
        and has not ended (see finish_fanouts)."""
        cutoff = (now() if at is None else at) - older_than
        ids = cast(Members, self.r.zrangebyscore(keys.fanouts_in_progress(), "-inf", cutoff))
        return [int(i) for i in ids]

    def finish_fanouts(self, older_than: int = 60, *, at: int | None = None) -> list[int]:
        """Finish the fan-outs begun more than older_than seconds ago and not ended (their
        process died, or Redis went away mid-way); return their post ids.

        For each: the author's lists and (but for a repost) the timeline get the post if
        they lack it, then
        every follower's feed that lacks it gets it in its place by id (a WATCH/MULTI
        rewrite of that one feed, so posts arriving meanwhile are kept), and the record
        goes. A post whose hash was never written is only struck off. Safe to run again.
        """
        done = []
        for post_id in self.interrupted_fanouts(older_than, at=at):
            author, repost_of = self.r.hmget(keys.post(post_id), ["user_id", "repost_of"])
            author_id = as_int(author)
            if author_id is not None:
                self._insert_missing(keys.own_posts(author_id), post_id, cap=None)
                self._insert_missing(keys.home_feed(author_id), post_id, self.home_feed_cap)
                if repost_of is None:  # a repost is never in the timeline
                    self._insert_missing(keys.timeline(), post_id, self.timeline_cap)
                    pipe = self._pipe()
                    queue_front_change(pipe)
                    pipe.execute()
                if self.r.zscore(keys.celebrities(), author_id) is None:
                    self._finish_followers(author_id, post_id)
            self.r.zrem(keys.fanouts_in_progress(), post_id)
            done.append(post_id)
        return done

    def _finish_followers(self, author_id: int, post_id: int) -> None:
        """Give post_id to every follower's feed that lacks it (LPOS in batches)."""
        start = 0
        while True:
            followers = self.r.zrange(
                keys.followers(author_id), start, start + self.fanout_batch - 1
            )
            batch = [int(f) for f in cast(Members, followers)]
            if not batch:
                return
            pipe = self._pipe()
            for follower in batch:
                pipe.lpos(keys.home_feed(follower), str(post_id))
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

    def rebuild_home_feeds(
        self, user_ids: Iterable[int], *, progress: Callable[[int], None] | None = None
    ) -> int:
        """Recompute each user's home feed from the follow graph; return the ids written.

        posts:<id> becomes the newest home_feed_cap ids of the user's own posts and their
        followees' (from the own-posts lists; not those of keys.celebrities, which home pages
        merge in when read), newest first, written as DEL + RPUSH in
        pipelines of FEED_BATCH users: three round trips per batch. Not atomic: a reader may
        see an empty feed for a moment, and a post fanned out to a feed between its read and
        its rewrite is dropped from that feed only (the post stays in the timeline and on the
        profile). Run it on a quiet site, or run it again.
        """
        cache: dict[int, list[int]] = {}
        written = done = 0
        # Fan-out-on-read authors' posts are merged in when a home page is read: not copied.
        read_fanout = {int(i) for i in cast(Members, self.r.zrange(keys.celebrities(), 0, -1))}
        for batch in batched(user_ids, FEED_BATCH):
            pipe = self._pipe()
            for user_id in batch:
                pipe.zrange(keys.following(user_id), 0, -1)
            followees = {
                uid: [int(f) for f in fs if int(f) != uid and int(f) not in read_fanout]
                for uid, fs in zip(batch, pipe.execute())
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
