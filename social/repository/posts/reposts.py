"""Reposts: sharing another account's post with one's followers ("reposted by @name").

A repost is a post of its own (keys.post with `repost_of`), so it takes its place by id
in every list that holds its reposter's posts: their own list (the profile), their home
feed and their followers' home feeds, copied there as a post is (fan-out on write), or,
for a reposter with followers past the threshold, merged in when read (keys.celebrities,
reader.HomeFeed) like their posts. Never in the timeline, a tag or mentions. The read path
shows the shared post in its place, once a page (reader.py), and not at all when that post
is hidden (visibility.may_list_repost).

Who reposts what: keys.reposts (per post) and keys.user_reposts (per account), both
scored by the repost's id, and the post hash's `reposts` counter (loading.COUNT_FIELDS).
"""

from __future__ import annotations

from typing import Unpack, cast

from django.utils.translation import gettext_noop

from social import keys

from ..base import (
    Client,
    Members,
    RepositoryBase,
    Scored,
    StoreSettings,
    as_int,
    now,
    queue_hiding,
    queue_visibility_version,
    s,
)
from ..errors import NotAllowed, PostNotFound, Refused
from ..live.bus import DELETE, UPDATE, queue_event
from ..live.notification_writes import (
    queue_notification,
    queue_notification_claim,
    unqueue_notification,
)
from ..models import FollowEntry, Page
from ..read.account_reader import AccountReader, AccountSource
from ..read.front import queue_front_change
from ..read.visibility import BLOCKED, BLOCKING, Viewer
from ..targets import check_target, queue_target_checks, read_target

REFUSED = {
    BLOCKED: gettext_noop("This account does not let you repost its posts."),
    BLOCKING: gettext_noop("You block this account: unblock it to repost its posts."),
}
REPOST_OWN = gettext_noop("You cannot repost your own post.")
# Earlier reposters a follower's feed is checked against before a repost is copied there:
# a post reaches a feed once, whichever of them the follower follows (past this many, the
# read path still shows it once a page).
EARLIER_REPOSTERS_CHECKED = 50


def repost_body(author_name: str) -> str:
    """The body a repost's hash holds: what the reference Retwis, which knows nothing of
    reposts, shows for it ("RT @alice"). The site shows the shared post instead."""
    return f"RT @{author_name}"


