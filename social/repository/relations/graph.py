"""The follow graph and what following changes in home feeds."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Unpack

from django.utils.translation import gettext_noop

from social import keys

from ..base import Client, RepositoryBase, StoreSettings, as_int, now
from ..errors import CannotFollowSelf, Refused, UserNotFound
from ..live.notification_writes import queue_notification, queue_notification_claim
from ..models import User
from ..read.relations_of import pair_relations
from ..read.visibility import (
    BLOCKED,
    BLOCKING,
    interaction_refused,
)

# Why a follow is refused across a block (said to the person, in their language).
REFUSED = {
    BLOCKED: gettext_noop("This account does not let you follow it."),
    BLOCKING: gettext_noop("You block this account. Unblock it first to follow it."),
}
# Of the viewer's followings, the newest this many are looked at for those who follow an
# account ("Followed by people you follow": a profile, pages.py, and its list here).


@dataclass(frozen=True)
class NewFollow:
    """A follow as written: who follows whom, and the followee's newest posts the
    follower's home feed takes in (None: a fan-out-on-read followee, merged into the home
    page when it is read)."""

    follower_id: int
    followee_id: int
    posts: tuple[int, ...] | None


class GraphStore(RepositoryBase):
    """Follow, unfollow, and the lists of followers and followings."""

    def __init__(self, client: Client, **config: Unpack[StoreSettings]) -> None:
        super().__init__(client, **config)

    def follow(self, follower_id: int, followee_id: int, *, at: int | None = None) -> bool:
        """Make follower follow followee; merge followee's posts into the home feed
        (unless followee is a fan-out-on-read author, merged when the home page is read).
        The write path's three steps for a local follower: resolve_follow, write_follow,
        merge_followed.

        Return False when already following (a no-op). Raise UserNotFound, or NotAllowed
        across a block either way (relations.py), before anything is written.
        """
        follower = User(id=follower_id, username="")  # the steps read only a local id
        self.resolve_follow(follower, followee_id)
        follow = self.write_follow(follower, followee_id, at=at)
        if follow is None:
            return False
        self.merge_followed(follow)
        return True

    def resolve_follow(self, follower: User, followee_id: int) -> None:
        """Check that follower may follow followee_id (the write path's first step, for a
        local follower): raise CannotFollowSelf, UserNotFound, or NotAllowed across a block
        either way. One round trip."""
        if follower.id == followee_id:
            raise CannotFollowSelf()
        pipe = self._pipe()
        pipe.exists(keys.user(followee_id))
        pipe.zscore(keys.blocks(followee_id), follower.id)
        pipe.zscore(keys.blocks(follower.id), followee_id)
        exists, blocked, blocking = pipe.execute()
        if not exists:
            raise UserNotFound(followee_id)
        if why := interaction_refused(followee_id, pair_relations(followee_id, blocked, blocking)):
            raise Refused(REFUSED[why])

    def write_follow(
        self, follower: User, followee_id: int, *, at: int | None = None
    ) -> NewFollow | None:
        """Store the follow (the write path's second step, for a local follower or a remote
        one); None when already following (a no-op). The two sorted sets belong to two
        users, so they are written by one pipeline, not one MULTI: if the second ZADD is
        lost the pair is half-linked, and following again (ZADD NX on both) completes it.
        Followee is told once (notification_writes.queue_notification_claim): following
        again after an unfollow tells no one again. Two round trips, the second (the
        dashboard's count, the notification and the followee's posts) only for a new
        follow."""
        follower_id = follower.id
        ts = now() if at is None else at
        pipe = self._pipe()
        pipe.zadd(keys.following(follower_id), {str(followee_id): ts}, nx=True)
        pipe.zadd(keys.followers(followee_id), {str(follower_id): ts}, nx=True)
        pipe.zscore(keys.celebrities(), followee_id)
        queue_notification_claim(pipe, followee_id, "follow", follower_id, None, ts)  # told once
        pipe.hget(keys.user(follower_id), "domain")  # a remote follower: deliveries' index
        added, _, read_fanout, tells, domain = pipe.execute()
        if not added:
            return None
        pipe = self._pipe()
        pipe.incr(keys.follows_total())  # the dashboard's total: only a new edge counts
        if domain:
            pipe.zadd(keys.remote_followers(followee_id), {str(follower_id): ts})
        if tells:
            queue_notification(pipe, followee_id, "follow", follower_id, None, ts)
        if read_fanout is not None:  # their posts join the home page when it is read
            self.send(pipe)
            return NewFollow(follower_id, followee_id, None)
        pipe.lrange(keys.own_posts(followee_id), 0, self.home_feed_cap - 1)
        theirs = tuple(int(i) for i in self.send(pipe)[-1])
        return NewFollow(follower_id, followee_id, theirs)

    def merge_followed(self, follow: NewFollow) -> None:
        """Merge the followee's posts into the follower's home feed (the write path's last
        step, for a local follower: a remote one's feed is its own server's), in their
        places by id; nothing for a fan-out-on-read followee."""
        if follow.posts is not None:
            theirs = set(follow.posts)
            self._rewrite_feed(
                follow.follower_id, lambda feed: sorted(set(feed) | theirs, reverse=True)
            )

    def follower_count(self, user_id: int) -> int:
        """How many follow user_id (one ZCARD): what a profile shows after a follow in
        place (relation_views.FollowView)."""
        return int(self.r.zcard(keys.followers(user_id)))

    def unfollow(self, follower_id: int, followee_id: int) -> bool:
        """Stop following and drop followee's posts from the home feed; False if not following."""
        return self.unfollow_many(follower_id, [followee_id]) > 0

    def unfollow_many(self, follower_id: int, followee_ids: Collection[int]) -> int:
        """Stop follower_id following each of followee_ids and drop their posts from its
        home feed, in unfollow's steps for all of them at once (one pipeline for both
        sides, one feed rewrite): a domain block cuts a server's follows so. Return how
        many of them follower_id followed (a half-linked pair goes too, uncounted)."""
        ids = list(dict.fromkeys(int(i) for i in followee_ids))
        pipe = self._pipe()
        for followee_id in ids:
            pipe.zrem(keys.following(follower_id), followee_id)
            pipe.zrem(keys.followers(followee_id), follower_id)
            pipe.zrem(keys.remote_followers(followee_id), follower_id)
        replies = pipe.execute() if ids else []
        followed = sum(1 for removed in replies[0::3] if removed)
        if not followed:
            return 0
        self.r.decrby(keys.follows_total(), followed)
        theirs = set(ids)

        def without_theirs(feed: list[int]) -> list[int]:
            pipe = self._pipe()
            for post_id in feed:
                pipe.hget(keys.post(post_id), "user_id")
            authors = pipe.execute() if feed else []
            return [p for p, a in zip(feed, authors) if as_int(a) not in theirs]

        self._rewrite_feed(follower_id, without_theirs)
        return followed

    def _rewrite_feed(self, user_id: int, change: Callable[[list[int]], list[int]]) -> None:
        """Replace user_id's home feed with change(feed), retrying if a post lands meanwhile.

        WATCH/MULTI on the one feed key: a post fanned out between our read and our write
        makes EXEC fail and we start again, so no post is lost.
        """
        cap = self.home_feed_cap
        self._rewrite_list(keys.home_feed(user_id), lambda feed: change(feed)[:cap])
