"""The `auth` cookie middleware: a lazy request.user that costs nothing until looked at."""

from __future__ import annotations

import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory

from social.middleware import RedisAuthMiddleware
from social.repository import AnonymousUser


def user_seen_with(cookie: str | None):
    """Run the middleware on a request with that `auth` cookie; return request.user resolved."""
    request = RequestFactory().get("/")
    if cookie is not None:
        request.COOKIES["auth"] = cookie
    seen = {}

    def view(req):
        seen["user"] = req.user
        return HttpResponse()

    RedisAuthMiddleware(view)(request)
    return seen["user"]


def test_it_resolves_the_current_secret_to_a_django_like_user(repo, alice, r):
    secret = r.hget(f"user:{alice.id}", "auth")

    user = user_seen_with(secret)

    assert user.is_authenticated and not user.is_anonymous
    assert user.pk == user.id == alice.id
    assert user.username == user.get_username() == "alice"
    assert not user.is_staff and user.is_active


@pytest.mark.parametrize("cookie", [None, "", "junk", "a" * 40, "x" * 500])
def test_it_treats_a_missing_or_bad_cookie_as_anonymous(alice, cookie):
    user = user_seen_with(cookie)

    assert isinstance(user, AnonymousUser)
    assert not user.is_authenticated and user.pk is None and user.get_username() == ""


def test_it_treats_a_stale_auths_entry_as_anonymous(alice, r):
    r.hset("auths", "f" * 40, alice.id)  # auths says alice; user:<id>.auth disagrees

    assert not user_seen_with("f" * 40).is_authenticated


def test_it_treats_a_rotated_secret_as_anonymous(repo, alice, r):
    old = r.hget(f"user:{alice.id}", "auth")
    repo.users.rotate_secret(alice.id)

    assert not user_seen_with(old).is_authenticated
    assert user_seen_with(r.hget(f"user:{alice.id}", "auth")).id == alice.id


def test_it_treats_a_suspended_user_as_anonymous(alice, r):
    r.hset(f"user:{alice.id}", "status", "suspended")

    assert not user_seen_with(r.hget(f"user:{alice.id}", "auth")).is_authenticated


@pytest.mark.parametrize("url", ["/register/", "/login/"])
def test_it_costs_no_round_trip_without_a_cookie(client, round_trips, url):
    round_trips.reset()

    assert client.get(url).status_code == 200

    assert round_trips.count == 0


def test_it_never_looks_up_the_cookie_on_a_page_that_ignores_the_user(alice_client, round_trips):
    alice_client.get("/healthz")  # warm the connection
    round_trips.reset()
    assert Client().get("/healthz").status_code == 200
    without_cookie = round_trips.count  # the PING (on a connection of its own, with hello)
    assert without_cookie >= 1
    round_trips.reset()

    assert alice_client.get("/healthz").status_code == 200

    assert round_trips.count == without_cookie  # no auth lookup


def test_it_costs_two_round_trips_to_resolve_a_cookie(alice_client, round_trips):
    alice_client.get("/healthz")
    round_trips.reset()

    response = alice_client.get("/register/")

    assert response.status_code == 200 and b"@alice" in response.content
    assert round_trips.count == 2  # HGET auths, HGETALL user:<id>


def test_it_shows_the_visitor_page_for_a_bad_cookie():
    client = Client()
    client.cookies["auth"] = "forged"

    response = client.get("/")

    assert response.status_code == 200
    assert b"Create an account" in response.content
    assert b"What are you doing" not in response.content


def test_it_lets_login_required_views_send_visitors_to_log_in(client, r):
    response = client.post("/post/", {"status": "hello"})

    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/"  # back to the page the form lives on
    assert not r.exists("next_post_id", "timeline")


def test_it_lets_login_required_views_through_for_a_user(alice_client, alice, r):
    response = alice_client.post("/post/", {"status": "hello"})

    assert response.status_code == 302
    assert r.hget("post:1", "user_id") == str(alice.id)
