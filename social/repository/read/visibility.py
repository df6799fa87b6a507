"""Who may see which post and account: the one visibility policy.

Small pure functions of a reader (Viewer) and their Relations. Every list of posts,
permalink, feed, stream and notification, every list of accounts, and every follow,
reply, like and repost asks them; views and templates never decide visibility. The
Relations come from relations_of.py, the one module that reads them (from the reader's
side for a page, from the author's for the live bus, from a write's). A new kind of
hiding (a block, a mute, a word filter, a language) is a new field of `Relations`, read
there, and a new clause here: nothing else changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..models import Post, PostCounts, User
from ..relations.filters import FilterHit, WordFilter, hides, hits


class ViewerCheck:
    """A reader as this process remembers them for their `auth` secret, not yet checked:
    the read path reads their user hash on the page's first pipeline and checks the secret
    there (reader.py), instead of one round trip before the page. `fresh` is the user as
    read then; a failed check raises StaleViewer before anything is shown or written."""

    __slots__ = ("secret", "fresh")

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.fresh: User | None = None


class StaleViewer(Exception):
    """The remembered reader of a ViewerCheck is not the one the user hash says (another
    secret, suspended, made staff, with blocks or mutes since): read the page again as the
    user the request's cookie leads to (social.mixins.RepositoryMixin.read_as_viewer)."""


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who reads: a user (their id, whether staff, whether their blocks and mutes must be
    read: unknown means yes) or a visitor (id None). `check`: the user is as remembered
    for their secret and still to be checked by the read path (ViewerCheck)."""

    id: int | None = None
    is_staff: bool = False
    has_relations: bool = True
    check: ViewerCheck | None = field(default=None, compare=False)

    @classmethod
    def of(cls, user: object) -> Viewer:
        """Return the viewer for a request's user (a User, AnonymousUser or None)."""
        if user is None or not getattr(user, "is_authenticated", False):
            return ANONYMOUS
        return cls(
            getattr(user, "id", None),
            bool(getattr(user, "is_staff", False)),
            bool(getattr(user, "has_relations", True)),
        )

    @property
    def is_authenticated(self) -> bool:
        return self.id is not None


ANONYMOUS = Viewer()
# The staff's own lists (accounts, reports, newest posts): every post, hidden ones too.
STAFF = Viewer(None, is_staff=True)


@dataclass(frozen=True, slots=True)
class Relations:
    """The reader's own sets, as the read path read them with a page: which of its posts
    the reader likes and reported, the accounts kept apart from the reader by a block
    (either way; for staff only their own blocks) and those the reader mutes. Empty for
    a visitor."""

    liked: frozenset[int] = field(default_factory=frozenset)
    reported: frozenset[int] = field(default_factory=frozenset)
    blocked: frozenset[int] = field(default_factory=frozenset)  # either way
    muted: frozenset[int] = field(default_factory=frozenset)
    blocks: frozenset[int] = field(default_factory=frozenset)  # the reader's own blocks
    blocked_by: frozenset[int] = field(default_factory=frozenset)
    filters: tuple[WordFilter, ...] = ()  # the reader's word filters that still act
    reposted: frozenset[int] = field(default_factory=frozenset)  # posts the reader reposts


NO_RELATIONS = Relations()


def may_list(
    viewer: Viewer,
    post: Post,
    relations: Relations = NO_RELATIONS,
    *,
    staff_sees_hidden: bool = False,
    hides_muted: bool = False,
    context: str = "",
) -> bool:
    """Whether post appears in a list viewer reads. A hidden post (deleted, or by a
    suspended or deleted account) appears for no one, except for staff in the lists that
    show hidden posts to staff (a profile, the staff pages: staff_sees_hidden). A post by
    an account a block keeps apart from the reader appears nowhere; one by an account the
    reader mutes leaves the lists that hide muted accounts (home, timeline, tags,
    mentions: hides_muted); one a filter of the reader's hides in the list's context
    (keys.FILTER_CONTEXTS; "": none) leaves it."""
    if post.author_id in relations.blocked:
        return False
    if hides_muted and post.author_id in relations.muted:
        return False
    if context and relations.filters and hides(relations.filters, post.body, context):
        return False
    if not post.is_hidden:
        return True
    return staff_sees_hidden and viewer.is_staff


def lists_none_of(owner_id: int, relations: Relations) -> bool:
    """Whether a list of one account's own posts and reposts (its profile) shows the reader
    nothing at all: a block keeps the two apart, so no post of it may_list and no repost
    may_list_repost. The page then has nothing after it either: no pager, no page 2."""
    return owner_id in relations.blocked


def may_list_repost(
    viewer: Viewer,
    repost: Post,
    original: Post,
    relations: Relations = NO_RELATIONS,
    *,
    hides_muted: bool = False,
    context: str = "",
) -> bool:
    """Whether a repost appears in a list viewer reads: its reposter as any author (not
    kept apart by a block, not muted where mutes hide, not hidden), and the post it shares
    as that post would appear, but never a hidden one, staff included: a deleted or
    hidden post takes its reposts with it."""
    if repost.author_id in relations.blocked or repost.is_hidden or original.is_hidden:
        return False
    if hides_muted and repost.author_id in relations.muted:
        return False
    return may_list(viewer, original, relations, hides_muted=hides_muted, context=context)


def filter_hits(post: Post, relations: Relations) -> tuple[FilterHit, ...]:
    """The reader's filters that match post, whatever their context (the client API's
    `filtered`: an app decides by context, as Mastodon's do)."""
    return hits(relations.filters, post.body) if relations.filters else ()


