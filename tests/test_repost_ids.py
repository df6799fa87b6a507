"""A repost's id where a post's is expected (issue 24): every action on it acts on the post
it shares, after the same visibility check, on the client API and the pages alike; across a
block (with the reposter or the author, either way) 404 with nothing written."""

from __future__ import annotations

import pytest
from django.test import Client

from social import keys
from tests.api import Api, token_for
from tests.conftest import login, make_user

T0 = 1_700_000_000


@pytest.fixture
def cast(repo):
    """alice writes a post; bob reposts it; carol acts on bob's repost."""
    alice, bob, carol = (make_user(repo, n) for n in ("alice", "bob", "carol"))
    post = repo.posts.create_post(alice.id, "a good thought", at=T0)
    repost, _ = repo.reposts.repost(bob.id, post, at=T0 + 1)
    return alice, bob, carol, post, repost


def state(r, cast) -> dict:
    """What an action across a block must leave as it was."""
    alice, bob, carol, post, repost = cast
    return {
        "likes": [r.zrange(keys.likes(i), 0, -1) for i in (post, repost)],
        "carol's likes": r.zrange(keys.user_likes(carol.id), 0, -1),
        "reposts": [r.zrange(keys.reposts(i), 0, -1) for i in (post, repost)],
        "carol's reposts": r.zrange(keys.user_reposts(carol.id), 0, -1),
        "replies": [r.lrange(keys.replies(i), 0, -1) for i in (post, repost)],
        "carol's posts": r.lrange(keys.own_posts(carol.id), 0, -1),
        "hashes": [r.hgetall(keys.post(i)) for i in (post, repost)],
        "told": [r.lrange(keys.notifications(u.id), 0, -1) for u in (alice, bob)],
        "unread": [r.hget(keys.user(u.id), "unread_notifications") for u in (alice, bob)],
        "notified": [r.zrange(keys.notified(u.id), 0, -1) for u in (alice, bob)],
    }


BLOCKS = {
    "the author blocks": lambda repo, c: repo.relations.block(c[0].id, c[2].id),
    "the reposter blocks": lambda repo, c: repo.relations.block(c[1].id, c[2].id),
    "one blocks the author": lambda repo, c: repo.relations.block(c[2].id, c[0].id),
}


def test_favouriting_a_reblog_favourites_the_status_it_shares(repo, r, cast):
    alice, bob, carol, post, repost = cast
    api = Api(token_for(repo, carol))

    response = api.post(f"/api/v1/statuses/{repost}/favourite")

    assert response.status_code == 200
    data = response.json()
    assert data["id"] == str(repost) and data["reblog"]["id"] == str(post)
    assert data["favourited"] is True and data["reblog"]["favourited"] is True
    assert data["reblog"]["favourites_count"] == 1
    assert r.zrange(keys.likes(post), 0, -1) == [str(carol.id)]
    assert not r.exists(keys.likes(repost))
    assert r.zrange(keys.user_likes(carol.id), 0, -1) == [str(post)]
    assert r.hget(keys.post(post), "likes") == "1" and r.hget(keys.post(repost), "likes") is None
    assert r.lindex(keys.notifications(alice.id), 0).startswith(f"like|{carol.id}|{post}|")
    assert r.lrange(keys.notifications(bob.id), 0, -1) == []

    undone = api.post(f"/api/v1/statuses/{repost}/unfavourite")

    assert undone.status_code == 200 and undone.json()["reblog"]["favourited"] is False
    assert r.zcard(keys.likes(post)) == 0 and r.hget(keys.post(post), "likes") == "0"


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("action", ["favourite", "reblog"])
def test_across_a_block_a_reblogs_favourite_and_reblog_are_404_writing_nothing(
    repo, r, cast, block, action
):
    BLOCKS[block](repo, cast)
    before = state(r, cast)

    response = Api(token_for(repo, cast[2])).post(f"/api/v1/statuses/{cast[4]}/{action}")

    assert response.status_code == 404
    assert response.json() == {"error": "Record not found"}
    assert state(r, cast) == before


