"""Figures for the staff dashboard: daily series, totals, the server's health.

Nothing here scans the keyspace. The daily figures are the counters and HyperLogLogs the
site bumps as events happen (RepositoryBase._count_event and _mark_active), which expire
after keys.STATS_TTL_DAYS; totals are cardinalities and counters. The user list and its
searches are social/repository/moderation/directory.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import cast

from django.utils.translation import gettext_noop
from redis.cluster import ClusterNode, RedisCluster

from social import keys

from ..base import (
    Bulk,
    NamedReads,
    Replies,
    RepositoryBase,
    as_int,
    now,
    s,
    utc_day,
)
from ..models import as_datetime

# (metric, label, kind): "counter" is a daily INCR counter, "hll" the active-users HLL.
# Labels in English; the staff charts translate them (social/staff/charts.py).
SERIES = (
    ("signups", gettext_noop("New users"), "counter"),
    ("posts", gettext_noop("Posts"), "counter"),
    ("active", gettext_noop("Active users"), "hll"),
    ("logins", gettext_noop("Logins"), "counter"),
)
PERIOD_DAYS = 30
LATEST_SIGNUPS = 10


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
class Usage:
    """What /nodeinfo/2.0 says of the site's use: accounts, those active in the last 30
    and ACTIVE_DAYS days (logged in or posted), posts (ids given, reposts included)."""

    users: int
    active_month: int
    active_halfyear: int
    posts: int


# Days of activity /nodeinfo/2.0's activeHalfyear covers: the daily figures are let go
# after keys.STATS_TTL_DAYS, so at most those.
ACTIVE_DAYS = min(180, keys.STATS_TTL_DAYS)


@dataclass(frozen=True)
class Week:
    """One week of /api/v1/instance/activity: its first day (a Monday, UTC), the posts
    written and accounts signed up in it (the daily counters summed), and the distinct
    accounts active in it (logged in or posted: its days' HyperLogLogs counted as one; on a
    cluster, its busiest day's)."""

    start: date
    statuses: int
    logins: int
    registrations: int


ACTIVITY_WEEKS = 12  # Mastodon's; the daily figures last keys.STATS_TTL_DAYS (90)


def week_days(start: date, today: date) -> list[date]:
    """The days of the week starting on start, up to today."""
    return [day for n in range(7) if (day := start + timedelta(days=n)) <= today]


@dataclass(frozen=True)
class ServerHealth:
    """What Redis INFO and DBSIZE say about the server (or one node of a cluster)."""

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
    node: str = ""  # a cluster node's host:port; "" for the one server
    role: str = ""  # a cluster node's "primary" or "replica"

    @property
    def rdb_last_save(self) -> datetime | None:
        return as_datetime(self.rdb_last_save_time) if self.rdb_last_save_time else None

    @property
    def started(self) -> datetime:
        return as_datetime(now() - self.uptime_seconds)


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
    """Everything the staff dashboard shows, read in one round trip (on a cluster, one per
    node)."""

    totals: Totals
    series: list[DailySeries]
    latest_signups: list[tuple[str, datetime]]
    # The one server, or every node of a cluster (primaries first), that answered INFO;
    # `silent` names the cluster nodes that did not.
    servers: tuple[ServerHealth, ...] = ()
    silent: tuple[str, ...] = ()
    cluster: bool = False

    @property
    def health(self) -> ServerHealth | None:
        """Return the first server's health (the one server's), or None where INFO is
        refused."""
        return self.servers[0] if self.servers else None


def health_from_info(info: dict, dbsize: int, node: str = "", role: str = "") -> ServerHealth:
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
        node=node,
        role=role,
    )


def cluster_nodes(client: RedisCluster) -> list[ClusterNode]:
    """Return every node the cluster client knows, primaries first, then by address."""
    return sorted(client.get_nodes(), key=lambda n: (n.server_type != "primary", n.name))


def queue_figures(reads: NamedReads) -> None:
    """Queue the instance's figures: its accounts and posts (see figures_from)."""
    reads.hlen("users", keys.users())
    reads.get("posts", keys.next_post_id())


def figures_from(got: Replies) -> tuple[int, int]:
    """(accounts, posts, ids given: reposts included), as queue_figures read them."""
    return got.count("users"), as_int(got.value("posts")) or 0


