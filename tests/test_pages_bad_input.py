"""No odd number reaches a 500 on the site's pages. Every route outside /api/ (resolved
from the URLconf: the pages, the staff pages, OAuth's) is called with hostile values in
each path parameter (GET and POST) and in `page`, as a visitor and as staff: each answers
a page, a redirect, a 400, 403, 404 or 405, never a 500, and writes nothing to Redis. A
`page` that is no number (social.numbers) is the first page."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from social import keys
from tests.api import all_keys
from tests.conftest import login

# As test_api_bad_input.SWEEP; `<int:...>` paths take only digits (the others match no
# URL: a 404 before any view).
SWEEP = ["²", "١٢", "01" + "0" * 5000, "9" * 20, "9" * 19, "-1", "1_0", "\x00"]
DIGITS = ["0", "00", "9" * 19, "9" * 20, "9" * 5000]
# 415: a form posted to an inbox, which takes only ActivityStreams JSON.
ALLOWED = {200, 301, 302, 400, 403, 404, 405, 415}
# ActivityPub's addresses (/ap/) answer other servers, in JSON, errors too.
ANSWERS_JSON = ("/oauth/token", "/oauth/revoke", "/.well-known/", "/ap/")
# The only writes allowed: a web Like or Repost counts the attempt against the person's
# limit before it looks for the post, as every limited action of the site's forms does.
COUNTED = {
    "p/<int:post_id>/repost/": "repost_user", "p/<int:post_id>/unrepost/": "repost_user",
    "p/<int:post_id>/like/": "like_user", "p/<int:post_id>/unlike/": "like_user",
}  # fmt: skip


def site_routes(patterns=None, prefix: str = "") -> list[tuple[str, URLPattern]]:
    """Every route of the site but the client API's own (test_api_bad_input.py), with the
    prefix it is mounted under."""
    found = []
    for p in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(p, URLResolver):
            if str(p.pattern) == "api/":
                continue
            found += site_routes(p.url_patterns, prefix + str(p.pattern))
        else:
            found.append((prefix + str(p.pattern), p))
    return found


ROUTES = site_routes()


def fill(route: str, values: dict[str, str]) -> str:
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: quote(values[m[1]], safe=""), route)


def params(route: str) -> list[tuple[str, str]]:
    return re.findall(r"<(?:(\w+):)?(\w+)>", route)


def snapshot(r) -> dict:
    """Every key and its serialized value; HyperLogLogs by count (PFCOUNT caches its
    estimate in the value)."""
    return {
        key: r.pfcount(key) if key.startswith("stats:active:") else r.dump(key)
        for key in all_keys(r, "*")
    }


def check(response, where: str) -> None:
    assert response.status_code in ALLOWED, (where, response.status_code, response.content[:300])
    if response.status_code >= 400 and not where.split()[-1].startswith(ANSWERS_JSON):
        assert response["Content-Type"].startswith("text/html"), where


@pytest.fixture
def world(repo, alice, bob, sam):
    """alice posted (#hello) and bob replied and reported it; sam is staff."""
    post = repo.posts.create_post(alice.id, "hello #hello")
    repo.posts.create_post(bob.id, "@alice hi", reply_to=post)
    repo.reports.report_post(bob, post, "spam")
    return {
        "username": "alice",
        "post_id": str(post),
        "user_id": str(alice.id),
        "tag": "hello",
        "report_id": "1",
        "filter_id": "1",
        "client_id": "c" * 43,
        "token": "t" * 43,
        "name": "no/such.png",
        "queue": "mail",
        "job_id": "0" * 16,
        "face": "4-41",
        "domain": "remote.example",
    }


@pytest.fixture(params=["visitor", "staff"])
def caller(request, repo, sam) -> tuple[Client, int | None]:
    """A client, and the id of the user it is logged in as."""
    if request.param == "visitor":
        return Client(), None
    return login(Client(), repo, sam), sam.id


@pytest.mark.parametrize(("route", "pattern"), ROUTES, ids=[route for route, _ in ROUTES])
def test_no_odd_number_in_a_page_reaches_a_500_or_writes(route, pattern, world, caller, r):
    client, user_id = caller
    path = fill(route, world)
    assert get_resolver().resolve(path).func is pattern.callback
    client.get(path)  # what reading the page does (marks notifications read...)
    before = snapshot(r)
    for value in SWEEP:
        check(client.get(path, {"page": value}), f"GET {path}?page={value[:20]!r}")
    for converter, name in params(route):
        for value in DIGITS if converter == "int" else SWEEP:
            odd = fill(route, {**world, name: value})
            check(client.get(odd), f"GET {odd[:80]}")
            check(client.post(odd, {"next": "/"}), f"POST {odd[:80]}")
    after = snapshot(r)
    changed = {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}
    counted = {keys.rate_limit(COUNTED[route], str(user_id))} if route in COUNTED else set()
    assert changed == (counted if user_id is not None else set())


def test_every_route_outside_the_api_is_attacked():
    attacked = {route for route, _ in ROUTES}
    assert {
        "", "p/<int:post_id>/like/", "settings/filters/<int:filter_id>/delete/",
        "staff/users/id/<int:user_id>/", "staff/reports/<int:report_id>/resolve/",
        "oauth/authorize", "oauth/token", "settings/apps/<str:client_id>/revoke/",
    } <= attacked  # fmt: skip
    assert not any(route.startswith("api/") for route in attacked)


@pytest.mark.parametrize("value", ["²", "١٢", " 2", "2 ", "1_0", "+2", "01" + "0" * 5000])
def test_a_page_that_is_no_number_is_the_first_page(repo, alice, value, settings):
    settings.RETWIS_TIMELINE_PAGE_SIZE = 1
    repo.posts.create_post(alice.id, "the older post")
    repo.posts.create_post(alice.id, "the newer post")

    response = Client().get("/timeline/", {"page": value})

    assert response.status_code == 200
    assert b"the newer post" in response.content
    assert b"the older post" not in response.content
