"""The read path: every page of posts is read here, from a source (sources.py), for a viewer.

    read = repo.reader.page(Timeline(), viewer, number, per_page, shows=PUBLIC)
    read.page  # Page[Post] with each post's counts and the reader's relation to it

One first pipeline per page: the source's ids (one more than the page, to know whether
another page follows), the visibility version, the reader's own sets for the posts the
process last showed on this page (their counts too), and whatever the page builder adds
(`first`). Then one load of the posts (loading.py; nothing when the process remembers
them at that version and the page lists what it listed last time), with the builder's
reads that depend on the first's replies or the ids (`then`). Then the one visibility
policy (visibility.py), as the list policy passed beside the source says (`shows`), and
the counts. Pages built on it: pages.py; the staff's lists: staff_pages.py, reports.py;
notifications.py, live.py and the API's timelines (api_reads.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar, Unpack

from social import keys

from .base import Bulk, NamedReads, Reply, RepositoryBase, StoreSettings, page_bounds
from .base import Replies as Got
from .cache import UNREAD, MaybeVersion
from .filters import active
from .loading import PostLoader, post_counts_from, queue_post_counts
from .models import Page, Post, PostCounts, User
from .sources import Known, ListPolicy, Source, Steps
from .users import UserStore
from .visibility import (
    NO_RELATIONS,
    Relations,
    StaleViewer,
    Viewer,
    ViewerCheck,
    filter_hits,
    folded,
    may_act,
    may_list,
    may_list_repost,
)

T = TypeVar("T")
NO_NUMBERS = (0, 0, 0)  # a post's (replies, likes, reposts) when none were read

FirstReads = Callable[[NamedReads], None]
ThenReads = Callable[[NamedReads, Got, Sequence[int]], None]
# The visibility version, read on every page's first pipeline (a builder may use it too).
VERSION = Reply[Bulk]("version")


@dataclass
class PageRead:
    """A page of posts as a viewer sees it, and what else its pipelines read.

    `page`: the visible posts with their counts. `loaded`: every post loaded, by id,
    hidden ones included (a conversation's own post and ancestors are among them; the
    caller asks visibility.py what to show). `got`: the first pipeline's replies by name;
    `then`: those of the reads queued by `then`."""

    page: Page[Post]
    loaded: dict[int, Post] = field(default_factory=dict)
    got: Got = field(default_factory=Got)
    then: Got = field(default_factory=Got)
    relations: Relations = NO_RELATIONS

    def counts_of(self, post_id: int) -> PostCounts:
        return self.page.counts.get(post_id, PostCounts())


@dataclass(frozen=True)
class PostsRead:
    """The posts a page loaded (hidden ones included), their numbers, the reader's
    relations, the replies of the load's pipeline (`later`), and the ids it asked for."""

    posts: list[Post]
    numbers: dict[int, tuple[int, int, int]]
    relations: Relations
    later: Got
    wanted: list[int]


