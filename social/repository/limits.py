"""Fixed-window rate limits: how many attempts a subject may make in a window."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from social import keys

from .base import RepositoryBase


@dataclass(frozen=True)
class Limit:
    """At most `attempts` in `window` seconds, counted under `scope` (the key's name)."""

    scope: str
    attempts: int
    window: int


# Every limit, named once: its scope is part of keys.rate_limit's key.
LOGIN_PER_IP = Limit("login_ip", attempts=20, window=15 * 60)
LOGIN_PER_USER = Limit("login_user", attempts=10, window=15 * 60)
SIGNUP_PER_IP = Limit("signup_ip", attempts=10, window=60 * 60)

# What an attempt counts against: a limit and its subject (an IP, a lower-cased name).
Check = tuple[Limit, str]


class LimitStore(RepositoryBase):
    """Counters that expire with their window.

    `SET key 0 EX window NX` starts a window only if none is running, then INCR counts (INCR
    keeps the TTL). Works on Redis 6.2, unlike EXPIRE's NX flag (7.0+).
    """

    def over_limit(self, checks: Sequence[Check]) -> bool:
        """Return whether any check's subject has used up its limit. One round trip."""
        pipe = self._pipe()
        for limit, subject in checks:
            pipe.get(keys.rate_limit(limit.scope, subject))
        used = pipe.execute()
        return any(int(n or 0) >= limit.attempts for n, (limit, _) in zip(used, checks))

    def count_attempt(self, checks: Sequence[Check]) -> None:
        """Count one attempt against every check. One round trip."""
        pipe = self._pipe()
        for limit, subject in checks:
            key = keys.rate_limit(limit.scope, subject)
            pipe.set(key, 0, ex=limit.window, nx=True)
            pipe.incr(key)
        pipe.execute()

    def forget_attempts(self, limit: Limit, subject: str) -> None:
        """Forget subject's attempts against limit (a username after a successful login)."""
        self.r.delete(keys.rate_limit(limit.scope, subject))
