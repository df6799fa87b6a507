"""What a web process remembers between requests, and the one rule that keeps each right.

Each cache, its size setting, and the one rule that says it is still right:

- posts (RETWIS_POST_CACHE_SIZE): a post as last checked (author, time, text never
  change); used while the visibility version it was checked at is the one the page reads
  with its ids.
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
- word filters (filters._decoded, 256): a reader's filters decoded, with the regex that
  screens posts, keyed by the filters key's whole reply: never stale (the reply is read
  with every page; only expiry is checked against the clock each time).

The visibility version (keys.visibility_version) moves after every write that hides or
shows posts already listed; RepositoryBase.send is the one place it moves (queue_hiding).
Each bounded cache lets its oldest entries go first.
"""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass
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
    """A post as last checked, and the visibility version it was checked at.

    Its author, time, text and author's name never change. Its `deleted` flag, its
    author's suspension and what its card shows of the author (display name, avatar:
    profiles.py) can, but only with a move of the visibility version
    (keys.visibility_version): while the version is the same, the post is as remembered.
    """

    post: Post
    version: bytes | None


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
        self.posts: BoundedCache[int, RememberedPost] = BoundedCache(posts)
        self.secrets: BoundedCache[str, User] = BoundedCache(secrets)
        self.tokens: BoundedCache[str, RememberedToken] = BoundedCache(tokens)
        self.names: BoundedCache[str, int] = BoundedCache(names)
        self.shown: BoundedCache[tuple, tuple[int, ...]] = BoundedCache(shown)
        self.celebrities: tuple[bytes, tuple[int, ...]] | None = None
        self.signups: tuple[tuple, tuple[User, ...]] | None = None
        self.suggestions: tuple[float, tuple[User, ...]] | None = None
        self.trending: tuple[float, tuple[tuple[str, int], ...]] | None = None
        self.open_reports: tuple[float, int] | None = None

    def clear(self) -> None:
        """Forget everything (tests do this whenever they empty the database)."""
        self.posts.clear()
        self.secrets.clear()
        self.tokens.clear()
        self.names.clear()
        self.shown.clear()
        self.celebrities = None
        self.signups = None
        self.suggestions = None
        self.trending = None
        self.open_reports = None
