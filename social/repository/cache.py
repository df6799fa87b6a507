"""What a web process remembers between requests, and how it knows it is still right.

A post's author, time and text never change once written, nor does its author's name; an
`auth` secret maps to one user id for as long as it is valid. What can change about a post
already listed (its `deleted` flag, its author's suspension) only changes together with
the visibility version (keys.visibility_version), which every suspension, unsuspension and
deletion moves after its write. So:

- posts are remembered with the version they were checked at; a page that reads the
  version with its ids (one command in a pipeline it sends anyway) needs no further round
  trip while it has not moved, and re-checks what it shows when it has (cache.py's users:
  PostStore.load_posts). A re-check also compares the remembered author and time, so a
  database replaced under a running process is noticed and read afresh;
- a secret is remembered with its user id, and the user hash is still read on every
  request and its current secret compared (the truth), so a rotated secret fails at once;
- a profile URL's name is remembered with the user id it led to, and used only when the
  user hash read with the page still bears exactly that name (otherwise looked up again);
- the set of fan-out-on-read authors (keys.celebrities) is remembered with the version
  read with it; a promotion moves the version, so a home page re-reads the set then;
- pages everyone sees alike (the timeline, the welcome page's posts) are remembered with
  the ids and names they show and the version: same fingerprint, same page.

Each cache is bounded: the oldest entries are let go first.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Generic, TypeVar

from .models import Post

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


# "The caller did not read the visibility version": not a value Redis can return.
UNREAD = object()


@dataclass(frozen=True, slots=True)
class RememberedPost:
    """A post as last checked, and the visibility version it was checked at.

    Its author, time, text and author's name never change. Its `deleted` flag and its
    author's suspension can, but only with a move of the visibility version
    (keys.visibility_version): while the version is the same, the post is as remembered.
    """

    post: Post
    version: bytes | None


class ProcessCache:
    """The caches one web process shares between its requests and threads."""

    def __init__(
        self, *, posts: int = 20_000, secrets: int = 10_000, names: int = 10_000, pages: int = 64
    ) -> None:
        self.posts: BoundedCache[int, RememberedPost] = BoundedCache(posts)
        self.secrets: BoundedCache[str, int] = BoundedCache(secrets)
        # A profile URL's name -> the id whose user hash bore exactly that name when read.
        self.names: BoundedCache[str, int] = BoundedCache(names)
        # Pages everyone sees alike (the timeline, the welcome page's latest posts), each
        # with the fingerprint of what it was built from: the ids listed and the
        # visibility version (keys.visibility_version). Same fingerprint, same page.
        self.pages: BoundedCache[tuple, tuple[tuple, object]] = BoundedCache(pages)
        # The ids of the posts a reader's home page (by reader, page, size) last showed:
        # the page's next request reads their counts with its ids (PostStore.guess_counts).
        self.shown: BoundedCache[tuple, tuple[int, ...]] = BoundedCache(secrets)
        # The fan-out-on-read authors (keys.celebrities) and the visibility version they
        # were read at: every promotion moves the version, so a page that reads it with
        # its feed knows whether this list is still the whole set.
        self.celebrities: tuple[bytes, tuple[int, ...]] | None = None
        # The timeline's trending tags and when they were summed (ConversationStore.
        # trending): kept a minute, then summed again.
        self.trending: tuple[float, list[tuple[str, int]]] | None = None
        # How many reports are open and when this process read it (time.monotonic()):
        # the Staff link's count, kept up to 30 s (ReportStore.open_count).
        self.open_reports: tuple[float, int] | None = None

    def page(self, key: tuple, fingerprint: tuple) -> object | None:
        """Return the page remembered under key if it was built from fingerprint."""
        found = self.pages.get(key)
        if found is not None and found[0] == fingerprint:
            return found[1]
        return None

    def remember_page(self, key: tuple, fingerprint: tuple, page: object) -> None:
        self.pages.put(key, (fingerprint, page))

    def clear(self) -> None:
        """Forget everything (tests do this whenever they empty the database)."""
        self.posts.clear()
        self.secrets.clear()
        self.names.clear()
        self.pages.clear()
        self.shown.clear()
        self.celebrities = None
        self.trending = None
        self.open_reports = None
