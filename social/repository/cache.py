"""What a web process remembers between requests: only facts that never change.

A post's author, time and text never change once written (deletion is a separate flag), and
an `auth` secret maps to one user id for as long as it is valid. Keeping those in memory
turns the per-post HGETALL plus the authors' pipeline of a feed page into one pipeline of
small HMGETs, and saves the `auths` look-up on every logged-in request.

Nothing here is trusted on its own. Every read still asks Redis for what can change (a
post's `deleted` flag, its author's status and name, the user hash's current secret) and
checks the remembered facts against it, so a remembered entry that no longer matches (the
database was replaced, a secret rotated) is dropped and read again. Each cache is bounded:
the oldest entries are let go first.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Generic, TypeVar

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


@dataclass(frozen=True, slots=True)
class KnownPost:
    """The parts of a post that never change, and its author's name (never changes either)."""

    author_id: int
    time: int
    body: str
    author_name: str


class ProcessCache:
    """The caches one web process shares between its requests and threads."""

    def __init__(self, *, posts: int = 20_000, secrets: int = 10_000) -> None:
        self.posts: BoundedCache[int, KnownPost] = BoundedCache(posts)
        self.secrets: BoundedCache[str, int] = BoundedCache(secrets)

    def clear(self) -> None:
        """Forget everything (tests do this whenever they empty the database)."""
        self.posts.clear()
        self.secrets.clear()
