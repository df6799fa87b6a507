"""The follow graph and what following changes in home feeds."""

from __future__ import annotations

from collections.abc import Callable

from django.utils.translation import gettext_noop

from social import keys

from .base import (
    RepositoryBase,
    as_int,
    decode_hash,
    now,
    page_bounds,
    queue_users,
    user_from_hash,
    users_from,
)
from .errors import CannotFollowSelf, NotAllowed, UserNotFound
from .models import FollowEntry, Page, User
from .notifications import queue_notification, queue_notification_claim
from .visibility import ANONYMOUS, Viewer, may_see_account

# Why a follow is refused across a block (said to the person, in their language).
BLOCKED = gettext_noop("This account does not let you follow it.")
BLOCKING = gettext_noop("You block this account. Unblock it first to follow it.")
# Of the viewer's followings, the newest this many are looked at for those who follow an
# account ("Followed by people you follow": a profile, pages.py, and its list here).
MUTUAL_SCAN_LIMIT = 2000


class GraphStore(RepositoryBase):
    """Follow, unfollow, and the lists of followers and followings."""

    def follow(self, follower_id: int, followee_id: int, *, at: int | None = None) -> bool:
        """Make follower follow followee; merge followee's posts into the home feed
        (unless followee is a fan-out-on-read author, merged when the home page is read).

        Return False when already following (a no-op). Raise UserNotFound, or NotAllowed
        across a block either way (relations.py), before anything is written. The two
        sorted sets belong to two users, so they are written by one pipeline, not one MULTI:
        if the second ZADD is lost the pair is half-linked, and following again (ZADD NX on
        both) completes it. Followee is told once
        (notifications.queue_notification_claim): following again after an unfollow tells
        no one again.
        """
        if follower_id == followee_id:
            raise CannotFollowSelf()
        ts = now() if at is None else at
        pipe = self._pipe()
        pipe.exists(keys.user(followee_id))
        pipe.zscore(keys.blocks(followee_id), follower_id)
        pipe.zscore(keys.blocks(follower_id), followee_id)
        exists, blocked, blocking = pipe.execute()
        if not exists:
            raise UserNotFound(followee_id)
        if blocked is not None or blocking is not None:
            raise NotAllowed(BLOCKED if blocked is not None else BLOCKING)
        pipe = self._pipe()
        pipe.zadd(keys.following(follower_id), {str(followee_id): ts}, nx=True)
        pipe.zadd(keys.followers(followee_id), {str(follower_id): ts}, nx=True)
        pipe.zscore(keys.celebrities(), followee_id)
        queue_notification_claim(pipe, followee_id, "follow", follower_id, None, ts)  # told once
        added, _, read_fanout, tells = pipe.execute()
        if not added:
            return False
        pipe = self._pipe()
        pipe.incr(keys.follows_total())  # the dashboard's total: only a new edge counts
        if tells:
            queue_notification(pipe, followee_id, "follow", follower_id, None, ts)
        if read_fanout is not None:  # their posts join the home page when it is read
            self.send(pipe)
            return True
        pipe.lrange(keys.own_posts(followee_id), 0, self.home_feed_cap - 1)
        theirs = [int(i) for i in self.send(pipe)[-1]]
        self._rewrite_feed(follower_id, lambda feed: sorted(set(feed) | set(theirs), reverse=True))
        return True

    def unfollow(self, follower_id: int, followee_id: int) -> bool:
        """Stop following and drop followee's posts from the home feed; False if not following."""
        pipe = self._pipe()
        pipe.zrem(keys.following(follower_id), followee_id)
        pipe.zrem(keys.followers(followee_id), follower_id)
        removed, _ = pipe.execute()
        if not removed:
            return False
        self.r.decr(keys.follows_total())

        def without_theirs(feed: list[int]) -> list[int]:
            pipe = self._pipe()
            for post_id in feed:
                pipe.hget(keys.post(post_id), "user_id")
            authors = pipe.execute() if feed else []
            return [p for p, a in zip(feed, authors) if as_int(a) != followee_id]

        self._rewrite_feed(follower_id, without_theirs)
        return True

    def _rewrite_feed(self, user_id: int, change: Callable[[list[int]], list[int]]) -> None:
        """Replace user_id's home feed with change(feed), retrying if a post lands meanwhile.

        WATCH/MULTI on the one feed key: a post fanned out between our read and our write
        makes EXEC fail and we start again, so no post is lost.
        """
        cap = self.home_feed_cap
        self._rewrite_list(keys.home_feed(user_id), lambda feed: change(feed)[:cap])

    def follow_list(
        self,
        user_id: int,
        which: str,
        number: int = 1,
        per_page: int = 50,
        viewer: Viewer = ANONYMOUS,
    ) -> Page[FollowEntry]:
        """Return a page of followers or following ("followers"/"following"), newest first.

        Two round trips: the page of ids and the total; the listed accounts and, for a
        logged-in viewer, whether the viewer follows each and each follows the viewer
        (one ZMSCORE each on the viewer's own two sets); accounts a block keeps apart from
        the viewer are left out (two ZMSCOREs more, for a viewer who has any relations).
        """
        key = {"followers": keys.followers, "following": keys.following}[which](user_id)
        start, stop = page_bounds(number, per_page)
        pipe = self._pipe()
        pipe.zrevrange(key, start, stop, withscores=True)
        pipe.zcard(key)
        rows, total = pipe.execute()
        has_next = len(rows) > per_page
        rows = [(int(m), int(score)) for m, score in rows[:per_page]]
        return Page(
            items=self._entries(rows, viewer),
            number=number,
            has_next=has_next,
            total=total,
            per_page=per_page,
        )

    def mutuals(
        self, user_id: int, viewer: Viewer, number: int = 1, per_page: int = 50
    ) -> tuple[User | None, Page[FollowEntry]]:
        """Return user_id's account (None: none, or hidden from viewer) and a page of the
        accounts viewer follows that follow it ("Followed by people you follow"), those
        viewer followed last first, each with when it followed user_id: among the viewer's
        newest MUTUAL_SCAN_LIMIT followings, as the profile counts them.

        Three round trips whatever the numbers: the account with the viewer's followings;
        which of them follow user_id (one ZMSCORE: the two sets may be on two cluster
        nodes); the page's accounts and the viewer's relations to them, as follow_list."""
        pipe = self._pipe()
        pipe.hgetall(keys.user(user_id))
        if viewer.id is not None:
            pipe.zrevrange(keys.following(viewer.id), 0, MUTUAL_SCAN_LIMIT - 1)
        owner_hash, *followings = pipe.execute()
        owner = user_from_hash(user_id, decode_hash(owner_hash))
        empty = Page[FollowEntry](items=[], number=number, has_next=False, total=0)
        if owner is not None and not may_see_account(viewer, owner):
            owner = None
        candidates = [int(i) for i in (followings[0] if followings else ()) if int(i) != user_id]
        if owner is None or not candidates:
            return owner, empty
        scores = self.r.zmscore(keys.followers(user_id), [str(i) for i in candidates])
        found = [(i, int(score)) for i, score in zip(candidates, scores or ()) if score is not None]
        start, stop = page_bounds(number, per_page)
        return owner, Page(
            items=self._entries(found[start : start + per_page], viewer),
            number=number,
            has_next=len(found) > stop,
            total=len(found),
            per_page=per_page,
        )

    def _entries(self, rows: list[tuple[int, int]], viewer: Viewer) -> list[FollowEntry]:
        """The (account id, since) rows as viewer sees them: each account (suspended ones
        and those a block keeps apart from viewer left out) and whether viewer follows it
        and is followed by it. One round trip (none for no rows)."""
        listed = list(dict.fromkeys(uid for uid, _ in rows))
        if not listed:
            return []
        reads = self.reads()
        queue_users(reads, listed)
        viewer_id = viewer.id
        if viewer_id is not None:
            reads.zmscore("viewer_follows", keys.following(viewer_id), listed)
            reads.zmscore("follows_viewer", keys.followers(viewer_id), listed)
            if viewer.has_relations:  # accounts a block keeps apart (relations.py)
                reads.zmscore("blocks", keys.blocks(viewer_id), listed)
                if not viewer.is_staff:
                    reads.zmscore("blocked_by", keys.blocked_by(viewer_id), listed)
        got = reads.execute()
        n = len(listed)
        mine, theirs = got.scores_if_read("blocks", n), got.scores_if_read("blocked_by", n)
        apart = {uid for uid, a, b in zip(listed, mine, theirs) if a is not None or b is not None}
        users = users_from(got, listed)
        follows = dict(zip(listed, got.scores_if_read("viewer_follows", n)))
        followed_by = dict(zip(listed, got.scores_if_read("follows_viewer", n)))
        return [
            FollowEntry(
                user=users[uid],
                since=since,
                viewer_follows=follows[uid] is not None,
                follows_viewer=followed_by[uid] is not None,
            )
            for uid, since in rows
            if uid in users and not users[uid].is_suspended and uid not in apart
        ]
