"""Likes: who likes which post (likes:<post>, user_likes:<user>) and the post's counter."""

from __future__ import annotations

from django.utils.translation import gettext_noop

from social import keys

from ..base import RepositoryBase, as_int, now
from ..errors import Refused
from ..live.notification_writes import queue_notification, queue_notification_claim
from ..models import User
from ..read.front import queue_front_change
from ..read.visibility import BLOCKED, BLOCKING
from ..targets import Target, check_target, queue_target_checks, read_target

REFUSED = {
    BLOCKED: gettext_noop("This account does not let you like its posts."),
    BLOCKING: gettext_noop("You block this account: unblock it to like its posts."),
}


class LikeStore(RepositoryBase):
    """Liking and unliking posts (who likes one: read/account_lists.py)."""

    def like(self, user_id: int, post_id: int, *, at: int | None = None) -> bool:
        """Like a visible post (a repost's id: the post it shares, targets.py); False if
        already liked (a no-op). Raise PostNotFound, or NotAllowed across a block with its
        author (nothing stored). The write path's steps for a local liker: resolve_like,
        write_like (a like has nothing to distribute). Four round trips (five for a
        repost's id), the last only for a new like.
        """
        liker = User(id=user_id, username="")  # the steps read only a local liker's id
        return self.write_like(liker, self.resolve_like(liker, post_id), at=at)

    def resolve_like(self, liker: User, post_id: int) -> Target:
        """Return the post liker may like for post_id (the write path's first step, for a
        local liker); raise PostNotFound (missing, deleted, its author or reposter hidden,
        a block with the reposter) or NotAllowed (a block with its author, either way)."""
        target = read_target(self.r, post_id)
        pipe = self._pipe()
        queue_target_checks(pipe, target, liker.id)
        if why := check_target(target, pipe.execute()):
            raise Refused(REFUSED[why])
        return target

    def write_like(self, liker: User, target: Target, *, at: int | None = None) -> bool:
        """Store liker's like of target's post (the write path's second step, for a local
        liker or a remote one); False if already liked (a no-op).

        The post's set first (the like counts once it is there), the liker's, and the claim
        of the author's one notification of this like (queue_notification_claim: liking
        again tells no one again); then, only when the like is new, the post hash's `likes`
        counter (exact under any number of simultaneous likes), and the notification if
        the claim was won too. Two round trips, the second only for a new like. A process
        that dies between the two leaves the counter one short, which `manage.py repair`
        mends, and the author untold; so does a simultaneous second like that wins the
        claim but adds nothing (a double click, at worst).
        """
        user_id, post_id, author = liker.id, target.post_id, target.author_id
        ts = now() if at is None else at
        tells = author != user_id
        pipe = self._pipe()
        pipe.zadd(keys.likes(post_id), {str(user_id): ts}, nx=True)
        pipe.zadd(keys.user_likes(user_id), {str(post_id): ts}, nx=True)
        if tells:
            queue_notification_claim(pipe, author, "like", user_id, post_id, ts)
        added, _, *claimed = pipe.execute()
        if added:
            pipe = self._pipe()
            pipe.hincrby(keys.post(post_id), "likes", 1)
            queue_front_change(pipe)
            if claimed and claimed[0]:
                queue_notification(pipe, author, "like", user_id, post_id, ts)
            self.send(pipe)
        return bool(added)

    def unlike(self, user_id: int, post_id: int) -> bool:
        """Take a like back (a repost's id: of the post it shares); False if there was
        none (a no-op). Its notification stays: it was told once (like)."""
        if self._unlike(user_id, post_id):
            return True
        shared = as_int(self.r.hget(keys.post(post_id), "repost_of"))
        return shared is not None and self._unlike(user_id, shared)

    def counts(self, post_id: int) -> tuple[int, int]:
        """The post's likes and reposts, as its card shows them (one HMGET): what a page's
        Like or Repost answers in place (post_actions.py)."""
        likes, reposts = self.r.hmget(keys.post(post_id), ["likes", "reposts"])
        return max(0, as_int(likes) or 0), max(0, as_int(reposts) or 0)

    def _unlike(self, user_id: int, post_id: int) -> bool:
        pipe = self._pipe()
        pipe.zrem(keys.user_likes(user_id), post_id)
        pipe.zrem(keys.likes(post_id), user_id)
        _, removed = pipe.execute()
        if removed:
            pipe = self._pipe()
            pipe.hincrby(keys.post(post_id), "likes", -1)
            queue_front_change(pipe)
            pipe.execute()
        return bool(removed)
