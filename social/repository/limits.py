"""Fixed-window rate limits: how many attempts a subject may make in a window."""

from __future__ import annotations

from dataclasses import dataclass

from social import keys

from .base import RepositoryBase


@dataclass(frozen=True)
class Limit:
    """At most `attempts` in `window` seconds."""

    attempts: int
    window: int


LOGIN_PER_IP = Limit(attempts=20, window=15 * 60)
LOGIN_PER_USER = Limit(attempts=10, window=15 * 60)
SIGNUP_PER_IP = Limit(attempts=10, window=60 * 60)


class LimitStore(RepositoryBase):
    """Counters that expire with their window.

    `SET key 0 EX window NX` starts a window only if none is running, then INCR counts (INCR
    keeps the TTL). Works on Redis 6.2, unlike EXPIRE's NX flag (7.0+).
    """

    def is_limited(self, checks: dict[tuple[str, str], Limit]) -> bool:
        """Return whether any (scope, subject) has used up its limit. One round trip."""
        pipe = self._pipe()
        for scope, subject in checks:
            pipe.get(keys.rate_limit(scope, subject))
        used = pipe.execute()
        return any(int(n or 0) >= limit.attempts for n, limit in zip(used, checks.values()))

    def hit(self, checks: dict[tuple[str, str], Limit]) -> None:
        """Count one attempt against every (scope, subject). One round trip."""
        pipe = self._pipe()
        for (scope, subject), limit in checks.items():
            key = keys.rate_limit(scope, subject)
            pipe.set(key, 0, ex=limit.window, nx=True)
            pipe.incr(key)
        pipe.execute()

    def clear(self, scope: str, subject: str) -> None:
        """Forget the attempts of subject (e.g. a username after a successful login)."""
        self.r.delete(keys.rate_limit(scope, subject))
