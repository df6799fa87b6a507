"""Statuses through the API: posting (idempotent with Idempotency-Key), replies, reading,
deleting, context, favourites, reblogs, and what the site has not; with the Redis state."""

from __future__ import annotations

import pytest

from social import keys
from social.api.statuses import REPLY_NOT_FOUND
from tests.api import Api, all_keys, token_for


def test_posting_stores_the_post_as_the_form_does(repo, r, alice):
    api = Api(token_for(repo, alice))
    response = api.post("/api/v1/statuses", {"status": "Hello <b>world</b> #Redis @bob"})
    assert response.status_code == 200
    status = response.json()
    post_id = int(status["id"])
    assert status["content"].startswith('<p>Hello &lt;b&gt;world&lt;/b&gt; <a class="tag"')
    assert status["tags"] == [{"name": "redis", "url": "http://testserver/tag/redis/"}]
    assert status["created_at"].endswith(".000Z") and len(status["created_at"]) == 24
    assert status["account"]["statuses_count"] == 1
    assert r.hget(keys.post(post_id), "body") == "Hello <b>world</b> #Redis @bob"
    assert r.lrange(keys.own_posts(alice.id), 0, -1) == [str(post_id)]
    assert r.lindex(keys.timeline(), 0) == str(post_id)
    assert r.lindex(keys.tag_posts("redis"), 0) == str(post_id)


