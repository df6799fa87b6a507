"""Suspended users and deleted posts vanish from every public page and feed (and come back)."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.conftest import login

MARK = "unmistakable-post-body"


@pytest.fixture
def scene(repo, alice, bob, charlie, sam, sam_client):
    """bob follows alice; alice follows charlie; alice has posted; sam is staff."""
    repo.graph.follow(bob.id, alice.id)
    repo.graph.follow(alice.id, charlie.id)
    post_id = repo.posts.create_post(alice.id, MARK)
    return {
        "post": post_id,
        "sam": sam,
        "bob": login(Client(), repo, bob),
        "staff": sam_client,
        "visitor": Client(),
    }


def public_views(scene) -> dict[str, tuple[Client, str]]:
    """Every page where alice or her post shows up, for someone who is not staff."""
    return {
        "bob's home feed": (scene["bob"], "/"),
        "the timeline for bob": (scene["bob"], "/timeline/"),
        "the timeline for a visitor": (scene["visitor"], "/timeline/"),
        "the welcome page": (scene["visitor"], "/"),
        "charlie's followers": (scene["visitor"], "/u/charlie/followers/"),
    }


def shows_alice(response) -> bool:
    html = response.content.decode()
    return MARK in html or "@alice" in html


def test_a_suspended_user_vanishes_from_every_public_page_and_feed(repo, scene, alice):
    for name, (client, url) in public_views(scene).items():
        assert shows_alice(client.get(url)), f"alice should show on {name} before"

    repo.moderation.suspend(alice.id, scene["sam"], "spam")

    for name, (client, url) in public_views(scene).items():
        response = client.get(url)
        assert response.status_code == 200
        assert not shows_alice(response), f"alice still shows on {name}"
    for client in (scene["bob"], scene["visitor"]):
        assert client.get("/u/alice/").status_code == 404
        assert client.get(f"/p/{scene['post']}/").status_code == 404
        assert client.get("/u/alice/followers/").status_code == 404


def test_staff_still_see_a_suspended_user(repo, scene, alice):
    repo.moderation.suspend(alice.id, scene["sam"], "spam")

    profile = scene["staff"].get("/u/alice/")
    assert profile.status_code == 200 and b"suspended" in profile.content
    assert scene["staff"].get(f"/p/{scene['post']}/").status_code == 200


def test_unsuspending_brings_everything_back(repo, r, scene, alice):
    repo.moderation.suspend(alice.id, scene["sam"], "spam")

    repo.moderation.unsuspend(alice.id, scene["sam"], "appeal")

    for name, (client, url) in public_views(scene).items():
        assert shows_alice(client.get(url)), f"alice is missing from {name} after unsuspend"
    assert scene["bob"].get("/u/alice/").status_code == 200
    assert scene["visitor"].get(f"/p/{scene['post']}/").status_code == 200
    assert r.lrange(f"posts:{r.hget('users', 'bob')}", 0, -1) == [str(scene["post"])]


def test_a_suspended_user_cannot_log_in(repo, scene, alice):
    repo.moderation.suspend(alice.id, scene["sam"], "spam")

    response = Client().post("/login/", {"username": "alice", "password": "correct horse battery"})

    assert response.status_code == 400
    assert "auth" not in response.cookies or not response.cookies["auth"].value


def test_a_deleted_post_vanishes_for_everyone_but_its_author_and_staff(repo, r, scene, alice):
    keep = repo.posts.create_post(alice.id, "a post that stays")
    alice_client = login(Client(), repo, alice)
    pages = {
        **public_views(scene),
        "alice's profile": (scene["visitor"], "/u/alice/"),
        "alice's own profile": (alice_client, "/u/alice/"),
        "alice's home feed": (alice_client, "/"),
    }
    pages.pop("charlie's followers")  # lists people, not posts
    link = f'href="/p/{scene["post"]}/"'  # alice's notice quotes the body, not the link
    for name, (client, url) in pages.items():
        assert link in client.get(url).content.decode(), f"the post should show on {name}"

    repo.moderation.delete_posts([scene["post"]], scene["sam"], "spam")

    for name, (client, url) in pages.items():
        assert link not in client.get(url).content.decode(), f"the deleted post shows on {name}"
    assert "a post that stays" in scene["bob"].get("/").content.decode()
    assert r.lrange("timeline", 0, -1) == [str(keep)]
    for client in (scene["bob"], scene["visitor"]):
        assert client.get(f"/p/{scene['post']}/").status_code == 404
    assert b"removed by moderators" in alice_client.get(f"/p/{scene['post']}/").content
    assert scene["staff"].get(f"/p/{scene['post']}/").status_code == 200


def test_the_author_is_told_their_post_was_removed(repo, scene, alice):
    repo.moderation.delete_posts([scene["post"]], scene["sam"], "breaks the rules")

    home = login(Client(), repo, alice).get("/").content.decode()

    assert "was removed by moderators" in home and "breaks the rules" in home