class PageReader(RepositoryBase):
    """The one read seam: pages of posts from a source, for a viewer."""

    def __init__(
        self, client, *, loader: PostLoader, users: UserStore, **config: Unpack[StoreSettings]
    ) -> None:
        super().__init__(client, **config)
        self.loader = loader
        self.users = users

    def remembers(self, source: Source, number: int, per_page: int, *, offset: int = 0) -> bool:
        """Whether this process remembers this page listing any post (so a builder can
        skip reads for an empty page: the home page's suggestions)."""
        return bool(self._guess(source, number, per_page, offset))

    def last_listed(
        self, source: Source, number: int, per_page: int, *, offset: int = 0
    ) -> list[Post]:
        """The posts this process remembers this page listing last time (with those its
        reposts share), for a builder that reads what they name on the page's first
        pipeline (the API's accounts)."""
        posts = self.cache.posts
        known = (posts.get(i) for i in self._guess(source, number, per_page, offset) or ())
        return [k.post for k in known if k is not None]

    def _guess(
        self, source: Source, number: int, per_page: int, offset: int
    ) -> tuple[int, ...] | None:
        """What the page listed last time (None: not remembered; (): it was empty)."""
        memo = self._memo(source, number, per_page, offset)
        return self.cache.shown.get(memo) if memo else None

    @staticmethod
    def _memo(source: Source, number: int, per_page: int, offset: int) -> tuple | None:
        """The key under which the process remembers what a page listed (None: not)."""
        return (source, offset, number, per_page) if source.remembered else None

    def page(
        self,
        source: Source,
        viewer: Viewer,
        number: int = 1,
        per_page: int = 10,
        *,
        shows: ListPolicy,
        offset: int = 0,
        first: FirstReads | None = None,
        then: ThenReads | None = None,
        spare: int = 0,
        more_ids: Callable[[Got], Sequence[int]] | None = None,
        total: Reply[int] | None = None,
        authors: Callable[[Got], dict[int, User]] | None = None,
    ) -> PageRead:
        """Return page `number` of source as viewer sees it (see the module docstring):
        shows says what the list shows of its posts; offset starts it that many posts
        further (a page that starts at a post: the API's max_id).

        first(reads): the builder's reads on the first pipeline. then(reads, got, ids):
        reads that depend on the first's replies or on the ids of the posts loaded, queued
        on the posts' pipeline (or sent alone when the posts need none). spare: ids read
        past the page to fill in for hidden posts (the welcome page's few).
        more_ids(got): posts to load with the page's (a conversation's post and
        ancestors), returned in `loaded`. total: the first pipeline's reply that holds the
        list's length, for the pager. authors(got): authors the first pipeline read (a
        profile's owner), so new posts need no round trip for them.
        """
        start, stop = (offset + bound for bound in page_bounds(number, per_page))
        memo = self._memo(source, number, per_page, offset)
        guess = self.cache.shown.get(memo) if memo else None
        got = self._first(source, viewer, start, stop + spare, guess, first)
        ids = self._ids(source, got, start, stop + spare)
        candidates = ids[: per_page + spare]
        # The posts that reposts this process remembers share: loaded with them.
        shared = self._shared_by_known_reposts(candidates) if source.has_reposts else ()
        wanted = list(dict.fromkeys([*(more_ids(got) if more_ids else ()), *candidates, *shared]))
        read = self._posts(wanted, got, guess, viewer, then, authors(got) if authors else None)
        if source.has_reposts:
            read = self._with_shared(read, got, viewer)
        if memo:
            self.cache.shown.put(memo, tuple(read.wanted))
        by_id = {post.id: post for post in read.posts}
        listed = set(candidates)
        shown = self._shown(
            read.posts, listed, by_id, viewer, read.relations, shows, source.has_reposts
        )[:per_page]
        # Nothing of it for this reader (a blocked profile): no later page, no total.
        none = source.lists_none(read.relations)
        return PageRead(
            page=Page(
                items=shown,
                number=number,
                has_next=spare == 0 and len(ids) > per_page and not none,
                total=got[total] if total and not none else None,
                per_page=per_page,
                counts=self._counts(by_id.values(), read.numbers, read.relations, viewer, shows),
            ),
            loaded=by_id,
            got=got,
            then=read.later,
            relations=read.relations,
        )

    def _first(
        self,
        source: Source,
        viewer: Viewer,
        start: int,
        stop: int,
        guess: tuple[int, ...] | None,
        first: FirstReads | None,
    ) -> Got:
        """Send the page's first pipeline (when it has anything to read): the source's ids,
        the visibility version, the reader's hash when remembered (checked here), their
        sets and counts for what the page listed last time (the guess), the builder's."""
        check = viewer.check
        reads_sets = viewer.id is not None and viewer.has_relations
        if not (source.reads_ids or first or guess is not None or reads_sets or check):
            return Got()
        reads = self.reads()
        if check is not None and viewer.id is not None:  # their hash: checked below
            reads.hgetall("viewer", keys.user(viewer.id))
        source.queue(reads, start, stop, self._known())
        reads.get(VERSION, keys.visibility_version())
        if guess is not None:  # likely no load to come: the reader's sets come now
            self._queue_viewer_sets(reads, viewer)
            self._queue_for_reader(reads, guess, viewer)
        if first is not None:
            first(reads)
        got = reads.execute()
        if check is not None:
            self._check_viewer(viewer, check, got)
        return got

    def _known(self) -> Known:
        return Known(self.cache.celebrities, self.home_feed_cap)

    def _ids(self, source: Source, got: Got, start: int, stop: int) -> list[int]:
        """The source's ids start..stop, with the round trips it needs more (run)."""
        listing = self.run(source.ids(got, start, stop, self._known()))
        if listing.celebrities is not None:
            self.cache.celebrities = listing.celebrities
        return listing.ids

    def _posts(
        self,
        wanted: list[int],
        got: Got,
        guess: tuple[int, ...] | None,
        viewer: Viewer,
        then: ThenReads | None,
        authors: dict[int, User] | None,
    ) -> PostsRead:
        """Load wanted with the reads that go with them: the reader's sets (unless the
        first pipeline read them), their likes, reports and reposts of the posts, and the
        builder's `then`; when the page lists what it guessed, only what `then` adds."""
        guessed = guess is not None and tuple(wanted) == guess

        def reader_reads(later: NamedReads) -> None:
            if guess is None:  # with the posts, which reach every node the sets might be on
                self._queue_viewer_sets(later, viewer)
            if not guessed:
                self._queue_for_reader(later, wanted, viewer, counts=False)
            if then is not None:
                then(later, got, wanted)

        loaded = self.loader.load(
            wanted,
            version=self._version(got),
            counts=not guessed,
            also=reader_reads if not guessed or then is not None else None,
            authors=authors,
        )
        later = loaded.got
        sets = got if guess is not None else later
        if guessed:
            numbers = post_counts_from(got, wanted)
            relations = self._relations(sets, got, wanted, viewer)
        else:
            numbers = loaded.counts
            relations = self._relations(sets, later, wanted, viewer)
        return PostsRead(loaded.posts, numbers, relations, later, wanted)

    @staticmethod
    def _version(got: Got) -> MaybeVersion:
        """The visibility version the first pipeline read with the ids (UNREAD: none)."""
        return got.get(VERSION, UNREAD)

    def run(self, steps: Steps[T]) -> T:
        """Send the reads a source's steps yield, one pipeline each, until it returns."""
        try:
            step = next(steps)
            while True:
                reads = self.reads()
                step(reads)
                step = steps.send(reads.execute())
        except StopIteration as done:
            return done.value

    def _check_viewer(self, viewer: Viewer, check: ViewerCheck, got: Got) -> None:
        """Check the remembered reader against their hash, read with the page's ids: the
        same secret, not suspended, and the same in what decided this page's reads (staff,
        relations); else raise StaleViewer, before anything is loaded, shown or written."""
        assert viewer.id is not None
        fresh = self.users.checked_user(check.secret, viewer.id, got.hash("viewer"))
        if (
            fresh is None
            or fresh.is_staff != viewer.is_staff
            or fresh.has_relations != viewer.has_relations
        ):
            raise StaleViewer(viewer.id)
        check.fresh = fresh

    def _shared_by_known_reposts(self, ids: Sequence[int]) -> list[int]:
        """The ids of the posts shared by those of ids this process remembers as reposts
        (a repost never changes what it shares)."""
        posts = self.cache.posts
        shared = []
        for post_id in ids:
            known = posts.get(post_id)
            if known is not None and known.post.repost_of is not None:
                shared.append(known.post.repost_of)
        return shared

    def _with_shared(self, read: PostsRead, got: Got, viewer: Viewer) -> PostsRead:
        """read with the posts that reposts new to this process share, loaded once: one
        round trip more (two when their authors are new too), with their counts and the
        reader's likes, reports and reposts of them; the process remembers them after."""
        known = {post.id for post in read.posts}
        missing = list(
            dict.fromkeys(
                p.repost_of
                for p in read.posts
                if p.repost_of is not None and p.repost_of not in known
            )
        )
        if not missing:
            return read
        loaded = self.loader.load(
            missing,
            version=self._version(got),
            counts=True,
            also=lambda reads: self._queue_for_reader(reads, missing, viewer, counts=False),
        )
        mine = self._relations({}, loaded.got, missing, viewer)
        return PostsRead(
            [*read.posts, *loaded.posts],
            {**read.numbers, **loaded.counts},
            replace(
                read.relations,
                liked=read.relations.liked | mine.liked,
                reported=read.relations.reported | mine.reported,
                reposted=read.relations.reposted | mine.reposted,
            ),
            read.later,
            [*read.wanted, *missing],
        )

    @staticmethod
    def _shown(
        posts: Iterable[Post],
        listed: set[int],
        by_id: dict[int, Post],
        viewer: Viewer,
        relations: Relations,
        shows: ListPolicy,
        reposts: bool,
    ) -> list[Post]:
        """The posts of the list (those of posts in listed) as viewer sees them, as shows
        says (visibility.may_list). In a list that may hold reposts (`reposts`), a repost
        shows as the post it shares (`original`), "reposted by" its author; each shared
        post once, at its newest place (a post reposted by several people the reader
        follows, or whose author the reader follows too)."""
        hides_muted, context = shows.hides_muted, shows.drops_in

        def lists(post: Post) -> bool:
            return may_list(
                viewer, post, relations, staff_sees_hidden=shows.staff_sees_hidden,
                hides_muted=hides_muted, context=context,
            )  # fmt: skip

        if not reposts:
            return [post for post in posts if post.id in listed and lists(post)]
        seen: set[int] = set()
        shown = []
        for post in posts:
            if post.id not in listed:
                continue
            if post.repost_of is None:
                if post.id in seen or not lists(post):
                    continue
                seen.add(post.id)
                shown.append(post)
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
            shown.append(replace(post, original=original))
        return shown

    @staticmethod
    def _queue_for_reader(
        reads: NamedReads, ids: Sequence[int], viewer: Viewer, *, counts: bool = True
    ) -> None:
        """Queue the posts' counts (unless the load reads them) and the reader's own sets
        for them: which they like, reported and repost (one ZMSCORE each)."""
        if counts:
            queue_post_counts(reads, ids)
        if viewer.id is not None and ids:
            reads.zmscore("liked", keys.user_likes(viewer.id), list(ids))
            reads.zmscore("reported", keys.user_reported(viewer.id), list(ids))
            reads.zmscore("reposted", keys.user_reposts(viewer.id), list(ids))

    @staticmethod
    def _queue_viewer_sets(reads: NamedReads, viewer: Viewer) -> None:
        """Queue the reader's own sets that decide what they see whatever the page: the
        accounts they block and mute, their word filters, and (but for staff: no one
        blocks staff) those that block them. Each is bounded (keys.RELATIONS_CAP,
        keys.FILTERS_CAP; blocked_by by the accounts). A reader whose user hash says they
        have none (the `relations` flag) reads none: most readers, whose pages then reach
        no more keys than before blocks existed."""
        if viewer.id is None or not viewer.has_relations:
            return
        reads.zrange("blocks", keys.blocks(viewer.id), 0, -1)
        reads.zrange("mutes", keys.mutes(viewer.id), 0, -1)
        reads.zrange("filters", keys.filters(viewer.id), 0, -1, withscores=True)
        if not viewer.is_staff:
            reads.zrange("blocked_by", keys.blocked_by(viewer.id), 0, -1)

    @staticmethod
    def _relations(sets: dict, got: dict, ids: Sequence[int], viewer: Viewer) -> Relations:
        """The reader's relations: the sets from `sets` (the pipeline that read them), and
        which of ids they like and reported from `got` (the first pipeline when guessed,
        else the load's)."""
        if viewer.id is None:
            return NO_RELATIONS
        liked = got.get("liked") or ()
        reported = got.get("reported") or ()
        reposted = got.get("reposted") or ()
        blocks = frozenset(map(int, sets.get("blocks", ())))
        blocked_by = frozenset(map(int, sets.get("blocked_by", ())))
        return Relations(
            liked=frozenset(i for i, score in zip(ids, liked) if score is not None),
            reported=frozenset(i for i, score in zip(ids, reported) if score is not None),
            reposted=frozenset(i for i, score in zip(ids, reposted) if score is not None),
            blocked=blocks | blocked_by,
            muted=frozenset(map(int, sets.get("mutes", ()))),
            blocks=blocks,
            blocked_by=blocked_by,
            filters=active(sets.get("filters") or [], time.time()),
        )

    @staticmethod
    def _counts(
        posts: Iterable[Post],
        numbers: dict[int, tuple[int, int, int]],
        relations: Relations,
        viewer: Viewer,
        shows: ListPolicy,
    ) -> dict[int, PostCounts]:
        """Each post's counts and the reader's relation to it, by id."""
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
