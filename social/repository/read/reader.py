"""The read path: every page of posts is read here, from a source (sources.py), for a viewer.

    read = repo.reader.page(Timeline(), viewer, number, per_page, shows=PUBLIC)
    read.page  # Page[Post] with each post's counts and the reader's relation to it

One first pipeline per page: the source's ids (one more than the page, to know whether
another page follows) and what else the source reads, the visibility version, the
reader's own sets for the posts the process last showed on this page (their counts too),
and the builder's reads (`extras`: a PageExtras, its `first`). Then one load of the posts
(loading.py; nothing when the process remembers them at that version and the page lists
what it listed last time), with the builder's reads that depend on the first's replies or
the ids (its `then`). Then the one visibility policy (visibility.py), as the list policy
passed beside the source says (`shows`), and the counts. Pages built on it: pages.py; the
staff's lists: staff_pages.py, reports.py; notifications.py, live.py and the API's
timelines (api_reads.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, TypeVar, Unpack

from social import keys

from ..accounts.profile_changes import queue_versions
from ..accounts.users import UserStore
from ..base import Hash, NamedReads, Reply, RepositoryBase, StoreSettings
from ..base import Replies as Got
from ..cache import UNREAD, MaybeVersion
from ..models import Page, Post, PostCounts, User
from .loading import PostLoader, post_counts_from, queue_post_counts
from .relations_of import (
    post_counts,
    queue_marks,
    queue_reader_sets,
    reader_relations,
    with_marks,
)
from .sources import VERSION, Known, ListPolicy, PageExtras, Source, Steps
from .visibility import (
    NO_RELATIONS,
    Relations,
    StaleViewer,
    Viewer,
    ViewerCheck,
    may_list,
    may_list_repost,
)

T = TypeVar("T")

# The reader's user hash, read with the ids when the process remembers the reader
# (ViewerCheck) and checked before anything is shown.
VIEWER = Reply[Hash]("viewer")
# A page that fills (page(fill=True): the site's lists, the API's timelines) holds per_page
# posts whenever the list holds that many the reader may see. Its first pipeline reads
# FILL_MARGIN ids more than it loads (the margin); when posts hidden from the reader (blocked,
# muted, filtered, removed, reposts of a post already on the page, left out by `keep`)
# leave it short, it loads more of them, at most FILL_ROUNDS times, each after at most one
# further read of FILL_GROWTH pages of ids when those in hand run out; past that it is
# shown short, and the next page starts where it stopped. A page with nothing hidden
# costs what it did (but for parsing the margin's ids). For a reader with relation sets
# (blocks, mutes, filters) or a page with a `keep` filter, where posts are likely left out,
# the margin is a whole page, loaded with the page: no round trip more unless more than a
# page of them is left out. Warm, the process
# remembers the posts the page loaded (the guess): its first pipeline reads their counts
# and the reader's marks, so the same rounds, replayed, cost nothing: one round trip.
FILL_ROUNDS = 2
FILL_GROWTH = 4
FILL_MARGIN = 5


@dataclass(frozen=True)
class PageAt:
    """Where a page of a list lies when not at its number's own place (after a page that
    read past hidden posts): the list position it starts at (`start`), or, read towards
    the newest, the one it ends before (`before`). The pager's links carry them
    (Page.next_from, Page.previous_before); the API's min_id reads backward."""

    start: int | None = None
    before: int | None = None


def spot(number: int, per_page: int, offset: int, at: PageAt | None) -> tuple[str, int]:
    """Where a page lies: ("from", the position it starts at) or ("before", the one it
    ends before)."""
    if at is not None and at.before is not None:
        return ("before", max(0, at.before))
    if at is not None and at.start is not None:
        return ("from", at.start)
    return ("from", offset + (max(1, number) - 1) * per_page)


@dataclass
class Span:
    """The part of a list a page read: its ids from list position `first` on. ended:
    nothing lies past them the way the page reads (after them; backward, before them).
    floored: an id not above the page's `above` was met at index floor_at (in a list
    whose newest ids come first, nothing after it is for the page)."""

    first: int
    ids: list[int]
    ended: bool
    floored: bool = False
    floor_at: int = 0

    def eligible(self, below: int | None, above: int | None, cut: bool) -> Sequence[int]:
        """The indexes of the ids the page may list: those below `below` and above
        `above` (cut: none from the first one that is not above it on)."""
        ids = self.ids
        if below is None and above is None:
            return range(len(ids))
        found = []
        for k, post_id in enumerate(ids):
            if above is not None and post_id <= above:
                if cut:
                    self.floored, self.floor_at = True, k
                    break
                continue
            if below is None or post_id < below:
                found.append(k)
        return found

    def at(self, indexes: Sequence[int]) -> list[int]:
        """The ids at indexes (a range: one slice)."""
        if isinstance(indexes, range):
            return self.ids[indexes.start : indexes.stop]
        return [self.ids[k] for k in indexes]


