"""Fixed-window rate limits: how many attempts a subject may make in a window.

Counting is increment-first: an attempt INCRs its counters and goes ahead only if none went
past its limit, so of any number of simultaneous attempts at most `attempts` get through (a
read-then-count lets every simultaneous attempt read "under the limit"). Each counter is
one key, so this holds on a Redis Cluster too: no command spans two keys.

Which limits exist and who counts what against them: social/auth.py; their sizes are
settings (RETWIS_LIMIT_*); the keys: keys.rate_limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.translation import ngettext

from social import keys

from ..base import RepositoryBase


@dataclass(frozen=True)
class Limit:
    """At most `attempts` in `window` seconds, counted under `scope` (the key's name)."""

    scope: str
    attempts: int
    window: int


# What an attempt counts against: a limit and its subject (an address, a user id...).
Check = tuple[Limit, str]


@dataclass(frozen=True)
class Verdict:
    """Whether an attempt may go ahead; if not, the seconds until it may be tried again."""

    allowed: bool
    retry_after: int = 0
    # For an allowed attempt: the attempts left under the tightest of its limits, and the
    # seconds until that limit's window ends (the client API's X-RateLimit-* headers).
    limit: int = 0
    remaining: int = 0
    reset_after: int = 0


class RateLimited(Exception):
    """An action refused by a rate limit: the site answers 429 with Retry-After."""

    def __init__(self, message: str, retry_after: int, *, limit: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after
        self.limit = limit  # the attempts the window allows (X-RateLimit-Limit), if known


# KEYS[1]: a counter. Take one attempt back if its window is still running. A plain DECR
# on a counter whose window just ended would create it again at -1 with no TTL: a key that
# never expires and an extra attempt for ever.
GIVE_BACK = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return 0
"""


class LimitStore(RepositoryBase):
    """Counters that expire with their window.

    `SET key 0 EX window NX` starts a window only if none is running, then INCR counts (INCR
    keeps the TTL). Works on Redis 6.2, unlike EXPIRE's NX flag (7.0+).
    """

    def hit(self, checks: Sequence[Check]) -> Verdict:
        """Count one attempt against every check; return whether it may go ahead.

        One round trip. A refused attempt is given back to every limit (a second round trip):
        it did not happen, so it uses up nothing (being refused by one limit never uses up
        another), and once no attempt is in flight a counter holds exactly the attempts that
        went ahead. Giving back keeps the guarantee: an attempt goes ahead only if its INCR
        saw at most `attempts`, a count that includes every attempt that went ahead before.
        """
        pipe = self._pipe()
        for limit, subject in checks:
            key = keys.rate_limit(limit.scope, subject)
            pipe.set(key, 0, ex=limit.window, nx=True)
            pipe.incr(key)
            pipe.ttl(key)
        replies = pipe.execute()
        counts, ttls = replies[1::3], replies[2::3]
        over = [int(n) > limit.attempts for n, (limit, _) in zip(counts, checks)]
        if not any(over):
            left, most, reset = min(
                (limit.attempts - int(n), limit.attempts, ttl if ttl > 0 else limit.window)
                for n, (limit, _), ttl in zip(counts, checks, ttls)
            )
            return Verdict(allowed=True, limit=most, remaining=left, reset_after=reset)
        self.give_back(checks)
        waits = [
            ttl if ttl > 0 else limit.window
            for ttl, (limit, _), refused in zip(ttls, checks, over)
            if refused
        ]
        return Verdict(allowed=False, retry_after=max(waits))

    def enforce(self, checks: Sequence[Check], message: str) -> Verdict:
        """Count one attempt against every check; raise RateLimited(message) if refused,
        else return the verdict (what is left of the limits)."""
        verdict = self.hit(checks)
        if not verdict.allowed:
            raise RateLimited(
                message, verdict.retry_after, limit=max(c[0].attempts for c in checks)
            )
        return verdict

    def waiting(self, checks: Sequence[Check]) -> int:
        """Return the seconds until every check allows one more attempt (0: now), counting
        nothing: a look before work worth skipping (a body not yet parsed). One round trip."""
        pipe = self._pipe()
        for limit, subject in checks:
            key = keys.rate_limit(limit.scope, subject)
            pipe.get(key)
            pipe.ttl(key)
        replies = pipe.execute()
        waits = [
            ttl if ttl > 0 else limit.window
            for (limit, _), count, ttl in zip(checks, replies[0::2], replies[1::2])
            if count is not None and int(count) >= limit.attempts
        ]
        return max(waits, default=0)

    def give_back(self, checks: Sequence[Check], *, forget: Sequence[Check] = ()) -> None:
        """Take back one attempt from each of checks (it turned out not to count), and forget
        every attempt of each of forget (a successful login clears its failures).

        One round trip; a counter whose window has ended stays gone. One key per command,
        so a Redis Cluster routes each on its own.
        """
        pipe = self._pipe()
        for limit, subject in checks:
            # A raw EVAL: a cluster pipeline refuses eval(), and routes this by its one key.
            pipe.execute_command("EVAL", GIVE_BACK, 1, keys.rate_limit(limit.scope, subject))
        for limit, subject in forget:
            pipe.delete(keys.rate_limit(limit.scope, subject))
        if len(pipe):
            pipe.execute()


def wait_phrase(seconds: int) -> str:
    """Return how a person reads a wait: "40 seconds", "3 minutes", "2 hours" (rounded up),
    in the active language."""
    if seconds < 60:
        count = max(1, seconds)
        return ngettext("%(num)d second", "%(num)d seconds", count) % {"num": count}
    if seconds < 2 * 3600:
        count = -(-seconds // 60)
        return ngettext("%(num)d minute", "%(num)d minutes", count) % {"num": count}
    count = -(-seconds // 3600)
    return ngettext("%(num)d hour", "%(num)d hours", count) % {"num": count}
