"""A reader's Relations (visibility.Relations): the one place they are read and built.

visibility.py decides from a reader's Relations; this module is where they come from, in
the three ways the site reads them (tests/test_relations_contract.py checks they agree):

- From the reader's side (a page: reader.py, account_reader.py, notifications.py): the
  reader's own sets on the page's first pipeline or with its posts (queue_reader_sets,
  queue_marks), then reader_relations.
- From the author's side (one post told to many listeners: live.py): each author's sets
  naming every listener, the post's sets naming them, and each listener's own rules, those
  no other side names them in (OwnRules: their word filters), which the streaming process
  holds between posts (queue_listeners, rules_read, Listeners), then Listeners.relations
  for each.
- From a write (a follow, reply, like, repost: graph.py, targets.py, posting.py): the
  actor's blocks with one account (pair_relations) or all of them (actor_relations).

Staff read no `blocked_by` on the first two (no one hides from staff: may_list,
may_list_account); a write reads it for staff too (interaction_refused keeps a blocked
staff account's follows and replies out).

With them, the policy applied to what a page loaded: shown (which posts a list shows),
post_counts (each post's counts and the reader's relation to it).

A new per-reader rule (a language filter, a domain block) is a field of Relations and a
clause in visibility.py, and here its read from each side: nothing else changes.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from social import keys

from ..base import Members, NamedReads, Reply, Scored, Scores
from ..models import Post, PostCounts
from ..relations.filters import active
from .sources import ListPolicy
from .visibility import (
    NO_RELATIONS,
    Relations,
    Viewer,
    filter_hits,
    folded,
    may_act,
    may_list,
    may_list_repost,
)

# The reader's own sets (queue_reader_sets): the accounts they block and mute, their word
# filters, those that block them; and which of a page's posts they like, reported and
# repost (queue_marks: a score per post, None where not).
BLOCKS = Reply[Members]("blocks")
MUTES = Reply[Members]("mutes")
FILTERS = Reply[Scored]("filters")
BLOCKED_BY = Reply[Members]("blocked_by")
LIKED = Reply[Scores]("liked")
REPORTED = Reply[Scores]("reported")
REPOSTED = Reply[Scores]("reposted")

NO_NUMBERS = (0, 0, 0)  # a post's (replies, likes, reposts) when none were read


# From the reader's side.


def queue_reader_sets(reads: NamedReads, viewer: Viewer) -> None:
    """Queue the reader's own sets that decide what they see whatever the page: the
    accounts they block and mute, their word filters, and (but for staff: no one blocks
    staff) those that block them. Each is bounded (keys.RELATIONS_CAP, keys.FILTERS_CAP;
    blocked_by by the accounts). A reader whose user hash says they have none (the
    `relations` flag) reads none: most readers, whose pages then reach no more keys than
    before blocks existed."""
    if viewer.id is None or not viewer.has_relations:
        return
    reads.zrange(BLOCKS, keys.blocks(viewer.id), 0, -1)
    reads.zrange(MUTES, keys.mutes(viewer.id), 0, -1)
    reads.zrange(FILTERS, keys.filters(viewer.id), 0, -1, withscores=True)
    if not viewer.is_staff:
        reads.zrange(BLOCKED_BY, keys.blocked_by(viewer.id), 0, -1)


def queue_marks(reads: NamedReads, ids: Sequence[int], viewer: Viewer) -> None:
    """Queue which of the posts ids the reader likes, reported and reposts (one ZMSCORE
    each; nothing for a visitor or no posts)."""
    if viewer.id is not None and ids:
        reads.zmscore(LIKED, keys.user_likes(viewer.id), list(ids))
        reads.zmscore(REPORTED, keys.user_reported(viewer.id), list(ids))
        reads.zmscore(REPOSTED, keys.user_reposts(viewer.id), list(ids))


def reader_relations(
    viewer: Viewer,
    sets: Mapping[str, Any],
    marks: Mapping[str, Any] | None = None,
    ids: Sequence[int] = (),
    *,
    at: float | None = None,
) -> Relations:
    """The reader's Relations: their sets from `sets` (the replies of the pipeline
    queue_reader_sets queued on; none there: none) and which of ids they like, reported
    and repost from `marks` (queue_marks's pipeline; None: none read). Word filters
    expired at `at` (now) are left out. A visitor's are empty."""
    if viewer.id is None:
        return NO_RELATIONS
    # Read on every page: written out, not through helpers (bench/instructions.py).
    blocks = frozenset(map(int, sets.get(BLOCKS.name) or ()))
    blocked_by = frozenset(map(int, sets.get(BLOCKED_BY.name) or ()))
    marks = marks or {}
    liked = marks.get(LIKED.name) or ()
    reported = marks.get(REPORTED.name) or ()
    reposted = marks.get(REPOSTED.name) or ()
    return Relations(
        liked=frozenset(i for i, score in zip(ids, liked) if score is not None),
        reported=frozenset(i for i, score in zip(ids, reported) if score is not None),
        reposted=frozenset(i for i, score in zip(ids, reposted) if score is not None),
        blocked=blocks | blocked_by,
        muted=frozenset(map(int, sets.get(MUTES.name) or ())),
        blocks=blocks,
        blocked_by=blocked_by,
        filters=active(sets.get(FILTERS.name) or [], time.time() if at is None else at),
    )


def with_marks(
    relations: Relations, viewer: Viewer, marks: Mapping[str, Any], ids: Sequence[int]
) -> Relations:
    """relations with the reader's likes, reports and reposts of ids too (read by
    queue_marks on another pipeline: posts a page loaded later)."""
    if viewer.id is None:
        return relations
    return replace(
        relations,
        liked=relations.liked | _scored_ids(marks.get(LIKED.name), ids),
        reported=relations.reported | _scored_ids(marks.get(REPORTED.name), ids),
        reposted=relations.reposted | _scored_ids(marks.get(REPOSTED.name), ids),
    )


def _scored_ids(scores: Scores | None, ids: Sequence[int]) -> frozenset[int]:
    """The ids whose reply in a ZMSCORE (or HMGET) naming them is not nil."""
    return frozenset(i for i, score in zip(ids, scores or ()) if score is not None)


def _now(at: float | None) -> float:
    return time.time() if at is None else at


# From the author's side: one post, many listeners.


@dataclass(frozen=True)
class AuthorSets:
    """Which of the listeners (by id) block an author, are blocked by it, mute it."""

    blocked_by: frozenset[int]  # the listeners who block the author
    blocks: frozenset[int]  # the listeners the author blocks
    muted_by: frozenset[int]

    def any(self) -> frozenset[int]:
        """The listeners in any of the sets."""
        return self.blocked_by | self.blocks | self.muted_by


def queue_author_sets(reads: NamedReads, author: int, ids: Sequence[int]) -> None:
    """Queue one ZMSCORE of each of author's sets that decide its readers, naming the
    listeners ids all."""
    reads.zmscore(f"blocked_by:{author}", keys.blocked_by(author), list(ids))
    reads.zmscore(f"blocks:{author}", keys.blocks(author), list(ids))
    reads.zmscore(f"muted_by:{author}", keys.muted_by(author), list(ids))


def author_sets(got: Mapping[str, Any], author: int, ids: Sequence[int]) -> AuthorSets:
    """What queue_author_sets read."""
    return AuthorSets(
        _scored_ids(got.get(f"blocked_by:{author}"), ids),
        _scored_ids(got.get(f"blocks:{author}"), ids),
        _scored_ids(got.get(f"muted_by:{author}"), ids),
    )


def queue_listeners(
    reads: NamedReads,
    author: int,
    posts: Sequence[int],
    ids: Sequence[int],
    unknown: Sequence[int],
) -> None:
    """Queue what one post's listeners ids are to it, from its side: the author's sets
    (queue_author_sets), which of them like, repost and reported each of posts (the post
    and the one it shares: one ZMSCORE or HMGET each naming them all), and the own rules
    (OwnRules) of those of them whose rules the caller does not hold (unknown)."""
    if not ids:
        return
    queue_author_sets(reads, author, ids)
    for post_id in posts:
        reads.zmscore(f"liked:{post_id}", keys.likes(post_id), list(ids))
        reads.zmscore(f"reposted:{post_id}", keys.reposts(post_id), list(ids))
        reads.hmget(f"reported:{post_id}", keys.post_reports(post_id), list(ids))
    for reader_id in unknown:
        reads.zrange(f"filters:{reader_id}", keys.filters(reader_id), 0, -1, withscores=True)


@dataclass(frozen=True, eq=False)
class OwnRules:
    """A listener's rules that only their own keys hold (no author's or post's set names
    them): their word filters, raw (ZRANGE ... WITHSCORES; expiry is applied when each
    post is decided). Read per listener, so the streaming process holds them between
    posts (live.ListenerFilters). Falsy when there are none."""

    filters: Scored

    def __bool__(self) -> bool:
        return bool(self.filters)


NO_RULES = OwnRules([])


def rules_read(got: Mapping[str, Any], unknown: Sequence[int]) -> dict[int, OwnRules]:
    """The own rules queue_listeners read, by listener."""
    return {i: OwnRules(cast(Scored, got.get(f"filters:{i}") or [])) for i in unknown}


@dataclass
class Listeners:
    """What one post's listeners are to it, read from its side (queue_listeners): each
    author's sets (the post's, and the shared post's: add_author), each post's marks, and
    each listener's own rules."""

    ids: Sequence[int]
    posts: Sequence[int]
    authors: dict[int, AuthorSets]
    marks: dict[str, frozenset[int]]
    rules: Mapping[int, OwnRules]

    @classmethod
    def read(
        cls,
        got: Mapping[str, Any],
        author: int,
        posts: Sequence[int],
        ids: Sequence[int],
        rules: Mapping[int, OwnRules],
    ) -> Listeners:
        """What queue_listeners read, with the own rules held and read (`rules`)."""
        marks = {
            f"{name}:{post_id}": _scored_ids(got.get(f"{name}:{post_id}"), ids)
            for name in ("liked", "reposted", "reported")
            for post_id in posts
        }
        authors = {author: author_sets(got, author, ids)} if ids else {}
        return cls(ids, posts, authors, marks, rules)

    def add_author(self, got: Mapping[str, Any], author: int) -> None:
        """Add what queue_author_sets read of another author (a shared post's)."""
        self.authors[author] = author_sets(got, author, self.ids)

    def plain(self) -> frozenset[int]:
        """The listeners whose Relations to these posts are empty but for what is the same
        for everyone (they are in none of the sets and have no own rules): the policy,
        which reads a viewer beyond their relations only as staff or not, is asked once
        for all of them."""
        touched = frozenset().union(*self.marks.values(), *(a.any() for a in self.authors.values()))
        return frozenset(i for i in self.ids if i not in touched and not self.rules.get(i))

    def relations(self, viewer: Viewer, *, at: float | None = None) -> Relations:
        """The listener's Relations to these authors and posts, as reader_relations reads
        them from the listener's own sets: the same sets, read from the other side. Staff
        read only their own blocks, as there."""
        reader = viewer.id
        if reader is None:
            return NO_RELATIONS
        authors = self.authors.items()
        blocks = frozenset(a for a, sets in authors if reader in sets.blocked_by)
        blocked_by = frozenset(
            a for a, sets in authors if reader in sets.blocks and not viewer.is_staff
        )
        marks, rules = self.marks, self.rules.get(reader, NO_RULES)
        return Relations(
            liked=frozenset(p for p in self.posts if reader in marks[f"liked:{p}"]),
            reported=frozenset(p for p in self.posts if reader in marks[f"reported:{p}"]),
            reposted=frozenset(p for p in self.posts if reader in marks[f"reposted:{p}"]),
            blocked=blocks | blocked_by,
            muted=frozenset(a for a, sets in authors if reader in sets.muted_by),
            blocks=blocks,
            blocked_by=blocked_by,
            filters=active(rules.filters, _now(at)),
        )


# From a write: the actor and the accounts it acts on.


def pair_relations(account_id: int, blocked: object, blocking: object) -> Relations:
    """The actor's relations to one account, from the replies of ZSCORE blocks:<account>
    actor (blocked) and ZSCORE blocks:<actor> account (blocking): what a follow, like or
    repost reads (staff too: interaction_refused)."""
    blocks = frozenset({account_id}) if blocking is not None else frozenset()
    blocked_by = frozenset({account_id}) if blocked is not None else frozenset()
    return Relations(blocked=blocks | blocked_by, blocks=blocks, blocked_by=blocked_by)


def actor_relations(
    blocks: Iterable[bytes | str | int], blocked_by: Iterable[bytes | str | int]
) -> Relations:
    """The actor's relations from their own sets (ZRANGE blocks:<actor>, blocked_by:<actor>):
    what a reply reads (staff too: interaction_refused)."""
    mine, theirs = frozenset(map(int, blocks)), frozenset(map(int, blocked_by))
    return Relations(blocked=mine | theirs, blocks=mine, blocked_by=theirs)


# The policy applied to what a page loaded.


def shown(
    posts: Iterable[Post],
    listed: set[int],
    by_id: Mapping[int, Post],
    viewer: Viewer,
    relations: Relations,
    shows: ListPolicy,
    *,
    reposts: bool,
) -> list[Post]:
    """The posts of a list (those of posts in listed) as viewer sees them, as shows says
    (visibility.may_list). In a list that may hold reposts (`reposts`), a repost shows as
    the post it shares (`original`), "reposted by" its author; each shared post once, at
    its newest place (a post reposted by several people the reader follows, or whose
    author the reader follows too)."""
    hides_muted, context = shows.hides_muted, shows.drops_in

    def lists(post: Post) -> bool:
        return may_list(
            viewer, post, relations, staff_sees_hidden=shows.staff_sees_hidden,
            hides_muted=hides_muted, context=context,
        )  # fmt: skip

    if not reposts:
        return [post for post in posts if post.id in listed and lists(post)]
    seen: set[int] = set()
    found = []
    for post in posts:
        if post.id not in listed:
            continue
        if post.repost_of is None:
            if post.id in seen or not lists(post):
                continue
            seen.add(post.id)
            found.append(post)
            continue
        original = by_id.get(post.repost_of)
        if (
            original is None
            or original.id in seen
            or not may_list_repost(
                viewer, post, original, relations, hides_muted=hides_muted, context=context
            )
        ):
            continue
        seen.add(original.id)
        found.append(replace(post, original=original))
    return found


def post_counts(
    posts: Iterable[Post],
    numbers: Mapping[int, tuple[int, int, int]],
    relations: Relations,
    viewer: Viewer,
    shows: ListPolicy,
) -> dict[int, PostCounts]:
    """Each post's counts and the reader's relation to it (PostCounts), by id."""
    liked, reported, reposted = relations.liked, relations.reported, relations.reposted
    thread = shows.folds_muted
    muted = relations.muted
    counts = {}
    for post in posts:
        replies, likes, reposts = numbers.get(post.id, NO_NUMBERS)
        found = filter_hits(post, relations)
        counts[post.id] = PostCounts(
            replies,
            likes,
            post.id in liked,
            post.id in reported,
            may_act(viewer, post),
            folded(post, relations, found, shows.context, thread=thread),
            reposts,
            post.id in reposted,
            found,
            post.author_id in muted,
        )
    return counts
