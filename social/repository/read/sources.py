"""Where a page's post ids come from (the sources of the read path, reader.py): the global
timeline, a user's own posts, a tag, a reader's mentions, a user's likes, a post's replies,
posts named by id, and a home feed with its fan-out-on-read authors merged in; and what a
list shows of them (ListPolicy), passed beside the source.

    repo.reader.page(Timeline(), viewer, number, per_page, shows=PUBLIC)

A source is a frozen dataclass: hashed by its class and fields, it is the key under which
the process remembers what a page of it showed last (cache.py). What a page of it reads
beyond its ids is the source's too: a conversation's post and those above it (Thread),
an owner's counts and the list's length for the pager (OwnPosts' with_counts), ids read
past a short list's one page to fill in for hidden posts (Source.spare: Latest, Listed).
Every read is named by a typed handle (base.Reply).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import ClassVar, TypeVar

from social import keys
from social.text import normal_tag

from ..base import (
    POST_COUNT,
    Bulk,
    Members,
    NamedReads,
    Pipe,
    Reply,
    Scores,
    as_int,
    queue_counts,
    s,
)
from ..base import Replies as Got  # (Replies below is a source)
from ..models import User
from .visibility import Relations, lists_none_of

T = TypeVar("T")
# Reads that need more round trips than the page's first pipeline: a generator that yields
# what to queue on each next pipeline and is sent its replies; it returns what it found.
# The reader sends them (PageReader.run): a source never holds a pipeline of its own.
Steps = Generator[Callable[[NamedReads], object], Got, T]
BISECT_STEPS = 64
# The fan-out-on-read authors (keys.celebrities) as this process knows them: the
# visibility version read with them (every promotion moves it) and their ids.
Celebrities = tuple[bytes, tuple[int, ...]]

# What a source reads, by the shape of each reply. The ids and the visibility version are
# read on every page's first pipeline (the version by the reader: PageReader._first).
IDS = Reply[Members]("ids")
VERSION = Reply[Bulk]("version")
ANCESTORS = Reply[Bulk]("ancestors")  # a post's `ancestors` field (Thread)
# A home feed's fan-out-on-read authors: how many there are, all of them, which of them
# the reader follows; and, when merging, the feed's head.
CELEBRITIES = Reply[int]("celebrities")
ALL_CELEBRITIES = Reply[Members]("all")
FOLLOWED = Reply[Scores]("followed")
HEAD = Reply[Members]("head")
# Where a post is in a list (Source.position): its rank in a sorted set, its index in a
# list and the list's length, an entry probed while bisecting.
RANK = Reply[int | None]("rank")
FOUND_AT = Reply[int | None]("at")
LENGTH = Reply[int]("n")
PROBE = Reply[Bulk]("probe")


def own_list(author_id: int) -> Reply[Members]:
    """The handle of an author's own posts, read for a home feed's merge."""
    return Reply(f"own:{author_id}")


@dataclass(frozen=True)
class Known:
    """What the process knows that a source may use (the reader passes it in)."""

    celebrities: Celebrities | None = None
    home_feed_cap: int = 1000


@dataclass(frozen=True)
class Listing:
    """The ids a source read, and what it learned for the process to remember."""

    ids: list[int]
    celebrities: Celebrities | None = None


@dataclass(frozen=True)
class ListPolicy:
    """What a list shows of the posts its source holds (visibility.may_list decides each)."""

    # Where the reader's word filters act on it (keys.FILTER_CONTEXTS; "": none of them).
    context: str = ""
    hides_muted: bool = False  # the reader's muted accounts leave it
    folds_muted: bool = False  # ... or are shown folded (a conversation)
    staff_sees_hidden: bool = False  # hidden posts are listed for staff

    @property
    def drops_in(self) -> str:
        """The context in which the reader's hiding filters leave posts out: none in a
        conversation, where every filter folds (visibility.folded)."""
        return "" if self.folds_muted else self.context


HOME = ListPolicy("home", hides_muted=True)
PUBLIC = ListPolicy("public", hides_muted=True)  # the timeline, a tag
PROFILE = ListPolicy("account", staff_sees_hidden=True)
MENTIONS = ListPolicy("notifications", hides_muted=True)
CONVERSATION = ListPolicy("thread", folds_muted=True)
PLAIN = ListPolicy()  # a user's likes
# Posts named by id (a permalink, notifications, API statuses) and the staff's lists.
WITH_HIDDEN = ListPolicy(staff_sees_hidden=True)


class PageExtras:
    """What a page builder reads beside its posts, on the read path's own pipelines (no
    round trip of its own), passed beside the source: a subclass (a plain dataclass, made
    once a page) overrides what it needs and names each read by a typed handle (base.Reply).

        repo.reader.page(Liked(uid), viewer, shows=PLAIN, extras=OwnerReads(uid))
    """

    # Whether the subclass overrides first() or writes(), and then(): a page of posts named
    # by id (Listed) sends no first pipeline without them, and a page that needs no load
    # costs one round trip warm without a then().
    reads_first: ClassVar[bool] = False
    reads_then: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        base = PageExtras
        cls.reads_first = cls.first is not base.first or cls.writes is not base.writes
        cls.reads_then = cls.then is not base.then

    def first(self, reads: NamedReads) -> None:
        """Queue reads on the page's first pipeline, with the ids (PageRead.got)."""

    def then(self, reads: NamedReads, got: Got, ids: Sequence[int]) -> None:
        """Queue reads that depend on the first pipeline's replies (got) or on the ids of
        the posts loaded, on the posts' pipeline, sent alone when the posts need none;
        not again on a filling page's further loads (PageRead.then)."""

    def authors(self, got: Got) -> dict[int, User]:
        """Authors the first pipeline read (a profile's owner), so that its new posts
        need no round trip for them."""
        return {}

    def writes(self, pipe: Pipe) -> None:
        """Queue the page's writes, sent on its first pipeline after its reads (reading
        the mentions page marks them read): the only writes a page's reads carry, their
        replies unread."""


