"""Notifications and markers through the client API (issue 24): /api/v1/notifications,
/api/v2/notifications (grouped as the notifications page groups them), one group, the
unread counts and /api/v1/markers, which the site's own page shares; bad input answered
with Mastodon's JSON error and nothing written; a fixed number of round trips whatever
the number of notifications."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from social import keys
from social.repository.live.notification_events import event_from
from tests.api import Api, token_for
from tests.conftest import CLUSTER, login, make_user


@pytest.fixture
def told(repo, alice, bob, charlie):
    """alice's post, liked by bob and then charlie; bob follows her, charlie replies to
    the post and names her in another: newest first, reply, mention, follow, likes."""
    post = repo.posts.create_post(alice.id, "notice me")
    repo.likes.like(bob.id, post)
    repo.likes.like(charlie.id, post)
    repo.graph.follow(bob.id, alice.id)
    mention = repo.posts.create_post(charlie.id, "hey @alice")
    reply = repo.posts.create_post(charlie.id, "noticed", reply_to=post)
    return {"post": post, "mention": mention, "reply": reply}


def newest_event_id(r, user) -> int:
    return event_from(r.lindex(keys.notifications(user.id), 0)).id


def link(response, rel: str) -> str | None:
    found = re.search(rf'<([^>]+)>; rel="{rel}"', response.get("Link", ""))
    return found[1] if found else None


def test_grouped_notifications_are_the_pages_groups_with_their_accounts_and_statuses(
    repo, alice, bob, charlie, told
):
    api = Api(token_for(repo, alice))
    answer = api.get("/api/v2/notifications")
    assert answer.status_code == 200, answer.content
    data = answer.json()
    groups = data["notification_groups"]

    assert [(g["type"], g["notifications_count"]) for g in groups] == [
        ("mention", 1), ("mention", 1), ("follow", 1), ("favourite", 2)
    ]  # fmt: skip
    likes = groups[3]
    assert likes["group_key"] == f"like-{told['post']}"
    assert likes["sample_account_ids"] == [str(charlie.id), str(bob.id)]
    assert likes["status_id"] == str(told["post"])
    liked = [event_from(e) for e in repo.r.lrange(keys.notifications(alice.id), 0, -1)][-2:]
    assert (likes["page_max_id"], likes["page_min_id"]) == tuple(str(e.id) for e in liked)
    assert likes["most_recent_notification_id"] == likes["page_max_id"]
    assert likes["latest_page_notification_at"].endswith("Z")
    assert groups[0]["status_id"] == str(told["reply"])  # the reply, not alice's post
    assert groups[0]["group_key"].startswith("ungrouped-")
    assert "status_id" not in groups[2]
    assert {a["username"] for a in data["accounts"]} == {"bob", "charlie"}
    assert {s["id"] for s in data["statuses"]} == {
        str(told["post"]),
        str(told["mention"]),
        str(told["reply"]),
    }
    reply = next(s for s in data["statuses"] if s["id"] == str(told["reply"]))
    assert reply["in_reply_to_account_id"] == str(alice.id)

    one = api.get(f"/api/v2/notifications/{likes['group_key']}").json()
    assert one["notification_groups"][0]["notifications_count"] == 2
    assert "page_min_id" not in one["notification_groups"][0]
    people = api.get(f"/api/v2/notifications/{likes['group_key']}/accounts").json()
    assert [a["username"] for a in people] == ["charlie", "bob"]


def test_grouped_types_types_and_exclude_types_narrow_the_groups(repo, alice, bob, told):
    api = Api(token_for(repo, alice))

    ungrouped = api.get("/api/v2/notifications", {"grouped_types[]": ["follow"]}).json()
    likes_only = api.get("/api/v2/notifications", {"types[]": ["favourite"]}).json()
    no_mentions = api.get("/api/v2/notifications", {"exclude_types[]": ["mention"]}).json()
    from_bob = api.get("/api/v2/notifications", {"account_id": str(bob.id)}).json()

    assert [g["type"] for g in ungrouped["notification_groups"]] == [
        "mention", "mention", "follow", "favourite", "favourite"
    ]  # fmt: skip
    assert [g["group_key"] for g in likes_only["notification_groups"]] == [f"like-{told['post']}"]
    assert [g["type"] for g in no_mentions["notification_groups"]] == ["follow", "favourite"]
    assert [g["sample_account_ids"] for g in from_bob["notification_groups"]] == [
        [str(bob.id)], [str(bob.id)]
    ]  # fmt: skip


def test_groups_page_with_max_id_min_id_and_since_id(repo, alice):
    followers = [make_user(repo, f"fan{i}") for i in range(7)]
    for i, fan in enumerate(followers):
        repo.posts.create_post(fan.id, f"hello @alice {i}")
    api = Api(token_for(repo, alice))
    every = api.get("/api/v2/notifications").json()["notification_groups"]
    keys_all = [g["group_key"] for g in every]
    assert len(keys_all) == 7

    first = api.get("/api/v2/notifications", {"limit": 3})
    second = api.get(link(first, "next"))
    third = api.get(link(second, "next"))
    pages = [
        [g["group_key"] for g in p.json()["notification_groups"]] for p in (first, second, third)
    ]
    assert pages == [keys_all[:3], keys_all[3:6], keys_all[6:]]
    assert link(third, "next") is None
    back = api.get(link(third, "prev")).json()["notification_groups"]
    assert [g["group_key"] for g in back] == keys_all[3:6]  # the three just newer
    newest = every[0]["most_recent_notification_id"]
    assert (
        api.get("/api/v2/notifications", {"since_id": newest}).json()["notification_groups"] == []
    )
    older = api.get("/api/v2/notifications", {"since_id": every[5]["page_max_id"]}).json()
    assert [g["group_key"] for g in older["notification_groups"]] == keys_all[:5]


def test_v1_notifications_are_one_by_one_and_a_reply_is_a_mention_naming_the_reply(
    repo, alice, bob, charlie, told
):
    api = Api(token_for(repo, alice))
    listed = api.get("/api/v1/notifications").json()

    assert [n["type"] for n in listed] == [
        "mention", "mention", "follow", "favourite", "favourite"
    ]  # fmt: skip
    assert listed[0]["status"]["id"] == str(told["reply"])
    assert listed[3]["group_key"] == listed[4]["group_key"] == f"like-{told['post']}"
    one = api.get(f"/api/v1/notifications/{listed[2]['id']}").json()
    assert one["type"] == "follow" and one["account"]["username"] == "bob"


def test_muted_blocked_and_hidden_ones_are_neither_listed_nor_counted(
    repo, r, alice, bob, charlie, sam, told
):
    repo.relations.mute(alice.id, charlie.id)
    api = Api(token_for(repo, alice))

    groups = api.get("/api/v2/notifications").json()["notification_groups"]
    count = api.get("/api/v2/notifications/unread_count").json()
    listed = api.get("/api/v1/notifications/unread_count").json()

    assert [(g["type"], g["sample_account_ids"]) for g in groups] == [
        ("follow", [str(bob.id)]), ("favourite", [str(bob.id)])
    ]  # fmt: skip
    assert count == {"count": 2} and listed == {"count": 2}
    like_key = groups[1]["group_key"]
    repo.moderation.suspend(bob.id, sam, "spam")
    assert api.get("/api/v2/notifications").json()["notification_groups"] == []
    assert api.get(f"/api/v2/notifications/{like_key}").status_code == 404
    assert r.llen(keys.notifications(alice.id)) == 5  # nothing removed


def test_markers_are_saved_read_and_shared_with_the_sites_own_page(repo, r, alice, bob, told):
    api = Api(token_for(repo, alice))
    assert api.get("/api/v1/markers", {"timeline[]": ["home", "notifications"]}).json() == {}
    assert api.get("/api/v1/notifications/unread_count").json() == {"count": 5}
    assert api.get("/api/v2/notifications/unread_count").json() == {"count": 4}
    listed = api.get("/api/v1/notifications").json()

    saved = api.post(
        "/api/v1/markers",
        {"home": {"last_read_id": str(told["post"])},
         "notifications": {"last_read_id": listed[2]["id"]}},
        as_json=True,
    ).json()  # fmt: skip

    assert saved["home"]["last_read_id"] == str(told["post"]) and saved["home"]["version"] == 1
    assert saved["notifications"]["last_read_id"] == listed[2]["id"]
    assert r.hget(keys.markers(alice.id), "notifications") == listed[2]["id"]
    assert r.hget(keys.user(alice.id), "unread_notifications") == "2"  # the site's badge
    assert api.get("/api/v1/notifications/unread_count").json() == {"count": 2}
    home = login(Client(), repo, alice).get("/").content.decode()
    assert 'title="2 new notifications"' in home

    site = login(Client(), repo, alice).get("/notifications/").content.decode()
    assert site.count('<span class="new-badge">New</span>') == 2  # what the app had not read
    got = api.get("/api/v1/markers", {"timeline[]": ["home", "notifications"]}).json()
    assert got["notifications"]["last_read_id"] == str(newest_event_id(r, alice))
    assert got["notifications"]["version"] == 2 and got["home"]["version"] == 1
    assert api.get("/api/v1/notifications/unread_count").json() == {"count": 0}
    assert r.hget(keys.user(alice.id), "unread_notifications") == "0"

    form = api.post("/api/v1/markers", {"notifications[last_read_id]": "1"}).json()
    assert form["notifications"]["version"] == 3
    assert r.hget(keys.user(alice.id), "unread_notifications") == "5"


@pytest.mark.parametrize(
    "path, params",
    [
        ("/api/v2/notifications", {"max_id": "²"}),
        ("/api/v2/notifications", {"min_id": "1" + "0" * 25}),
        ("/api/v2/notifications", {"limit": "²"}),
        ("/api/v2/notifications", {"account_id": "-1"}),
        ("/api/v1/notifications", {"since_id": "01" + "0" * 5000}),
        ("/api/v2/notifications/unread_count", {"limit": "9" * 30}),
    ],
)
def test_bad_cursors_limits_and_ids_are_a_4xx_in_json(repo, alice, told, path, params):
    answer = Api(token_for(repo, alice)).get(path, params)
    (name,) = params
    if name == "account_id":
        assert answer.status_code == 422
        assert answer.json()["error"].startswith("Validation failed: ")
    else:  # a number as every endpoint reads one (social.numbers, test_api_bad_input.py)
        assert answer.status_code == 400
        assert answer.json() == {"error": f"{name} must be a number: 1 to 19 digits 0-9"}


def test_bad_group_keys_expand_values_and_markers_are_refused_and_nothing_is_written(
    repo, r, alice, bob, told
):
    api = Api(token_for(repo, alice))
    other = Api(token_for(repo, bob))
    likes = f"like-{told['post']}"

    for key in ("like-%C2%B2", "like-1" + "0" * 30, "x" * 300, "ungrouped-abc"):
        answer = api.get(f"/api/v2/notifications/{key}")
        assert answer.status_code == 404 and answer.json() == {"error": "Record not found"}
    assert other.get(f"/api/v2/notifications/{likes}").status_code == 404  # not bob's
    assert api.get("/api/v1/notifications/²").status_code == 404
    bad = api.get("/api/v2/notifications", {"expand_accounts": "everything"})
    assert bad.status_code == 400 and "expand_accounts" in bad.json()["error"]
    for body in (
        {"notifications": {"last_read_id": "²"}},
        {"notifications": {"last_read_id": "1" * 20}},
        {"home": {"last_read_id": "12"}, "notifications": {"last_read_id": True}},
        {"home": {"last_read_id": ["1"]}},
    ):
        refused = api.post("/api/v1/markers", body, as_json=True)
        assert refused.status_code == 422, body
    assert api.post("/api/v1/markers", {"home[last_read_id]": "x1"}).status_code == 422
    assert not r.exists(keys.markers(alice.id))
    assert api.post("/api/v1/markers", {"lists": {"last_read_id": "1"}}, as_json=True).json() == {}
    assert not r.exists(keys.markers(alice.id))
    no_scope = Api(token_for(repo, alice, "read"))
    assert no_scope.post("/api/v1/markers", {"home[last_read_id]": "1"}).status_code == 403
    assert not r.exists(keys.markers(alice.id))
    assert Api(None).get("/api/v2/notifications").status_code == 401


@pytest.mark.parametrize(
    "path, params",
    [
        ("/api/v2/notifications", {"limit": "80"}),
        ("/api/v1/notifications", {"limit": "80"}),
        ("/api/v2/notifications/unread_count", {}),
        ("/api/v1/notifications/unread_count", {}),
        ("/api/v1/markers", {"timeline[]": ["home", "notifications"]}),
    ],
)
def test_each_costs_the_same_round_trips_for_5_notifications_as_for_60(
    repo, alice, round_trips, path, params
):
    api = Api(token_for(repo, alice))
    api.post("/api/v1/markers", {"home[last_read_id]": "1", "notifications[last_read_id]": "1"})
    costs = []
    for n in (5, 60):
        while len(repo.r.lrange(keys.notifications(alice.id), 0, -1)) < n:
            fan = make_user(repo, f"fan{n}x{repo.r.llen(keys.notifications(alice.id))}")
            post = repo.posts.create_post(alice.id, "again")
            repo.likes.like(fan.id, post)
            repo.graph.follow(fan.id, alice.id)
            repo.posts.create_post(fan.id, "hi @alice")
        api.get(path, params)  # warm
        round_trips.reset()
        assert api.get(path, params).status_code == 200
        costs.append(round_trips.count)
    assert costs[0] == costs[1]
    if not CLUSTER:
        # The token (remembered: checked once), then: markers one HGETALL; the lists the
        # store's list with the marker (and the reader's sets), the posts with their
        # actors (the read path's), and the accounts of the answer.
        expected = {"markers": 2}.get(path.rsplit("/", 1)[-1], 4 if "unread" not in path else 3)
        assert costs[1] == expected, costs
