"""The staff's directory of accounts: the user list by status and name prefix, staff names.

Paged reads of the account indexes (`users_by_time`, `users_lex`, `suspended_users`,
`staff_users`) with each row's counts, in a fixed number of round trips per page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from social import keys

from .base import USER_FIELDS, RepositoryBase, as_int, page_bounds, s, user_from_hash
from .models import Page, User

USER_STATUSES = ("active", "suspended", "staff")
PREFIX_RE = re.compile(r"^[a-z0-9_]{1,20}$")


@dataclass(frozen=True)
class UserRow:
    """One account in the staff user list."""

    user: User
    posts: int
    followers: int
    reports: int


class DirectoryStore(RepositoryBase):
    """The staff's list of accounts."""

    def users_page(
        self, prefix: str = "", status: str = "", number: int = 1, per_page: int = 50
    ) -> Page[UserRow]:
        """Return a page of accounts: newest first, or by name for a prefix search.

        Three round trips: the names (and how many match), their ids, their hashes and
        counts. A prefix search uses ZRANGEBYLEX on the lower-cased name index; the status
        filters page the staff and suspension sets, except "active", which pages sign-ups
        and leaves the suspended out, as does a status combined with a prefix: such pages
        can hold fewer than per_page rows.
        """
        number = max(1, number)
        start, stop = page_bounds(number, per_page)
        prefix = prefix.lower()
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
        return Page(
            items=rows,
            number=number,
            has_next=len(names) > per_page,
            total=total if not (status and prefix) and status != "active" else None,
            per_page=per_page,
        )

    def staff_names(self, limit: int = 100) -> list[str]:
        """Return the names of current staff, most recently granted first."""
        return [s(n) for n in self.r.zrevrange(keys.staff_users(), 0, limit - 1)]

    def _user_rows(self, names: Sequence[str]) -> list[UserRow]:
        """Return rows for the accounts called names, in order (two round trips)."""
        if not names:
            return []
        pipe = self._pipe()
        for name in names:
            pipe.hget(keys.usernames_lower(), name.lower())
            pipe.hget(keys.users(), name)  # accounts written by the reference Retwis
        replies = pipe.execute()
        ids = [as_int(a if a is not None else b) for a, b in zip(replies[0::2], replies[1::2])]
        ids = list(dict.fromkeys(i for i in ids if i is not None))
        pipe = self._pipe()
        for user_id in ids:
            pipe.hmget(keys.user(user_id), USER_FIELDS)
            pipe.llen(keys.own_posts(user_id))
            pipe.zcard(keys.followers(user_id))
            pipe.zcard(keys.user_reports(user_id))
        replies = pipe.execute() if ids else []
        rows = []
        for i, user_id in enumerate(ids):
            values, n_posts, n_followers, n_reports = replies[4 * i : 4 * i + 4]
            user = user_from_hash(user_id, dict(zip(USER_FIELDS, map(s, values))))
            if user is not None:
                rows.append(UserRow(user, n_posts, n_followers, n_reports))
        return rows


def matches_status(user: User, status: str) -> bool:
    """Return whether user is in the list filter `status` (active, suspended, staff)."""
    if status == "suspended":
        return user.is_suspended
    if status == "staff":
        return user.is_staff
    return not user.is_suspended