@pytest.mark.parametrize("block", BLOCKS)
def test_across_a_block_a_reply_to_a_reblog_is_404_writing_nothing(repo, r, cast, block):
    BLOCKS[block](repo, cast)
    before = state(r, cast)
    next_id = r.get(keys.next_post_id())

    response = Api(token_for(repo, cast[2])).post(
        "/api/v1/statuses", {"status": "hello", "in_reply_to_id": str(cast[4])}
    )

    assert response.status_code == 404
    assert "does not appear to exist" in response.json()["error"]
    assert state(r, cast) == before and r.get(keys.next_post_id()) == next_id


def test_reblogging_and_unreblogging_a_reblog_act_on_the_status_it_shares(repo, r, cast):
    alice, bob, carol, post, repost = cast
    api = Api(token_for(repo, carol))

    boosted = api.post(f"/api/v1/statuses/{repost}/reblog").json()

    assert boosted["reblog"]["id"] == str(post) and boosted["reblog"]["reblogged"] is True
    assert r.zrange(keys.reposts(post), 0, -1) == [str(bob.id), str(carol.id)]
    assert not r.exists(keys.reposts(repost))

    undone = api.post(f"/api/v1/statuses/{repost}/unreblog")

    assert undone.status_code == 200 and undone.json()["id"] == str(post)
    assert r.zrange(keys.reposts(post), 0, -1) == [str(bob.id)]
    assert r.zcard(keys.user_reposts(carol.id)) == 0


def test_replying_to_a_reblog_replies_to_the_status_it_shares(repo, r, cast):
    alice, bob, carol, post, repost = cast
    api = Api(token_for(repo, carol))

    reply = api.post("/api/v1/statuses", {"status": "agreed", "in_reply_to_id": str(repost)})

    assert reply.status_code == 200
    assert reply.json()["in_reply_to_id"] == str(post)
    assert reply.json()["in_reply_to_account_id"] == str(alice.id)
    reply_id = reply.json()["id"]
    assert r.lrange(keys.replies(post), 0, -1) == [reply_id]
    assert not r.exists(keys.replies(repost))
    assert r.hget(keys.post(post), "replies") == "1"
    assert r.hget(keys.post(int(reply_id)), "reply_to") == str(post)
    assert r.lindex(keys.notifications(alice.id), 0).startswith(f"reply|{carol.id}|{reply_id}|")
    assert r.lrange(keys.notifications(bob.id), 0, -1) == []


def test_a_reblogs_lists_and_context_are_those_of_the_status_it_shares(repo, r, cast):
    alice, bob, carol, post, repost = cast
    repo.likes.like(carol.id, post)
    reply = repo.posts.create_post(carol.id, "yes", reply_to=post)
    api = Api(token_for(repo, carol))

    liked_by = api.get(f"/api/v1/statuses/{repost}/favourited_by").json()
    shared_by = api.get(f"/api/v1/statuses/{repost}/reblogged_by").json()
    context = api.get(f"/api/v1/statuses/{repost}/context").json()
    shown = api.get(f"/api/v1/statuses/{repost}").json()

    assert [a["username"] for a in liked_by] == ["carol"]
    assert [a["username"] for a in shared_by] == ["bob"]
    assert [s["id"] for s in context["descendants"]] == [str(reply)]
    assert shown["id"] == str(repost) and shown["reblog"]["id"] == str(post)


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("path", ["", "/context", "/favourited_by", "/reblogged_by"])
def test_across_a_block_a_reblog_is_not_found(repo, cast, block, path):
    BLOCKS[block](repo, cast)

    response = Api(token_for(repo, cast[2])).get(f"/api/v1/statuses/{cast[4]}{path}")

    assert response.status_code == 404


def test_deleting_ones_own_reblog_undoes_it(repo, r, cast):
    alice, bob, carol, post, repost = cast

    response = Api(token_for(repo, bob)).delete(f"/api/v1/statuses/{repost}")

    assert response.status_code == 200
    assert response.json()["id"] == str(repost) and response.json()["reblog"]["id"] == str(post)
    assert not r.exists(keys.post(repost))
    assert r.zcard(keys.reposts(post)) == 0 and r.zcard(keys.user_reposts(bob.id)) == 0
    assert r.hget(keys.post(post), "reposts") == "0"
    assert r.hget(keys.post(post), "deleted") is None  # alice's post stays
    assert r.lrange(keys.own_posts(bob.id), 0, -1) == []


def test_deleting_someone_elses_reblog_is_404_writing_nothing(repo, r, cast):
    before = state(r, cast)

    for who in (cast[0], cast[2]):  # the author of the post it shares, and anyone else
        response = Api(token_for(repo, who)).delete(f"/api/v1/statuses/{cast[4]}")
        assert response.status_code == 404

    assert state(r, cast) == before


