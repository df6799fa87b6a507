"""Search (issue 17, part 6): people by name (exact first, then prefix, then contains;
legacy names; suspended, deleted and blocked accounts absent) and tags by prefix."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from social import keys
from social.repository import ANONYMOUS, Viewer
from tests.conftest import CLUSTER, login, make_staff, make_user

T0 = 1_700_000_000


@pytest.fixture
def world(repo, r):
    names = ["redis", "redisfan", "superredis", "ann", "bob"]
    users = {n: make_user(repo, n) for n in names}
    legacy = r.incr("next_user_id")  # written by the reference Retwis: `users` only
    r.hset("users", "RedisLegacy", legacy)
    r.hset(f"user:{legacy}", mapping={"username": "RedisLegacy", "password": "x"})
    repo.posts.create_post(users["ann"].id, "hello #redis and #redistribution", at=T0)
    repo.posts.create_post(users["ann"].id, "#rediscover", at=T0 + 1)
    return users


def names(results) -> list[str]:
    return [p.user.username for p in results.people]


def test_the_exact_name_comes_first_then_prefix_then_contains(repo, world):
    found = repo.search.search("redis", ANONYMOUS)

    assert names(found)[0] == "redis"
    assert set(names(found)) == {"redis", "redisfan", "superredis", "RedisLegacy"}
    assert names(found).index("redisfan") < names(found).index("superredis")
    assert [t.tag for t in found.tags] == ["redis", "rediscover", "redistribution"]
    assert {t.tag: t.posts for t in found.tags}["redis"] == 1


def test_a_legacy_mixed_case_name_is_found_as_typed(repo, world):
    assert names(repo.search.search("@RedisLegacy", ANONYMOUS)) == ["RedisLegacy"]


def test_at_and_hash_narrow_the_search(repo, world):
    assert repo.search.search("@redis", ANONYMOUS).tags == []
    assert repo.search.search("#redis", ANONYMOUS).people == []


def test_suspended_deleted_and_blocked_accounts_are_not_found(repo, world):
    sam = make_staff(repo, "sam")
    repo.moderation.suspend(world["redisfan"].id, sam, "spam")
    repo.accounts.delete_account(world["superredis"])
    repo.relations.block(world["redis"].id, world["ann"].id)

    assert "redisfan" not in names(repo.search.search("redis", ANONYMOUS))
    assert "superredis" not in names(repo.search.search("redis", ANONYMOUS))
    ann = Viewer.of(repo.users.get_user(world["ann"].id))
    assert "redis" not in names(repo.search.search("redis", ann))


def test_the_page_shows_follow_buttons_and_counts(repo, r, world):
    client = login(Client(), repo, world["bob"])

    html = client.get("/search/", {"q": "ann"}).content.decode()

    assert 'action="/u/ann/follow/"' in html and "2 posts" in html
    client.post("/u/ann/follow/", {"next": "/search/?q=ann"})
    assert r.zscore(keys.following(world["bob"].id), world["ann"].id) is not None
    assert 'action="/u/ann/unfollow/"' in client.get("/search/", {"q": "ann"}).content.decode()


@pytest.mark.parametrize("query", ["", "   ", "@", "#", "x" * 500, "a/b", "<script>", "%00"])
def test_odd_queries_answer_a_page_not_an_error(client, world, query):
    response = client.get("/search/", {"q": query})

    assert response.status_code == 200
    assert "<script>" not in response.content.decode().split("</header>")[1]


def test_the_work_per_query_is_bounded_whatever_the_data(repo, world, round_trips):
    for i in range(60):
        make_user(repo, f"redis{i:02d}")
    round_trips.reset()

    found = repo.search.search("redis", ANONYMOUS)
    first = round_trips.count  # the staff's name index catches up on the new accounts
    round_trips.reset()
    repo.search.search("redis", ANONYMOUS)

    assert len(found.people) == 20
    # On a cluster a pipeline costs a round trip per node it reaches (at most 3 here).
    nodes = 3 if CLUSTER else 1
    assert first <= 16 * nodes and round_trips.count <= 8 * nodes  # steady state


# --- The navigation's box and the length limit (issue 27, rough edge 9) -----------------


def nav_box(html: str) -> str:
    found = re.search(r'<input id="nav-search"[^>]*>', html.split("</header>")[0])
    assert found, "no search box in the navigation"
    return found.group(0)


def test_the_navigation_box_keeps_the_query_on_the_results_page(repo, r, world, client):
    reader = login(Client(), repo, world["bob"])

    for who in (client, reader):
        html = who.get("/search/", {"q": "ann"}).content.decode()
        assert 'value="ann"' in nav_box(html)
        assert "@ann" in html.split("<main")[1]  # and the results
    assert "value=" not in nav_box(reader.get("/timeline/").content.decode())
    odd = client.get("/search/", {"q": '"><b>x'}).content.decode()
    assert 'value="&#34;&gt;&lt;b&gt;x"' in nav_box(odd) and "<b>x" not in odd


def test_a_query_over_the_limit_is_refused_with_a_message_and_kept(repo, r, world, client):
    typed = "redis " * 50  # 300 characters
    keys_before = r.dbsize()

    response = client.get("/search/", {"q": typed})

    html = response.content.decode()
    main = html.split("<main")[1]
    assert response.status_code == 200
    assert "A search is at most 50 characters; this one has 299." in main
    assert f'value="{typed}"' in nav_box(html)  # what was typed, all of it
    assert re.search(rf'<input id="search-q"[^>]*value="{typed}"', main)
    assert "@redis" not in main and "#redis" not in main  # not searched cut short
    assert r.dbsize() == keys_before


def test_a_query_at_the_limit_is_searched(repo, world, client):
    html = client.get("/search/", {"q": "r" * 50}).content.decode()

    assert "at most 50 characters" not in html and "No one by that name." in html
