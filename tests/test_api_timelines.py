"""Lists of posts through the API: the same rules as the pages (blocks, mutes, word
filters, suspensions, deleted posts), Mastodon's paging (max_id, since_id, min_id, limit,
Link), and a fixed number of round trips whatever the page's length."""

from __future__ import annotations

import re

import pytest

from social import keys
from tests.api import Api, token_for
from tests.conftest import CLUSTER


def ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [int(s["id"]) for s in response.json()]


def next_max(response) -> str | None:
    found = re.search(r"max_id=(\d+)>; rel=\"next\"", response.get("Link", ""))
    return found[1] if found else None


@pytest.fixture
def posts(repo, alice, bob):
    """bob follows alice; alice wrote 12 posts (ids 1..12)."""
    repo.graph.follow(bob.id, alice.id)
    return [repo.posts.create_post(alice.id, f"post {i}") for i in range(12)]


def test_home_lists_the_feed_newest_first_with_link_headers(repo, bob, posts):
    api = Api(token_for(repo, bob))
    first = api.get("/api/v1/timelines/home", {"limit": 5})
    assert ids(first) == posts[::-1][:5]
    assert first.json()[0]["account"]["username"] == "alice"
    assert next_max(first) == str(posts[-5])
    assert 'rel="prev"' in first["Link"] and f"min_id={posts[-1]}" in first["Link"]
    second = api.get("/api/v1/timelines/home", {"limit": 5, "max_id": next_max(first)})
    assert ids(second) == posts[::-1][5:10]
    last = api.get("/api/v1/timelines/home", {"limit": 5, "max_id": posts[2]})
    assert ids(last) == [posts[1], posts[0]]
    assert next_max(last) is None


def test_since_id_and_min_id_page_towards_the_newest(repo, bob, posts):
    api = Api(token_for(repo, bob))
    assert ids(api.get("/api/v1/timelines/home", {"since_id": posts[8]})) == posts[:8:-1]
    newer = api.get("/api/v1/timelines/home", {"min_id": posts[3], "limit": 2})
    assert ids(newer) == [posts[5], posts[4]]
    assert ids(api.get("/api/v1/timelines/home", {"min_id": posts[-1]})) == []


def test_a_max_id_no_longer_listed_still_pages_in_order(repo, alice, bob, posts):
    repo.posts.delete_own_post(alice.id, posts[6])  # leaves the lists by LREM: bisected
    page = Api(token_for(repo, None, "read")).get(
        "/api/v1/timelines/public", {"max_id": posts[6], "limit": 3}
    )
    assert ids(page) == [posts[5], posts[4], posts[3]]


def test_limit_is_clamped_an_empty_one_ignored_and_junk_refused(repo, bob, posts):
    api = Api(token_for(repo, bob))
    assert len(ids(api.get("/api/v1/timelines/home", {"limit": "1000"}))) == 12
    assert len(ids(api.get("/api/v1/timelines/home", {"limit": "0"}))) == 1
    assert len(ids(api.get("/api/v1/timelines/home", {"limit": "", "max_id": ""}))) == 12
    for junk in ({"limit": "x"}, {"max_id": "y"}):  # test_api_bad_input.py has the rest
        refused = api.get("/api/v1/timelines/home", junk)
        assert refused.status_code == 400
        assert refused.json() == {
            "error": f"{next(iter(junk))} must be a number: 1 to 19 digits 0-9"
        }


def test_blocks_mutes_and_filters_apply_as_on_the_pages(repo, alice, bob, charlie):
    api = Api(token_for(repo, bob))
    kept = repo.posts.create_post(alice.id, "plain words")
    muted = repo.posts.create_post(charlie.id, "charlie speaks")
    filtered = repo.posts.create_post(alice.id, "talking about spoilers")
    assert set(ids(api.get("/api/v1/timelines/public"))) == {kept, muted, filtered}
    repo.relations.mute(bob.id, charlie.id)
    repo.filters.add(bob.id, "spoilers", "never")
    assert ids(api.get("/api/v1/timelines/public")) == [kept]
    repo.relations.block(alice.id, bob.id)
    assert ids(api.get("/api/v1/timelines/public")) == []
    assert api.get(f"/api/v1/statuses/{kept}").status_code == 404
    visitor = Api(None)
    assert set(ids(visitor.get("/api/v1/timelines/public"))) == {kept, muted, filtered}


