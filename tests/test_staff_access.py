"""Every staff URL: visitors go to login (with next), users get 403, staff get the page."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from social.repository.moderation.actions import SYSTEM_ACTOR
from tests.conftest import login

PAGES = [
    "/staff/",
    "/staff/users/",
    "/staff/users/?q=ali&status=active",
    "/staff/users/alice/",
    "/staff/posts/",
    "/staff/posts/delete/?id=1",
    "/staff/reports/",
    "/staff/reports/resolved/",
    "/staff/log/",
    "/staff/log/?action=suspend&actor=sam&target=alice",
]
# POST-only actions and the GET page a visitor is sent back to after logging in.
ACTIONS = [
    ("/staff/users/alice/suspend/", "/staff/users/alice/"),
    ("/staff/users/alice/unsuspend/", "/staff/users/alice/"),
    ("/staff/users/alice/logout/", "/staff/users/alice/"),
    ("/staff/users/alice/grant_staff/", "/staff/users/alice/"),
    ("/staff/users/alice/revoke_staff/", "/staff/users/alice/"),
    ("/staff/users/alice/note/", "/staff/users/alice/"),
    ("/staff/reports/1/resolve/", "/staff/reports/"),
]


def login_next(response) -> str:
    """Return the `next` of a redirect to the login page (failing if it is not one)."""
    location = urlsplit(response["Location"])
    assert location.path == "/login/"
    return parse_qs(location.query)["next"][0]


@pytest.fixture
def world(repo, alice, sam, bob):
    """alice (user 1), sam (staff, returned) and bob; a post by alice and bob's report on it,
    so every URL has a target."""
    post_id = repo.posts.create_post(alice.id, "hello")
    repo.reports.report_post(bob, post_id, "spam")
    return sam


@pytest.mark.parametrize("url", PAGES)
def test_a_visitor_is_sent_to_login_and_back(client, world, url):
    response = client.get(url)
    assert response.status_code == 302
    assert login_next(response) == url


@pytest.mark.parametrize("url", PAGES)
def test_a_user_who_is_not_staff_gets_a_403_page(alice_client, world, url):
    response = alice_client.get(url)
    assert response.status_code == 403
    assert b"Not allowed" in response.content


@pytest.mark.parametrize("url", PAGES)
def test_staff_get_the_page_never_cached(world, sam_client, url):
    response = sam_client.get(url)
    assert response.status_code == 200
    assert "no-cache" in response["Cache-Control"]
    assert "private" in response["Cache-Control"] or "no-store" in response["Cache-Control"]


@pytest.mark.parametrize(("url", "back"), ACTIONS)
def test_a_visitor_posting_an_action_is_sent_to_login_then_to_a_page(client, world, url, back):
    response = client.post(url, {"reason": "x"})
    assert response.status_code == 302
    assert login_next(response) == back


@pytest.mark.parametrize(("url", "back"), ACTIONS)
def test_a_user_who_is_not_staff_cannot_post_an_action(alice_client, world, r, url, back):
    before = r.xlen("audit")
    response = alice_client.post(url, {"reason": "x", "outcome": "dismissed"})
    assert response.status_code == 403
    assert r.xlen("audit") == before
    assert r.hget("user:1", "status") is None


@pytest.mark.parametrize(("url", "back"), ACTIONS)
def test_actions_refuse_get(world, sam_client, url, back):
    assert sam_client.get(url).status_code == 405


@pytest.mark.parametrize(("url", "back"), ACTIONS)
def test_actions_need_a_csrf_token(repo, world, r, url, back):
    client = Client(enforce_csrf_checks=True)
    client.cookies["auth"] = repo.users.record_login(world.id, "127.0.0.1")
    response = client.post(url, {"suspend-reason": "spam", "outcome": "dismissed"})
    assert response.status_code == 403
    assert r.hget("user:1", "status") is None
    assert r.zcard("reports:open") == 1


def test_the_staff_link_shows_only_for_staff(world, sam_client, alice_client):
    assert b'href="/staff/"' in sam_client.get("/").content
    assert b'href="/staff/"' not in alice_client.get("/").content
    assert b'href="/staff/"' not in Client().get("/").content


def test_revoking_staff_closes_the_pages_at_once(repo, world, olga):
    client = login(Client(), repo, olga)
    assert client.get("/staff/").status_code == 200
    repo.moderation.revoke_staff(olga.id, SYSTEM_ACTOR)  # `manage.py createstaff --revoke`
    assert client.get("/staff/").status_code == 403


def test_an_unknown_account_is_a_404(world, sam_client):
    assert sam_client.get("/staff/users/nobody/").status_code == 404
