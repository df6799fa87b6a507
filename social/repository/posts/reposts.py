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

from dataclasses import dataclass
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
from ..models import User
from ..read.front import queue_front_change
from ..read.visibility import BLOCKED, BLOCKING
from ..targets import check_target, queue_target_checks, read_target
from .fanout import (
    Delivery,
    FanoutStore,
    Reach,
    delivery_of,
    new_post_id,
    queue_fanout_record,
    queue_first_batch,
    queue_new_post_id,
    queue_promotion,
)

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


@dataclass(frozen=True)
class ResolvedRepost:
    """A new repost as settled before anything of it is written: its id (ours) and reach,
    the reposter, the post it shares with that post's author (told once) and name (the
    repost's body), and what decides where it is copied. resolve_repost settles a local
    reposter's; an incoming one is settled by its own handler and written by the same
    write_repost and FanoutStore.deliver."""

    id: int
    reposter: User  # the steps read its id
    original: int  # the post it shares (never a repost)
    author_id: int
    author_name: str
    ts: int
    reach: Reach
    follows_author: bool  # the reposter's own feed holds the shared post already
    earlier: tuple[int, ...] = ()  # the post's reposters before (EARLIER_REPOSTERS_CHECKED)

    @property
    def skip_if_following(self) -> tuple[int, ...]:
        """The accounts whose followers' feeds hold the shared post already: its author
        and its earlier reposters (a post reaches a feed once)."""
        return (self.author_id, *(i for i in self.earlier if i != self.reposter.id))


class RepostStore(RepositoryBase):
    """Reposting and undoing it (who reposts a post: read/account_lists.py)."""

    def __init__(
        self,
        client: Client,
        *,
        fanouts: FanoutStore | None = None,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.fanouts = fanouts or FanoutStore(client, **config)

    def repost(self, user_id: int, post_id: int, *, at: int | None = None) -> tuple[int, bool]:
        """Repost post_id for user_id; return (the repost's id, whether it is new): a
        second repost of the same post is a no-op returning the first. A repost of a
        repost reposts the post it shares (targets.py). The write path's three steps for
        a local reposter: resolve_repost, write_repost, FanoutStore.deliver.

        Raise PostNotFound (missing, deleted, its author hidden; for a repost's id also
        its author hidden or a block between them and user_id), NotAllowed (one's own
        post; its author blocks user_id, or user_id blocks its author): nothing stored.

        Round trips: two reads (the post, one more for a repost's id; its author, the
        blocks, the reposter's own state), one for the new id and the reposter's
        followers, the claim, the writes (with the first batch of followers), then two a
        batch of followers past the first. A process that dies after the claim leaves
        the repost claimed and partly written: undoing it and reposting again mends it;
        `manage.py repair` finishes a fan-out cut short.
        """
        found = self.resolve_repost(User(id=user_id, username=""), post_id, at=at)
        if isinstance(found, int):
            return found, False
        delivery = self.write_repost(found)
        if delivery is None:  # a simultaneous repost of the same post claimed it first
            return int(self.r.zscore(keys.user_reposts(user_id), found.original) or 0), False
        self.fanouts.deliver(delivery)
        return found.id, True

    def resolve_repost(
        self, reposter: User, post_id: int, *, at: int | None = None
    ) -> ResolvedRepost | int:
        """Settle a new repost of post_id by reposter before anything is written (the write
        path's first step, for a local reposter): the post it shares and its author, the
        checks (repost's raises), its id and reach; or return the id of reposter's repost
        of that post when there is one already (no id taken). Three round trips (four for a
        repost's id)."""
        user_id = reposter.id
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
            return int(existing)
        pipe = self._pipe()
        queue_new_post_id(pipe, user_id)
        pipe.zscore(keys.following(user_id), author_id)
        pipe.zrange(keys.reposts(original), 0, EARLIER_REPOSTERS_CHECKED - 1)
        *new, follows_author, earlier = pipe.execute()
        repost_id, reach = new_post_id(new, self.fanout_read_threshold)
        return ResolvedRepost(
            repost_id, reposter, original, author_id, s(name) or "",
            now() if at is None else at, reach, follows_author is not None,
            tuple(int(i) for i in earlier),
        )  # fmt: skip

    def write_repost(self, repost: ResolvedRepost) -> Delivery | None:
        """Write a resolved repost (the write path's second step, for a local reposter or a
        remote one), or nothing and return None when another repost of the same post by
        the same account claimed it first. The claim (ZADD NX on the reposter's set, with
        the claim of the author's one notification, so reposting again tells no one
        again), then one pipeline: its record as a fan-out begun (when copied), the hash
        and visibility version, the reposter's own list and home feed (unless they follow
        the shared post's author: it is there already), the post's reposters and counter,
        the front page's and the day's counters, the author's notification, the live
        event, the reposter's promotion to fan-out on read, and last the first batch of
        followers. Return the copies still to make (FanoutStore.deliver)."""
        user_id, original, author_id = repost.reposter.id, repost.original, repost.author_id
        repost_id, reach, ts = repost.id, repost.reach, repost.ts
        pipe = self._pipe()
        pipe.zadd(keys.user_reposts(user_id), {str(original): repost_id}, nx=True)
        queue_notification_claim(pipe, author_id, "repost", user_id, original, ts)  # told once
        claimed, tells = pipe.execute()
        if not claimed:
            return None
        pipe = self._pipe()
        queue_fanout_record(pipe, repost_id, reach, ts)  # first, as for a post
        pipe.hset(
            keys.post(repost_id),
            mapping={
                "user_id": user_id,
                "time": ts,
                "body": repost_body(repost.author_name),
                "repost_of": original,
            },
        )
        queue_visibility_version(pipe)
        pipe.lpush(keys.own_posts(user_id), repost_id)
        if not repost.follows_author:  # else the shared post is in their feed already
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
        if reach.promote:
            queue_promotion(pipe, user_id, ts)
        queue_first_batch(pipe, user_id, reach, self.fanout_batch)
        replies = self.send(pipe)
        return delivery_of(repost_id, user_id, reach, replies, repost.skip_if_following)

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