class StatsStore(RepositoryBase):
    """Read-only figures for staff (and the public ones: /nodeinfo/2.0, the instance)."""

    def instance_figures(self) -> tuple[int, int]:
        """(accounts, posts) on this server, for /api/v1/instance (one round trip)."""
        reads = self.reads()
        queue_figures(reads)
        return figures_from(reads.execute())

    def usage(self, today: date | None = None) -> Usage:
        """The site's usage in one pipeline (one round trip; on a cluster one per node).
        Distinct users over many days are one PFCOUNT of their HyperLogLogs; a cluster
        refuses a PFCOUNT of keys on several nodes, so there each day is counted and the
        busiest day's figure given (fewer than the distinct users: never more)."""
        today = today or utc_day(now()).date()
        days = [keys.daily_active(today - timedelta(days=n)) for n in range(ACTIVE_DAYS)]
        reads = self.reads()
        queue_figures(reads)
        cluster = isinstance(self.r, RedisCluster)
        if cluster:
            for n, key in enumerate(days):
                reads.execute_command(f"day{n}", "PFCOUNT", key)
        else:
            reads.execute_command("month", "PFCOUNT", *days[:30])
            reads.execute_command("halfyear", "PFCOUNT", *days)
        got = reads.execute()
        if cluster:
            daily = [got.count(f"day{n}") for n in range(len(days))]
            month, halfyear = max(daily[:30]), max(daily)
        else:
            month, halfyear = got.count("month"), got.count("halfyear")
        users, posts = figures_from(got)
        return Usage(users, month, halfyear, posts)

    def weekly_activity(self, today: date | None = None) -> list[Week]:
        """The last ACTIVITY_WEEKS weeks, this one (so far) first: one round trip (on a
        cluster, one per node). Weeks start on Monday, UTC."""
        today = today or utc_day(now()).date()
        monday = today - timedelta(days=today.weekday())
        starts = [monday - timedelta(weeks=n) for n in range(ACTIVITY_WEEKS)]
        reads = self.reads()
        cluster = isinstance(self.r, RedisCluster)
        for start in starts:
            days = week_days(start, today)
            for day in days:
                for metric in ("posts", "signups"):
                    reads.get(f"{metric}@{day}", keys.daily_counter(metric, day))
                if cluster:  # a cluster refuses a PFCOUNT of keys on several nodes
                    reads.execute_command(f"active@{day}", "PFCOUNT", keys.daily_active(day))
            if not cluster:
                hlls = [keys.daily_active(day) for day in days]
                reads.execute_command(f"active@{start}", "PFCOUNT", *hlls)
        got = reads.execute()
        weeks = []
        for start in starts:
            days = week_days(start, today)

            def total(metric: str, days: list[date] = days) -> int:
                return sum(as_int(got.value(f"{metric}@{day}")) or 0 for day in days)

            if cluster:
                active = max((got.count(f"active@{day}") for day in days), default=0)
            else:
                active = got.count(f"active@{start}")
            weeks.append(Week(start, total("posts"), active, total("signups")))
        return weeks

    def dashboard(self, today: date | None = None) -> Dashboard:
        """Return the dashboard's figures: one pipeline, one round trip.

        The server's health is left out where INFO is not available (fakeredis, a proxy
        that refuses it); the rest of the dashboard does not depend on it. On a cluster
        every node's INFO and DBSIZE ride in the same pipeline, sent to that node, so the
        dashboard costs one round trip per node.
        """
        today = today or utc_day(now()).date()
        days = [today - timedelta(days=n) for n in range(2 * PERIOD_DAYS - 1, -1, -1)]
        reads = self.reads()
        for metric, _, kind in SERIES:
            for day in days:
                name = f"{metric}@{day.isoformat()}"
                if kind == "hll":
                    # As a raw command: a cluster pipeline refuses pfcount() (it may name
                    # several keys); one key is routed like any other.
                    reads.execute_command(name, "PFCOUNT", keys.daily_active(day))
                else:
                    reads.get(name, keys.daily_counter(metric, day))
        reads.zcard("users", keys.users_by_time())
        reads.get("posts", keys.next_post_id())
        reads.get("follows", keys.follows_total())
        reads.zcard("reports", keys.open_reports())
        reads.zcard("suspended", keys.suspended_users())
        reads.zcard("staff", keys.staff_users())
        reads.zrevrange("latest", keys.users_by_time(), 0, LATEST_SIGNUPS - 1, withscores=True)
        nodes = cluster_nodes(self.r) if isinstance(self.r, RedisCluster) else []
        if nodes:  # a cluster pipeline refuses info(): each node is named instead
            for i, target in enumerate(nodes):
                reads.execute_command(f"info@{i}", "INFO", target_nodes=target)
                reads.execute_command(f"dbsize@{i}", "DBSIZE", target_nodes=target)
        else:
            reads.info("info@0")
            reads.dbsize("dbsize@0")
        got = reads.execute(raise_on_error=False)
        counters = cast("Mapping[str, Bulk | int]", got)  # the GETs and PFCOUNTs above
        series = []
        for metric, label, kind in SERIES:
            values = [as_int(counters[f"{metric}@{day.isoformat()}"]) or 0 for day in days]
            current, previous = values[PERIOD_DAYS:], values[:PERIOD_DAYS]
            series.append(
                DailySeries(metric, label, days[PERIOD_DAYS:], current, previous, kind == "hll")
            )
        follows = got.value("follows")
        servers, silent = [], []
        for i, node in enumerate(nodes or [None]):
            info, dbsize = got[f"info@{i}"], got[f"dbsize@{i}"]
            name, role = (node.name, node.server_type) if node else ("", "")
            if isinstance(info, dict) and not isinstance(dbsize, Exception):
                servers.append(health_from_info(info, got.count(f"dbsize@{i}"), name, role))
            elif node:
                silent.append(name)
        return Dashboard(
            totals=Totals(
                users=got.count("users"),
                posts=as_int(got.value("posts")) or 0,
                follows=None if follows is None else max(0, as_int(follows) or 0),
                open_reports=got.count("reports"),
                suspended=got.count("suspended"),
                staff=got.count("staff"),
            ),
            series=series,
            latest_signups=[(s(name), as_datetime(ts)) for name, ts in got.scored("latest")],
            servers=tuple(servers),
            silent=tuple(silent),
            cluster=bool(nodes),
        )
