"""Accounts through the API: the reader's own, lookups, follow lists paged, relationships,
following, blocking and muting (with the pages' rules and limits), notifications, search
and the instance; with the Redis state each leaves."""

from __future__ import annotations

import re

from social import keys
from tests.api import Api, token_for
from tests.conftest import make_user


def test_verify_credentials_and_lookup(repo, alice, bob):
    api = Api(token_for(repo, alice))
    me = api.get("/api/v1/accounts/verify_credentials").json()
    assert me["id"] == str(alice.id) and me["acct"] == "alice" and me["source"]["privacy"]
    assert api.get("/api/v1/accounts/lookup", {"acct": "BOB"}).json()["id"] == str(bob.id)
    assert api.get("/api/v1/accounts/lookup", {"acct": "bob@testserver"}).json()["id"] == str(
        bob.id
    )
    assert api.get("/api/v1/accounts/lookup", {"acct": "bob@elsewhere.example"}).status_code == 404
    assert api.get("/api/v1/accounts/lookup", {"acct": "nobody"}).status_code == 404


def test_account_search_finds_names_pages_them_and_keeps_those_followed(repo, r, alice, bob):
    """GET /api/v1/accounts/search (Mastodon.py's account_search, apps' mention completion)
    answered 404 before: the path was read as an account id."""
    bobby = make_user(repo, "bobby")
    make_user(repo, "bobcat")
    repo.graph.follow(alice.id, bobby.id)
    api = Api(token_for(repo, alice))
    found = api.get("/api/v1/accounts/search", {"q": "bob"})
    before = set(r.keys("*"))  # the first search indexed the names (as /search/ does)
    assert found.status_code == 200
    assert {a["acct"] for a in found.json()} == {"bob", "bobby", "bobcat"}
    assert api.get("/api/v1/accounts/search", {"q": "@bobb"}).json()[0]["id"] == str(bobby.id)
    following = api.get("/api/v1/accounts/search", {"q": "bob", "following": "true"}).json()
    assert [a["acct"] for a in following] == ["bobby"]
    paged = api.get("/api/v1/accounts/search", {"q": "bob", "limit": 1, "offset": 1}).json()
    assert len(paged) == 1 and paged[0]["acct"] in {"bob", "bobby", "bobcat"}
    assert api.get("/api/v1/accounts/search", {"q": "bob", "offset": "\u00b2"}).status_code == 400
    assert api.get("/api/v1/accounts/search", {"q": " "}).status_code == 422
    assert Api(None).get("/api/v1/accounts/search", {"q": "bob"}).status_code == 401
    assert set(r.keys("*")) == before


def test_follow_and_unfollow_write_both_sets_and_answer_the_relationship(repo, r, alice, bob):
    api = Api(token_for(repo, alice))
    followed = api.post(f"/api/v1/accounts/{bob.id}/follow")
    assert followed.json()["following"] is True
    assert followed["X-RateLimit-Limit"]
    assert r.zscore(keys.following(alice.id), bob.id) is not None
    assert r.zscore(keys.followers(bob.id), alice.id) is not None
    assert api.post(f"/api/v1/accounts/{bob.id}/follow").json()["following"] is True
    relationships = api.get("/api/v1/accounts/relationships", {"id[]": [bob.id, alice.id]})
    assert [(x["id"], x["following"]) for x in relationships.json()] == [
        (str(bob.id), True), (str(alice.id), False)
    ]  # fmt: skip
    assert api.post(f"/api/v1/accounts/{bob.id}/unfollow").json()["following"] is False
    assert r.zcard(keys.following(alice.id)) == 0


def test_following_oneself_or_across_a_block_is_refused(repo, r, alice, bob):
    api = Api(token_for(repo, alice))
    assert api.post(f"/api/v1/accounts/{alice.id}/follow").status_code == 403
    repo.relations.block(bob.id, alice.id)
    refused = api.post(f"/api/v1/accounts/{bob.id}/follow")
    assert refused.status_code == 403
    assert "does not let you follow" in refused.json()["error"]
    assert r.zcard(keys.following(alice.id)) == 0
    assert api.get("/api/v1/accounts/relationships", {"id[]": bob.id}).json()[0]["blocked_by"]


def test_block_mute_and_their_lists(repo, r, alice, bob, charlie):
    api = Api(token_for(repo, alice))
    repo.graph.follow(bob.id, alice.id)
    blocked = api.post(f"/api/v1/accounts/{bob.id}/block").json()
    assert blocked["blocking"] is True and blocked["followed_by"] is False
    assert r.zscore(keys.blocks(alice.id), bob.id) is not None
    assert r.zscore(keys.blocked_by(bob.id), alice.id) is not None
    assert r.zcard(keys.followers(alice.id)) == 0
    assert api.post(f"/api/v1/accounts/{charlie.id}/mute").json()["muting"] is True
    assert r.zscore(keys.mutes(alice.id), charlie.id) is not None
    assert [a["username"] for a in api.get("/api/v1/blocks").json()] == ["bob"]
    assert [a["username"] for a in api.get("/api/v1/mutes").json()] == ["charlie"]
    assert api.post(f"/api/v1/accounts/{alice.id}/block").status_code == 403
    assert api.post(f"/api/v1/accounts/{bob.id}/unblock").json()["blocking"] is False
    assert api.post(f"/api/v1/accounts/{charlie.id}/unmute").json()["muting"] is False
    assert r.zcard(keys.blocks(alice.id)) == 0 and r.zcard(keys.mutes(alice.id)) == 0


