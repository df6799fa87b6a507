"""The actions a page's script sends (Like, Repost, Follow, Mute, Block: static/js/site.js,
social/answers.py): asked with `Accept: application/json`, each answers what its button
becomes, in the reader's language, and leaves the same Redis state as the plain form; a
refusal (a block, a rate limit; Redis down: test_redis_down.py) answers JSON with its
words. Without the header the redirect stays (the other view tests)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from social import keys

T0 = 1_700_000_000
JSON = {"HTTP_ACCEPT": "application/json"}


def test_a_like_answers_the_button_and_the_count_and_is_stored(repo, r, alice, bob, alice_client):
    post = repo.posts.create_post(bob.id, "like me", at=T0)

    response = alice_client.post(f"/p/{post}/like/", **JSON)

    assert response.status_code == 200
    assert response.json() == {
        "ok": True,
        "message": "",
        "control": {
            "action": f"/p/{post}/unlike/",
            "label": "Liked",
            "title": "Unlike this post",
            "pressed": True,
            "count": 1,
            "count_title": "1 like",
        },
    }
    assert r.zscore(keys.likes(post), alice.id) is not None
    assert r.hget(keys.post(post), "likes") == "1"

    undone = alice_client.post(f"/p/{post}/unlike/", **JSON).json()["control"]
    assert (undone["action"], undone["label"], undone["count"]) == (f"/p/{post}/like/", "Like", 0)
    assert r.zcard(keys.likes(post)) == 0 and r.hget(keys.post(post), "likes") == "0"


def test_the_answer_is_in_the_readers_language(repo, bob, alice_client):
    post = repo.posts.create_post(bob.id, "like me", at=T0)
    alice_client.cookies["django_language"] = "zh-hans"

    control = alice_client.post(f"/p/{post}/like/", **JSON).json()["control"]

    assert control["label"] == "已赞" and control["label"] != "Liked"


def test_a_repost_answers_its_message_and_count(repo, r, alice, bob, alice_client):
    post = repo.posts.create_post(bob.id, "share me", at=T0)

    answer = alice_client.post(f"/p/{post}/repost/", **JSON).json()

    assert answer["ok"] and answer["message"] == "Reposted: your followers see it now."
    assert answer["control"]["action"] == f"/p/{post}/unrepost/"
    assert answer["control"]["count"] == 1 and answer["control"]["pressed"] is True
    assert r.zscore(keys.user_reposts(alice.id), post) is not None
    assert answer["message"] not in alice_client.get("/").content.decode()  # said once


def test_a_like_across_a_block_is_refused_in_words(repo, r, alice, bob, alice_client):
    post = repo.posts.create_post(bob.id, "not for alice", at=T0)
    repo.relations.block(bob.id, alice.id)

    response = alice_client.post(f"/p/{post}/like/", **JSON)

    assert response.status_code == 400
    assert response.json() == {
        "ok": False,
        "message": "This account does not let you like its posts.",
        "control": {},
    }
    assert r.zcard(keys.likes(post)) == 0


def test_follow_and_unfollow_answer_the_button(r, alice, bob, alice_client):
    answer = alice_client.post("/u/bob/follow/", **JSON).json()

    assert answer["ok"] and answer["message"] == "You are now following @bob."
    assert answer["control"] == {
        "action": "/u/bob/unfollow/",
        "label": "Unfollow",
        "name": "Unfollow @bob",
        "pressed": True,
        "count_html": "<strong>1</strong> follower",  # the profile's count (issue 37)
    }
    assert r.zscore(keys.following(alice.id), bob.id) is not None

    answer = alice_client.post("/u/bob/unfollow/", **JSON).json()
    assert answer["control"]["action"] == "/u/bob/follow/"
    assert r.zscore(keys.following(alice.id), bob.id) is None


def test_following_oneself_is_refused_in_words(r, alice, alice_client):
    response = alice_client.post("/u/alice/follow/", **JSON)

    assert response.status_code == 400
    assert response.json()["message"] == "You cannot follow yourself."
    assert r.zcard(keys.following(alice.id)) == 0


def test_mute_and_block_answer_what_the_button_becomes(r, alice, bob, alice_client):
    muted = alice_client.post("/u/bob/mute/", **JSON).json()
    assert muted["control"]["action"] == "/u/bob/unmute/"
    assert muted["control"]["name"] == "Unmute @bob"
    assert r.zscore(keys.mutes(alice.id), bob.id) is not None

    blocked = alice_client.post("/u/bob/block/", **JSON).json()
    assert blocked["message"] == "You blocked @bob. Neither of you sees the other now."
    assert blocked["control"]["action"] == "/u/bob/unblock/"
    assert blocked["control"]["label"] == "Unblock"
    assert r.zscore(keys.blocks(alice.id), bob.id) is not None

    again = alice_client.post("/u/bob/block/", **JSON).json()
    assert again["ok"] and again["message"] == "You already block @bob."

    unblocked = alice_client.post("/u/bob/unblock/", **JSON).json()
    assert unblocked["control"]["action"] == "/u/bob/follow/"
    assert r.zscore(keys.blocks(alice.id), bob.id) is None


@override_settings(RETWIS_LIMIT_LIKES=(1, 3600))
def test_a_rate_limit_answers_json_with_retry_after(repo, r, alice, bob, alice_client):
    post = repo.posts.create_post(bob.id, "like me", at=T0)
    assert alice_client.post(f"/p/{post}/like/", **JSON).status_code == 200

    response = alice_client.post(f"/p/{post}/unlike/", **JSON)

    assert response.status_code == 429
    assert response["Retry-After"]
    body = response.json()
    assert body["ok"] is False
    assert body["message"].startswith("You have liked a lot in a short time. Try again in ")
    assert r.zcard(keys.likes(post)) == 1  # the unlike did not go through


@pytest.mark.parametrize("url", ["/u/bob/follow/", "/u/bob/mute/"])
def test_without_the_header_the_form_still_redirects(url, bob, alice_client):
    response = alice_client.post(url)

    assert response.status_code == 302 and response["Location"] == "/u/bob/"
