"""Tags in the client API (issue 37): /api/v1/tags/:name with its week of use from the
tag's own posts (two round trips whatever their number), following a tag (not here), the
reader's most used tags as featured tag suggestions, and an account's featured tags
(none)."""

from __future__ import annotations

import time

from social import keys
from tests.api import Api, token_for
from tests.conftest import CLUSTER

DAY = 86400


def midnight(ts: int) -> int:
    return ts // DAY * DAY


def test_a_tag_answers_its_last_seven_days_of_use(repo, alice, bob, charlie, sam, r):
    now = int(time.time())
    repo.posts.create_post(alice.id, "#Redis today", at=now)
    repo.posts.create_post(alice.id, "#redis again today", at=now)
    repo.posts.create_post(bob.id, "#REDIS from bob", at=now)
    repo.posts.create_post(bob.id, "#redis two days ago", at=now - 2 * DAY)
    gone = repo.posts.create_post(charlie.id, "#redis deleted by its author", at=now - DAY)
    repo.posts.delete_own_post(charlie.id, gone)
    removed = repo.posts.create_post(charlie.id, "#redis removed by staff", at=now - DAY)
    repo.moderation.delete_posts([removed], sam, "spam")
    repo.posts.create_post(charlie.id, "#redis a week and more ago", at=now - 8 * DAY)

    answer = Api(token_for(repo, alice)).get("/api/v1/tags/Redis")

    assert answer.status_code == 200
    tag = answer.json()
    assert tag["name"] == "redis"
    assert tag["url"] == "http://testserver/tag/redis/"
    assert tag["following"] is False
    today = midnight(now)
    assert tag["history"] == [
        {"day": str(today - n * DAY), "uses": uses, "accounts": accounts}
        for n, (uses, accounts) in enumerate(
            [("3", "2"), ("0", "0"), ("1", "1"), *[("0", "0")] * 4]
        )
    ]
    assert r.llen(keys.tag_posts("redis")) == 6  # staff's deletion listed, not counted
    assert r.hget(keys.post(removed), "deleted") == "1"


def test_a_visitor_gets_the_tag_without_following(client, repo, alice):
    repo.posts.create_post(alice.id, "#redis")

    tag = client.get("/api/v1/tags/redis/").json()

    assert tag["name"] == "redis" and "following" not in tag
    assert len(tag["history"]) == 7


def test_a_tag_no_post_has_is_not_found(client, repo, alice):
    repo.posts.create_post(alice.id, "#redis")
    for name in ("valkey", "%C2%B2", "%00", "x" * 300):
        answer = client.get(f"/api/v1/tags/{name}")
        assert answer.status_code == 404, name
        assert answer.json() == {"error": "Record not found"}


def test_a_tags_history_costs_two_round_trips_whatever_its_posts(repo, alice, round_trips):
    api = Api(None)
    costs = []
    for n in (1, 40):
        for i in range(n):
            repo.posts.create_post(alice.id, f"#busy {i}")
        round_trips.reset()
        assert api.get("/api/v1/tags/busy").status_code == 200
        costs.append(round_trips.count)
    if CLUSTER:  # a pipeline is a round trip to each primary it reaches (three)
        assert max(costs) <= 2 * 3
    else:
        assert costs == [2, 2]


def test_following_a_tag_is_not_supported(repo, alice, r):
    repo.posts.create_post(alice.id, "#redis")
    api = Api(token_for(repo, alice))
    before = r.dbsize() if not CLUSTER else None

    for action in ("follow", "unfollow"):
        answer = api.post(f"/api/v1/tags/redis/{action}")
        assert answer.status_code == 422
        assert answer.json() == {"error": "Following tags is not supported on this server"}
    assert api.post("/api/v1/tags/valkey/follow").status_code == 404
    assert Api(None).post("/api/v1/tags/redis/follow").status_code == 401
    if before is not None:
        assert r.dbsize() == before


def test_suggestions_are_the_tags_the_reader_uses_most(repo, alice, bob):
    repo.posts.create_post(alice.id, "#redis and #python")
    repo.posts.create_post(alice.id, "#redis again")
    gone = repo.posts.create_post(alice.id, "#gone #gone")
    repo.posts.delete_own_post(alice.id, gone)
    repo.posts.create_post(alice.id, "#django")
    repo.posts.create_post(bob.id, "#valkey is bob's")

    answer = Api(token_for(repo, alice)).get("/api/v1/featured_tags/suggestions")

    assert answer.status_code == 200
    tags = answer.json()
    assert [t["name"] for t in tags] == ["redis", "django", "python"]
    assert tags[0] == {
        "name": "redis",
        "url": "http://testserver/tag/redis/",
        "history": [],
        "following": False,
    }
    assert Api(None).get("/api/v1/featured_tags/suggestions").status_code == 401


def test_an_accounts_featured_tags_are_none(repo, alice, bob, sam, client):
    assert client.get(f"/api/v1/accounts/{alice.id}/featured_tags").json() == []
    repo.moderation.suspend(bob.id, sam, "spam")
    for missing in (bob.id, 987654):
        answer = client.get(f"/api/v1/accounts/{missing}/featured_tags")
        assert answer.status_code == 404
    assert Api(token_for(repo, sam)).get(f"/api/v1/accounts/{bob.id}/featured_tags").json() == []
