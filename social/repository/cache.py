"""What a web process remembers between requests, and the one rule that keeps each right.

Each cache, its size setting, and the one rule that says it is still right:

- posts (RETWIS_POST_CACHE_SIZE): a post as last checked (author, time, text never
  change); used while the visibility version it was checked at is the one the page reads
  with its ids, and checked again when its author's profile changes (below).
- secrets (RETWIS_SECRET_CACHE_SIZE): an `auth` secret's user as last read; never trusted
  alone: the user hash is read on every request and its secret compared, before the page
  (the middleware) or on the page's first pipeline (a page of posts: ViewerCheck), and
  nothing is shown or written for a secret that no longer matches.
- tokens (RETWIS_TOKEN_CACHE_SIZE): a client API token and its user as last read, by the
  token's SHA-256; never trusted alone: the token hash (revoking deletes it) and the user
  hash are read with every call, before it (OAuthStore.authenticate) or on the page's
  first pipeline (a timeline: oauth.token_holds), and nothing is answered for a token
  that no longer holds.
- names (RETWIS_NAME_CACHE_SIZE): a profile URL's name -> user id; used while the user
  hash read with the page still bears exactly that name.
- shown (RETWIS_SHOWN_CACHE_SIZE): the ids a page of posts (source, page, size) listed
  last; a guess, never trusted: their counts ride on the page's first pipeline and are
  used only when the ids read are the same.
- celebrities: the fan-out-on-read authors; while the visibility version read with them
  (a promotion moves it) and the set's size are the same.
- signups: the timeline's newest sign-ups as accounts (ids, suspended or not); while the
  names and the visibility version are the same.
- suggestions, trending, open_reports: people to follow, the day's top tags, the Staff
  link's count; for a fixed time (suggestions.py, trending.py, reports.py).
- blocked_domains: the servers staff block, as the inbox's accept path screens them;
  for a fixed time (federation/domains.py), dropped when this process blocks or unblocks
  one; the inbox's worker asks Redis itself before it applies anything.
- word filters (filters._decoded, 256): a reader's filters decoded, with the regex that
  screens posts, keyed by the filters key's whole reply: never stale (the reply is read
  with every page; only expiry is checked against the clock each time).

The visibility version (keys.visibility_version) moves after every write that hides or
shows posts already listed; RepositoryBase.send is the one place it moves (queue_hiding).
A change of what a card shows of its author (display name, avatar) does not move it: it
is numbered in keys.profile_changes (accounts/profile_changes.py); every page of posts
reads the newest number with the version (one MGET), and a process that finds it moved
past the last it took in (ProfileLog) reads whose cards changed, checks those authors'
posts alone again (RememberedPosts.authors_changed) and forgets the suggestions if they
name them. Cards and remembered pages are keyed on what
they show (the post, with its author's name and avatar), so the author's are rendered
anew and every other stays. Each bounded cache lets its oldest entries go first.
"""

from __future__ import annotations

import enum
import threading
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final, Generic, Literal, TypeAlias, TypeVar

from .models import Post, RememberedToken, User

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A dict that forgets its oldest entries past `size` (first in, first out)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: dict[K, V] = {}
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        return self._data.get(key)

    def put(self, key: K, value: V) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.size:
                self._data.pop(next(iter(self._data)), None)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def discard(self, key: K) -> None:
        self._data.pop(key, None)

    def clear(self) -> None:
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


class _Unread(enum.Enum):
    UNREAD = enum.auto()


# "The caller did not read the visibility version": not a value Redis can return. One
# enum member, so `version is UNREAD` tells the checker what version is otherwise.
UNREAD: Final = _Unread.UNREAD
# A visibility version as a page read it (None: the database has none), or UNREAD.
MaybeVersion: TypeAlias = bytes | None | Literal[_Unread.UNREAD]


@dataclass(frozen=True, slots=True)
class RememberedPost:
    """A post as last checked, the visibility version it was checked at, and the process's
    RememberedPosts.tick when it was read.

    Its author, time, text and author's name never change. Its `deleted` flag and its
    author's suspension can, but only with a move of the visibility version
    (keys.visibility_version): while the version is the same, the post is as remembered.
    What its card shows of the author (display name, avatar) can change too: the process
    then checks the author's posts again (ProfileLog, RememberedPosts.authors_changed).
    """

    post: Post
    version: bytes | None
    read_at: int


# How many authors' changes RememberedPosts keeps in mind for the posts being read
# meanwhile (a post read before the oldest of them is not remembered).
CHANGES_KEPT = 1024


