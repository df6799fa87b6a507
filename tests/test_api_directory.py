"""Accounts as apps browse them (issue 37): the profile directory (`order=new` by sign-up,
`active` by the newest posts) and familiar followers (who of those the reader follows
follows someone), each through the account read path (suspended and blocked accounts left
out) in a bounded number of round trips whatever the data."""

from __future__ import annotations

import time

import pytest

from social.repository.accounts import people
from tests.api import Api, token_for
from tests.conftest import CLUSTER, make_user


def names(answer) -> list[str]:
    assert answer.status_code == 200, answer.content[:300]
    return [account["username"] for account in answer.json()]


@pytest.fixture
def town(repo, alice):
    """Five more accounts signed up a minute apart after alice, dora last."""
    start = int(time.time()) - 600
    return {
        name: make_user(repo, name, at=start + 60 * n)
        for n, name in enumerate(["bob", "carol", "dan", "erin", "dora"])
    }


def test_the_newest_accounts_come_first_and_page_by_offset(repo, alice, town, sam):
    api = Api(token_for(repo, alice))
    repo.moderation.suspend(town["erin"].id, sam, "spam")

    newest = names(api.get("/api/v1/directory", {"order": "new"}))
    page = names(api.get("/api/v1/directory", {"order": "new", "limit": "2", "offset": "2"}))
    after = names(api.get("/api/v1/directory", {"order": "new", "limit": "2", "offset": "4"}))

    # sam and alice signed up last (this test's own fixtures); erin is suspended
    assert newest == ["sam", "alice", "dora", "dan", "carol", "bob"]
    assert page == ["dora"]  # the page held erin too: left out, not replaced
    assert after == ["dan", "carol"]
    account = api.get("/api/v1/directory", {"order": "new", "offset": "2"}).json()[0]
    assert account["id"] == str(town["dora"].id) and account["statuses_count"] == 0


def test_active_lists_the_authors_of_the_newest_posts(repo, alice, town, client):
    bob, carol, dan = town["bob"], town["carol"], town["dan"]
    repo.posts.create_post(carol.id, "first")
    repo.posts.create_post(bob.id, "second")
    repo.posts.create_post(carol.id, "third")
    first = repo.posts.create_post(dan.id, "fourth")
    repo.reposts.repost(alice.id, first)  # a repost is not a post of alice's here

    listed = names(client.get("/api/v1/directory"))  # active is the default

    assert listed == ["dan", "carol", "bob"]
    assert names(client.get("/api/v1/directory", {"order": "active", "offset": "1"})) == [
        "carol",
        "bob",
    ]
    carol_row = client.get("/api/v1/directory", {"limit": "2"}).json()[1]
    assert carol_row["username"] == "carol" and carol_row["statuses_count"] == 2


def test_the_directory_leaves_out_whom_a_block_keeps_apart(repo, alice, town):
    repo.relations.block(town["bob"].id, alice.id)  # bob blocks alice
    repo.posts.create_post(town["bob"].id, "hidden from alice")
    api = Api(token_for(repo, alice))

    assert "bob" not in names(api.get("/api/v1/directory", {"order": "new"}))
    assert names(api.get("/api/v1/directory")) == []
    assert names(Api(None).get("/api/v1/directory")) == ["bob"]


def test_the_directory_refuses_what_it_cannot_read(client):
    assert client.get("/api/v1/directory", {"order": "popular"}).status_code == 400
    assert client.get("/api/v1/directory", {"offset": "²"}).status_code == 400
    assert client.get("/api/v1/directory", {"offset": "9" * 19}).json() == []


def test_the_directory_costs_the_same_round_trips_whatever_its_size(repo, round_trips):
    api = Api(None)
    costs = {"new": [], "active": []}
    for more in (2, 30):
        for n in range(more):
            user = make_user(repo, f"p{more}_{n}")
            repo.posts.create_post(user.id, "hello")
        for order in costs:
            round_trips.reset()
            assert len(names(api.get("/api/v1/directory", {"order": order}))) > 0
            costs[order].append(round_trips.count)
    if CLUSTER:  # a pipeline is a round trip to each primary it reaches (three)
        assert max(costs["new"] + costs["active"]) <= 3 * 3
    else:
        assert costs == {"new": [3, 3], "active": [3, 3]}