# The pages: each card action and the reply form, posted to a repost's id.


def test_liking_and_unliking_a_repost_on_the_pages_act_on_the_post_it_shares(repo, r, cast):
    alice, bob, carol, post, repost = cast
    client = login(Client(), repo, carol)

    assert client.post(f"/p/{repost}/like/").status_code == 302

    assert r.zrange(keys.likes(post), 0, -1) == [str(carol.id)]
    assert not r.exists(keys.likes(repost))
    assert r.lindex(keys.notifications(alice.id), 0).startswith(f"like|{carol.id}|{post}|")
    assert r.lrange(keys.notifications(bob.id), 0, -1) == []

    assert client.post(f"/p/{repost}/unlike/").status_code == 302

    assert r.zcard(keys.likes(post)) == 0 and r.hget(keys.post(post), "likes") == "0"
    assert r.zcard(keys.user_likes(carol.id)) == 0


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("action", ["like", "repost"])
def test_across_a_block_a_reposts_like_and_repost_on_the_pages_write_nothing(
    repo, r, cast, block, action
):
    BLOCKS[block](repo, cast)
    before = state(r, cast)

    response = login(Client(), repo, cast[2]).post(f"/p/{cast[4]}/{action}/")

    # A repost its reposter hides from the reader is not found; a block with the author
    # sends the reader back to the post (which is not found for them either).
    assert response.status_code == (404 if block == "the reposter blocks" else 302)
    assert state(r, cast) == before


def test_undoing_a_repost_through_a_repost_s_id_on_the_pages(repo, r, cast):
    alice, bob, carol, post, repost = cast
    client = login(Client(), repo, carol)
    client.post(f"/p/{repost}/repost/")
    assert r.zrange(keys.reposts(post), 0, -1) == [str(bob.id), str(carol.id)]

    assert client.post(f"/p/{repost}/unrepost/").status_code == 302

    assert r.zrange(keys.reposts(post), 0, -1) == [str(bob.id)]
    assert r.zcard(keys.user_reposts(carol.id)) == 0


def test_the_reply_form_posted_to_a_repost_s_id_replies_to_the_post_it_shares(repo, r, cast):
    alice, bob, carol, post, repost = cast

    response = login(Client(), repo, carol).post(
        "/post/", {"status": "agreed", "reply_to": str(repost)}
    )

    assert response.status_code == 302
    reply = int(r.lindex(keys.own_posts(carol.id), 0))
    assert r.hget(keys.post(reply), "reply_to") == str(post)
    assert r.lrange(keys.replies(post), 0, -1) == [str(reply)]
    assert not r.exists(keys.replies(repost))


@pytest.mark.parametrize("block", BLOCKS)
def test_across_a_block_the_reply_form_to_a_repost_s_id_posts_nothing(repo, r, cast, block):
    BLOCKS[block](repo, cast)
    before = state(r, cast)

    response = login(Client(), repo, cast[2]).post(
        "/post/", {"status": "hello", "reply_to": str(cast[4])}
    )

    # A block with the author refuses the reply (403); a repost hidden by its reposter is
    # no post to reply to (the form's error, 400).
    assert response.status_code == (400 if block == "the reposter blocks" else 403)
    assert state(r, cast) == before


def test_deleting_a_repost_on_the_pages_is_404_writing_nothing(repo, r, cast):
    before = state(r, cast)
    client = login(Client(), repo, cast[1])  # bob, whose repost it is

    assert client.get(f"/p/{cast[4]}/delete/").status_code == 404
    assert client.post(f"/p/{cast[4]}/delete/").status_code == 404

    assert state(r, cast) == before
    assert r.lrange(keys.own_posts(cast[1].id), 0, -1) == [str(cast[4])]


def test_reporting_a_repost_reports_the_post_it_shares(repo, r, cast):
    alice, bob, carol, post, repost = cast
    client = login(Client(), repo, carol)

    response = client.post(f"/p/{repost}/report/", {"reason": "spam", "text": ""})

    assert response.status_code == 302 and response["Location"] == f"/p/{post}/"
    assert r.hget(keys.post_reports(post), str(carol.id)) is not None
    assert not r.exists(keys.post_reports(repost))
