"""Where a page's post ids come from (the sources of the read path, reader.py): the global
timeline, a user's own posts, a tag, a reader's mentions, a user's likes, a post's replies,
posts named by id, and a home feed with its fan-out-on-read authors merged in; and what a
list shows of them (ListPolicy), passed beside the source.

    repo.reader.page(Timeline(), viewer, number, per_page, shows=PUBLIC)

A source is a frozen dataclass: hashed by its class and fields, it is the key under which
the process remembers what a page of it showed last (cache.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, cast

from social import keys
from social.text import normal_tag

from .base import Members, NamedReads
from .visibility import Relations, lists_none_of

if TYPE_CHECKING:
    from .reader import PageReader


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


@dataclass(frozen=True)
class Source:
    """Where a page's post ids come from: a list (or, `zset`, a sorted set read highest
    score first) at `list_key()`."""

    zset: ClassVar[bool] = False
    reads_ids: ClassVar[bool] = True  # False: the ids are given (Listed)
    # It may list reposts (a reposter's own list, home feeds): each is shown as the post
    # it shares, once a page, and that post is loaded with it.
    has_reposts: ClassVar[bool] = False

    @property
    def remembered(self) -> bool:
        """Whether the process remembers what a page of this source showed last (a frozen
        dataclass: the source itself, hashed by its class and fields, is the key)."""
        return True

    def list_key(self) -> str | None:
        """The Redis key of the ids (None: nothing to read)."""
        raise NotImplementedError

    def queue(self, reads: NamedReads, start: int, stop: int, reader: PageReader) -> None:
        """Queue reading ids start..stop (inclusive) as "ids"."""
        key = self.list_key()
        if key is not None and self.zset:
            reads.zrevrange("ids", key, start, stop)
        elif key is not None:
            reads.lrange("ids", key, start, stop)

    def ids(self, got: dict, start: int, stop: int, reader: PageReader) -> list[int]:
        """Return the ids read (a source may need more round trips: HomeFeed)."""
        return [int(i) for i in got.get("ids") or ()]

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
class OwnPosts(Source):
    """A user's own posts, newest first (hidden ones listed for staff)."""

    user_id: int
    has_reposts: ClassVar[bool] = True

    def list_key(self) -> str:
        return keys.own_posts(self.user_id)

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

    def list_key(self) -> str:
        return keys.user_likes(self.user_id)


@dataclass(frozen=True)
class Replies(Source):
    """A post's direct replies, oldest first."""

    post_id: int

    def list_key(self) -> str:
        return keys.replies(self.post_id)


@dataclass(frozen=True)
class Listed(Source):
    """Posts named by id (the staff's lists): nothing to read for them, nothing
    remembered (the staff's lists are not read often)."""

    post_ids: tuple[int, ...]
    reads_ids: ClassVar[bool] = False

    @property
    def remembered(self) -> bool:
        return False

    def list_key(self) -> None:
        return None

    def ids(self, got: dict, start: int, stop: int, reader: PageReader) -> list[int]:
        return list(self.post_ids[start : stop + 1])


@dataclass(frozen=True)
class HomeFeed(Source):
    """A user's home feed (posts:<id>), with the newest posts of the fan-out-on-read
    authors they follow (keys.celebrities) merged in by id (ids grow with time).

    The set of such authors is remembered with the visibility version read with it (every
    promotion moves the version), so the first pipeline reads only its size and which of
    them the reader follows; merging costs one round trip more, and two more when this
    process does not know the current set yet.
    """

    user_id: int
    has_reposts: ClassVar[bool] = True

    def list_key(self) -> str:
        return keys.home_feed(self.user_id)

    def queue(self, reads: NamedReads, start: int, stop: int, reader: PageReader) -> None:
        super().queue(reads, start, stop, reader)
        reads.zcard("celebrities", keys.celebrities())
        known = reader.cache.celebrities  # the set as this process knows it
        if known and known[1]:
            reads.zmscore("followed", keys.following(self.user_id), list(known[1]))

    def ids(self, got: dict, start: int, stop: int, reader: PageReader) -> list[int]:
        ids = [int(i) for i in got["ids"]]
        if not got["celebrities"]:
            return ids
        followed = self._followed_celebrities(got, reader)
        if not followed:
            return ids
        pipe = reader._pipe()
        for author_id in followed:
            pipe.lrange(keys.own_posts(author_id), 0, stop)
        if start:  # a later page: the merge starts from the feed's head
            pipe.lrange(keys.home_feed(self.user_id), 0, stop)
        lists = pipe.execute()
        head = [int(i) for i in lists.pop()] if start else ids
        merged = set(head)
        for theirs in lists:
            merged.update(int(i) for i in theirs)
        return sorted(merged, reverse=True)[: reader.home_feed_cap][start : stop + 1]

    def _followed_celebrities(self, got: dict, reader: PageReader) -> list[int]:
        """The fan-out-on-read authors the reader follows: from the first pipeline when the
        remembered set is current (same version and size), else read again."""
        known = reader.cache.celebrities
        version = got["version"]
        if (
            known is not None
            and version is not None
            and known[0] == version
            and len(known[1]) == got["celebrities"]
        ):
            scores = got.get("followed") or []
            return [c for c, score in zip(known[1], scores) if score is not None]
        ids = tuple(int(i) for i in cast(Members, reader.r.zrange(keys.celebrities(), 0, -1)))
        if version is not None:
            reader.cache.celebrities = (version, ids)
        if not ids:
            return []
        scores = reader.r.zmscore(keys.following(self.user_id), [str(i) for i in ids])
        return [c for c, score in zip(ids, scores) if score is not None]
