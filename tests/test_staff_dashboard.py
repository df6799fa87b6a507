"""The dashboard's figures: daily counters kept as events happen, totals, charts, health."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from functools import partial

import fakeredis
import pytest
import redis
from django.test import Client

from social import keys
from social.repository import Repository
from social.repository.moderation.stats import DailySeries
from social.staff.charts import build_chart, nice_ceiling
from tests.conftest import PASSWORD, raw_client

NEW_PASSWORD = "a fresh long passphrase"


def today():
    return datetime.now(tz=UTC).date()


@pytest.fixture(autouse=True)
def not_across_midnight():
    """Counters are per UTC day: start no test in the last 5 s of one (each takes well
    under a second), so what a test does and what it reads fall on the same day."""
    left = 86400 - time.time() % 86400
    if left < 5:
        time.sleep(left + 0.1)


def sign_up(client: Client, name: str) -> None:
    data = {"username": name, "password": NEW_PASSWORD, "password2": NEW_PASSWORD}
    assert client.post("/register/", data).status_code == 302


def test_counters_follow_a_known_sequence_of_events(repo, r, alice):
    """Two sign-ups, a login, three posts: the counters say so, with a bounded life."""
    dana, erin = Client(), Client()
    sign_up(dana, "dana")  # a sign-up logs the new user in: a login, and active
    sign_up(erin, "erin")
    assert Client().post("/login/", {"username": "alice", "password": PASSWORD}).status_code == 302
    for client, body in ((dana, "one"), (dana, "two"), (erin, "three")):
        assert client.post("/post/", {"status": body}).status_code == 302

    day = today()
    # alice was created by the fixture through the repository: a sign-up too.
    assert r.get(keys.daily_counter("signups", day)) == "3"
    assert r.get(keys.daily_counter("logins", day)) == "3"
    assert r.get(keys.daily_counter("posts", day)) == "3"
    assert r.pfcount(keys.daily_active(day)) == 3  # dana, erin, alice
    for key in (keys.daily_counter("posts", day), keys.daily_active(day)):
        assert 0 < r.ttl(key) <= keys.STATS_TTL_DAYS * 86400

    figures = {s.metric: s for s in repo.stats.dashboard().series}
    assert figures["signups"].current[-1] == 3
    assert figures["posts"].current[-1] == 3
    assert figures["logins"].current[-1] == 3
    assert figures["active"].current[-1] == 3


def test_the_series_compare_the_last_30_days_with_the_30_before(repo, r):
    now = datetime.now(tz=UTC)
    for days_ago, name in ((0, "new1"), (0, "new2"), (29, "edge"), (30, "old1"), (59, "old2")):
        repo.users.create_user(name, "h", at=int((now - timedelta(days=days_ago)).timestamp()))
    repo.users.create_user("ancient", "h", at=int((now - timedelta(days=60)).timestamp()))

    signups = repo.stats.dashboard(today=now.date()).series[0]  # the day the users were dated by

    assert signups.metric == "signups"
    assert len(signups.current) == len(signups.previous) == 30
    assert signups.days[-1] == now.date() and signups.days[0] == now.date() - timedelta(days=29)
    assert (signups.current[-1], signups.current[0], signups.total) == (2, 1, 3)
    assert (signups.previous[-1], signups.previous[0], signups.previous_total) == (1, 1, 2)
    assert signups.change_percent == 50


def test_totals_count_users_posts_reports_suspended_and_staff(repo, alice, bob, charlie, sam):
    post_id = repo.posts.create_post(alice.id, "x")
    repo.reports.report_post(bob, post_id, "spam")
    repo.moderation.suspend(charlie.id, sam, "spam")

    totals = repo.stats.dashboard().totals

    assert (totals.users, totals.posts, totals.open_reports) == (4, 1, 1)
    assert (totals.suspended, totals.staff) == (1, 1)


def test_the_follow_total_shows_once_something_counts_follows(repo, r):
    assert repo.stats.dashboard().totals.follows is None
    r.set(keys.follows_total(), 12)
    assert repo.stats.dashboard().totals.follows == 12


def test_the_health_figures_come_from_the_server(repo, r):
    health = repo.stats.dashboard().health

    assert health is not None
    server = r.info("server")
    assert health.version in (
        f"Redis {server['redis_version']}",
        f"Valkey {server.get('valkey_version')}",
    )
    assert health.keys == r.dbsize()
    assert health.connected_clients >= 1 and health.uptime_seconds >= 0
    assert health.used_memory.endswith(("K", "M", "G", "B"))


@pytest.fixture(params=["real, an ACL user without INFO", "fakeredis, which has no INFO"])
def info_refused(request, redis_server):
    """A repository whose client may not run INFO: on real Redis through an ACL user."""
    if request.param.startswith("fake"):
        client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    else:
        redis_server.flushall()
        for url in redis_server.urls:  # every node, when the suite runs on a cluster
            admin = redis.Redis.from_url(url)
            admin.acl_setuser(
                "noinfo", enabled=True, nopass=True, keys=["*"], channels=["*"],
                categories=["+@all"], commands=["-info"],
            )  # fmt: skip
            request.addfinalizer(partial(admin.acl_deluser, "noinfo"))
        client = raw_client(redis_server.url, username="noinfo")
    with pytest.raises(redis.exceptions.ResponseError):
        client.info()
    return Repository(client)


def test_the_dashboard_works_where_info_is_refused(info_refused):
    info_refused.users.create_user("alice", "h")

    dashboard = info_refused.stats.dashboard()

    assert dashboard.health is None
    assert dashboard.totals.users == 1
    assert len(dashboard.series) == 4 and dashboard.series[0].current[-1] == 1


def test_the_dashboard_page_draws_four_charts_with_no_network(repo, alice, sam_client):
    repo.posts.create_post(alice.id, "hi")
    html = sam_client.get("/staff/").content.decode()

    assert html.count("<svg") == 4
    assert html.count('class="bar"') == 4 * 30
    assert html.count('class="previous"') == 4
    svg = html[html.index("<svg") : html.rindex("</svg>")]
    assert "http" not in svg and "<script" not in svg
    assert html.count("<script") == html.count('<script src="/static/')  # the site's own only
    assert "Redis server" in html and "Latest sign-ups" in html and "@alice" in html


def test_the_active_users_chart_reads_as_a_daily_average(alice, sam_client):
    html = sam_client.get("/staff/").content.decode()
    assert "Active users: 0.0 a day on average" in html


@pytest.mark.parametrize(
    ("value", "ceiling"), [(0, 1), (1, 1), (3, 5), (7, 10), (11, 20), (480, 500)]
)
def test_the_value_axis_ends_on_a_round_number(value, ceiling):
    assert nice_ceiling(value) == ceiling


def test_a_chart_scales_bars_and_labels_its_axes():
    days = [today() - timedelta(days=29 - i) for i in range(30)]
    series = DailySeries("posts", "Posts", days, [0] * 29 + [10], [5] * 30)

    chart = build_chart(series)

    assert len(chart.bars) == 30
    assert chart.bars[-1].height == chart.bottom - 10 and chart.bars[0].height == 0
    assert chart.bars[-1].label.endswith(days[-1].strftime("%b"))
    assert [v for _, v in chart.y_ticks] == [0, 5, 10]
    assert [label for _, label, _ in chart.x_labels][0] == f"{days[0]:%-d %b}"
    assert chart.previous_points.count(",") == 30
    assert "10 in the last 30 days" in chart.summary and "-93%" in chart.summary


@pytest.mark.parametrize(("peak", "ticks"), [(3, [0, 5]), (7, [0, 5, 10]), (1, [0, 1])])
def test_the_value_axis_labels_are_whole_numbers(peak, ticks):
    from datetime import date, timedelta

    from social.repository.moderation.stats import DailySeries

    days = [date(2026, 11, 1) + timedelta(days=i) for i in range(30)]
    current = [0] * 29 + [peak]
    series = DailySeries("logins", "Logins", days, current, [0] * 30)
    assert [value for _, value in build_chart(series).y_ticks] == ticks