def test_suspended_and_deleted_posts_are_gone(repo, alice, bob, sam):
    api = Api(token_for(repo, bob))
    mine = repo.posts.create_post(bob.id, "mine")
    theirs = repo.posts.create_post(alice.id, "theirs")
    repo.moderation.suspend(alice.id, sam, "spam")
    assert ids(api.get("/api/v1/timelines/public")) == [mine]
    assert api.get(f"/api/v1/statuses/{theirs}").status_code == 404
    assert api.get(f"/api/v1/accounts/{alice.id}").status_code == 404
    staff = Api(token_for(repo, sam))
    assert staff.get(f"/api/v1/accounts/{alice.id}").json()["suspended"] is True


def test_tag_timeline_and_favourites(repo, r, alice, bob):
    api = Api(token_for(repo, bob))
    tagged = repo.posts.create_post(alice.id, "about #Redis")
    repo.posts.create_post(alice.id, "untagged")
    assert ids(api.get("/api/v1/timelines/tag/redis")) == [tagged]
    assert ids(api.get("/api/v1/timelines/tag/REDIS")) == [tagged]
    assert ids(api.get("/api/v1/timelines/tag/nothing")) == []
    assert api.post(f"/api/v1/statuses/{tagged}/favourite").json()["favourited"] is True
    assert ids(api.get("/api/v1/favourites")) == [tagged]
    assert r.zscore(keys.user_likes(bob.id), tagged) is not None


def test_remote_and_media_only_timelines_are_empty(repo, alice):
    repo.posts.create_post(alice.id, "local")
    visitor = Api(None)
    assert ids(visitor.get("/api/v1/timelines/public", {"remote": "true"})) == []
    assert ids(visitor.get("/api/v1/timelines/public", {"only_media": "true"})) == []


def test_a_page_costs_the_same_round_trips_whatever_its_length(repo, alice, bob, round_trips):
    repo.graph.follow(bob.id, alice.id)
    for i in range(40):
        repo.posts.create_post(alice.id, f"reply to nobody {i} #t @bob")
    api = Api(token_for(repo, bob))
    costs = []
    for limit in (5, 40):
        api.get("/api/v1/timelines/home", {"limit": limit})  # warm
        round_trips.reset()
        assert len(ids(api.get("/api/v1/timelines/home", {"limit": limit}))) == limit
        costs.append(round_trips.count)
    assert costs[0] == costs[1]
    if not CLUSTER:  # a cluster's pipeline is one round trip per node it reaches
        # The page's first pipeline, with the token and its user (remembered, checked
        # there) and the accounts of the posts it listed last time.
        assert costs[1] == 1


def test_a_remembered_token_is_checked_on_the_page_and_answers_nothing_once_revoked(
    repo, alice, bob, sam, posts
):
    token = token_for(repo, bob)
    api = Api(token)
    assert len(ids(api.get("/api/v1/timelines/home"))) == 12  # now remembered
    repo.oauth.revoke(token)
    revoked = api.get("/api/v1/timelines/home")
    assert revoked.status_code == 401
    assert revoked.json() == {"error": "The access token is invalid"}
    other = Api(token_for(repo, bob))
    assert other.get("/api/v1/timelines/public").status_code == 200
    repo.moderation.suspend(bob.id, sam, "spam")
    assert other.get("/api/v1/timelines/public").status_code == 403
    assert other.get("/api/v1/timelines/public", {"remote": "true"}).status_code == 403


def test_a_remembered_token_follows_its_accounts_new_blocks(repo, alice, bob, posts):
    api = Api(token_for(repo, bob))
    assert len(ids(api.get("/api/v1/timelines/public"))) == 12
    repo.relations.block(bob.id, alice.id)  # bob's relations flag is set: read again
    assert ids(api.get("/api/v1/timelines/public")) == []
