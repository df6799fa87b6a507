"""What apps show on a server's "About" page and ask beside the instance (issue 37): its
rules and extended description (staff write them on /staff/about/, logged), its weekly
activity from the daily figures, its peers (none), and the push subscription no one has.
Each in Mastodon's shape, with the Redis state it reads or leaves."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.test import Client

from social import keys
from social.repository.clients.instance import RULE_MAX, RULES_MAX
from tests.api import Api, all_keys, token_for
from tests.conftest import CLUSTER, login


def save_about(client: Client, rules: str = "", description: str = ""):
    return client.post("/staff/about/", {"rules": rules, "description": description})


def test_the_key_is_pinned():
    assert keys.instance_about() == "instance:about"


def test_a_server_without_rules_or_description_answers_empty_shapes(client, r):
    assert client.get("/api/v1/instance/rules").json() == []
    assert client.get("/api/v1/instance/extended_description").json() == {
        "updated_at": None,
        "content": "",
    }
    assert client.get("/api/v1/instance").json()["rules"] == []
    assert client.get("/api/v2/instance").json()["rules"] == []
    assert not r.exists(keys.instance_about())


def test_rules_staff_write_are_what_apps_read(sam_client, client, r):
    answer = save_about(sam_client, "Be kind.\n\n  No   spam, please.  \nRespect @people", "")

    assert answer.status_code == 302 and answer["Location"] == "/staff/about/"
    wanted = [
        {"id": "1", "text": "Be kind.", "hint": ""},
        {"id": "2", "text": "No spam, please.", "hint": ""},
        {"id": "3", "text": "Respect @people", "hint": ""},
    ]
    assert client.get("/api/v1/instance/rules").json() == wanted
    assert client.get("/api/v1/instance").json()["rules"] == wanted
    assert client.get("/api/v2/instance/").json()["rules"] == wanted
    stored = r.hgetall(keys.instance_about())
    assert stored["rules"] == '["Be kind.", "No spam, please.", "Respect @people"]'
    assert int(stored["rules_updated"]) > 0 and "description_updated" not in stored


def test_the_description_is_escaped_html_with_its_paragraphs(sam_client, client, r):
    text = "Hello <b>friends</b> & neighbours.\nRun by Sam.\n\n第二段。"

    save_about(sam_client, "", text)

    answer = client.get("/api/v1/instance/extended_description").json()
    assert answer["content"] == (
        "<p>Hello &lt;b&gt;friends&lt;/b&gt; &amp; neighbours.<br>Run by Sam.</p>\n\n"
        "<p>第二段。</p>"
    )
    stored = r.hgetall(keys.instance_about())
    assert stored["description"] == text
    updated = datetime.fromtimestamp(int(stored["description_updated"]), tz=UTC)
    assert answer["updated_at"] == updated.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_the_staff_page_shows_what_is_stored_and_logs_each_change(repo, sam_client, sam, r):
    save_about(sam_client, "One\nTwo", "About us")
    page = sam_client.get("/staff/about/")

    assert page.status_code == 200
    assert b"One\nTwo</textarea>" in page.content and b"About us</textarea>" in page.content
    entries = repo.audit.audit_page(action="edit_about").items
    assert [(e.actor_id, e.reason) for e in entries] == [(sam.id, "rules, description")]
    again = save_about(sam_client, "One\nTwo", "About us")  # nothing changed: not logged
    assert again.status_code == 302
    assert len(repo.audit.audit_page(action="edit_about").items) == 1
    save_about(sam_client, "One", "About us")
    assert [e.reason for e in repo.audit.audit_page(action="edit_about").items] == [
        "rules",
        "rules, description",
    ]
    assert r.hget(keys.instance_about(), "rules") == '["One"]'


def test_too_many_or_too_long_rules_are_refused_and_nothing_is_stored(sam_client, r):
    many = "\n".join(f"rule {n}" for n in range(RULES_MAX + 1))
    long = "x" * (RULE_MAX + 1)
    for rules in (many, f"fine\n{long}"):
        answer = save_about(sam_client, rules, "kept?")

        assert answer.status_code == 200
        assert b'class="errors"' in answer.content
    assert not r.exists(keys.instance_about())


def test_only_staff_reach_the_page(client, repo, alice, r):
    assert client.get("/staff/about/")["Location"].startswith("/login/")
    alice_client = login(Client(), repo, alice)
    assert alice_client.get("/staff/about/").status_code == 403
    assert save_about(alice_client, "Mine now", "").status_code == 403
    assert not r.exists(keys.instance_about())


def test_the_instance_reads_its_rules_with_its_figures_in_one_round_trip(
    client, sam_client, round_trips
):
    save_about(sam_client, "Be kind.", "")
    for path in ("/api/v1/instance", "/api/v2/instance"):
        round_trips.reset()
        assert client.get(path).status_code == 200
        if not CLUSTER:
            assert round_trips.count == 1


def monday(weeks_ago: int) -> date:
    today = datetime.now(UTC).date()
    return today - timedelta(days=today.weekday()) - timedelta(weeks=weeks_ago)


def test_activity_sums_each_week_of_the_daily_figures(client, r):
    this_week, last_week = monday(0), monday(1)
    r.set(keys.daily_counter("posts", this_week), 3)
    r.set(keys.daily_counter("posts", datetime.now(UTC).date()), 4)  # the same day, or not
    r.set(keys.daily_counter("posts", last_week + timedelta(days=6)), 5)
    r.set(keys.daily_counter("signups", last_week), 2)
    r.set(keys.daily_counter("posts", monday(12)), 99)  # thirteen weeks ago: not shown
    r.pfadd(keys.daily_active(last_week), "1", "2")
    r.pfadd(keys.daily_active(last_week + timedelta(days=1)), "2", "3")

    weeks = client.get("/api/v1/instance/activity").json()

    assert len(weeks) == 12
    starts = [monday(n) for n in range(12)]
    assert [w["week"] for w in weeks] == [
        str(int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp())) for d in starts
    ]
    today_is_monday = datetime.now(UTC).date() == this_week
    assert weeks[0]["statuses"] == ("4" if today_is_monday else "7")
    assert weeks[1] == {
        "week": weeks[1]["week"],
        "statuses": "5",
        "logins": "2" if CLUSTER else "3",  # distinct (a cluster: the busiest day)
        "registrations": "2",
    }
    assert all(w["statuses"] == "0" for w in weeks[2:])


def test_peers_are_none(client):
    assert client.get("/api/v1/instance/peers").json() == []


@pytest.mark.parametrize("method", ["get", "post", "put", "delete"])
def test_there_is_never_a_push_subscription(repo, alice, r, method):
    with_push = Api(token_for(repo, alice, "read push"))
    without = Api(token_for(repo, alice, "read"))
    before = sorted(all_keys(r, "*"))
    body = {"subscription": {"endpoint": "https://push.example/x", "keys": {}}}
    send = {"get": with_push.get, "delete": with_push.delete}.get(method)

    if send is None:
        answer = getattr(with_push, method)("/api/v1/push/subscription", body)
    else:
        answer = send("/api/v1/push/subscription")

    assert answer.status_code == 404
    assert answer.json() == {"error": "Record not found"}
    assert getattr(without, method)("/api/v1/push/subscription").status_code == 403
    assert getattr(Api(None), method)("/api/v1/push/subscription").status_code == 401
    assert sorted(all_keys(r, "*")) == before
