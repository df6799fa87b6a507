"""The site's pages of posts, each one read through the read path (reader.py) with what
else the page shows on the same pipelines: home, timeline, welcome, profile, permalink,
mentions, tag and likes. Who may see what is visibility.py's; the views only render.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Unpack

from social import keys

from ..accounts.users import UserStore
from ..base import (
    STATUS_SUSPENDED,
    Client,
    Fields,
    Hash,
    Members,
    NamedReads,
    Pipe,
    Reply,
    RepositoryBase,
    Scores,
    StoreSettings,
    counts_from,
    decode_hash,
    queue_counts,
    s,
    user_from_hash,
)
from ..base import Replies as Got
from ..errors import PostNotFound, UserNotFound
from ..live.notices import decode_notices
from ..models import HomePage, Page, Post, PostCounts, Profile, TimelinePage, User
from .account_lists import MUTUAL_SCAN_LIMIT
from .reader import PageAt, PageReader
from .sources import (
    CONVERSATION,
    HOME,
    MENTIONS,
    PLAIN,
    PROFILE,
    PUBLIC,
    VERSION,
    WITH_HIDDEN,
    HomeFeed,
    Latest,
    Liked,
    Listed,
    Mentions,
    OwnPosts,
    PageExtras,
    TagPosts,
    Thread,
    Timeline,
)
from .suggestions import Suggestions
from .visibility import (
    ANONYMOUS,
    Viewer,
    listable_accounts,
    may_list,
    may_open,
    may_see_account,
)

# What the builders read beside the posts, by the shape of each reply.
OWNER = Reply[Hash]("owner")  # the user hash of a profile's (or a likes page's) owner
NOTICES = Reply[Members]("notices")
NAMES = Reply[Members]("names")  # the newest sign-ups
SUSPENDED = Reply[Scores]("suspended")  # ... which of them are suspended
SIGNUP_IDS = Reply[Fields]("signup_ids")  # ... and their ids (none: deleted since)
VIEWER_FOLLOWS = Reply[float | None]("viewer_follows")
FOLLOWS_VIEWER = Reply[float | None]("follows_viewer")
MUTUALS = Reply[list]("mutuals")  # MUTUALS_SCRIPT's reply
VIEWER_FOLLOWING = Reply[Members]("viewer_following")  # a cluster's mutuals: the candidates
MUTUAL = Reply[Scores]("mutual")  # ... which of them follow the owner

# "Followed by people you follow" looks at MUTUAL_SCAN_LIMIT members of the smaller of the
# two sets (a cluster: of the viewer's newest followings; graph.py, whose list of them
# does the same), and reads the name and status of each it finds: the profile names three
# and counts those a list of accounts shows the reader (visibility.listable_accounts).
MUTUALS_NAMED = 3

# "Followed by people you follow" in one command, on one server (a profile's first
# pipeline; a cluster reads the two sets and the names in the steps after: the keys are
# on different nodes). It walks the smaller of the two sets and asks the other one, so a
# reader who follows hundreds costs a profile with 15 followers 15 lookups, not hundreds;
# either way the viewer's newest followings come first.
# KEYS[1] following:<viewer>, KEYS[2] followers:<owner>
# ARGV[1] how many of the walked set's newest members to look at, ARGV[2] the owner's id,
# ARGV[3] keys.user_key_prefix(). Returns (id, username, status) of each of those who
# follow the owner (at most ARGV[1]), read from their user hashes.
MUTUALS_SCRIPT = """
local limit = tonumber(ARGV[1])
local found = {}
if redis.call('ZCARD', KEYS[1]) <= redis.call('ZCARD', KEYS[2]) then
  for _, id in ipairs(redis.call('ZREVRANGE', KEYS[1], 0, limit - 1)) do
    if id ~= ARGV[2] and redis.call('ZSCORE', KEYS[2], id) then found[#found + 1] = id end
  end
else
  local scored = {}
  for _, id in ipairs(redis.call('ZREVRANGE', KEYS[2], 0, limit - 1)) do
    local since = redis.call('ZSCORE', KEYS[1], id)
    if since and id ~= ARGV[2] then scored[#scored + 1] = {tonumber(since), id} end
  end
  -- newest followed first, ties as ZREVRANGE orders them
  table.sort(scored, function(x, y)
    if x[1] ~= y[1] then return x[1] > y[1] end
    return x[2] > y[2]
  end)
  for i, pair in ipairs(scored) do found[i] = pair[2] end
end
local out = {}
for _, id in ipairs(found) do
  local f = redis.call('HMGET', ARGV[3] .. id, 'username', 'status')
  out[#out + 1] = id
  out[#out + 1] = f[1] or ''
  out[#out + 1] = f[2] or ''
end
return out
"""


@dataclass
class HomeReads(PageExtras):
    """What the home page reads beside its feed: the reader's counts and notices, and
    people to follow when its first page may well be empty (`suggestions`)."""

    user_id: int
    suggestions: Suggestions | None = None
    at: float | None = None

    def first(self, reads: NamedReads) -> None:
        queue_counts(reads, self.user_id)
        reads.lrange(NOTICES, keys.notices(self.user_id), 0, 4)
        if self.suggestions is not None:
            self.suggestions.queue(reads, self.user_id, at=self.at)


@dataclass
class SignupReads(PageExtras):
    """What the timeline reads beside its posts: the newest `count` sign-ups and, unless
    the process remembers them (`remembered`: ProcessCache.signups), their ids and which
    of them are suspended."""

    count: int
    remembered: tuple[tuple, tuple[User, ...]] | None

    def first(self, reads: NamedReads) -> None:
        reads.zrevrange(NAMES, keys.users_by_time(), 0, self.count - 1)

    def then(self, reads: NamedReads, got: Got, ids: Sequence[int]) -> None:
        names = self.names(got)
        if names and self.visible(names, got[VERSION]) is None:
            reads.zmscore(SUSPENDED, keys.suspended_users(), names)
            reads.hmget(SIGNUP_IDS, keys.users(), names)

    def names(self, got: Got) -> list[str]:
        return [s(n) for n in got[NAMES]]

    def visible(self, names: Sequence[str], version: object) -> tuple[User, ...] | None:
        """The sign-ups as accounts, as remembered for these names at this visibility
        version (a suspension moves it), or None."""
        remembered = self.remembered
        if remembered is not None and remembered[0] == (tuple(names), version):
            return remembered[1]
        return None

    def users(self, names: Sequence[str], then: Got) -> tuple[User, ...]:
        """The sign-ups as `then` read them: their ids, whether suspended (those deleted
        since left out)."""
        suspended = then.scores_if_read(SUSPENDED, len(names))
        ids = then.get(SIGNUP_IDS) or [None] * len(names)
        found = (
            user_from_hash(int(i), {"username": n, "status": STATUS_SUSPENDED if score else ""})
            for n, i, score in zip(names, ids, suspended)
            if i is not None
        )
        return tuple(user for user in found if user is not None)


@dataclass
class OwnerReads(PageExtras):
    """What an account's page of posts reads beside them: the owner's user hash."""

    user_id: int

    def first(self, reads: NamedReads) -> None:
        reads.hgetall(OWNER, keys.user(self.user_id))

    def owner(self, got: Got) -> User | None:
        """The owner, as read (None: no such account)."""
        return user_from_hash(self.user_id, decode_hash(got[OWNER]))


@dataclass
class ProfileReads(OwnerReads):
    """What a profile reads beside its posts (see PageStore.profile): the owner's hash (the
    author of its new posts: no round trip for them), whether `other` (the reader, unless
    they own it) follows and is followed by it, and the followings of `other` who follow
    it (on one server MUTUALS_SCRIPT; on a cluster, `other`'s followings, then which of
    them follow it)."""

    other: int | None = None
    one_server: bool = True

    def first(self, reads: NamedReads) -> None:
        super().first(reads)
        user_id, other = self.user_id, self.other
        if other is None:
            return
        reads.zscore(VIEWER_FOLLOWS, keys.following(other), user_id)
        # "Follows you": the owner's following set, whose size the counts read.
        reads.zscore(FOLLOWS_VIEWER, keys.following(user_id), other)
        if self.one_server:
            reads.execute_command(
                MUTUALS, "EVAL", MUTUALS_SCRIPT, 2, keys.following(other),
                keys.followers(user_id), MUTUAL_SCAN_LIMIT, user_id, keys.user_key_prefix(),
            )  # fmt: skip
        else:
            reads.zrevrange(VIEWER_FOLLOWING, keys.following(other), 0, MUTUAL_SCAN_LIMIT - 1)

    def then(self, reads: NamedReads, got: Got, ids: Sequence[int]) -> None:
        if not self.one_server and (mutual := self.candidates(got)):
            reads.zmscore(MUTUAL, keys.followers(self.user_id), mutual)

    def candidates(self, got: Got) -> list[int]:
        """On a cluster, the followings of `other` that may follow the owner."""
        return [c for c in map(int, got.get(VIEWER_FOLLOWING, [])) if c != self.user_id]

    def authors(self, got: Got) -> dict[int, User]:
        owner = self.owner(got)
        return {self.user_id: owner} if owner is not None else {}


@dataclass
class MentionsSeen(PageExtras):
    """The mentions page's one write: reading them clears the reader's unread count."""

    user_id: int

    def writes(self, pipe: Pipe) -> None:
        pipe.hset(keys.user(self.user_id), "unread_mentions", 0)


@dataclass(frozen=True)
class Conversation:
    """A post in its conversation: the posts above it (oldest first, up to the bound kept
    when it was written) and a page of its direct replies (oldest first)."""

    post: Post
    ancestors: list[Post]
    replies: Page[Post]
    counts: dict[int, PostCounts]
    can_reply: bool = False


class PageStore(RepositoryBase):
    """Builds each page of posts on the read path."""

    def __init__(
        self,
        client: Client,
        *,
        reader: PageReader,
        users: UserStore,
        suggestions: Suggestions,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.reader = reader
        self.users = users
        self.suggestions = suggestions

    # --- Home, timeline, welcome ------------------------------------------------------------

    def home(
        self,
        user_id: int,
        number: int = 1,
        per_page: int = 10,
        *,
        at: float | None = None,
        viewer: Viewer | None = None,
        where: PageAt | None = None,
    ) -> HomePage:
        """Return the logged-in home page: the feed (with fan-out-on-read authors merged
        in), the reader's counts and notices, and people to follow when its first page is
        empty (Suggestions). One round trip warm (the posts remembered, the same page as
        last time); see reader.py for the rest. where: the page's place when the pager
        says (PageAt), as for every page of posts below."""
        viewer = viewer or Viewer(user_id)
        source = HomeFeed(user_id)
        maybe_empty = number == 1 and not self.reader.remembers(source, number, per_page, at=where)
        extras = HomeReads(user_id, self.suggestions if maybe_empty else None, at)
        read = self.reader.page(
            source, viewer, number, per_page, shows=HOME, extras=extras, fill=True, at=where
        )
        home = HomePage(
            feed=read.page,
            counts=counts_from(read.got),
            notices=decode_notices(read.got[NOTICES]),
        )
        if number != 1 or read.page.items:
            return home
        suggested = self.suggestions.for_reader(viewer, read.got, read.relations, at=at)
        return replace(home, suggestions=suggested)

    def timeline(
        self,
        viewer: Viewer = ANONYMOUS,
        number: int = 1,
        per_page: int = 50,
        latest_users: int = 10,
        where: PageAt | None = None,
    ) -> TimelinePage:
        """Return a page of the global timeline plus the newest sign-ups as a list of
        accounts shows them to viewer (visibility.listable_accounts: none suspended, none
        across a block; read with the posts, or remembered with the names and the
        visibility version)."""
        extras = SignupReads(latest_users * 2, self.cache.signups)
        read = self.reader.page(
            Timeline(), viewer, number, per_page, shows=PUBLIC, extras=extras, fill=True,
            at=where,
        )  # fmt: skip
        names = extras.names(read.got)
        signups = extras.visible(names, read.got[VERSION])
        if signups is None:
            signups = extras.users(names, read.then)
            self.cache.signups = ((tuple(names), read.got[VERSION]), signups)
        shown = listable_accounts(viewer, signups, read.relations)[:latest_users]
        return TimelinePage(posts=read.page, latest_users=tuple(u.username for u in shown))

    def latest(self, count: int = 5) -> Page[Post]:
        """Return the newest visible posts of the global timeline as a visitor sees them
        (the welcome page): one round trip while the process remembers them."""
        return self.reader.page(Latest(spare=count), ANONYMOUS, 1, count, shows=PUBLIC).page

    # --- Profile ------------------------------------------------------------------------------

    def profile_for_name(
        self,
        username: str,
        viewer: Viewer,
        number: int = 1,
        per_page: int = 10,
        where: PageAt | None = None,
    ) -> Profile:
        """Return the profile page of the user called username.

        The process remembers which id a name led to; the page's own first pipeline reads
        that user's hash, so the remembered id is used only if the hash still bears exactly
        that name (a name is never reused while its account exists). Otherwise, or the
        first time, the name is looked up: one round trip more. Raise UserNotFound when no
        such user exists or viewer may not see it.
        """
        remembered = self.cache.names.get(username)
        if remembered is not None:
            try:
                page = self.profile(remembered, viewer, number, per_page, where)
            except UserNotFound:
                page = None
            if page is not None and page.user.username == username:
                return page
            self.cache.names.discard(username)
        user_id = self.users.user_id_for_name(username)
        if user_id is None:
            raise UserNotFound(username)
        page = self.profile(user_id, viewer, number, per_page, where)
        if page.user.username == username:
            self.cache.names.put(username, user_id)
        return page

    def profile(
        self,
        user_id: int,
        viewer: Viewer,
        number: int = 1,
        per_page: int = 10,
        where: PageAt | None = None,
    ) -> Profile:
        """Return the profile page of user_id as viewer sees it (staff: hidden posts too).

        1) the owner's hash, a page of own posts, counts, whether viewer follows and is
           followed ("Follows you"), and on one server the viewer's followings who follow
           user_id with their names (MUTUALS_SCRIPT): warm, the page's one
           round trip;
        2) the posts (none when remembered); on a cluster, which of viewer's followings
           (read in 1) follow user_id (ZMSCORE);
        3) on a cluster, the names and statuses of those mutuals, when there are any.
        Raise UserNotFound when there is no such user or viewer may not see it.
        """
        other = viewer.id if viewer.id != user_id else None  # None: a visitor, or the owner
        extras = ProfileReads(user_id, other, not self.on_cluster)
        read = self.reader.page(
            OwnPosts(user_id, with_counts=True), viewer, number, per_page, shows=PROFILE,
            extras=extras, fill=True, at=where,
        )  # fmt: skip
        owner = read.authors.get(user_id)
        if owner is None or not may_see_account(viewer, owner):
            raise UserNotFound(user_id)
        if MUTUALS in read.got:
            named = read.got[MUTUALS]
            rows = zip(named[0::3], named[1::3], named[2::3])
            found = (
                user_from_hash(int(i), {"username": s(name), "status": s(status)})
                for i, name, status in rows
            )
            users = [user for user in found if user is not None]
        else:
            listed = extras.candidates(read.got)
            scores = read.then.get(MUTUAL, [])
            mutual = [c for c, score in zip(listed, scores) if score is not None]
            by_id = self._users_by_ids(mutual)
            users = [by_id[m] for m in mutual if m in by_id]
        # Named and counted alike: those a list of accounts shows the reader.
        mutuals = listable_accounts(viewer, users, read.relations)
        return Profile(
            user=owner,
            posts=read.page,
            counts=counts_from(read.got),
            viewer_follows=read.got.get(VIEWER_FOLLOWS) is not None,
            mutual_names=tuple(u.username for u in mutuals[:MUTUALS_NAMED]),
            mutual_count=len(mutuals),
            follows_viewer=read.got.get(FOLLOWS_VIEWER) is not None,
            viewer_blocks=user_id in read.relations.blocks,
            viewer_mutes=user_id in read.relations.muted,
            blocks_viewer=user_id in read.relations.blocked_by,
        )

    # --- Conversations --------------------------------------------------------------------------

    def conversation(
        self, post_id: int, viewer: Viewer, number: int = 1, per_page: int = 20
    ) -> Conversation:
        """Return post_id with the posts above it and a page of its replies (oldest first),
        as viewer may see them. Two round trips warm. A repost's id gives the conversation
        of the post it shares (its `post` tells: the view redirects there). Raise
        PostNotFound when the post is missing or viewer may not open it
        (visibility.may_open)."""

        source = Thread(post_id)
        read = self.reader.page(source, viewer, number, per_page, shows=CONVERSATION)
        post = read.loaded.get(post_id)
        if post is not None and post.repost_of is not None:  # a repost: the post it shares
            if not may_list(viewer, post, read.relations):  # hidden, or across a block
                raise PostNotFound(post_id)
            return self.conversation(post.repost_of, viewer, number, per_page)
        if post is None or not may_open(viewer, post, read.relations):
            raise PostNotFound(post_id)
        ancestors = [read.loaded[i] for i in source.above(read.got) if i in read.loaded]
        return Conversation(
            post=post,
            ancestors=[p for p in ancestors if may_list(viewer, p, read.relations)],
            replies=read.page,
            counts=read.page.counts,
            can_reply=viewer.is_authenticated and read.counts_of(post_id).actionable,
        )

    def post(
        self, post_id: int, viewer: Viewer, *, to_act: bool = False, shared: bool = False
    ) -> tuple[Post, PostCounts]:
        """Return a post viewer may open (to_act: may act on, to report or delete it) and
        its counts; raise PostNotFound otherwise. shared: a repost's id stands for the post
        it shares (what a like, repost, reply or report of it acts on), returned when
        viewer may open both. One round trip (two for a post never seen; for a repost's
        id, shared, twice that)."""
        read = self.reader.page(Listed((post_id,)), viewer, 1, 1, shows=WITH_HIDDEN)
        post = read.loaded.get(post_id)
        counts = read.counts_of(post_id)
        if (
            post is None
            or not may_open(viewer, post, read.relations)
            or (to_act and not counts.actionable)
        ):
            raise PostNotFound(post_id)
        if shared and post.repost_of is not None:
            return self.post(post.repost_of, viewer, to_act=to_act)
        return post, counts

    def mentions(
        self,
        user_id: int,
        number: int = 1,
        per_page: int = 10,
        *,
        viewer: Viewer | None = None,
        where: PageAt | None = None,
    ) -> Page[Post]:
        """Return a page of the posts mentioning user_id, newest first, and mark them seen
        (the unread count clears). Two round trips warm."""
        read = self.reader.page(
            Mentions(user_id), viewer or Viewer(user_id), number, per_page, shows=MENTIONS,
            extras=MentionsSeen(user_id), fill=True, at=where,
        )  # fmt: skip
        return read.page

    def tag(
        self,
        tag: str,
        viewer: Viewer,
        number: int = 1,
        per_page: int = 20,
        where: PageAt | None = None,
    ) -> Page[Post]:
        """Return a page of the newest posts with #tag. One or two round trips warm."""
        return self.reader.page(
            TagPosts(tag), viewer, number, per_page, shows=PUBLIC, fill=True, at=where
        ).page

    def likes(
        self,
        user_id: int,
        viewer: Viewer,
        number: int = 1,
        per_page: int = 10,
        where: PageAt | None = None,
    ) -> tuple[User, Page[Post]]:
        """Return the account and a page of the posts it likes, most recently liked first.
        The account comes with the ids. Raise UserNotFound when there is no such account
        or viewer may not see it."""
        extras = OwnerReads(user_id)
        read = self.reader.page(
            Liked(user_id), viewer, number, per_page, shows=PLAIN, extras=extras, fill=True,
            at=where,
        )  # fmt: skip
        owner = extras.owner(read.got)
        if owner is None or not may_see_account(viewer, owner):
            raise UserNotFound(user_id)
        return owner, read.page
