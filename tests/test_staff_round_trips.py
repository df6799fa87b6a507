"""Staff pages cost a fixed number of Redis round trips, whatever the amount of data.

Counted like the site's own budgets (tests/test_round_trips.py): every command or pipeline
sent is one; each page is measured with 5 rows of everything and again with 50.
"""

from __future__ import annotations

import pytest
from django.test import Client

from social.repository import PROCESS_CACHE, Repository, User

PAGES = {
    "dashboard": "/staff/",
    "users": "/staff/users/",
    "user search": "/staff/users/?q=u",
    "suspended users": "/staff/users/?status=suspended",
    "active users": "/staff/users/?status=active",
    "account": "/staff/users/target/",
    "posts": "/staff/posts/",
    "delete confirmation": "/staff/posts/delete/?" + "&".join(f"id={i}" for i in range(1, 51)),
    "open reports": "/staff/reports/",
    "resolved reports": "/staff/reports/resolved/",
    "log": "/staff/log/",
    "log by target": "/staff/log/?target=target",
    "log by actor and action": "/staff/log/?actor=sam&action=add_note",
    "jobs": "/staff/jobs/",
}
# What each page may cost: the middleware's user (2) plus the page's own reads.
BUDGET = 8


def cost(client: Client, url: str, round_trips) -> int:
    """Return the round trips one GET of url costs in a process that remembers nothing."""
    client.get("/healthz")
    PROCESS_CACHE.clear()  # cold: the budget holds before anything is remembered
    round_trips.reset()
    response = client.get(url)
    assert response.status_code == 200
    return round_trips.count


def grow(repo: Repository, sam: User, target: User, upto: int) -> None:
    """Bring every list a staff page shows to `upto` rows: users, posts, reports, log."""
    start = int(repo.r.zcard("users_by_time")) - 2
    for i in range(start, upto):
        user = repo.users.create_user(f"u{i:03d}", "h")
        open_post = repo.posts.create_post(target.id, f"reported {i}")
        done_post = repo.posts.create_post(target.id, f"dismissed {i}")
        repo.reports.report_post(user, open_post, "spam")
        repo.reports.resolve_report(
            repo.reports.report_post(user, done_post, "abuse"), sam, "dismissed"
        )
        repo.moderation.add_note(target.id, sam, f"note {i}")
        if i % 2:
            repo.moderation.suspend(user.id, sam, "spam")


@pytest.fixture
def staff(repo, sam, sam_client):
    target = repo.users.create_user("target", "h")
    return sam, target, sam_client


@pytest.mark.parametrize("page", list(PAGES))
def test_a_staff_page_costs_the_same_with_5_rows_as_with_50(repo, staff, round_trips, page):
    sam, target, client = staff
    grow(repo, sam, target, 5)
    small = cost(client, PAGES[page], round_trips)

    grow(repo, sam, target, 50)
    large = cost(client, PAGES[page], round_trips)

    assert small == large, f"{page}: {small} round trips with 5 rows, {large} with 50"
    assert large <= BUDGET, f"{page} costs {large} round trips"


def test_acting_on_an_account_costs_a_fixed_number_of_round_trips(repo, staff, round_trips):
    sam, target, client = staff
    client.get("/healthz")
    round_trips.reset()
    client.post("/staff/users/target/suspend/", {"suspend-reason": "spam"})
    # auth (2), the name (1), the user (1), change + log entry (1), log indexes (1), then
    # the visibility version moved in a round trip of its own (RepositoryBase.
    # bump_visibility_version: never in the change's pipeline, for the cluster's sake)
    assert round_trips.count == 7


def test_deleting_many_posts_costs_the_same_as_deleting_one(repo, staff, round_trips):
    sam, target, client = staff
    ids = [repo.posts.create_post(target.id, f"p{i}") for i in range(40)]
    client.get("/healthz")

    PROCESS_CACHE.clear()
    round_trips.reset()
    first = client.post("/staff/posts/delete/", {"id": ids[:1], "reason": "spam"})
    one = round_trips.count
    PROCESS_CACHE.clear()
    round_trips.reset()
    rest = client.post("/staff/posts/delete/", {"id": ids[1:], "reason": "spam"})

    assert round_trips.count == one
    assert first.status_code == rest.status_code == 302
    assert [repo.r.hget(f"post:{i}", "deleted") for i in ids] == [b"1"] * 40
    assert repo.r.lrange("timeline", 0, -1) == []
