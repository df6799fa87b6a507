"""Home feeds outside posting: finishing fan-outs that a dead process or a lost Redis left
half done (`manage.py repair`; keys.fanouts_in_progress records them), and rebuilding every
home feed from the follow graph (`manage.py rebuild_feeds`, `seed`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain
from typing import cast

from social import keys

from ..base import Members, RepositoryBase, as_int, batched, now
from ..read.front import queue_front_change

FEED_BATCH = 250  # home feeds rebuilt per round of pipelines
FEED_CACHE_IDS = 2_000_000  # own-posts ids kept between feed batches before the cache resets


class FanoutStore(RepositoryBase):
    """The record of fan-outs in progress, finishing the interrupted ones, and the rebuild of
    every home feed."""

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