def test_relations_are_limited_with_a_429(repo, r, alice, bob, charlie, settings):
    settings.RETWIS_LIMIT_RELATIONS = (1, 3600)
    api = Api(token_for(repo, alice))
    assert api.post(f"/api/v1/accounts/{bob.id}/mute").status_code == 200
    assert api.post(f"/api/v1/accounts/{charlie.id}/mute").status_code == 429
    assert r.zcard(keys.mutes(alice.id)) == 1


def test_followers_are_paged_with_a_link_cursor(repo, alice):
    fans = [make_user(repo, f"fan{i}") for i in range(5)]
    for i, fan in enumerate(fans):
        repo.graph.follow(fan.id, alice.id, at=1000 + i)
    api = Api(token_for(repo, alice))
    first = api.get(f"/api/v1/accounts/{alice.id}/followers", {"limit": 3})
    assert [a["username"] for a in first.json()] == ["fan4", "fan3", "fan2"]
    cursor = re.search(r"max_id=(\d+)>; rel=\"next\"", first["Link"])[1]
    second = api.get(f"/api/v1/accounts/{alice.id}/followers", {"limit": 3, "max_id": cursor})
    assert [a["username"] for a in second.json()] == ["fan1", "fan0"]
    assert "next" not in second.get("Link", "")
    following = api.get(f"/api/v1/accounts/{fans[0].id}/following").json()
    assert [a["username"] for a in following] == ["alice"]


def test_account_statuses_can_leave_replies_out(repo, alice, bob):
    top = repo.posts.create_post(alice.id, "top")
    parent = repo.posts.create_post(bob.id, "parent")
    reply = repo.posts.create_post(alice.id, "reply", reply_to=parent)
    api = Api(None)
    listed = api.get(f"/api/v1/accounts/{alice.id}/statuses").json()
    assert [s["id"] for s in listed] == [str(reply), str(top)]
    plain = api.get(f"/api/v1/accounts/{alice.id}/statuses", {"exclude_replies": "true"})
    assert [s["id"] for s in plain.json()] == [str(top)]
    assert api.get(f"/api/v1/accounts/{alice.id}/statuses", {"pinned": "true"}).json() == []


def test_notifications_one_by_one_filtered_and_cleared(repo, r, alice, bob, charlie):
    post_id = repo.posts.create_post(alice.id, "notice me")
    repo.graph.follow(bob.id, alice.id)
    repo.likes.like(bob.id, post_id)
    repo.posts.create_post(charlie.id, "hey @alice")
    repo.likes.like(charlie.id, post_id)
    api = Api(token_for(repo, alice))
    kinds = [(n["type"], n["account"]["username"]) for n in api.get("/api/v1/notifications").json()]
    assert kinds == [
        ("favourite", "charlie"), ("mention", "charlie"), ("favourite", "bob"), ("follow", "bob")
    ]  # fmt: skip
    only = api.get("/api/v1/notifications", {"types[]": ["follow"]}).json()
    assert [n["type"] for n in only] == ["follow"]
    repo.relations.mute(alice.id, charlie.id)
    assert {n["account"]["username"] for n in api.get("/api/v1/notifications").json()} == {"bob"}
    page = api.get("/api/v1/notifications", {"limit": 1})
    older = re.search(r"max_id=(\d+)>; rel=\"next\"", page["Link"])[1]
    rest = api.get("/api/v1/notifications", {"max_id": older}).json()
    assert [n["type"] for n in rest] == ["follow"]
    assert api.post("/api/v1/notifications/clear").json() == {}
    assert not r.exists(keys.notifications(alice.id))
    assert api.get("/api/v1/notifications").json() == []


def test_search_finds_accounts_and_tags_but_no_statuses(repo, alice, bob):
    repo.posts.create_post(alice.id, "#redis rocks")
    api = Api(token_for(repo, alice))
    found = api.get("/api/v2/search", {"q": "bo"}).json()
    assert [a["username"] for a in found["accounts"]] == ["bob"]
    assert found["statuses"] == []
    tags = api.get("/api/v2/search", {"q": "#red", "type": "hashtags"}).json()
    assert [t["name"] for t in tags["hashtags"]] == ["redis"] and tags["accounts"] == []
    assert api.get("/api/v2/search", {"q": ""}).status_code == 400
    repo.relations.block(bob.id, alice.id)
    assert api.get("/api/v2/search", {"q": "bob"}).json()["accounts"] == []


def test_the_instance_describes_the_server(client, repo, alice):
    repo.posts.create_post(alice.id, "one")
    v1 = client.get("/api/v1/instance").json()
    assert v1["stats"] == {"user_count": 1, "status_count": 1, "domain_count": 0}
    assert v1["configuration"]["statuses"]["max_characters"] == 280
    assert v1["configuration"]["media_attachments"]["supported_mime_types"] == [
        "image/png", "image/jpeg", "image/webp", "image/gif"
    ]  # fmt: skip
    v2 = client.get("/api/v2/instance/").json()
    assert v2["api_versions"] == {"mastodon": 2}
    assert v2["domain"] == "testserver"


def test_the_instance_names_the_contact_address_staff_configured(client, settings):
    assert client.get("/api/v1/instance").json()["email"] == ""
    settings.RETWIS_CONTACT_EMAIL = "moderators@retwis.example"

    assert client.get("/api/v1/instance").json()["email"] == "moderators@retwis.example"
    contact = client.get("/api/v2/instance").json()["contact"]
    assert contact == {"email": "moderators@retwis.example", "account": None}