@dataclass(frozen=True)
class Source:
    """Where a page's post ids come from: a list (or, `zset`, a sorted set read highest
    score first) at `list_key()`."""

    zset: ClassVar[bool] = False
    reads_ids: ClassVar[bool] = True  # False: the ids are given (Listed)
    # It may list reposts (a reposter's own list, home feeds): each is shown as the post
    # it shares, once a page, and that post is loaded with it.
    has_reposts: ClassVar[bool] = False
    # Its newest ids come first, in order (new posts get higher ids): the API's id cursors
    # bound it (reader.py's below and above). Not a user's likes (by when liked), a post's
    # replies (oldest first), posts named by id.
    newest_first: ClassVar[bool] = True

    @property
    def spare(self) -> int:
        """A short list read as one page (the welcome page's few posts, a search's): so
        many ids more are read past the page and loaded with it, to fill in for hidden
        posts, and no page follows it (0: a list of pages)."""
        return 0

    @property
    def remembered(self) -> bool:
        """Whether the process remembers what a page of this source showed last (a frozen
        dataclass: the source itself, hashed by its class and fields, is the key)."""
        return True

    def list_key(self) -> str | None:
        """The Redis key of the ids (None: nothing to read)."""
        raise NotImplementedError

    def queue(self, reads: NamedReads, start: int, stop: int, known: Known) -> None:
        """Queue reading ids start..stop (inclusive) as IDS, on the page's first pipeline."""
        key = self.list_key()
        if key is not None and self.zset:
            reads.zrevrange(IDS, key, start, stop)
        elif key is not None:
            reads.lrange(IDS, key, start, stop)

    def ids(self, got: Got, start: int, stop: int, known: Known) -> Steps[Listing]:
        """The ids read. A source that needs more round trips (HomeFeed) yields the reads
        of each, and the reader sends them (PageReader.run); this one needs none."""
        return Listing([int(i) for i in got[IDS]] if IDS in got else [])
        yield  # a generator: one that yields nothing

    def also_loads(self, got: Got) -> list[int]:
        """The ids of posts loaded with the page's but not listed (PageRead.loaded), from
        what the first pipeline read: none but for a conversation's (Thread)."""
        return []

    def total(self, got: Got) -> int | None:
        """The list's length for the pager, when the first pipeline read it (None: not)."""
        return None

    def position(self, post_id: int) -> Steps[tuple[int, bool] | None]:
        """Where post_id is in the list (its index, True), or would be (the number of ids
        newer than it, False), or None when that cannot be known (a sorted set that no
        longer holds it, a source with no list): the API's cursors (paging.py). One round
        trip when it is there (LPOS, ZREVRANK); else at most BISECT_STEPS probes of a list
        ordered newest (highest id) first."""
        key = self.list_key()
        if key is None:
            return None
        if self.zset:
            got = yield lambda reads: reads.zrevrank(RANK, key, post_id)
            rank = got[RANK]
            return None if rank is None else (int(rank), True)
        got = yield lambda reads: (reads.lpos(FOUND_AT, key, str(post_id)), reads.llen(LENGTH, key))
        found = got[FOUND_AT]
        if found is not None:
            return int(found), True

        def lindex(reads: NamedReads, at: int) -> None:
            reads.lindex(PROBE, key, at)

        low, high = 0, got[LENGTH]
        for _ in range(BISECT_STEPS):
            if low >= high:
                break
            middle = (low + high) // 2
            got = yield partial(lindex, at=middle)
            value = as_int(got[PROBE])
            if value is not None and value > post_id:
                low = middle + 1
            else:
                high = middle
        return low, False

    def lists_none(self, relations: Relations) -> bool:
        """Whether the reader with these relations may see nothing of it, whatever its
        ids (visibility.py says): then a page of it is empty and last."""
        return False