class RememberedPosts(BoundedCache[int, RememberedPost]):
    """The posts cache: a BoundedCache that knows each author's posts, so a change of what
    their cards show reaches them at once (authors_changed), whatever the cache's size: each
    is kept (its written parts need no reading again) but at no version, so the next page
    that lists it checks it with its author's fields on the load's one round trip.

    A load reads a post's author, then remembers the post (loading.py): if, in between,
    another thread of the process took in a change of that author, the post as read may
    be the old one. So each change taken in moves `tick`, a post carries the tick it was
    read at (RememberedPost.read_at), and put() refuses a post whose author changed since.
    """

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self._by_author: dict[int, set[int]] = {}
        self.tick = 0
        # (tick, author changed, or None for every post forgotten), oldest first; and the
        # newest tick of those let go past CHANGES_KEPT.
        self._changes: deque[tuple[int, int | None]] = deque()
        self._let_go = 0

    def put(self, key: int, value: RememberedPost) -> None:
        # On every post a page loads: kept short. A post checked again is indexed already:
        # a post remembered by another author is discarded before it is read again
        # (loading.py's check), and an id left in the set of an author it no longer names
        # is harmless (authors_changed looks at the post each id names now).
        if self.size <= 0:
            return
        author = value.post.author_id
        data = self._data
        with self._lock:
            if value.read_at != self.tick and self._changed_since(value.read_at, author):
                return
            if key in data:  # checked again, so indexed already (see above)
                data[key] = value
                return
            data[key] = value
            ids = self._by_author.get(author)
            if ids is None:
                self._by_author[author] = {key}
            else:
                ids.add(key)
            while len(data) > self.size:
                oldest = next(iter(data))
                self._unindex(oldest, data.pop(oldest))

    def discard(self, key: int) -> None:
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._unindex(key, old)

    def clear(self) -> None:
        self.authors_changed(None)

    def authors_changed(self, authors: Iterable[int] | None) -> None:
        """Have the posts of authors checked again before they are shown (remembered at
        no version: None, which no page reads), and refuse those being read meanwhile
        (put); None: forget every post."""
        with self._lock:
            self.tick += 1
            if authors is None:
                self._data.clear()
                self._by_author.clear()
                self._note(None)
                return
            data = self._data
            for author in authors:
                for key in self._by_author.get(author, ()):
                    known = data.get(key)
                    if known is not None and known.post.author_id == author:
                        data[key] = replace(known, version=None)
                self._note(author)

    def _note(self, author: int | None) -> None:
        """Keep in mind that author changed (None: every post forgotten) at this tick."""
        if len(self._changes) >= CHANGES_KEPT:
            self._let_go = self._changes.popleft()[0]
        self._changes.append((self.tick, author))

    def _changed_since(self, tick: int, author: int) -> bool:
        """Whether author changed (or every post was forgotten) after tick; True when that
        is no longer known (more changes since than CHANGES_KEPT)."""
        if self._let_go > tick:
            return True
        for at, who in reversed(self._changes):
            if at <= tick:
                return False
            if who is None or who == author:
                return True
        return False

    def _unindex(self, key: int, value: RememberedPost) -> None:
        ids = self._by_author.get(value.post.author_id)
        if ids is not None:
            ids.discard(key)
            if not ids:
                del self._by_author[value.post.author_id]


class ProfileLog:
    """Where this process is in the profile log (accounts/profile_changes.py): the number
    of the newest profile change it has taken in (None: the log was empty, or is not read
    yet). Pages read the newest number; restart() and advance() say whose posts to check."""

    def __init__(self) -> None:
        self.started = False  # read once at least
        self.seen: int | None = None
        self._lock = threading.Lock()

    def restart(self, number: int | None, started: bool) -> frozenset[int] | None:
        """Take in the newest number without the changes before it (a first read, a log
        gone back, too many since): return None (every post forgotten), or nothing to
        forget on a first read of a log never written."""
        with self._lock:
            self.started, self.seen = True, number
        return frozenset() if not started and number is None else None

    def advance(
        self, low: int | None, number: int, entries: Sequence[tuple[int, int]], full: bool
    ) -> frozenset[int] | None:
        """Take in the changes a page read above `low`, the number seen when it was queued
        (entries: (author, number), newest first, up to `number` or beyond; full: it read
        as many as it asked for, so more may have been left out), and return their
        authors, whose posts to check again; None for anyone's (every post forgotten)."""
        top = max(number, entries[0][1]) if entries else number
        with self._lock:
            self.started = True
            if self.seen is None or top > self.seen:
                self.seen = top
        if full:
            return None
        return frozenset(author for author, n in entries if low is None or n > low)


class ProcessCache:
    """The caches one web process shares between its requests and threads (the table in
    the module docstring)."""

    def __init__(
        self,
        *,
        posts: int = 20_000,
        secrets: int = 10_000,
        tokens: int = 10_000,
        names: int = 10_000,
        shown: int = 10_000,
    ) -> None:
        self.posts = RememberedPosts(posts)
        self.profile_log = ProfileLog()
        self.secrets: BoundedCache[str, User] = BoundedCache(secrets)
        self.tokens: BoundedCache[str, RememberedToken] = BoundedCache(tokens)
        self.names: BoundedCache[str, int] = BoundedCache(names)
        self.shown: BoundedCache[tuple, tuple[int, ...]] = BoundedCache(shown)
        self.celebrities: tuple[bytes, tuple[int, ...]] | None = None
        self.signups: tuple[tuple, tuple[User, ...]] | None = None
        self.suggestions: tuple[float, tuple[User, ...]] | None = None
        self.trending: tuple[float, tuple[tuple[str, int], ...]] | None = None
        self.open_reports: tuple[float, int] | None = None
        self.blocked_domains: tuple[float, frozenset[str]] | None = None

    def authors_changed(self, authors: frozenset[int] | None) -> None:
        """Take in a change of what authors' cards show (None: anyone's, or unknown whose):
        their posts are checked again, the suggestions forgotten when they name one."""
        if authors is not None and not authors:
            return
        self.posts.authors_changed(authors)
        pool = self.suggestions
        if pool is not None and (authors is None or any(u.id in authors for u in pool[1])):
            self.suggestions = None

    def clear(self) -> None:
        """Forget everything (tests do this whenever they empty the database)."""
        self.posts.clear()
        self.profile_log = ProfileLog()
        self.secrets.clear()
        self.tokens.clear()
        self.names.clear()
        self.shown.clear()
        self.celebrities = None
        self.signups = None
        self.suggestions = None
        self.trending = None
        self.open_reports = None
        self.blocked_domains = None