class RepostStore(RepositoryBase):
    """Reposting, undoing it, and who reposts a post."""

    def __init__(
        self, client: Client, *, accounts: AccountReader, **config: Unpack[StoreSettings]
    ) -> None:
        super().__init__(client, **config)
        self.accounts = accounts

    def repost(self, user_id: int, post_id: int, *, at: int | None = None) -> tuple[int, bool]:
        """Repost post_id for user_id; return (the repost's id, whether it is new): a
        second repost of the same post is a no-op returning the first. A repost of a
        repost reposts the post it shares (targets.py).

        Raise PostNotFound (missing, deleted, its author hidden; for a repost's id also
        its author hidden or a block between them and user_id), NotAllowed (one's own
        post; its author blocks user_id, or user_id blocks its author): nothing stored.

        Round trips: two reads (the post, one more for a repost's id; its author, the
        blocks, the reposter's own state), one for the new id and the reposter's
        followers, the claim (ZADD NX on the reposter's set: a simultaneous second repost
        loses it and stores nothing; with it the claim of the author's one notification,
        so reposting again tells no one again), the writes, then two a batch of
        followers. A process that dies after the claim leaves the repost claimed and
        partly written: undoing it and reposting again mends it; `manage.py repair`
        finishes a fan-out cut short.
        """
        target = read_target(self.r, post_id)
        original, author_id = target.post_id, target.author_id
        if author_id == user_id:
            raise NotAllowed(REPOST_OWN)
        pipe = self._pipe()
        pipe.zscore(keys.user_reposts(user_id), original)
        pipe.hget(keys.user(author_id), "username")
        queue_target_checks(pipe, target, user_id)
        existing, name, *checks = pipe.execute()
        why = check_target(target, checks)
        if not s(name):
            raise PostNotFound(post_id)
        if why:
            raise Refused(REFUSED[why])
        if existing is not None:
            return int(existing), False
        ts = now() if at is None else at
        pipe = self._pipe()
        pipe.incr(keys.next_post_id())
        pipe.zscore(keys.celebrities(), user_id)
        pipe.zcard(keys.followers(user_id))
        pipe.zscore(keys.following(user_id), author_id)
        pipe.zrange(keys.reposts(original), 0, EARLIER_REPOSTERS_CHECKED - 1)
        new_id, listed, follower_count, follows_author, earlier = pipe.execute()
        repost_id = int(new_id)
        pipe = self._pipe()
        pipe.zadd(keys.user_reposts(user_id), {str(original): repost_id}, nx=True)
        queue_notification_claim(pipe, author_id, "repost", user_id, original, ts)  # told once
        claimed, tells = pipe.execute()
        if not claimed:
            return int(self.r.zscore(keys.user_reposts(user_id), original) or 0), False
        read_fanout = listed is not None or follower_count >= self.fanout_read_threshold
        fan_out = follower_count > 0 and not read_fanout
        pipe = self._pipe()
        if fan_out:  # first, as for a post: a fan-out cut short is on record for repair
            pipe.zadd(keys.fanouts_in_progress(), {str(repost_id): ts})
        pipe.hset(
            keys.post(repost_id),
            mapping={
                "user_id": user_id,
                "time": ts,
                "body": repost_body(s(name) or ""),
                "repost_of": original,
            },
        )
        queue_visibility_version(pipe)
        pipe.lpush(keys.own_posts(user_id), repost_id)
        if follows_author is None:  # else the shared post is in their feed already
            pipe.lpush(keys.home_feed(user_id), repost_id)
            pipe.ltrim(keys.home_feed(user_id), 0, self.home_feed_cap - 1)
        pipe.zadd(keys.reposts(original), {str(user_id): repost_id})
        pipe.hincrby(keys.post(original), "reposts", 1)
        queue_front_change(pipe)
        if tells:
            queue_notification(pipe, author_id, "repost", user_id, original, ts)
        self._count_event(pipe, "reposts", ts)
        self._mark_active(pipe, user_id, ts)
        queue_event(pipe, UPDATE, post_id=repost_id, author_id=user_id, repost_of=original)
        if read_fanout and listed is None:
            pipe.zadd(keys.celebrities(), {str(user_id): ts}, nx=True)
            queue_hiding(pipe)  # web processes re-read the set (posts.queue_promotion)
        self.send(pipe)
        if fan_out:
            skip_if_following = [author_id, *(int(i) for i in earlier if int(i) != user_id)]
            self._fan_out(user_id, repost_id, skip_if_following)
            self.r.zrem(keys.fanouts_in_progress(), repost_id)
        return repost_id, True

    def _fan_out(self, user_id: int, repost_id: int, skip_if_following: list[int]) -> None:
        """Copy the repost into the home feed of each follower who follows none of
        skip_if_following (the shared post's author, its earlier reposters): theirs holds
        the post already. Two round trips a batch: who to skip, then the copies."""
        start = 0
        skipped = [str(i) for i in skip_if_following]  # as members
        while batch := [
            int(f)
            for f in cast(
                Members,
                self.r.zrange(keys.followers(user_id), start, start + self.fanout_batch - 1),
            )
        ]:
            start += self.fanout_batch
            pipe = self._pipe()
            for follower in batch:
                pipe.zmscore(keys.following(follower), skipped)
            wanted = [
                follower
                for follower, scores in zip(batch, pipe.execute())
                if follower not in skip_if_following and all(score is None for score in scores)
            ]
            pipe = self._pipe()
            for follower in wanted:
                pipe.lpush(keys.home_feed(follower), repost_id)
                pipe.ltrim(keys.home_feed(follower), 0, self.home_feed_cap - 1)
            if wanted:
                pipe.execute()

    def unrepost(self, user_id: int, post_id: int) -> bool:
        """Take user_id's repost of post_id (or of the post a repost's id shares) back;
        False if there was none (a no-op). The repost leaves their list, their feed and
        their followers' (in batches), its hash goes, the count drops and the author's
        notification of it goes (its claim stays: reposting again tells no one again); the
        visibility version moves, so no process shows the repost it remembers."""
        repost_id = as_int(self.r.zscore(keys.user_reposts(user_id), post_id))
        if repost_id is None:  # a repost's id stands for the post it shares
            shared = as_int(self.r.hget(keys.post(post_id), "repost_of"))
            if shared is None:
                return False
            post_id = shared
            repost_id = as_int(self.r.zscore(keys.user_reposts(user_id), post_id))
            if repost_id is None:
                return False
        pipe = self._pipe()
        pipe.zrem(keys.user_reposts(user_id), post_id)
        pipe.zrem(keys.reposts(post_id), user_id)
        pipe.hmget(keys.post(repost_id), ["time", "repost_of"])
        pipe.hget(keys.post(post_id), "user_id")
        _, removed, (ts, shared), author = pipe.execute()
        pipe = self._pipe()
        if removed:
            pipe.hincrby(keys.post(post_id), "reposts", -1)
            queue_front_change(pipe)
        if as_int(shared) == post_id:  # the hash is the repost's (never another post)
            pipe.delete(keys.post(repost_id))
            if (author_id := as_int(author)) is not None and (when := as_int(ts)) is not None:
                unqueue_notification(pipe, author_id, "repost", user_id, post_id, when)
        member = str(repost_id)
        pipe.lrem(keys.own_posts(user_id), 0, member)
        pipe.lrem(keys.home_feed(user_id), 0, member)
        queue_event(pipe, DELETE, post_id=repost_id)  # as Mastodon tells an unreblog
        queue_hiding(pipe)
        self.send(pipe)
        start = 0
        while batch := cast(
            Members, self.r.zrange(keys.followers(user_id), start, start + self.fanout_batch - 1)
        ):
            start += self.fanout_batch
            pipe = self._pipe()
            for follower in batch:
                pipe.lrem(keys.home_feed(int(follower)), 0, member)
            pipe.execute()
        return True

    def take_back_reposts_of(self, user_id: int, author_id: int) -> int:
        """Undo user_id's reposts of author_id's posts (a block between the two); return
        how many. Reads user_id's reposts in batches (bounded by their reposts) and each
        shared post's author with them."""
        taken: list[int] = []
        start = 0
        while shared := [
            int(i)
            for i in cast(Members, self.r.zrange(keys.user_reposts(user_id), start, start + 499))
        ]:
            start += 500
            pipe = self._pipe()
            for post_id in shared:
                pipe.hget(keys.post(post_id), "user_id")
            authors = pipe.execute()
            taken += [p for p, author in zip(shared, authors) if as_int(author) == author_id]
        for shared_id in taken:
            self.unrepost(user_id, shared_id)
        return len(taken)

    def reposted_by(
        self, post_id: int, viewer: Viewer, number: int = 1, per_page: int = 40
    ) -> Page[FollowEntry]:
        """The accounts that repost post_id as viewer may see them listed, most recent
        first, with their counts (account_reader.py: two round trips)."""
        source = AccountSource.zset(keys.reposts(post_id))
        return self.accounts.page(source, viewer, number, per_page, counts=True)

    def cut_reposts(self, user_id: int) -> int:
        """Take back every repost of user_id (their account is deleted): each shared
        post's set and counter, the repost's hash and its place in their own list (their
        feeds and followers' skip the dangling id; the purge deletes their lists). Return
        how many."""
        done = 0
        while pairs := cast(
            Scored, self.r.zrange(keys.user_reposts(user_id), 0, 499, withscores=True)
        ):
            pipe = self._pipe()
            for post_id, _ in pairs:
                pipe.zrem(keys.reposts(int(post_id)), user_id)
            removed = pipe.execute()
            pipe = self._pipe()
            for (post_id, repost_id), gone in zip(pairs, removed):
                if gone:
                    pipe.hincrby(keys.post(int(post_id)), "reposts", -1)
                pipe.delete(keys.post(int(repost_id)))
                pipe.lrem(keys.own_posts(user_id), 0, str(int(repost_id)))
            pipe.zrem(keys.user_reposts(user_id), *(p for p, _ in pairs))
            queue_hiding(pipe)
            self.send(pipe)
            done += len(pairs)
        return done