def test_the_idempotency_key_posts_once(repo, r, alice):
    api = Api(token_for(repo, alice))
    first = api.post("/api/v1/statuses", {"status": "once"}, HTTP_IDEMPOTENCY_KEY="k-1")
    again = api.post("/api/v1/statuses", {"status": "once"}, HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.json()["id"] == again.json()["id"]
    assert r.llen(keys.own_posts(alice.id)) == 1
    assert len(all_keys(r, "post_token:*")) == 1
    other = api.post("/api/v1/statuses", {"status": "once"}, HTTP_IDEMPOTENCY_KEY="k-2")
    assert other.json()["id"] != first.json()["id"]


def test_a_reply_names_its_parent_and_its_author(repo, r, alice, bob):
    parent = repo.posts.create_post(bob.id, "question?")
    api = Api(token_for(repo, alice))
    reply = api.post("/api/v1/statuses", {"status": "answer", "in_reply_to_id": str(parent)})
    assert reply.json()["in_reply_to_id"] == str(parent)
    assert reply.json()["in_reply_to_account_id"] == str(bob.id)
    assert r.lrange(keys.replies(parent), 0, -1) == [reply.json()["id"]]
    context = api.get(f"/api/v1/statuses/{parent}/context").json()
    assert [s["id"] for s in context["descendants"]] == [reply.json()["id"]]
    up = api.get(f"/api/v1/statuses/{reply.json()['id']}/context").json()
    assert [s["id"] for s in up["ancestors"]] == [str(parent)]
    assert api.get(f"/api/v1/statuses/{parent}").json()["replies_count"] == 1


def test_replying_to_a_missing_or_blocking_author_is_404_as_mastodon_answers(repo, r, alice, bob):
    api = Api(token_for(repo, alice))
    missing = api.post("/api/v1/statuses", {"status": "x", "in_reply_to_id": "999"})
    assert missing.status_code == 404
    assert missing.json() == {"error": REPLY_NOT_FOUND}
    parent = repo.posts.create_post(bob.id, "go away")
    next_id = r.get(keys.next_post_id())
    for blocker, blocked in ((bob, alice), (alice, bob)):  # a block either way
        repo.relations.block(blocker.id, blocked.id)
        refused = api.post("/api/v1/statuses", {"status": "x", "in_reply_to_id": str(parent)})
        assert refused.status_code == 404 and refused.json() == {"error": REPLY_NOT_FOUND}
        repo.relations.unblock(blocker.id, blocked.id)
    assert r.llen(keys.own_posts(alice.id)) == 0 and r.llen(keys.replies(parent)) == 0
    assert r.get(keys.next_post_id()) == next_id
    assert r.lrange(keys.notifications(bob.id), 0, -1) == []


def test_deleting_ones_own_status_answers_it_with_its_text(repo, r, alice, bob):
    post_id = repo.posts.create_post(alice.id, "regret")
    theirs = repo.posts.create_post(bob.id, "not yours")
    api = Api(token_for(repo, alice))
    assert api.delete(f"/api/v1/statuses/{theirs}").status_code == 404
    assert r.hget(keys.post(theirs), "deleted") is None
    deleted = api.delete(f"/api/v1/statuses/{post_id}")
    assert deleted.status_code == 200
    assert deleted.json()["text"] == "regret"
    assert r.hget(keys.post(post_id), "deleted") == "1"
    assert api.get(f"/api/v1/statuses/{post_id}").status_code == 404
    assert api.delete(f"/api/v1/statuses/{post_id}").status_code == 404


def test_favourite_and_unfavourite_are_idempotent(repo, r, alice, bob):
    post_id = repo.posts.create_post(bob.id, "like me")
    api = Api(token_for(repo, alice))
    for _ in range(2):
        liked = api.post(f"/api/v1/statuses/{post_id}/favourite").json()
        assert liked["favourited"] is True and liked["favourites_count"] == 1
    assert r.hget(keys.post(post_id), "likes") == "1"
    by = api.get(f"/api/v1/statuses/{post_id}/favourited_by").json()
    assert [a["username"] for a in by] == ["alice"]
    for _ in range(2):
        unliked = api.post(f"/api/v1/statuses/{post_id}/unfavourite").json()
        assert unliked["favourited"] is False and unliked["favourites_count"] == 0
    assert r.zcard(keys.likes(post_id)) == 0


@pytest.mark.parametrize("action", ["favourite", "reblog"])
@pytest.mark.parametrize("author_blocks", [True, False])
def test_across_a_block_a_favourite_or_reblog_is_404_writing_nothing(
    repo, r, alice, bob, action, author_blocks
):
    post_id = repo.posts.create_post(bob.id, "mine")
    if author_blocks:
        repo.relations.block(bob.id, alice.id)
    else:
        repo.relations.block(alice.id, bob.id)
    response = Api(token_for(repo, alice)).post(f"/api/v1/statuses/{post_id}/{action}")
    assert response.status_code == 404
    assert response.json() == {"error": "Record not found"}
    assert r.zcard(keys.likes(post_id)) == 0 and r.zcard(keys.reposts(post_id)) == 0
    assert r.zcard(keys.user_likes(alice.id)) == 0 and r.zcard(keys.user_reposts(alice.id)) == 0
    assert r.hget(keys.post(post_id), "likes") is None
    assert r.lrange(keys.notifications(bob.id), 0, -1) == []
    assert not r.keys("ratelimit:*")  # refused before it counts


def test_reblogging_reposts_and_nests_the_status(repo, r, alice, bob, charlie):
    post_id = repo.posts.create_post(bob.id, "share me")
    repo.graph.follow(charlie.id, alice.id)
    api = Api(token_for(repo, alice))
    boosted = api.post(f"/api/v1/statuses/{post_id}/reblog")
    assert boosted.status_code == 200
    data = boosted.json()
    assert data["account"]["username"] == "alice"
    assert data["reblog"]["id"] == str(post_id)
    assert data["reblog"]["reblogged"] is True and data["reblog"]["reblogs_count"] == 1
    assert r.zscore(keys.reposts(post_id), alice.id) is not None
    again = api.post(f"/api/v1/statuses/{post_id}/reblog").json()
    assert again["id"] == data["id"]  # idempotent
    home = Api(token_for(repo, charlie)).get("/api/v1/timelines/home").json()
    assert [(s["id"], s["reblog"]["id"]) for s in home] == [(data["id"], str(post_id))]
    shown = api.get(f"/api/v1/statuses/{data['id']}").json()
    assert shown["reblog"]["id"] == str(post_id)
    who = api.get(f"/api/v1/statuses/{post_id}/reblogged_by").json()
    assert [a["username"] for a in who] == ["alice"]
    undone = api.post(f"/api/v1/statuses/{post_id}/unreblog").json()
    assert undone["reblogged"] is False and undone["reblogs_count"] == 0
    assert r.zcard(keys.reposts(post_id)) == 0
    assert Api(token_for(repo, charlie)).get("/api/v1/timelines/home").json() == []


def test_reblogging_ones_own_post_is_refused(repo, r, alice):
    post_id = repo.posts.create_post(alice.id, "mine")
    response = Api(token_for(repo, alice)).post(f"/api/v1/statuses/{post_id}/reblog")
    assert response.status_code == 403
    assert r.zcard(keys.reposts(post_id)) == 0


def test_what_the_site_has_not_is_refused_never_a_500(repo, r, alice):
    post_id = repo.posts.create_post(alice.id, "mine")
    api = Api(token_for(repo, alice))
    for action in ("bookmark", "pin", "mute", "translate"):
        response = api.post(f"/api/v1/statuses/{post_id}/{action}")
        assert response.status_code == 422
        assert "not supported" in response.json()["error"]
    edit = api.client.put(
        f"/api/v1/statuses/{post_id}", "status=changed",
        content_type="application/x-www-form-urlencoded", **api.headers,
    )  # fmt: skip
    assert edit.status_code == 422
    assert r.hget(keys.post(post_id), "body") == "mine"
    assert api.post("/api/v1/statuses/999/pin").status_code == 404
    assert api.get("/api/v1/bookmarks").json() == []
    assert api.get("/api/v1/custom_emojis").json() == []
    assert api.client.patch("/api/v1/statuses", **api.headers).status_code == 405
