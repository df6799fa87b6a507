"""Profiles, follow/unfollow and follow lists: status, redirects and the resulting zsets."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.conftest import login

T0 = 1_700_000_000


def test_it_shows_the_users_own_posts_not_their_home_feed(alice_client, alice, bob, repo):
    repo.graph.follow(alice.id, bob.id, at=T0)
    repo.posts.create_post(bob.id, "written by bob", at=T0 + 1)
    repo.posts.create_post(alice.id, "written by alice", at=T0 + 2)

    response = alice_client.get("/u/alice/")

    assert response.status_code == 200
    assert b"written by alice" in response.content
    assert b"written by bob" not in response.content
    assert b"<strong>1</strong> post " in response.content
    assert b"<strong>1</strong> following" in response.content


def test_it_finds_the_profile_whatever_the_case_in_the_url(client, alice):
    response = client.get("/u/ALICE/")

    assert response.status_code == 200 and b"<h1>@alice</h1>" in response.content


@pytest.mark.parametrize("url", ["/u/nobody/", "/u/nobody/followers/", "/u/nobody/following/"])
def test_it_answers_an_unknown_user_with_the_sites_404_page(client, url):
    response = client.get(url)

    assert response.status_code == 404
    assert b'class="brand"' in response.content and b"Retwis" in response.content
    assert b"Not found" in response.content


def test_it_hides_a_suspended_users_profile(client, alice, r):
    r.hset(f"user:{alice.id}", "status", "suspended")

    assert client.get("/u/alice/").status_code == 404


def test_it_offers_visitors_a_login_that_comes_back(client, alice):
    content = client.get("/u/alice/").content

    assert b'href="/login/?next=/u/alice/"' in content
    assert b'action="/u/alice/follow/"' not in content


def test_it_offers_no_follow_button_on_your_own_profile(alice_client, alice):
    content = alice_client.get("/u/alice/").content

    assert b"/follow/" not in content and b"/unfollow/" not in content


def test_it_follows_and_goes_back_to_the_profile(bob_client, alice, bob, repo, r):
    repo.posts.create_post(alice.id, "old news", at=T0)

    response = bob_client.post("/u/alice/follow/")

    assert response.status_code == 302 and response["Location"] == "/u/alice/"
    assert r.zrange(f"following:{bob.id}", 0, -1) == [str(alice.id)]
    assert r.zrange(f"followers:{alice.id}", 0, -1) == [str(bob.id)]
    assert r.lrange(f"posts:{bob.id}", 0, -1) == ["1"]
    page = bob_client.get("/u/alice/").content
    assert b"You are now following @alice." in page
    assert b'action="/u/alice/unfollow/"' in page
    assert b"old news" in bob_client.get("/").content


def test_it_follows_and_goes_to_a_safe_next(bob_client, alice):
    response = bob_client.post("/u/alice/follow/", {"next": "/timeline/"})

    assert response["Location"] == "/timeline/"


def test_it_ignores_an_offsite_next_after_following(bob_client, alice):
    response = bob_client.post("/u/alice/follow/", {"next": "https://evil.example/"})

    assert response["Location"] == "/u/alice/"


def test_it_treats_following_twice_as_a_no_op(bob_client, alice, bob, repo, r):
    repo.graph.follow(bob.id, alice.id, at=T0)

    response = bob_client.post("/u/alice/follow/")

    assert response.status_code == 302
    assert r.zrange(f"following:{bob.id}", 0, -1, withscores=True) == [(str(alice.id), T0)]
    assert r.zrange(f"followers:{alice.id}", 0, -1, withscores=True) == [(str(bob.id), T0)]


def test_it_refuses_following_yourself(alice_client, alice, r):
    response = alice_client.post("/u/alice/follow/")

    assert response.status_code == 302 and response["Location"] == "/u/alice/"
    assert b"You cannot follow yourself." in alice_client.get("/u/alice/").content
    assert not r.exists(f"following:{alice.id}", f"followers:{alice.id}")


def test_it_unfollows_and_drops_their_posts_from_the_feed(bob_client, alice, bob, repo, r):
    repo.graph.follow(bob.id, alice.id, at=T0)
    repo.posts.create_post(alice.id, "from alice", at=T0 + 1)
    mine = repo.posts.create_post(bob.id, "from bob", at=T0 + 2)

    response = bob_client.post("/u/alice/unfollow/")

    assert response.status_code == 302 and response["Location"] == "/u/alice/"
    assert not r.exists(f"following:{bob.id}", f"followers:{alice.id}")
    assert r.lrange(f"posts:{bob.id}", 0, -1) == [str(mine)]
    assert b'action="/u/alice/follow/"' in bob_client.get("/u/alice/").content


@pytest.mark.parametrize("action", ["follow", "unfollow"])
def test_it_answers_405_to_following_by_get(bob_client, alice, bob, r, action):
    assert bob_client.get(f"/u/alice/{action}/").status_code == 405
    assert not r.exists(f"following:{bob.id}", f"followers:{alice.id}")


@pytest.mark.parametrize("action", ["follow", "unfollow"])
def test_it_sends_a_visitor_to_log_in_before_following(client, alice, r, action):
    response = client.post(f"/u/alice/{action}/")

    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/u/alice/"
    assert not r.exists(f"followers:{alice.id}")


def test_it_answers_404_to_following_nobody(bob_client, bob, r):
    assert bob_client.post("/u/nobody/follow/").status_code == 404
    assert not r.exists(f"following:{bob.id}")


def test_it_names_people_you_follow_who_follow_this_profile(bob, charlie, alice, repo):
    repo.graph.follow(bob.id, charlie.id, at=T0)
    repo.graph.follow(charlie.id, alice.id, at=T0)
    viewer = login(Client(), repo, bob)

    content = viewer.get("/u/alice/").content

    assert b"Followed by" in content and b'href="/u/charlie/">@charlie</a>' in content


def test_it_names_nobody_when_no_one_you_follow_follows_this_profile(bob, charlie, alice, repo):
    repo.graph.follow(charlie.id, alice.id, at=T0)
    viewer = login(Client(), repo, bob)

    content = viewer.get("/u/alice/").content

    assert b"Followed by" not in content and b"@charlie" not in content


def test_it_pages_the_profile(client, alice, repo):
    for i in range(12):
        repo.posts.create_post(alice.id, f"entry {i:02}", at=T0 + i)

    second = client.get("/u/alice/?page=2").content

    assert b"entry 01" in second and b"entry 00" in second and b"entry 02" not in second
    assert b'href="/u/alice/?page=1"' in second


def test_it_lists_followers_newest_first(client, alice, bob, charlie, repo):
    repo.graph.follow(bob.id, alice.id, at=T0)
    repo.graph.follow(charlie.id, alice.id, at=T0 + 60)

    response = client.get("/u/alice/followers/")

    assert response.status_code == 200
    content = response.content
    assert content.index(b"@charlie") < content.index(b"@bob")
    assert b"2 in all" in content


def test_it_lists_whom_a_user_follows(client, alice, bob, repo):
    repo.graph.follow(alice.id, bob.id, at=T0)

    content = client.get("/u/alice/following/").content

    assert b'href="/u/bob/">@bob</a>' in content
    assert b"Not following anyone yet." in client.get("/u/bob/following/").content


@pytest.mark.parametrize("owner", ["alice", "bob"])
def test_the_cards_buttons_have_the_pages_form_on_any_profile(bob_client, alice, bob, repo, owner):
    # The cards' Like, Repost and Mute buttons submit #card-actions (form="card-actions"):
    # another account's profile lacked it once, so its buttons did nothing.
    repo.posts.create_post(alice.id if owner == "alice" else bob.id, "a post to like")

    html = bob_client.get(f"/u/{owner}/").content.decode()

    assert 'form="card-actions"' in html
    assert html.count('<form id="card-actions" method="post" hidden>') == 1
    assert f'name="next" value="/u/{owner}/"' in html
