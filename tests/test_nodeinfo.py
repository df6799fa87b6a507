"""NodeInfo (/.well-known/nodeinfo, /nodeinfo/2.0): what server this is and how much it
is used, read from the figures the site already keeps, in one round trip whatever their
size."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.test import Client

from social import keys
from social.api.nodeinfo import SOFTWARE_VERSION
from tests.conftest import CLUSTER, make_user

ROOT = Path(__file__).resolve().parent.parent


def active_on(r, days_ago: int, *user_ids: int) -> None:
    day = (datetime.now(UTC) - timedelta(days=days_ago)).date()
    r.pfadd(keys.daily_active(day), *map(str, user_ids))


def test_the_discovery_document_links_to_nodeinfo_2_0():
    answer = Client().get("/.well-known/nodeinfo")
    assert answer.status_code == 200
    assert answer.json() == {
        "links": [
            {
                "rel": "http://nodeinfo.diaspora.software/ns/schema/2.0",
                "href": "http://testserver/nodeinfo/2.0",
            }
        ]
    }
    assert answer["Access-Control-Allow-Origin"] == "*"


def test_nodeinfo_says_what_the_site_is_and_how_much_it_is_used(repo, r, alice, bob):
    charlie = make_user(repo, "charlie")
    for n in range(3):
        repo.posts.create_post(alice.id, f"post {n}")
    active_on(r, 0, alice.id, bob.id)
    active_on(r, 1, alice.id)
    active_on(r, 40, charlie.id)  # in the half year, not the month
    active_on(r, 120, 99)  # past what the stats keep: not counted either way

    answer = Client().get("/nodeinfo/2.0")

    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("application/json; profile=")
    info = answer.json()
    assert info["version"] == "2.0"
    assert info["software"] == {"name": "retwis", "version": SOFTWARE_VERSION}
    assert info["protocols"] == [] and info["openRegistrations"] is True
    users = info["usage"]["users"]
    assert users["total"] == 3 == r.hlen(keys.users())
    if CLUSTER:  # the busiest day's distinct users (repository/stats.py)
        assert (users["activeMonth"], users["activeHalfyear"]) == (2, 2)
    else:
        assert (users["activeMonth"], users["activeHalfyear"]) == (2, 3)
    assert info["usage"]["localPosts"] == 3
    assert info["metadata"]["nodeName"] == "Retwis"


def test_nodeinfo_costs_one_round_trip_whatever_the_figures(repo, r, round_trips):
    costs = []
    for users in (1, 30):
        for n in range(users):
            active_on(r, n, n + 1)
        round_trips.reset()
        assert Client().get("/nodeinfo/2.0").status_code == 200
        costs.append(round_trips.count)
    assert costs[0] == costs[1]
    if not CLUSTER:
        assert costs == [1, 1]


def test_the_software_version_is_the_projects():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == SOFTWARE_VERSION
