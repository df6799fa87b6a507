"""The post an action names: a post's id, or a repost's, which stands for the post it
shares. A like, a repost, a reply or a report of a repost is one of that post, after the
checks a post gets plus those of the repost's author (issue 24): nothing is ever stored
against a repost's own id but its undoing."""

from __future__ import annotations

from dataclasses import dataclass

from social import keys

from .base import HIDDEN_STATUSES, Client, Pipe, as_int, s
from .errors import PostNotFound
from .read.relations_of import pair_relations
from .read.visibility import interaction_refused

FIELDS = ["user_id", "deleted", "repost_of"]


@dataclass(frozen=True)
class Target:
    """The post acted on, its author, and the repost's author when the id named a repost."""

    post_id: int
    author_id: int
    reposter_id: int | None = None

    @property
    def accounts(self) -> tuple[int, ...]:
        """The accounts a block with the actor refuses the action for."""
        if self.reposter_id is None:
            return (self.author_id,)
        return (self.author_id, self.reposter_id)


def read_target(r: Client, post_id: int) -> Target:
    """Return what an action on post_id acts on; raise PostNotFound when it (or, for a
    repost, the post it shares) is missing or deleted. One round trip, two for a repost."""
    author, deleted, shared = r.hmget(keys.post(post_id), FIELDS)
    reposter = None
    if (original := as_int(shared)) is not None:
        reposter = as_int(author)
        if reposter is None or s(deleted) == "1":
            raise PostNotFound(post_id)
        author, deleted, _ = r.hmget(keys.post(original), FIELDS)
        post_id = original
    author_id = as_int(author)
    if author_id is None or s(deleted) == "1":
        raise PostNotFound(post_id)
    return Target(post_id, author_id, reposter)


def queue_target_checks(pipe: Pipe, target: Target, user_id: int) -> None:
    """Queue what check_target needs: for the author (and the reposter) their status and
    the blocks either way with user_id. Three replies an account."""
    for account in target.accounts:
        pipe.hget(keys.user(account), "status")
        pipe.zscore(keys.blocks(account), user_id)
        pipe.zscore(keys.blocks(user_id), account)


def check_target(target: Target, replies: list) -> str:
    """Raise PostNotFound when the author or the reposter is hidden, or a block keeps the
    reposter and the actor apart (the repost is not there for them); else return why a
    block with the author refuses the action (visibility.interaction_refused: "" when
    none does; the caller says it in its words). replies: queue_target_checks's, in
    order."""
    author_status, blocked, blocking, *reposter = replies
    if reposter and target.reposter_id is not None:
        status, reposter_blocked, reposter_blocking = reposter
        apart = pair_relations(target.reposter_id, reposter_blocked, reposter_blocking)
        if s(status) in HIDDEN_STATUSES or interaction_refused(target.reposter_id, apart):
            raise PostNotFound(target.post_id)
    if s(author_status) in HIDDEN_STATUSES:
        raise PostNotFound(target.post_id)
    return interaction_refused(
        target.author_id, pair_relations(target.author_id, blocked, blocking)
    )
