"""Profile changes: what a post's card shows of its author (display name, avatar) changed,
told to every web process without moving the visibility version.

A change writes the user hash first; then, in a round trip of its own (on a cluster a
pipeline's parts run in no set order, and no process may read the number before the
change), queue_profile_change numbers it: keys.profile_newest, one above the last, and the
author at that number in keys.profile_changes (an account is there once, at its latest
change); and moves the front page's version after it. O(1) for the site whatever its
size: one script on two keys of one slot.

Every page of posts reads the newest number with the visibility version, in one MGET where
a GET read the version alone before (reader.py): no command more a page.
When it differs from the number its process took in last (cache.ProfileLog), the process
reads the authors numbered since (one round trip, once per process for a batch of
changes) and, before it loads any post, has their remembered posts checked again with
their authors' fields (cache.ProcessCache.authors_changed: the next page listing one
spends its load's round trip on it, as after any write it must check); their cards and the
remembered pages that show them, keyed on what they show, are rendered anew. Every other
author's post, card and page stays as remembered, and the visibility version stays where
it is.

What a process cannot account for makes it forget every post, never show an old card: its
first read of a log that holds changes, READ_LIMIT changes or more since its last (the
numbers are consecutive, so it knows without reading them), a number gone back (a database
replaced or restored under it). The log keeps the newest CAP accounts (CAP > READ_LIMIT,
so none a process will read is let go).
"""

from __future__ import annotations

import secrets
from typing import NamedTuple, cast

from social import keys

from ..base import Bulk, NamedReads, Pipe, Replies, Reply, RepositoryBase, Scored, as_int
from ..cache import ProcessCache
from ..read.front import queue_front_change

# Changes a process takes in by name at most; more since its last read and it forgets
# every post (without reading them).
READ_LIMIT = 256
# Accounts the log keeps (the oldest numbers go first). Above READ_LIMIT: a number a
# process reads is never let go (see the module docstring).
CAP = 100_000
# A new log's first number: random below 2**32, so a database replaced under a process
# numbers its changes apart from the old one's (and Lua's numbers stay exact).
START = 2**32

# KEYS: profile_changes, profile_newest; ARGV: user id, the first number (for a new log),
# the cap. Numbers the change one above the newest, the account at it; past the cap the
# oldest go. Returns the number.
CHANGE_SCRIPT = """
local n = tonumber(redis.call('GET', KEYS[2]) or '')
if n then n = n + 1 else n = tonumber(ARGV[2]) end
redis.call('SET', KEYS[2], string.format('%d', n))
redis.call('ZADD', KEYS[1], string.format('%d', n), ARGV[1])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1) end
return n
"""

# The visibility version and the newest profile change: the first pipeline's one MGET.
VERSIONS = Reply[list[Bulk]]("versions")


def queue_profile_change(pipe: Pipe, user_id: int) -> None:
    """Queue numbering a change of what user_id's cards show, and the front page's move
    after it. On a pipeline of its own, sent after the change (see the module docstring)."""
    start = secrets.randbelow(START)
    log, newest = keys.profile_changes(), keys.profile_newest()
    pipe.execute_command("EVAL", CHANGE_SCRIPT, 2, log, newest, user_id, start, CAP)
    queue_front_change(pipe)


class VersionsRead(NamedTuple):
    """One page's read of the versions, and where its process was in the log when it was
    queued (take_in says what the page read). A NamedTuple: one is made a page."""

    started: bool
    low: int | None

    def take_in(self, got: Replies, store: RepositoryBase) -> Bulk:
        """Take in the profile changes since this process's last (see the module
        docstring): a round trip of its own when there are some to read by name. Return
        the visibility version read (None: the database has none)."""
        version, newest = got[VERSIONS]
        number = None if newest is None else as_int(newest)
        if number == self.low and self.started:
            return version  # nothing new
        cache = store.cache
        cache.authors_changed(self._changed(number, store.r, cache))
        return version

    def _changed(self, number: int | None, r, cache: ProcessCache) -> frozenset[int] | None:
        """The authors whose posts to check again (None: forget every post)."""
        log, low = cache.profile_log, self.low
        if not self.started or number is None or (low is not None and number < low):
            # A first read (what changed before it is unknown), or a log gone: forget
            # every post if anything was ever numbered.
            return log.restart(number, self.started)
        if low is not None and number - low >= READ_LIMIT:
            return log.restart(number, self.started)
        floor = "-inf" if low is None else f"({low}"
        found = cast(
            Scored,
            r.zrevrangebyscore(
                keys.profile_changes(), "+inf", floor, start=0, num=READ_LIMIT, withscores=True
            ),
        )
        entries = [(int(member), int(score)) for member, score in found]
        return log.advance(low, number, entries, full=len(entries) >= READ_LIMIT)


def queue_versions(reads: NamedReads, cache: ProcessCache) -> VersionsRead:
    """Queue reading the visibility version and the newest profile change (one MGET); the
    returned object's take_in gives the version, having taken the changes in."""
    # By name: redis-py refuses pipe.mget on a cluster, where these keys share one slot.
    reads.execute_command(VERSIONS, "MGET", keys.visibility_version(), keys.profile_newest())
    log = cache.profile_log
    return VersionsRead(log.started, log.seen)