@dataclass(frozen=True)
class Timeline(Source):
    """The global timeline, newest first."""

    def list_key(self) -> str:
        return keys.timeline()


@dataclass(frozen=True)
class Latest(Timeline):
    """The global timeline's newest posts as one short page (the welcome page's), `spare`
    more read to fill in for hidden ones (Source.spare)."""

    spare: int = 5


@dataclass(frozen=True)
class OwnPosts(Source):
    """A user's own posts, newest first (hidden ones listed for staff). with_counts: read
    with the ids, the user's counts (base.queue_counts: a profile shows them), whose
    number of posts is the list's length (the pager's total)."""

    user_id: int
    with_counts: bool = False
    has_reposts: ClassVar[bool] = True

    def list_key(self) -> str:
        return keys.own_posts(self.user_id)

    def queue(self, reads: NamedReads, start: int, stop: int, known: Known) -> None:
        super().queue(reads, start, stop, known)
        if self.with_counts:
            queue_counts(reads, self.user_id)

    def total(self, got: Got) -> int | None:
        return got[POST_COUNT] if self.with_counts else None

    def lists_none(self, relations: Relations) -> bool:
        return lists_none_of(self.user_id, relations)


@dataclass(frozen=True)
class TagPosts(Source):
    """The newest posts filed under a tag (normalised here; a tag that normalises to
    nothing lists nothing)."""

    tag: str

    def list_key(self) -> str | None:
        normal = normal_tag(self.tag)
        return keys.tag_posts(normal) if normal else None


@dataclass(frozen=True)
class Mentions(Source):
    """The posts that mention a user, newest first."""

    user_id: int
    zset: ClassVar[bool] = True

    def list_key(self) -> str:
        return keys.mentions(self.user_id)


@dataclass(frozen=True)
class Liked(Source):
    """The posts a user likes, most recently liked first."""

    user_id: int
    zset: ClassVar[bool] = True
    newest_first: ClassVar[bool] = False

    def list_key(self) -> str:
        return keys.user_likes(self.user_id)


@dataclass(frozen=True)
class Replies(Source):
    """A post's direct replies, oldest first."""

    post_id: int
    newest_first: ClassVar[bool] = False

    def list_key(self) -> str:
        return keys.replies(self.post_id)


