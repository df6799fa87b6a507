"""Profile changes: what a post's card shows of its author (display name, avatar) changed,
told to every web process without moving the visibility version.

A change writes the user hash first; then, in a round trip of its own (on a cluster a
pipeline's parts run in no set order, and no process may read the number before the
change), queue_profile_change numbers it in keys.profile_changes (the author at one above
the newest number: an account is there once, at its latest change) and moves the front
page's version after it. O(1) for the site whatever its size: one script on one key.

Every page of posts reads the log on its first pipeline (reader.py), from the newest
number its process has taken in (cache.ProfileLog): one command, and with nothing new one
entry back. Before it loads any post, the process has those authors' remembered posts
checked again with their authors' fields (cache.ProcessCache.authors_changed: the next
page listing one spends its load's round trip on it, as after any write it must check);
their cards and the remembered pages that show them, keyed on what they show, are
rendered anew. Every other author's post, card and page stays as remembered, and the
visibility version stays where it is.

What a process cannot account for makes it forget every post, never show an old card: its
first read of a log that holds changes, more changes at once than a page reads
(READ_LIMIT), a log that went back (a database replaced under it). The log keeps the
newest CAP accounts; a process that fell further behind than that reads READ_LIMIT
entries, so forgets everything too.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import cast

from social import keys

from ..base import NamedReads, Pipe, Replies, Reply, Scored
from ..cache import ProcessCache
from ..read.front import queue_front_change

# Entries a page reads at most; more new ones than that and the process forgets every post.
READ_LIMIT = 256
# Accounts the log keeps (its oldest numbers go first); above READ_LIMIT, so a process that
# fell behind past what was let go reads a full page of entries (see the module docstring).
CAP = 100_000
# A new log's first number: random below 2**32, so a database replaced under a process
# numbers its changes apart from the old one's (and Lua's numbers stay exact).
START = 2**32

# KEYS: profile_changes; ARGV: user id, the first number (for an empty log), the cap.
# Numbers the change one above the newest, the account at it; past the cap the oldest go.
# Returns the number.
CHANGE_SCRIPT = """
local top = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local n = tonumber(ARGV[2])
if top[2] then n = tonumber(top[2]) + 1 end
redis.call('ZADD', KEYS[1], n, ARGV[1])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1) end
return n
"""

CHANGES = Reply[Scored]("profile_changes")


def queue_profile_change(pipe: Pipe, user_id: int) -> None:
    """Queue numbering a change of what user_id's cards show, and the front page's move
    after it. On a pipeline of its own, sent after the change (see the module docstring)."""
    start = secrets.randbelow(START)
    pipe.execute_command("EVAL", CHANGE_SCRIPT, 1, keys.profile_changes(), user_id, start, CAP)
    queue_front_change(pipe)


@dataclass(frozen=True, slots=True)
class ProfileChangesRead:
    """One page's read of the log: where its process was when it was queued."""

    started: bool
    low: int | None

    def take_in(self, got: Replies, cache: ProcessCache) -> None:
        """Forget what the log read in got says changed (see the module docstring)."""
        entries = got.get(CHANGES)
        if entries is None:
            return
        low = self.low
        if low is None:
            if not entries and self.started:
                return  # nothing was ever numbered
        elif len(entries) == 1 and int(entries[0][1]) == low:
            return  # nothing new: the newest entry is the one taken in last
        pairs = [(int(member), int(number)) for member, number in entries]
        full = len(pairs) >= READ_LIMIT
        cache.authors_changed(cache.profile_log.advance(self.started, low, pairs, full))


def queue_profile_changes(reads: NamedReads, cache: ProcessCache) -> ProfileChangesRead:
    """Queue reading the log from the newest number this process has taken in (every
    entry of a log it saw empty, the newest alone before its first read); take the reply
    in with the returned object's take_in before loading posts."""
    log = cache.profile_log
    started, low = log.started, log.seen
    count = READ_LIMIT if started else 1
    floor = "-inf" if low is None else low
    reads.zrevrangebyscore(
        CHANGES, keys.profile_changes(), "+inf", floor, start=0, num=count, withscores=True
    )
    return ProfileChangesRead(started, low)


def newest_change(r) -> int | None:
    """Return the newest number in the log, or None when it is empty (tests, benches)."""
    top = cast(Scored, r.zrevrange(keys.profile_changes(), 0, 0, withscores=True))
    return int(top[0][1]) if top else None