def folded(
    post: Post, relations: Relations, found: tuple[FilterHit, ...], context: str, *, thread: bool
) -> str:
    """Why a listed post is shown folded (one click shows it), "" when it is not: in a
    conversation (thread), "muted" for a muted author, or the keyword of any filter
    acting there; elsewhere the keyword of a filter that warns in the list's context (one
    that hides has left the list: may_list). found: filter_hits(post, relations)."""
    if thread and post.author_id in relations.muted:
        return "muted"
    for hit in found:
        if hit.filter.acts_in(context) and (thread or hit.filter.action == "warn"):
            return hit.keywords[0]
    return ""


def hidden_by_filter(found: tuple[FilterHit, ...], context: str) -> bool:
    """Whether a filter among found hides the post in context (the client API leaves it
    out of a conversation's replies and notifications, as Mastodon's apps do)."""
    return any(h.filter.action == "hide" and h.filter.acts_in(context) for h in found)


def may_open(viewer: Viewer, post: Post, relations: Relations = NO_RELATIONS) -> bool:
    """Whether viewer may open post's permalink: staff always; not across a block; a post
    removed by moderators, its author too (with why); a post its author deleted, or by a
    suspended or deleted account, no one else."""
    if viewer.is_staff:
        return True
    if post.author_id in relations.blocked:
        return False
    if not post.is_hidden:
        return True
    return (
        post.is_deleted
        and not post.deleted_by_author
        and not post.author_suspended
        and viewer.id == post.author_id
    )


def may_act(viewer: Viewer, post: Post) -> bool:
    """Whether the post's card offers its actions (reply, like, report, delete): not on
    a hidden post, which only its author or staff can see. (Across a block nothing is
    shown at all: may_list, may_open.)"""
    return not post.is_hidden


def may_notify(
    viewer: Viewer,
    actor: User | None,
    post: Post | None,
    relations: Relations,
    *,
    about_post: bool,
) -> bool:
    """Whether an event (a follow, like, reply, mention, repost) reaches the reader's
    notifications: not from a missing or suspended account, nor one a block keeps apart or
    the reader mutes; and, about_post, about a post the reader would see in their mentions
    (there, not hidden, muted or filtered). The notifications page and the client API ask
    this."""
    if actor is None or actor.is_suspended or not may_hear_from(actor.id, relations):
        return False
    if not about_post:
        return True
    return post is not None and may_list(
        viewer, post, relations, hides_muted=True, context="notifications"
    )


def may_hear_from(actor_id: int, relations: Relations) -> bool:
    """Whether any event of actor_id's may reach the reader (may_notify's first clause):
    not across a block, nor from an account the reader mutes. A reader's list of events is
    read without those it refuses (notifications.py), so that their pages are full."""
    return actor_id not in relations.blocked and actor_id not in relations.muted


def in_api_context(counts: PostCounts, *, reply: bool) -> bool:
    """Whether a post of a conversation is in the client API's context (an ancestor, or
    a reply): not one a filter of the reader's hides in a thread, nor a reply folded for
    its muted author (the site's page shows both folded; Mastodon's apps leave them out).
    counts: the post's, as the conversation's page read them."""
    if reply and counts.folded == "muted":
        return False
    return not hidden_by_filter(counts.filtered, "thread")


def may_see_account(viewer: Viewer, user: User) -> bool:
    """Whether viewer may see user's pages (profile, likes, follow lists, feed): a
    suspended or deleted account is there for staff only. (A profile across a block is
    shown, saying so, without posts: pages.py.)"""
    return not user.is_suspended or viewer.is_staff


def may_list_account(
    viewer: Viewer, user: User, relations: Relations = NO_RELATIONS, *, own: bool = False
) -> bool:
    """Whether user appears in a list of accounts viewer reads (followers, following,
    likers, reposters, search, suggestions, "followed by", "new here", the client API's
    lists): listable_accounts lets it through."""
    return bool(listable_accounts(viewer, (user,), relations, own=own))


def listable_accounts(
    viewer: Viewer, users: Iterable[User], relations: Relations = NO_RELATIONS, *, own: bool = False
) -> list[User]:
    """Those of users that appear in a list of accounts viewer reads, in order: not a
    suspended or deleted account, for staff neither (their pages are reached by name),
    nor one a block keeps apart from viewer (either way; for staff only their own blocks:
    no one hides from staff). own: viewer's own list of blocks or mutes, which shows every
    account in it, so that they can undo it. (A list at a time: a page runs it over
    twenty accounts.)"""
    if own:
        return list(users)
    blocked = relations.blocked
    return [user for user in users if not user.is_suspended and user.id not in blocked]


# Why an interaction is refused (interaction_refused): the account blocks the actor, or
# the actor blocks the account.
BLOCKED = "blocked"
BLOCKING = "blocking"


def interaction_refused(account_id: int, relations: Relations) -> str:
    """Why the actor whose relations these are may not follow, reply to, like or repost
    account_id (a post's author or reposter): BLOCKED when it blocks them, BLOCKING when
    they block it, "" when they may. Staff too: reading (may_list, may_open) shows staff
    what blockers post, but a block keeps staff's follows, replies, likes and reposts
    out; staff act on accounts through the staff pages."""
    if account_id in relations.blocked_by:
        return BLOCKED
    if account_id in relations.blocks:
        return BLOCKING
    return ""
