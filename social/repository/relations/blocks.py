"""Blocks and mutes: what one account keeps from another.

A block removes the follows both ways and keeps the two apart: neither sees the other's
posts or account in lists (staff excepted: no one hides from staff), neither can follow,
reply to, like or repost the other (staff neither: visibility.interaction_refused), a
mention of the blocker tells them nothing, and each one's reposts of the other's posts
are taken back. A mute only leaves the muted
account's posts out of the reader's home, timeline, tags and mentions; the muted account
notices nothing and may still follow. Both are kept from both sides (keys.blocks /
keys.blocked_by, keys.mutes / keys.muted_by): the reader's own sets ride on the first
pipeline of every page they read (reader.py), the reverse sets tell staff how many accounts
block or mute an account, and keep a blocked account out.

Writes are non-transactional pipelines (the two sides are two users' keys, on two cluster
nodes): the reader's side first, so a partial failure leaves a block in force for the one
who asked; blocking again (ZADD on both) completes it.
"""

from __future__ import annotations

from typing import Unpack

from django.utils.translation import gettext_noop

from social import keys

from ..base import RepositoryBase, StoreSettings, now
from ..errors import NotAllowed, UserNotFound
from ..posts.reposts import RepostStore
from .graph import GraphStore

# The reader's own sets are read whole with every page: each is bounded.
CAP_REACHED = gettext_noop("You can block or mute at most %(cap)s accounts. Undo some first.")
SELF = gettext_noop("You cannot block or mute yourself.")


class RelationStore(RepositoryBase):
    """Blocking and muting (the lists of them: read/account_lists.py)."""

    def __init__(
        self,
        client,
        *,
        graph: GraphStore,
        reposts: RepostStore,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.graph = graph
        self.reposts = reposts

    def block(self, user_id: int, target_id: int, *, at: int | None = None) -> bool:
        """Block target_id for user_id: the follows both ways go, and each one's reposts
        of the other's posts. Return False when already blocked (a no-op). Raise
        NotAllowed (oneself, the cap), UserNotFound."""
        added = self._add(keys.blocks, keys.blocked_by, user_id, target_id, at)
        if added:
            self.graph.unfollow(user_id, target_id)
            self.graph.unfollow(target_id, user_id)
            # Each one's reposts of the other's posts go too: no longer in anyone's feed.
            self.reposts.take_back_reposts_of(target_id, user_id)
            self.reposts.take_back_reposts_of(user_id, target_id)
        return added

    def unblock(self, user_id: int, target_id: int) -> bool:
        """Lift a block; False when there was none."""
        return self._remove(keys.blocks, keys.blocked_by, user_id, target_id)

    def mute(self, user_id: int, target_id: int, *, at: int | None = None) -> bool:
        """Mute target_id for user_id (follows stay). False when already muted."""
        return self._add(keys.mutes, keys.muted_by, user_id, target_id, at)

    def unmute(self, user_id: int, target_id: int) -> bool:
        """Lift a mute; False when there was none."""
        return self._remove(keys.mutes, keys.muted_by, user_id, target_id)

    def _add(self, own, reverse, user_id: int, target_id: int, at: int | None) -> bool:
        if user_id == target_id:
            raise NotAllowed(SELF)
        pipe = self._pipe()
        pipe.exists(keys.user(target_id))
        pipe.zscore(own(user_id), target_id)
        pipe.zcard(own(user_id))
        exists, already, size = pipe.execute()
        if not exists:
            raise UserNotFound(target_id)
        if already is not None:
            pipe = self._pipe()  # complete a half-written one (see the module docstring)
            pipe.zadd(reverse(target_id), {str(user_id): already}, nx=True)
            pipe.execute()
            return False
        if size >= keys.RELATIONS_CAP:
            raise NotAllowed(CAP_REACHED)
        ts = now() if at is None else at
        pipe = self._pipe()
        # First the flags that make both read the sets from now on (reader.py): a flag
        # left set by a failure costs reads, never a relation unread.
        pipe.hset(keys.user(user_id), "relations", 1)
        if own is keys.blocks:
            pipe.hset(keys.user(target_id), "relations", 1)
        pipe.zadd(own(user_id), {str(target_id): ts}, nx=True)
        pipe.zadd(reverse(target_id), {str(user_id): ts}, nx=True)
        *_, added, _ = pipe.execute()
        return bool(added)

    def _remove(self, own, reverse, user_id: int, target_id: int) -> bool:
        pipe = self._pipe()
        pipe.zrem(own(user_id), target_id)
        pipe.zrem(reverse(target_id), user_id)
        removed, _ = pipe.execute()
        return bool(removed)
