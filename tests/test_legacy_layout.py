"""A database written by the reference PHP Retwis works here, and ours reads back its way.

The data is written with raw commands exactly as the PHP code does (register.php,
follow.php, post.php). The reference has no own-posts list (`user_posts:<id>`), so its
posts show on home feeds, the timeline and permalinks, but not on profiles: that is the
documented limit (docs/data-layout.md), not a bug this suite hides.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.hashers import check_password, identify_hasher
from django.test import Client

T0 = 1_300_000_000
SECRETS = {1: "1" * 40, 2: "2" * 40}


def php_register(r, name: str, password: str) -> int:
    """register.php: INCR next_user_id, then users, user:<id>, auths, users_by_time."""
    user_id = r.incr("next_user_id")
    secret = SECRETS[user_id]
    r.hset("users", name, user_id)
    r.hset(f"user:{user_id}", mapping={"username": name, "password": password, "auth": secret})
    r.hset("auths", secret, user_id)
    r.zadd("users_by_time", {name: T0 + user_id})
    return user_id


def php_follow(r, me: int, them: int) -> None:
    """follow.php: both sorted sets, scored by the time of the follow."""
    r.zadd(f"followers:{them}", {me: T0 + 10})
    r.zadd(f"following:{me}", {them: T0 + 10})


def php_post(r, author: int, body: str, at: int) -> int:
    """post.php: INCR next_post_id, the post hash, every follower's and own feed, timeline."""
    post_id = r.incr("next_post_id")
    r.hset(f"post:{post_id}", mapping={"user_id": author, "time": at, "body": body})
    for fid in [*r.zrange(f"followers:{author}", 0, -1), author]:
        r.lpush(f"posts:{fid}", post_id)
    r.lpush("timeline", post_id)
    r.ltrim("timeline", 0, 1000)
    return post_id


@pytest.fixture
def legacy(r):
    """alice and bob written by the reference; bob follows alice; alice posted once."""
    alice = php_register(r, "alice", "plain-alice-pw")
    bob = php_register(r, "bob", "plain-bob-pw")
    php_follow(r, bob, alice)
    post_id = php_post(r, alice, "hello from 2011", T0 + 20)
    return {"alice": alice, "bob": bob, "post": post_id}


def test_it_logs_in_a_reference_user_and_hashes_the_plain_password(client, r, legacy):
    response = client.post("/login/", {"username": "alice", "password": "plain-alice-pw"})

    assert response.status_code == 302
    assert response.cookies["auth"].value == SECRETS[1]
    stored = r.hget("user:1", "password")
    identify_hasher(stored)
    assert check_password("plain-alice-pw", stored)
    assert r.hget("user:1", "auth") == SECRETS[1]  # the reference still finds its secret


def test_it_honours_a_cookie_the_reference_set(r, legacy):
    client = Client()
    client.cookies["auth"] = SECRETS[2]

    content = client.get("/").content

    assert b"What are you doing, bob?" in content
    assert b"hello from 2011" in content  # bob's reference-built home feed


def test_it_shows_reference_posts_on_the_timeline_and_permalink(client, legacy):
    timeline = client.get("/timeline/").content
    permalink = client.get(f"/p/{legacy['post']}/")

    assert b"hello from 2011" in timeline and b'href="/u/alice/"' in timeline
    assert b"@bob" in timeline  # users_by_time feeds "new here"
    assert permalink.status_code == 200 and b"hello from 2011" in permalink.content


def test_it_shows_reference_follows_in_lists_and_counts(client, legacy):
    followers = client.get("/u/alice/followers/").content
    profile = client.get("/u/alice/").content

    assert b'href="/u/bob/">@bob</a>' in followers
    assert b"<strong>1</strong> follower<" in profile  # one, so not "followers"


def test_the_profile_misses_reference_posts_but_shows_new_ones(r, legacy):
    client = Client()
    client.cookies["auth"] = SECRETS[1]

    before = client.get("/u/alice/")
    client.post("/post/", {"status": "hello from today"})
    after = client.get("/u/alice/").content

    assert before.status_code == 200
    assert b"hello from 2011" not in before.content  # no user_posts:<id> in the reference
    assert b"has not posted yet" in before.content
    assert b"hello from today" in after
    assert r.lrange("user_posts:1", 0, -1) == ["2"]


def test_it_writes_posts_the_reference_can_read(r, legacy):
    client = Client()
    client.cookies["auth"] = SECRETS[1]

    client.post("/post/", {"status": "new style"})

    # post.php's reader: LRANGE posts:<id>, HGETALL post:<id>, HGET user:<user_id> username
    assert r.lrange("posts:2", 0, -1) == ["2", "1"]  # fanned out to bob
    assert r.lrange("timeline", 0, 0) == ["2"]
    post = r.hgetall("post:2")
    assert post["body"] == "new style" and int(post["time"]) > T0
    assert r.hget(f"user:{post['user_id']}", "username") == "alice"


def test_it_signs_up_users_the_reference_can_read(client, r, legacy):
    client.post(
        "/register/",
        {"username": "carol", "password": "a fine passphrase", "password2": "a fine passphrase"},
    )

    assert r.get("next_user_id") == "3"  # one counter shared with the reference
    assert r.hget("users", "carol") == "3"
    user = r.hgetall("user:3")
    assert user["username"] == "carol" and user["auth"]
    assert r.hget("auths", user["auth"]) == "3"
    assert r.zscore("users_by_time", "carol") is not None


@pytest.mark.parametrize("typed", ["alice", "Alice"])
def test_it_refuses_to_sign_up_a_reference_users_name(client, r, legacy, typed):
    response = client.post(
        "/register/",
        {"username": typed, "password": "a fine passphrase", "password2": "a fine passphrase"},
    )

    assert b"That username is taken." in response.content
    assert r.hgetall("users") == {"alice": "1", "bob": "2"}


def test_it_delivers_new_posts_to_reference_followers(r, legacy):
    client = Client()
    client.cookies["auth"] = SECRETS[1]

    client.post("/post/", {"status": "fan-out through the reference graph"})

    bob = Client()
    bob.cookies["auth"] = SECRETS[2]
    assert b"fan-out through the reference graph" in bob.get("/").content
