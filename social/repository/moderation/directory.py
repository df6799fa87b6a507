"""The staff's directory of accounts: the user list by status, by the start of a name or by
any part of it, and staff names.

Paged reads of the account indexes (`users_by_time`, `users_lex`, `suspended_users`,
`staff_users`) with each row's counts, in a fixed number of round trips per page.

"Contains" search reads a trigram index instead of scanning names. Every account's
lower-cased name is cut into its three-character pieces (those of a-z, 0-9 and _, the only
characters a query holds), and each piece names a sorted set (keys.name_trigram, all
scores 0, so ordered by member) of "<lower-cased name> <id>". A query of three characters
is one piece: its set is the answer, paged by rank (ZRANGE) in name order. A longer query
intersects its pieces' sets in a script (ZINTER; every key carries the {names} hash tag,
so a cluster keeps them in one slot and the script runs on one node) that keeps the names
holding the query itself ("abcxbcab" has every piece of "abcab") and returns their number
and one page. Either way one round trip brings a page whatever the number of accounts; the
server's work for a longer query is the intersection (bounded by its rarest piece's set).

The index is kept up by id, like users_lower_checked: a search first indexes the accounts
created since the last one (the ids above keys.name_trigrams_checked, and the 50 below it
again for a sign-up that was in flight), at most INDEX_BATCH of them, so sign-up writes
nothing more and accounts the reference Retwis wrote are indexed like ours.
`index_new_names(limit=None)` indexes a whole database at once (a command can run it). A
purged account's name stays in the sets until a search meets it: the account no longer
bears it, so the row is left out and the members removed. docs/data-layout.md has the
memory it costs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import cast

from social import keys

from ..base import (
    USER_FIELDS,
    Members,
    NamedReads,
    Replies,
    RepositoryBase,
    as_int,
    page_bounds,
    s,
    user_from_hash,
)
from ..models import Page, User

USER_STATUSES = ("active", "suspended", "staff")
NAME_MATCHES = ("prefix", "contains")
PREFIX_RE = re.compile(r"^[a-z0-9_]{1,20}$")
CONTAINS_MIN = 3  # a query shorter than a trigram cannot use the index: prefix search then
CONTAINS_RE = re.compile(r"[a-z0-9_]{3,20}")
TRIGRAM_RE = re.compile(r"[a-z0-9_]{3}")
INDEX_BATCH = 1000  # new ids a search indexes at most: one pipeline to read, one to write
INDEX_RECHECK = 50  # ids below the mark looked at again: a sign-up in flight at the last look

# KEYS: the query's trigram sets; ARGV: the query, the first rank wanted, how many. Returns
# the number of names that hold the query, then the members of that page, in name order.
CONTAINS_SCRIPT = """
local found = {}
for _, member in ipairs(redis.call('ZINTER', #KEYS, unpack(KEYS))) do
  local name = string.match(member, '^(.*) %d+$')
  if name and string.find(name, ARGV[1], 1, true) then found[#found + 1] = member end
end
local page, first = {#found}, tonumber(ARGV[2])
for i = first + 1, math.min(#found, first + tonumber(ARGV[3])) do page[#page + 1] = found[i] end
return page
"""


def name_trigrams(name: str) -> list[str]:
    """Return the distinct three-character pieces of name, lower-cased, that a query can
    hold (a-z, 0-9, _), sorted."""
    lower = name.lower()
    pieces = (lower[i : i + 3] for i in range(len(lower) - 2))
    return sorted({p for p in pieces if TRIGRAM_RE.fullmatch(p)})


def name_member(name: str, user_id: int) -> str:
    """Return the trigram sets' member for an account: "<lower-cased name> <id>" (name
    first, so the sets are in name order; the id keeps two accounts with one name apart,
    and " " sorts before any name character: "bob 7" before "bob1 3", as users_lex)."""
    return f"{name.lower()} {int(user_id)}"


def split_member(member: bytes | str) -> tuple[str, int | None]:
    """Return (lower-cased name, id) of a trigram set's member (the id after the last
    space: a legacy name may hold spaces)."""
    name, _, user_id = s(member).rpartition(" ")
    return name, as_int(user_id)


@dataclass(frozen=True)
class UserRow:
    """One account in the staff user list."""

    user: User
    posts: int
    followers: int
    reports: int


@dataclass(frozen=True)
class UserPage(Page[UserRow]):
    """A page of the staff user list. `unindexed`: accounts a "contains" search could not
    look at yet (the index was that many ids behind after this search's share of the
    catching up); 0 for other searches."""

    unindexed: int = 0


class DirectoryStore(RepositoryBase):
    """The staff's list of accounts."""

    def users_page(
        self,
        query: str = "",
        status: str = "",
        number: int = 1,
        per_page: int = 50,
        *,
        match: str = "prefix",
    ) -> UserPage:
        """Return a page of accounts: newest first, or by name for a search.

        match="prefix" (names that start with query) costs three round trips: the names
        (and how many match), their ids, their hashes and counts. It uses ZRANGEBYLEX on the
        lower-cased name index; the status filters page the staff and suspension sets,
        except "active", which pages sign-ups and leaves the suspended out, as does a status
        combined with a search: such pages can hold fewer than per_page rows.

        match="contains" (names that hold query anywhere; 3 to 20 characters) costs two
        round trips, and up to three more when accounts were created since the last such
        search (see the module docstring).
        """
        if match not in NAME_MATCHES:
            raise ValueError(f"unknown name match {match!r}")
        if match == "contains" and query:
            return self._contains_page(query, status, number, per_page)
        number = max(1, number)
        start, stop = page_bounds(number, per_page)
        prefix = query.lower()
        if prefix and not PREFIX_RE.match(prefix):
            raise ValueError(f"bad username prefix {prefix!r}")
        pipe = self._pipe()
        if prefix:
            low, high = b"[" + prefix.encode(), b"[" + prefix.encode() + b"\xff"
            pipe.zrangebylex(keys.username_index(), low, high, start, per_page + 1)
            pipe.zlexcount(keys.username_index(), low, high)
        else:
            key = {"suspended": keys.suspended_users(), "staff": keys.staff_users()}.get(
                status, keys.users_by_time()
            )
            pipe.zrevrange(key, start, stop)
            pipe.zcard(key)
        raw_names, total = pipe.execute()
        names = [s(n) for n in raw_names]
        rows = self._user_rows(names[:per_page])
        if status:
            rows = [r for r in rows if matches_status(r.user, status)]
        return UserPage(
            items=rows,
            number=number,
            has_next=len(names) > per_page,
            total=total if not (status and prefix) and status != "active" else None,
            per_page=per_page,
        )

    def _contains_page(self, query: str, status: str, number: int, per_page: int) -> UserPage:
        """Return the page of accounts whose name holds query, by name (users_page)."""
        query = query.lower()
        if not CONTAINS_RE.fullmatch(query):
            raise ValueError(f"bad username part {query!r}")
        number = max(1, number)
        start = (number - 1) * per_page
        reads = self.reads()
        reads.get("top", keys.next_user_id())
        reads.get("checked", keys.name_trigrams_checked())
        self._queue_matches(reads, query, start, per_page + 1)
        got = reads.execute()
        top, checked = as_int(got.value("top")) or 0, as_int(got.value("checked")) or 0
        unindexed = 0
        if top > checked:  # accounts created since the last look: index them, ask again
            unindexed, got = self._catch_up(
                top,
                checked,
                INDEX_BATCH,
                then=lambda reads: self._queue_matches(reads, query, start, per_page + 1),
            )
        total, members = self._matches_from(got)
        matched = [split_member(m) for m in members]
        wanted = [(n, i) for n, i in matched[:per_page] if i is not None and query in n]
        found = self._rows_by_ids([i for _, i in wanted])
        rows, gone = [], []
        for name, user_id in wanted:
            row = found.get(user_id)
            if row is None or row.user.username.lower() != name:
                gone.append((name, user_id))  # purged (or renamed by hand): not this name now
            elif not status or matches_status(row.user, status):
                rows.append(row)
        self._unindex(gone)
        return UserPage(
            items=rows,
            number=number,
            has_next=len(members) > per_page,
            total=None if status else total,
            per_page=per_page,
            unindexed=unindexed,
        )

    @staticmethod
    def _queue_matches(reads: NamedReads, query: str, start: int, count: int) -> None:
        """Queue the names holding query: how many, and `count` of them from rank `start`
        in name order (read them with _matches_from). Three characters: the one set, by
        rank. More: CONTAINS_SCRIPT (a raw EVAL: a cluster pipeline refuses eval() and
        ZINTER, and routes a script by its keys, all in the {names} slot)."""
        pieces = [keys.name_trigram(p) for p in name_trigrams(query)]
        if len(query) == CONTAINS_MIN:
            reads.zcard("total", pieces[0])
            reads.zrange("members", pieces[0], start, start + count - 1)
            return
        reads.execute_command(
            "matches", "EVAL", CONTAINS_SCRIPT, len(pieces), *pieces, query, start, count
        )

    @staticmethod
    def _matches_from(got: Replies) -> tuple[int, Members]:
        """Return (how many names hold the query, the page's members) from the replies of
        _queue_matches."""
        if "matches" in got:
            total, *members = cast("list[bytes | int]", got["matches"])  # the count first
            return int(total), cast(Members, members)
        return got.count("total"), got.members("members")

    def index_new_names(self, limit: int | None = None) -> int:
        """Index the names of the accounts created since the last look and return how many
        ids are still above the mark (0: caught up); limit: at most that many new ids
        (None: every one, what a command building the index of a whole database runs).

        The ids above keys.name_trigrams_checked, and the INDEX_RECHECK below it again (an
        account whose hash was not yet written at the last look). An id with no name (a
        sign-up that failed, a purged account) is skipped. One round trip to read the mark,
        then two per INDEX_BATCH ids (their names; their trigrams and the new mark). ZADD
        is idempotent: two searches catching up at once write the same members, and a mark
        moved back only makes the next search look at those ids again.
        """
        pipe = self._pipe()
        pipe.get(keys.next_user_id())
        pipe.get(keys.name_trigrams_checked())
        top, checked = (as_int(reply) or 0 for reply in pipe.execute())
        return self._catch_up(top, checked, limit)[0]

    def _catch_up(
        self,
        top: int,
        checked: int,
        limit: int | None,
        then: Callable[[NamedReads], None] | None = None,
    ) -> tuple[int, Replies]:
        """Index ids above `checked` up to `top` (index_new_names); queue `then`'s reads on
        the last write pipeline, after the writes (so they see them: every key there is in
        the {names} slot), and return (ids left, those reads' replies)."""
        end = top if limit is None else min(top, checked + limit)
        chunk = INDEX_BATCH + INDEX_RECHECK
        got = Replies()
        for first in range(max(1, checked - INDEX_RECHECK + 1), end + 1, chunk):
            ids = range(first, min(end, first + chunk - 1) + 1)
            named = self._names_of_ids(ids)
            reads = self.reads()
            self._queue_index(reads.pipe, named)
            reads.pipe.set(keys.name_trigrams_checked(), ids[-1])  # after the members
            if then is not None and ids[-1] == end:
                then(reads)
            got = reads.execute()
        return max(0, top - end), got

    @staticmethod
    def _queue_index(pipe, accounts: Iterable[tuple[str, int]], *, remove: bool = False) -> None:
        """Queue adding (or removing) each (name, id) to (from) its trigram sets."""
        for name, user_id in accounts:
            member = name_member(name, user_id)
            for piece in name_trigrams(name):
                if remove:
                    pipe.zrem(keys.name_trigram(piece), member)
                else:
                    pipe.zadd(keys.name_trigram(piece), {member: 0})

    def _unindex(self, accounts: Sequence[tuple[str, int]]) -> None:
        """Remove (name, id) members whose account no longer bears that name (one round
        trip; none when there are none)."""
        if not accounts:
            return
        pipe = self._pipe()
        self._queue_index(pipe, accounts, remove=True)
        pipe.execute()

    def staff_names(self, limit: int = 100) -> list[str]:
        """Return the names of current staff, most recently granted first."""
        return [s(n) for n in cast(Members, self.r.zrevrange(keys.staff_users(), 0, limit - 1))]

    def _user_rows(self, names: Sequence[str]) -> list[UserRow]:
        """Return rows for the accounts called names, in order (two round trips)."""
        if not names:
            return []
        pipe = self._pipe()
        for name in names:
            pipe.hget(keys.usernames_lower(), name.lower())
            pipe.hget(keys.users(), name)  # accounts written by the reference Retwis
        replies = pipe.execute()
        named = (as_int(a if a is not None else b) for a, b in zip(replies[0::2], replies[1::2]))
        ids = list(dict.fromkeys(i for i in named if i is not None))
        found = self._rows_by_ids(ids)
        return [found[i] for i in ids if i in found]

    def _rows_by_ids(self, ids: Sequence[int]) -> dict[int, UserRow]:
        """Return {id: row} for the accounts among ids that exist (one round trip)."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        pipe = self._pipe()
        for user_id in ids:
            pipe.hmget(keys.user(user_id), USER_FIELDS)
            pipe.llen(keys.own_posts(user_id))
            pipe.zcard(keys.followers(user_id))
            pipe.zcard(keys.user_reports(user_id))
        replies = pipe.execute()
        rows = {}
        for i, user_id in enumerate(ids):
            values, n_posts, n_followers, n_reports = replies[4 * i : 4 * i + 4]
            user = user_from_hash(user_id, dict(zip(USER_FIELDS, map(s, values))))
            if user is not None:
                rows[user_id] = UserRow(user, n_posts, n_followers, n_reports)
        return rows


def matches_status(user: User, status: str) -> bool:
    """Return whether user is in the list filter `status` (active, suspended, staff)."""
    if status == "suspended":
        return user.is_suspended
    if status == "staff":
        return user.is_staff
    return not user.is_suspended
