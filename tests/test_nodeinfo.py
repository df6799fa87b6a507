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
    assert info["protocols"] == ["activitypub"] and info["openRegistrations"] is True
    users = info["usage"]["users"]
    assert users["total"] == 3 == r.hlen(keys.users())
    if CLUSTER:  # the busiest day's distinct users (repository/moderation/stats.py)
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


def test_nodeinfo_names_mastodon_as_the_api_it_speaks():
    from social.api.instance import VERSION

    metadata = Client().get("/nodeinfo/2.0").json()["metadata"]

    assert metadata["upstream"] == {"name": "mastodon", "version": VERSION.split()[0]}
    assert VERSION.startswith(metadata["upstream"]["version"] + " (compatible")


def test_host_meta_names_the_webfinger_template_as_xrd():
    answer = Client().get("/.well-known/host-meta")

    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/xrd+xml; charset=utf-8"
    assert answer["Access-Control-Allow-Origin"] == "*"
    body = answer.content.decode()
    assert body.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert '<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">' in body
    template = "http://testserver/.well-known/webfinger?resource={uri}"
    assert f'<Link rel="lrdd" template="{template}"/>' in body


def test_host_meta_answers_json_by_its_name_or_by_accept():
    template = "http://testserver/.well-known/webfinger?resource={uri}"
    wanted = {"links": [{"rel": "lrdd", "template": template}]}
    by_name = Client().get("/.well-known/host-meta.json")
    by_accept = Client().get("/.well-known/host-meta", HTTP_ACCEPT="application/json")

    for answer in (by_name, by_accept):
        assert answer.status_code == 200
        assert answer["Content-Type"].startswith("application/json")
        assert answer.json() == wanted


def test_webfinger_finds_an_account_by_acct(alice):
    for resource in ("acct:alice@testserver", "alice@testserver", "acct:ALICE@testserver"):
        answer = Client().get("/.well-known/webfinger", {"resource": resource})

        assert answer.status_code == 200, resource
        assert answer["Content-Type"] == "application/jrd+json"
        assert answer.json() == {
            "subject": "acct:alice@testserver",
            "aliases": ["http://testserver/u/alice/", f"http://testserver/ap/users/{alice.id}"],
            "links": [
                {
                    "rel": "http://webfinger.net/rel/profile-page",
                    "type": "text/html",
                    "href": "http://testserver/u/alice/",
                },
                {
                    "rel": "self",
                    "type": "application/activity+json",
                    "href": f"http://testserver/ap/users/{alice.id}",
                },
            ],
        }


def test_webfinger_knows_no_one_elsewhere_unknown_or_suspended(repo, alice, bob, sam):
    repo.moderation.suspend(bob.id, sam, "spam")
    for resource in (
        "acct:alice@elsewhere.example", "acct:nobody@testserver", "acct:bob@testserver",
        "https://elsewhere.example/u/alice", "acct:a@b@c", "²",
    ):  # fmt: skip
        answer = Client().get("/.well-known/webfinger", {"resource": resource})
        assert answer.status_code == 404, resource
        assert answer.json() == {"error": "Record not found"}
    missing = Client().get("/.well-known/webfinger")
    assert missing.status_code == 400 and "resource" in missing.json()["error"]
    too_long = Client().get("/.well-known/webfinger", {"resource": "acct:" + "a" * 400})
    assert too_long.status_code == 422