@dataclass(frozen=True)
class Thread(Replies):
    """A post's conversation: its direct replies (oldest first), and the post and those
    above it (its `ancestors` field, read with the ids) loaded with them, not listed."""

    def queue(self, reads: NamedReads, start: int, stop: int, known: Known) -> None:
        super().queue(reads, start, stop, known)
        reads.hget(ANCESTORS, keys.post(self.post_id), "ancestors")

    def above(self, got: Got) -> list[int]:
        """The ids of the posts above the post, oldest first (up to the bound kept when it
        was written)."""
        return [int(i) for i in (s(got[ANCESTORS]) or "").split() if i.isdigit()]

    def also_loads(self, got: Got) -> list[int]:
        return [*self.above(got), self.post_id]


@dataclass(frozen=True)
class Listed(Source):
    """Posts named by id (the staff's lists): nothing to read for them, nothing
    remembered (the staff's lists are not read often)."""

    post_ids: tuple[int, ...]
    spare: int = 0  # (Source.spare: a search's results)
    reads_ids: ClassVar[bool] = False
    newest_first: ClassVar[bool] = False

    @property
    def remembered(self) -> bool:
        return False

    def list_key(self) -> None:
        return None

    def ids(self, got: Got, start: int, stop: int, known: Known) -> Steps[Listing]:
        return Listing(list(self.post_ids[start : stop + 1]))
        yield


@dataclass(frozen=True)
class HomeFeed(Source):
    """A user's home feed (posts:<id>), with the newest posts of the fan-out-on-read
    authors they follow (keys.celebrities) merged in by id (ids grow with time).

    The set of such authors is remembered with the visibility version read with it (every
    promotion moves the version), so the first pipeline reads only its size and which of
    them the reader follows; merging costs one round trip more, and two more when this
    process does not know the current set yet (it returns the set it read, to remember).
    """

    user_id: int
    has_reposts: ClassVar[bool] = True

    def list_key(self) -> str:
        return keys.home_feed(self.user_id)

    def queue(self, reads: NamedReads, start: int, stop: int, known: Known) -> None:
        super().queue(reads, start, stop, known)
        reads.zcard(CELEBRITIES, keys.celebrities())
        if known.celebrities and known.celebrities[1]:
            reads.zmscore(FOLLOWED, keys.following(self.user_id), list(known.celebrities[1]))

    def ids(self, got: Got, start: int, stop: int, known: Known) -> Steps[Listing]:
        ids = [int(i) for i in got[IDS]]
        if not got[CELEBRITIES]:
            return Listing(ids)
        version = got[VERSION]
        known_set = known.celebrities
        learned = None
        if (
            known_set is not None
            and version is not None
            and known_set[0] == version
            and len(known_set[1]) == got[CELEBRITIES]
        ):  # the set this process remembers is current: which of them was read with the ids
            authors = known_set[1]
            scores = got.scores_if_read(FOLLOWED, len(authors))
        else:
            read = yield lambda reads: reads.zrange(ALL_CELEBRITIES, keys.celebrities(), 0, -1)
            authors = tuple(int(i) for i in read[ALL_CELEBRITIES])
            learned = (version, authors) if version is not None else None
            if not authors:
                return Listing(ids, learned)
            read = yield lambda reads: reads.zmscore(
                FOLLOWED, keys.following(self.user_id), list(authors)
            )
            scores = read[FOLLOWED]
        followed = [c for c, score in zip(authors, scores) if score is not None]
        if not followed:
            return Listing(ids, learned)

        def lists(reads: NamedReads) -> None:
            for author_id in followed:
                reads.lrange(own_list(author_id), keys.own_posts(author_id), 0, stop)
            if start:  # a later page: the merge starts from the feed's head
                reads.lrange(HEAD, keys.home_feed(self.user_id), 0, stop)

        read = yield lists
        merged = set(int(i) for i in read[HEAD]) if start else set(ids)
        for author_id in followed:
            merged.update(int(i) for i in read[own_list(author_id)])
        top = sorted(merged, reverse=True)[: known.home_feed_cap]
        return Listing(top[start : stop + 1], learned)