class Placed(NamedTuple):
    """What a page shows (each post with its index among the candidates) and where it
    lies in the list: positions start..end (exclusive), the id it read last (the next
    page's max_id), and whether more follow (forward)."""

    shown: list[tuple[int, Post]]
    start: int
    end: int
    last_id: int | None
    more: bool


@dataclass
class PageRead:
    """A page of posts as a viewer sees it, and what else its pipelines read.

    `page`: the visible posts with their counts. `loaded`: every post loaded, by id,
    hidden ones included (a conversation's own post and ancestors are among them; the
    caller asks visibility.py what to show). `got`: the first pipeline's replies by name;
    `then`: those of the reads the page's extras queued in their `then`; `authors`: the
    authors they read (PageExtras.authors: a profile's owner)."""

    page: Page[Post]
    loaded: dict[int, Post] = field(default_factory=dict)
    got: Got = field(default_factory=Got)
    then: Got = field(default_factory=Got)
    authors: dict[int, User] = field(default_factory=dict)
    relations: Relations = NO_RELATIONS
    # The list entry the page read last (None: none): the API's next max_id.
    last_id: int | None = None

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

    def remembers(
        self,
        source: Source,
        number: int,
        per_page: int,
        *,
        offset: int = 0,
        at: PageAt | None = None,
    ) -> bool:
        """Whether this process remembers this page listing any post (so a builder can
        skip reads for an empty page: the home page's suggestions)."""
        return bool(self._guess(source, number, per_page, offset, at))

    def last_listed(
        self,
        source: Source,
        number: int,
        per_page: int,
        *,
        offset: int = 0,
        at: PageAt | None = None,
    ) -> list[Post]:
        """The posts this process remembers this page listing last time (with those its
        reposts share), for a builder that reads what they name on the page's first
        pipeline (the API's accounts)."""
        posts = self.cache.posts
        known = (posts.get(i) for i in self._guess(source, number, per_page, offset, at) or ())
        return [k.post for k in known if k is not None]

    def _guess(
        self, source: Source, number: int, per_page: int, offset: int, at: PageAt | None
    ) -> tuple[int, ...] | None:
        """What the page listed last time (None: not remembered; (): it was empty)."""
        memo = self._memo(source, spot(number, per_page, offset, at), per_page)
        return self.cache.shown.get(memo) if memo else None

    @staticmethod
    def _memo(source: Source, where: tuple[str, int], per_page: int) -> tuple | None:
        """The key under which the process remembers what a page listed (None: not)."""
        return (source, where, per_page) if source.remembered else None

    def page(
        self,
        source: Source,
        viewer: Viewer,
        number: int = 1,
        per_page: int = 10,
        *,
        shows: ListPolicy,
        offset: int = 0,
        at: PageAt | None = None,
        fill: bool = False,
        keep: Callable[[Post], bool] | None = None,
        below: int | None = None,
        above: int | None = None,
        extras: PageExtras | None = None,
    ) -> PageRead:
        """Return page `number` of source as viewer sees it (see the module docstring):
        shows says what the list shows of its posts; offset starts it that many posts
        further (a page that starts at a post: the API's max_id); at, where it starts or
        ends when not at its number's own place (PageAt: the site's pager, the API's
        min_id).

        fill: a page of per_page posts whenever the list holds that many the reader may
        see (see FILL_ROUNDS); the pager's links then carry where the next and previous
        pages are (Page.next_from, Page.previous_before). keep(post): a further filter
        (the API's exclude_replies); below, above: only ids between them (the API's
        cursors; above also ends a list whose newest ids come first at the first id not
        above it).

        extras: what the builder reads beside the posts on the same pipelines, and the
        page's writes (PageExtras). What else a page of the source reads is the source's:
        posts loaded with the page's (Thread), the list's length (OwnPosts), spare ids
        (Source.spare).
        """
        where = spot(number, per_page, offset, at)
        backward = where[0] == "before"
        # Posts are likely left out: a page more is loaded with the page.
        eager = fill and (keep is not None or (viewer.id is not None and viewer.has_relations))
        margin = (per_page if eager else min(per_page, FILL_MARGIN)) if fill else 0
        if backward:
            end = where[1]
            start = max(0, end - per_page - margin)
            stop = end  # one more: the post at `end` says whether older ones follow
        else:
            start = end = where[1]
            stop = start + per_page + source.spare + margin  # one more: whether more follow
        memo = self._memo(source, where, per_page)
        guess = self.cache.shown.get(memo) if memo else None
        if fill and guess:  # read as far as the page read last time (it filled further)
            if backward:
                start = max(0, min(start, end - len(guess)))
            else:
                stop = max(stop, start + len(guess))
        got = self._first(source, viewer, start, stop, guess, extras)
        ids = self._ids(source, got, start, stop)
        if backward:
            older = len(ids) > end - start
            span = Span(start, ids[: end - start], ended=start == 0)
        else:
            older = False
            span = Span(start, ids, ended=len(ids) < stop - start + 1)
        cut = above is not None and not backward and source.newest_first
        ok = span.eligible(below, above, cut)
        more = source.also_loads(got)
        taken = min(len(ok), per_page + source.spare + (margin if eager else 0))
        region = ok[len(ok) - taken :] if backward else ok[:taken]
        candidates = span.at(region)
        # The posts that reposts this process remembers share: loaded with them.
        shared = self._shared_by_known_reposts(candidates) if source.has_reposts else ()
        wanted = list(dict.fromkeys([*more, *candidates, *shared]))
        authored = extras.authors(got) if extras is not None else None
        read = self._posts(wanted, got, guess, viewer, extras, authored)
        if source.has_reposts:
            read = self._with_shared(read, got, viewer)
        by_id = {post.id: post for post in read.posts}
        # Nothing of it for this reader (a blocked profile): no later page, no total.
        none = source.lists_none(read.relations)
        reposts = source.has_reposts
        shown, dups = self._choose(candidates, by_id, read.relations, viewer, shows, reposts, keep)
        rounds = 0
        while fill and not none and len(shown) < per_page and rounds < FILL_ROUNDS:
            size = self._fill_size(per_page - len(shown), taken, len(shown), per_page)
            if len(ok) - taken < size and not span.ended and not span.floored:
                self._read_more(source, span, FILL_GROWTH * per_page, backward)
                ok = span.eligible(below, above, cut)
            size = min(size, len(ok) - taken)
            if size <= 0:
                break
            new = (
                ok[len(ok) - taken - size : len(ok) - taken]
                if backward
                else ok[taken : taken + size]
            )
            taken += size
            read = self._more_posts(
                read, span.at(new), got, guess, viewer, authored, source.has_reposts
            )
            by_id = {post.id: post for post in read.posts}
            region = ok[len(ok) - taken :] if backward else ok[:taken]
            candidates = span.at(region)
            shown, dups = self._choose(
                candidates, by_id, read.relations, viewer, shows, reposts, keep
            )
            rounds += 1
        if memo and (rounds or guess is None or tuple(wanted) != guess):
            # What it loaded, as the next read of it will ask for them (the guess).
            listed = [*more, *candidates]
            if source.has_reposts:
                repost_of = (by_id[i].repost_of for i in candidates if i in by_id)
                listed += [i for i in repost_of if i is not None]
            self.cache.shown.put(memo, tuple(dict.fromkeys(listed)))
        placed = self._placed(
            span, ok, region, shown, dups, per_page, backward=backward, full_stop=taken < len(ok)
        )
        after = end if backward else placed.end
        items = [post for _, post in placed.shown]
        counted: Iterable[Post] = by_id.values()
        if fill and len(items) != taken:  # only those it shows (the rest: the next page's)
            on_page = [*more, *(p.id for p in items), *(p.repost_of for p in items if p.repost_of)]
            counted = [by_id[i] for i in dict.fromkeys(on_page) if i in by_id]
        return PageRead(
            page=Page(
                items=items,
                number=number,
                has_next=(older if backward else placed.more) and not source.spare and not none,
                total=source.total(got) if not none else None,
                per_page=per_page,
                counts=post_counts(counted, read.numbers, read.relations, viewer, shows),
                next_from=after if fill and after != number * per_page else None,
                previous_before=(placed.start if backward else start) if fill else None,
            ),
            loaded=by_id,
            got=got,
            then=read.later,
            authors=authored or {},
            relations=read.relations,
            last_id=placed.last_id,
        )

    @staticmethod
    def _fill_size(need: int, read: int, shown: int, per_page: int) -> int:
        """How many more ids to load for `need` more posts: at the rate at which those
        read so far showed, half as many again (at least need, at most FILL_GROWTH
        pages)."""
        return min(FILL_GROWTH * per_page, max(need, -(-need * read * 3 // (2 * max(shown, 1)))))

    def _read_more(self, source: Source, span: Span, count: int, backward: bool) -> None:
        """Read up to count more ids of source into span, after it (before it, backward):
        one round trip (a home feed's merge: its own)."""
        have = set(span.ids)
        if backward:
            first = max(0, span.first - count)
            ids = self._read_ids(source, first, span.first - 1) if first < span.first else []
            span.ids[:0] = [i for i in ids if i not in have]
            span.first, span.ended = first, first == 0
            return
        start = span.first + len(span.ids)
        ids = self._read_ids(source, start, start + count - 1)
        span.ended = len(ids) < count
        span.ids.extend(i for i in ids if i not in have)

    def _read_ids(self, source: Source, start: int, stop: int) -> list[int]:
        """The source's ids start..stop on a pipeline of their own (with the visibility
        version, which a home feed's merge checks its authors against)."""
        reads = self.reads()
        source.queue(reads, start, stop, self._known())
        reads.get(VERSION, keys.visibility_version())
        return self._ids(source, reads.execute(), start, stop)

    def _more_posts(
        self,
        read: PostsRead,
        ids: list[int],
        got: Got,
        guess: tuple[int, ...] | None,
        viewer: Viewer,
        authors: dict[int, User] | None,
        reposts: bool,
    ) -> PostsRead:
        """read with the posts of ids too (a page that fills): one load, with their counts
        and the reader's likes, reports and reposts of them (the reader's sets are those
        read first; the extras' `then` went with the first load). None when the page
        read as far last time (the guess): the first pipeline read their counts and
        marks, and the process remembers them."""
        loaded_ids = {post.id for post in read.posts}
        shared = self._shared_by_known_reposts(ids) if reposts else ()
        wanted = [i for i in dict.fromkeys([*ids, *shared]) if i not in loaded_ids]
        if not wanted:
            return read
        if guess is not None and set(wanted) <= set(guess):
            known = self.loader.load(wanted, version=self._version(got), authors=authors)
            numbers = known.counts if known.sent else post_counts_from(got, guess)
            merged = self._merged(read, known.posts, numbers, got, list(guess), viewer)
        else:
            loaded = self.loader.load(
                wanted,
                version=self._version(got),
                counts=True,
                also=lambda later: queue_marks(later, wanted, viewer),
                authors=authors,
            )
            merged = self._merged(read, loaded.posts, loaded.counts, loaded.got, wanted, viewer)
        return self._with_shared(merged, got, viewer) if reposts else merged

    def _merged(
        self,
        read: PostsRead,
        posts: list[Post],
        numbers: dict[int, tuple[int, int, int]],
        got: Got,
        ids: list[int],
        viewer: Viewer,
    ) -> PostsRead:
        """read with posts (ids, read with got) added, and the reader's likes, reports
        and reposts of them."""
        return PostsRead(
            [*read.posts, *posts],
            {**read.numbers, **numbers},
            with_marks(read.relations, viewer, got, ids),
            read.later,
            [*read.wanted, *ids],
        )

    @staticmethod
    def _placed(
        span: Span,
        ok: Sequence[int],
        region: Sequence[int],
        shown: list[tuple[int, Post]],
        dups: list[int],
        per_page: int,
        *,
        backward: bool,
        full_stop: bool,
    ) -> Placed:
        """Where the page lies in the list (region: the indexes of the ids it loaded;
        full_stop: it stopped with eligible ids left).

        Forward, it shows the first per_page posts shown and ends after the last of them
        and the loaded ids right after it that are not shown (hidden, or a post it shows
        already: the next page would show it again), or, short, after the last id it
        decided on; more follow unless every id after its end is known to be hidden from
        this reader (a post on this page again is not: the next page shows it).
        Backward, it shows the last per_page and starts after the newer post it leaves
        out (at the list's head when it read up to there)."""
        if backward:
            chosen = shown[-per_page:]
            if len(shown) > per_page:  # from the one after the newer post it leaves out
                start = span.first + region[shown[-per_page - 1][0] + 1]
            elif span.ended and not full_stop:
                start = 0  # it read up to the list's head
            else:
                start = span.first + (region[0] if region else 0)
            return Placed(chosen, start, span.first + len(span.ids), None, False)
        chosen = shown[:per_page]
        if len(shown) >= per_page:  # up to the next post shown: those between are not
            last = region[(shown[per_page][0] if len(shown) > per_page else len(region)) - 1]
        elif full_stop:
            last = region[-1] if region else -1
        elif span.floored:
            last = region[-1] if region else span.floor_at - 1
        else:
            last = len(span.ids) - 1
        more = not span.ended
        if not more and last + 1 < len(span.ids):
            decided = {region[k] for k, _ in shown} | {region[k] for k in dups}
            hidden = set(region) - decided
            more = any(j not in hidden for j in range(last + 1, len(span.ids)))
        last_id = span.ids[last] if last >= 0 else None
        return Placed(chosen, span.first, span.first + last + 1, last_id, more)

    @staticmethod
    def _choose(
        candidates: Sequence[int],
        by_id: dict[int, Post],
        relations: Relations,
        viewer: Viewer,
        shows: ListPolicy,
        reposts: bool,
        keep: Callable[[Post], bool] | None,
    ) -> tuple[list[tuple[int, Post]], list[int]]:
        """The posts of candidates (ids in list order) as viewer sees them, as shows says
        (as relations_of.shown), each with its index among them and with keep's say; and the
        indexes of those left out only for being on the page already (a post shown
        once, at its newest place, however many reposts of it the list holds)."""
        hides_muted, context = shows.hides_muted, shows.drops_in
        staff_sees_hidden = shows.staff_sees_hidden
        seen: set[int] = set()
        shown: list[tuple[int, Post]] = []
        dups: list[int] = []
        for k, post_id in enumerate(candidates):
            post = by_id.get(post_id)
            if post is None:
                continue
            if post.repost_of is None or not reposts:
                if not may_list(
                    viewer, post, relations, staff_sees_hidden=staff_sees_hidden,
                    hides_muted=hides_muted, context=context,
                ) or (keep is not None and not keep(post)):  # fmt: skip
                    continue
                if post_id in seen:
                    dups.append(k)
                    continue
                seen.add(post_id)
                shown.append((k, post))
                continue
            original = by_id.get(post.repost_of)
            if original is None or not may_list_repost(
                viewer, post, original, relations, hides_muted=hides_muted, context=context
            ):
                continue
            item = replace(post, original=original)
            if keep is not None and not keep(item):
                continue
            if original.id in seen:
                dups.append(k)
                continue
            seen.add(original.id)
            shown.append((k, item))
        return shown, dups

    def _first(
        self,
        source: Source,
        viewer: Viewer,
        start: int,
        stop: int,
        guess: tuple[int, ...] | None,
        extras: PageExtras | None,
    ) -> Got:
        """Send the page's first pipeline (when it has anything to read): the source's ids,
        the visibility version, the reader's hash when remembered (checked here), their
        sets and counts for what the page listed last time (the guess), the builder's
        reads, then its writes."""
        check = viewer.check
        reads_sets = viewer.id is not None and viewer.has_relations
        first = extras is not None and extras.reads_first
        if not (source.reads_ids or first or guess is not None or reads_sets or check):
            return Got()
        reads = self.reads()
        if check is not None and viewer.id is not None:  # their hash: checked below
            reads.hgetall(VIEWER, keys.user(viewer.id))
        source.queue(reads, start, stop, self._known())
        # The visibility version, and whose cards changed since (their posts checked again
        # before any loads: cache.py), in one MGET.
        versions = queue_versions(reads, self.cache)
        if guess is not None:  # likely no load to come: the reader's sets come now
            queue_reader_sets(reads, viewer)
            queue_post_counts(reads, guess)
            queue_marks(reads, guess, viewer)
        if extras is not None and first:
            extras.first(reads)
            extras.writes(reads.pipe)
        got = reads.execute()
        got[VERSION.name] = versions.take_in(got, self)
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
        extras: PageExtras | None,
        authors: dict[int, User] | None,
    ) -> PostsRead:
        """Load wanted with the reads that go with them: the reader's sets (unless the
        first pipeline read them), their likes, reports and reposts of the posts, and the
        extras' `then`; when the page lists what it guessed, only what `then` adds."""
        then = extras if extras is not None and extras.reads_then else None
        # Guessed: the first pipeline read the counts and the reader's marks of them all.
        guessed = guess is not None and (tuple(wanted) == guess or set(wanted) <= set(guess))

        def reader_reads(later: NamedReads) -> None:
            if guess is None:  # with the posts, which reach every node the sets might be on
                queue_reader_sets(later, viewer)
            if not guessed:
                queue_marks(later, wanted, viewer)
            if then is not None:
                then.then(later, got, wanted)

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
            assert guess is not None
            numbers = post_counts_from(got, guess)
            relations = reader_relations(viewer, sets, got, guess)
        else:
            numbers = loaded.counts
            relations = reader_relations(viewer, sets, later, wanted)
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
        fresh = self.users.checked_user(check.secret, viewer.id, got[VIEWER])
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
            also=lambda reads: queue_marks(reads, missing, viewer),
        )
        return self._merged(read, loaded.posts, loaded.counts, loaded.got, missing, viewer)