def familiar(api: Api, *ids) -> list[dict]:
    answer = api.get("/api/v1/accounts/familiar_followers", {"id[]": [str(i) for i in ids]})
    assert answer.status_code == 200, answer.content[:300]
    return [
        {"id": r["id"], "accounts": [a["username"] for a in r["accounts"]]} for r in answer.json()
    ]


@pytest.fixture
def circle(repo, alice, town):
    """alice follows bob, then carol, then dan; bob, carol and erin follow dora; dan
    follows bob."""
    t = int(time.time())
    for n, name in enumerate(["bob", "carol", "dan"]):
        repo.graph.follow(alice.id, town[name].id, at=t + n)
    for name in ("bob", "carol", "erin"):
        repo.graph.follow(town[name].id, town["dora"].id)
    repo.graph.follow(town["dan"].id, town["bob"].id)
    return town


def test_familiar_followers_are_those_the_reader_follows(repo, alice, circle):
    dora, bob, erin = circle["dora"], circle["bob"], circle["erin"]
    api = Api(token_for(repo, alice))

    found = familiar(api, dora.id, bob.id, erin.id, 987654)

    assert found == [
        {"id": str(dora.id), "accounts": ["carol", "bob"]},  # most recently followed first
        {"id": str(bob.id), "accounts": ["dan"]},
        {"id": str(erin.id), "accounts": []},
    ]  # the unknown id is left out
    first = api.get("/api/v1/accounts/familiar_followers", {"id[]": str(dora.id)}).json()
    assert first[0]["accounts"][0]["id"] == str(circle["carol"].id)
    assert first[0]["accounts"][0]["followers_count"] == 1  # alice


def test_familiar_followers_leave_out_suspended_and_blocked_accounts(repo, alice, circle, sam):
    repo.moderation.suspend(circle["carol"].id, sam, "spam")
    repo.relations.block(alice.id, circle["dan"].id)  # the follow goes too
    api = Api(token_for(repo, alice))

    found = familiar(api, circle["dora"].id, circle["bob"].id, circle["carol"].id)

    assert found == [
        {"id": str(circle["dora"].id), "accounts": ["bob"]},
        {"id": str(circle["bob"].id), "accounts": []},
    ]


@pytest.mark.parametrize("scan", [1, 2, 3])
def test_past_the_scan_the_answer_stays_right_where_one_side_is_small(
    repo, alice, circle, monkeypatch, scan
):
    """scan 3: alice's three follows all read; 2: dora's three followers are more than
    that, compared with alice's two newest follows (carol and dan); 1: bob's one follower
    (dan) read and held against all alice follows."""
    monkeypatch.setattr(people, "FAMILIAR_SCAN", scan)
    api = Api(token_for(repo, alice))

    found = familiar(api, circle["dora"].id, circle["bob"].id)

    dora = {3: ["carol", "bob"], 2: ["carol"], 1: []}[scan]
    assert found == [
        {"id": str(circle["dora"].id), "accounts": dora},
        {"id": str(circle["bob"].id), "accounts": ["dan"]},
    ]


def test_familiar_followers_cost_the_same_round_trips_for_any_number_of_ids(
    repo, alice, circle, round_trips
):
    api = Api(token_for(repo, alice))
    familiar(api, circle["dora"].id)  # the token, remembered from here
    costs = []
    for ids in ([circle["dora"].id], [u.id for u in circle.values()]):
        round_trips.reset()
        familiar(api, *ids)
        costs.append(round_trips.count)
    if CLUSTER:  # a pipeline is a round trip to each primary it reaches (three)
        assert max(costs) <= 4 * 3
    else:
        assert costs == [4, 4]  # the token checked, the graph (two), the accounts


def test_familiar_followers_need_a_user_and_numbers(repo, alice, r):
    assert Api(None).get("/api/v1/accounts/familiar_followers", {"id[]": "1"}).status_code == 401
    api = Api(token_for(repo, alice))
    answer = api.get("/api/v1/accounts/familiar_followers", {"id[]": "²"})
    assert answer.status_code == 400
    assert api.get("/api/v1/accounts/familiar_followers").json() == []
