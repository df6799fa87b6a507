"""Likes (issue 24): rate limited on the pages and the client API (RETWIS_LIMIT_LIKES, likes
and unlikes), and told once: a like, repost or follow undone and made again tells no one
again (keys.notified); with the Redis state each leaves."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from social import keys
from tests.api import Api, token_for
from tests.conftest import login, make_user

T0 = 1_700_000_000
DAY = 86400


def told(r, user) -> list[str]:
    return r.lrange(keys.notifications(user.id), 0, -1)


def unread(r, user) -> str | None:
    return r.hget(keys.user(user.id), "unread_notifications")


def test_liking_again_tells_no_one_again(repo, r, alice, bob):
    post = repo.posts.create_post(bob.id, "like me", at=T0)

    assert repo.likes.like(alice.id, post, at=T0 + 1)
    assert repo.likes.unlike(alice.id, post)
    assert repo.likes.like(alice.id, post, at=T0 + 2)

    assert told(r, bob) == [f"like|{alice.id}|{post}|{T0 + 1}"]
    assert unread(r, bob) == "1"
    assert r.hget(keys.post(post), "likes") == "1" and r.zcard(keys.likes(post)) == 1
    assert r.zrange(keys.notified(bob.id), 0, -1, withscores=True) == [
        (f"like|{alice.id}|{post}", T0 + 1)
    ]
    assert 0 < r.ttl(keys.notified(bob.id)) <= keys.NOTIFICATIONS_DAYS * DAY


def test_another_liker_and_another_post_are_told(repo, r, alice, bob, charlie):
    post = repo.posts.create_post(bob.id, "one", at=T0)
    other = repo.posts.create_post(bob.id, "two", at=T0)

    repo.likes.like(alice.id, post, at=T0 + 1)
    repo.likes.like(charlie.id, post, at=T0 + 2)
    repo.likes.like(alice.id, other, at=T0 + 3)

    assert told(r, bob) == [
        f"like|{alice.id}|{other}|{T0 + 3}",
        f"like|{charlie.id}|{post}|{T0 + 2}",
        f"like|{alice.id}|{post}|{T0 + 1}",
    ]
    assert unread(r, bob) == "3"


def test_a_like_after_the_notifications_window_is_told_again(repo, r, alice, bob):
    post = repo.posts.create_post(bob.id, "old", at=T0)
    repo.likes.like(alice.id, post, at=T0)
    repo.likes.unlike(alice.id, post)

    later = T0 + keys.NOTIFICATIONS_DAYS * DAY + 1  # the first is no longer shown
    repo.likes.like(alice.id, post, at=later)

    assert told(r, bob) == [f"like|{alice.id}|{post}|{later}", f"like|{alice.id}|{post}|{T0}"]
    assert r.zrange(keys.notified(bob.id), 0, -1) == [f"like|{alice.id}|{post}"]


def test_what_was_told_keeps_as_many_as_the_notifications(repo, r, bob, monkeypatch):
    monkeypatch.setattr(keys, "NOTIFICATIONS_CAP", 3)
    post = repo.posts.create_post(bob.id, "popular", at=T0)
    fans = [make_user(repo, f"fan{i}") for i in range(5)]
    for i, fan in enumerate(fans):
        repo.likes.like(fan.id, post, at=T0 + i)

    assert r.zrange(keys.notified(bob.id), 0, -1) == [f"like|{fan.id}|{post}" for fan in fans[2:]]


def test_one_s_own_like_tells_and_keeps_nothing(repo, r, bob):
    post = repo.posts.create_post(bob.id, "mine", at=T0)

    repo.likes.like(bob.id, post)

    assert told(r, bob) == [] and not r.exists(keys.notified(bob.id))


def test_reposting_again_tells_no_one_again(repo, r, alice, bob):
    post = repo.posts.create_post(alice.id, "share me", at=T0)
    first, _ = repo.reposts.repost(bob.id, post, at=T0 + 1)
    assert told(r, alice) == [f"repost|{bob.id}|{post}|{T0 + 1}"]
    repo.reposts.unrepost(bob.id, post)  # takes its notification back

    second, new = repo.reposts.repost(bob.id, post, at=T0 + 2)

    assert new and second != first
    assert told(r, alice) == []  # told once, of the first: not again
    assert unread(r, alice) == "1"
    assert r.zrange(keys.notified(alice.id), 0, -1) == [f"repost|{bob.id}|{post}"]
    assert r.hget(keys.post(post), "reposts") == "1"


def test_following_again_tells_no_one_again(repo, r, alice, bob):
    assert repo.graph.follow(alice.id, bob.id, at=T0)
    repo.graph.unfollow(alice.id, bob.id)
    assert repo.graph.follow(alice.id, bob.id, at=T0 + 1)

    assert told(r, bob) == [f"follow|{alice.id}||{T0}"]
    assert unread(r, bob) == "1"
    assert r.zrange(keys.notified(bob.id), 0, -1) == [f"follow|{alice.id}|"]


def test_replies_and_mentions_are_told_each_time(repo, r, alice, bob):
    post = repo.posts.create_post(bob.id, "question", at=T0)
    answer = repo.posts.create_post(alice.id, "answer", reply_to=post, at=T0 + 1)
    more = repo.posts.create_post(alice.id, "and more", reply_to=post, at=T0 + 2)
    mention = repo.posts.create_post(alice.id, "hi @bob", at=T0 + 3)

    assert told(r, bob) == [  # a reply names itself (test_notifications.py)
        f"mention|{alice.id}|{mention}|{T0 + 3}",
        f"reply|{alice.id}|{more}|{T0 + 2}",
        f"reply|{alice.id}|{answer}|{T0 + 1}",
    ]
    assert not r.exists(keys.notified(bob.id))  # each is a new post: nothing to remember


def test_a_purged_account_leaves_no_record_of_what_it_was_told(repo, r, alice, bob):
    post = repo.posts.create_post(bob.id, "bye", at=T0)
    repo.likes.like(alice.id, post)
    repo.accounts.delete_account(bob, at=T0)

    purged = repo.accounts.purge_deleted_accounts(at=T0 + keys.DELETED_ACCOUNT_GRACE_DAYS * DAY + 1)

    assert purged == [bob.id]

    assert not r.exists(keys.notified(bob.id)) and not r.exists(keys.notifications(bob.id))


@override_settings(RETWIS_LIMIT_LIKES=(1000, 3600))
def test_the_flood_of_the_issue_keeps_the_earlier_notifications(repo, r, alice, bob, charlie):
    post = repo.posts.create_post(bob.id, "victim", at=T0)
    repo.graph.follow(charlie.id, bob.id, at=T0 + 1)
    api = Api(token_for(repo, alice))

    for _ in range(40):
        assert api.post(f"/api/v1/statuses/{post}/favourite").status_code == 200
        assert api.post(f"/api/v1/statuses/{post}/unfavourite").status_code == 200

    kinds = [item.split("|")[:2] for item in told(r, bob)]
    assert kinds == [["like", str(alice.id)], ["follow", str(charlie.id)]]
    assert unread(r, bob) == "2"
    assert r.zcard(keys.likes(post)) == 0 and r.hget(keys.post(post), "likes") == "0"


@override_settings(RETWIS_LIMIT_LIKES=(2, 3600))
def test_likes_and_unlikes_on_the_pages_are_rate_limited(repo, r, alice, bob):
    post = repo.posts.create_post(bob.id, "like me", at=T0)
    client = login(Client(), repo, alice)
    assert client.post(f"/p/{post}/like/").status_code == 302
    assert client.post(f"/p/{post}/unlike/").status_code == 302

    response = client.post(f"/p/{post}/like/")

    assert response.status_code == 429
    assert b"You have liked a lot in a short time." in response.content
    assert 0 < int(response["Retry-After"]) <= 3600
    assert r.zcard(keys.likes(post)) == 0 and r.zcard(keys.user_likes(alice.id)) == 0
    assert r.get(keys.rate_limit("like_user", str(alice.id))) == "2"  # the refused one given back


@override_settings(RETWIS_LIMIT_LIKES=(2, 3600))
def test_favourites_and_unfavourites_through_the_api_are_rate_limited(repo, r, alice, bob):
    post = repo.posts.create_post(bob.id, "like me", at=T0)
    api = Api(token_for(repo, alice))
    liked = api.post(f"/api/v1/statuses/{post}/favourite")
    assert liked.status_code == 200 and liked["X-RateLimit-Remaining"] == "1"
    assert api.post(f"/api/v1/statuses/{post}/unfavourite").status_code == 200

    response = api.post(f"/api/v1/statuses/{post}/favourite")

    assert response.status_code == 429
    assert response.json() == {"error": "Too many requests"}
    assert response["X-RateLimit-Limit"] == "2" and int(response["Retry-After"]) > 0
    assert r.zcard(keys.likes(post)) == 0 and r.hget(keys.post(post), "likes") == "0"


def test_the_like_limit_is_per_user_and_has_a_default(repo, r, alice, bob, settings):
    assert settings.RETWIS_LIMIT_LIKES == (200, 3600)
    settings.RETWIS_LIMIT_LIKES = (1, 3600)
    post = repo.posts.create_post(bob.id, "like me", at=T0)
    assert login(Client(), repo, alice).post(f"/p/{post}/like/").status_code == 302

    assert login(Client(), repo, bob).post(f"/p/{post}/like/").status_code == 302

    assert r.zcard(keys.likes(post)) == 2


def test_a_missing_post_is_not_counted_against_the_limit(repo, r, alice):
    api = Api(token_for(repo, alice))

    assert api.post("/api/v1/statuses/999/favourite").status_code == 404

    assert not r.exists(keys.rate_limit("like_user", str(alice.id)))


@pytest.mark.parametrize("action", ["like", "unlike"])
def test_a_visitor_is_sent_to_log_in_and_nothing_is_counted(repo, r, bob, action):
    post = repo.posts.create_post(bob.id, "like me", at=T0)

    response = Client().post(f"/p/{post}/{action}/")

    assert response.status_code == 302 and "/login/" in response["Location"]
    assert r.zcard(keys.likes(post)) == 0 and not r.keys("ratelimit:*")
