"""Likes: who likes which post (likes:<post>, user_likes:<user>) and the post's counter."""

from __future__ import annotations

from django.utils.translation import gettext_noop

from social import keys

from .base import RepositoryBase, as_int, now, s
from .errors import NotAllowed, PostNotFound
from .loading import HIDDEN_STATUSES
from .notifications import queue_notification

LIKE_BLOCKED = gettext_noop("This account does not let you like its posts.")


class LikeStore(RepositoryBase):
    """Liking and unliking posts."""

    def like(self, user_id: int, post_id: int, *, at: int | None = None) -> bool:
        """Like a visible post; False if already liked (a no-op). Raise PostNotFound, or
        NotAllowed when its author blocks user_id (nothing stored).

        The post's set first (the like counts once it is there), the liker's, then, only
        when the like is new, the post hash's `likes` counter: exact under any number of
        simultaneous likes. A process that dies between the two round trips leaves the
        counter one short, which `manage.py repair` mends.
        """
        author = self._visible_author(post_id, user_id)
        ts = now() if at is None else at
        pipe = self._pipe()
        pipe.zadd(keys.likes(post_id), {str(user_id): ts}, nx=True)
        pipe.zadd(keys.user_likes(user_id), {str(post_id): ts}, nx=True)
        added, _ = pipe.execute()
        if added:
            pipe = self._pipe()
            pipe.hincrby(keys.post(post_id), "likes", 1)
            queue_notification(pipe, author, "like", user_id, post_id, ts)
            pipe.execute()
        return bool(added)

    def unlike(self, user_id: int, post_id: int) -> bool:
        """Take a like back; False if there was none (a no-op)."""
        pipe = self._pipe()
        pipe.zrem(keys.user_likes(user_id), post_id)
        pipe.zrem(keys.likes(post_id), user_id)
        _, removed = pipe.execute()
        if removed:
            self.r.hincrby(keys.post(post_id), "likes", -1)
        return bool(removed)

    def _visible_author(self, post_id: int, user_id: int) -> int:
        """Return the author id of a post user_id may like; raise PostNotFound (missing,
        deleted, its author suspended) or NotAllowed (its author blocks user_id)."""
        author_id, deleted = self.r.hmget(keys.post(post_id), ["user_id", "deleted"])
        author = as_int(author_id)
        if author is None or s(deleted) == "1":
            raise PostNotFound(post_id)
        pipe = self._pipe()
        pipe.hget(keys.user(author), "status")
        pipe.zscore(keys.blocks(author), user_id)
        status, blocked = pipe.execute()
        if s(status) in HIDDEN_STATUSES:
            raise PostNotFound(post_id)
        if blocked is not None:
            raise NotAllowed(LIKE_BLOCKED)
        return author
