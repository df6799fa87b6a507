"""Figures for the staff pages: daily series, totals, the server's health, the user list.

Nothing here scans the keyspace. The daily figures are the counters and HyperLogLogs the
site bumps as events happen (RepositoryBase._count_event and _mark_active), which expire
after keys.STATS_TTL_DAYS; totals are cardinalities and counters; the user list pages the
sign-up, staff and suspension sorted sets and searches the lexicographic name index.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from social import keys

from .base import (
    USER_FIELDS,
    RepositoryBase,
    as_int,
    now,
    page_bounds,
    s,
    user_from_hash,
    utc_day,
)
from .models import Page, User, as_datetime

# (metric, label, kind): "counter" is a daily INCR counter, "hll" the active-users HLL.
SERIES = (
    ("signups", "New users", "counter"),
    ("posts", "Posts", "counter"),
    ("active", "Active users", "hll"),
    ("logins", "Logins", "counter"),
)
PERIOD_DAYS = 30
LATEST_SIGNUPS = 10
USER_STATUSES = ("active", "suspended", "staff")
PREFIX_RE = re.compile(r"^[a-z0-9_]{1,20}$")


@dataclass(frozen=True)
class DailySeries:
    """One metric per day for the current period and the one before it, oldest first."""

    metric: str
    label: str
    days: list[date]
    current: list[int]
    previous: list[int]
    is_average: bool = False  # distinct users per day do not add up: show the daily mean

    @property
    def total(self) -> int:
        return sum(self.current)

    @property
    def previous_total(self) -> int:
        return sum(self.previous)

    @property
    def average(self) -> float:
        return round(self.total / max(1, len(self.current)), 1)

    @property
    def previous_average(self) -> float:
        return round(self.previous_total / max(1, len(self.previous)), 1)

    @property
    def change_percent(self) -> int | None:
        """Return the change of total over previous_total in percent, None from zero."""
        if not self.previous_total:
            return None
        return round(100 * (self.total - self.previous_total) / self.previous_total)


@dataclass(frozen=True)
class ServerHealth:
    """What Redis INFO and DBSIZE say about the server."""

    version: str
    used_memory: str
    used_memory_peak: str
    keys: int
    ops_per_sec: int
    connected_clients: int
    uptime_seconds: int
    aof_enabled: bool
    rdb_last_save_time: int | None
    rdb_changes_since_last_save: int
    rdb_last_bgsave_ok: bool

    @property
    def rdb_last_save(self) -> datetime | None:
        return as_datetime(self.rdb_last_save_time) if self.rdb_last_save_time else None

    @property
    def started(self) -> datetime:
        return as_datetime(now() - self.uptime_seconds)  # type: ignore[return-value]


@dataclass(frozen=True)
class Totals:
    """Site-wide counts. `follows` is None while nothing maintains its counter."""

    users: int
    posts: int
    follows: int | None
    open_reports: int
    suspended: int
    staff: int


@dataclass(frozen=True)
class Dashboard:
    """Everything the staff dashboard shows, read in one round trip."""

    totals: Totals
    series: list[DailySeries]
    latest_signups: list[tuple[str, datetime]]
    health: ServerHealth | None = None


@dataclass(frozen=True)
class UserRow:
    """One account in the staff user list."""

    user: User
    posts: int
    followers: int
    reports: int


def health_from_info(info: dict, dbsize: int) -> ServerHealth:
    """Build ServerHealth from a parsed INFO reply (Redis 6.2+, 7, Valkey 8)."""
    return ServerHealth(
        # Valkey reports redis_version 7.2.4 for compatibility; its own version is the news.
        version=(
            f"Valkey {info['valkey_version']}"
            if info.get("valkey_version")
            else f"Redis {info.get('redis_version', '?')}"
        ),
        used_memory=str(info.get("used_memory_human", "?")),
        used_memory_peak=str(info.get("used_memory_peak_human", "?")),
        keys=int(dbsize),
        ops_per_sec=int(info.get("instantaneous_ops_per_sec", 0)),
        connected_clients=int(info.get("connected_clients", 0)),
        uptime_seconds=int(info.get("uptime_in_seconds", 0)),
        aof_enabled=bool(int(info.get("aof_enabled", 0))),
        rdb_last_save_time=as_int(info.get("rdb_last_save_time")),
        rdb_changes_since_last_save=int(info.get("rdb_changes_since_last_save", 0)),
        rdb_last_bgsave_ok=info.get("rdb_last_bgsave_status", "ok") == "ok",
    )


class StatsStore(RepositoryBase):
    """Read-only figures for staff."""

    def dashboard(self, today: date | None = None) -> Dashboard:
        """Return the dashboard's figures: one pipeline, one round trip.

        The server's health is None where INFO is not available (fakeredis, a proxy that
        refuses it); the rest of the dashboard does not depend on it.
        """
        today = today or utc_day(now()).date()
        days = [today - timedelta(days=n) for n in range(2 * PERIOD_DAYS - 1, -1, -1)]
        pipe = self._pipe()
        for metric, _, kind in SERIES:
            for day in days:
                if kind == "hll":
                    pipe.pfcount(keys.daily_active(day))
                else:
                    pipe.get(keys.daily_counter(metric, day))
        pipe.zcard(keys.users_by_time())
        pipe.get(keys.next_post_id())
        pipe.get(keys.follows_total())
        pipe.zcard(keys.open_reports())
        pipe.zcard(keys.suspended_users())
        pipe.zcard(keys.staff_users())
        pipe.zrevrange(keys.users_by_time(), 0, LATEST_SIGNUPS - 1, withscores=True)
        pipe.info()
        pipe.dbsize()
        replies = pipe.execute(raise_on_error=False)
        n = len(days)
        series = []
        for i, (metric, label, kind) in enumerate(SERIES):
            values = [as_int(v) or 0 for v in replies[i * n : (i + 1) * n]]
            current, previous = values[PERIOD_DAYS:], values[:PERIOD_DAYS]
            series.append(
                DailySeries(metric, label, days[PERIOD_DAYS:], current, previous, kind == "hll")
            )
        users, posts, follows, reports, suspended, staff, latest, info, dbsize = replies[
            len(SERIES) * n :
        ]
        health = None
        if isinstance(info, dict) and not isinstance(dbsize, Exception):
            health = health_from_info(info, dbsize)
        return Dashboard(
            totals=Totals(
                users=users,
                posts=as_int(posts) or 0,
                follows=None if follows is None else max(0, as_int(follows) or 0),
                open_reports=reports,
                suspended=suspended,
                staff=staff,
            ),
            series=series,
            latest_signups=[(s(name), as_datetime(ts)) for name, ts in latest],  # type: ignore[misc]
            health=health,
        )

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
        rows = self._user_rows(names[:per_page])  # type: ignore[arg-type]
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
        return [s(n) for n in self.r.zrevrange(keys.staff_users(), 0, limit - 1)]  # type: ignore[misc]

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
