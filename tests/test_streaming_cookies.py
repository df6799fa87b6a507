"""The site's own pages listen to the streaming API by the `auth` cookie (social/streaming/
cookies.py, static/js/site.js), served for real as scripts/launch.py serves it: a valid
cookie from the site's origin hears its home feed, answered with CORS for that origin and
credentials; a bad cookie is refused with Mastodon's error; a foreign Origin is refused,
on server-sent events and WebSocket alike."""

from __future__ import annotations

import asyncio
import http.client
import json
from urllib.parse import urlsplit

import pytest

from tests import test_streaming
from tests.conftest import make_user
from tests.test_streaming import WAIT, in_new_loop

served = test_streaming.site  # the fixture `served`: the site and its streaming API, served

websockets = pytest.importorskip("websockets")

FOREIGN = "http://evil.example"


def secret_of(repo, user) -> str:
    return repo.users.record_login(user.id, "127.0.0.1")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def open_sse(streaming: str, path: str, cookie: str, origin: str | None):
    """GET the stream with the cookie (and Origin); return the connection and response."""
    parts = urlsplit(streaming)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=WAIT)
    headers = {"Cookie": f"auth={cookie}"}
    if origin:
        headers["Origin"] = origin
    connection.request("GET", "/api/v1/streaming/" + path, headers=headers)
    return connection, connection.getresponse()


def next_event(response, name: str) -> dict:
    """Read server-sent events until one named name; return its data."""
    event = ""
    while True:
        line = response.fp.readline().decode()
        if not line:
            raise AssertionError(f"the stream ended before {name}")
        if line.startswith("event: "):
            event = line[7:].strip()
        elif line.startswith("data: ") and event == name:
            return json.loads(line[6:])


def test_a_valid_cookie_from_the_sites_origin_hears_its_home_feed(served, repo):
    url, streaming = served
    alice, bob = make_user(repo, "alice"), make_user(repo, "bob")
    repo.graph.follow(alice.id, bob.id)

    connection, response = open_sse(streaming, "user", secret_of(repo, alice), origin_of(url))
    try:
        assert response.status == 200
        assert response.getheader("Access-Control-Allow-Origin") == origin_of(url)
        assert response.getheader("Access-Control-Allow-Credentials") == "true"
        post_id = repo.posts.create_post(bob.id, "hello by cookie")

        status = next_event(response, "update")
    finally:
        connection.close()
    assert status["id"] == str(post_id) and "hello by cookie" in status["content"]


def test_a_page_without_an_origin_header_may_listen_too(served, repo):
    _, streaming = served
    alice = make_user(repo, "alice")

    connection, response = open_sse(streaming, "user/notification", secret_of(repo, alice), None)
    connection.close()

    assert response.status == 200
    assert response.getheader("Access-Control-Allow-Origin") == "*"  # no credentials named


def test_a_bad_or_stale_cookie_is_refused_with_mastodons_error(served, repo):
    url, streaming = served
    alice = make_user(repo, "alice")
    stale = secret_of(repo, alice)
    repo.users.rotate_secret(alice.id)  # as a password change or "log out everywhere"

    for cookie in ("no-such-secret", "x" * 500, stale):
        connection, response = open_sse(streaming, "user", cookie, origin_of(url))
        body = json.loads(response.read())
        connection.close()
        assert (response.status, body) == (401, {"error": "Invalid access token"})


def test_a_foreign_origin_is_refused_even_with_a_valid_cookie(served, repo):
    _, streaming = served
    alice = make_user(repo, "alice")

    connection, response = open_sse(streaming, "user", secret_of(repo, alice), FOREIGN)
    body = json.loads(response.read())
    connection.close()

    assert (response.status, body) == (403, {"error": "Origin not allowed"})
    assert response.getheader("Access-Control-Allow-Credentials") is None


async def ws_by_cookie(streaming: str, cookie: str, origin: str):
    return await websockets.connect(
        streaming.replace("http://", "ws://") + "/api/v1/streaming?stream=user",
        additional_headers={"Cookie": f"auth={cookie}"},
        origin=origin,
        open_timeout=5,
    )


def test_a_websocket_by_cookie_hears_the_site_and_a_foreign_origin_is_refused(served, repo):
    url, streaming = served
    alice, bob = make_user(repo, "alice"), make_user(repo, "bob")
    repo.graph.follow(alice.id, bob.id)
    cookie = secret_of(repo, alice)

    async def run() -> tuple[dict, Exception | None]:
        ws = await ws_by_cookie(streaming, cookie, origin_of(url))
        try:
            post_id = repo.posts.create_post(bob.id, "over a websocket")
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
                if message.get("event") == "update":
                    heard = json.loads(message["payload"])
                    break
        finally:
            await ws.close()
        assert heard["id"] == str(post_id)
        try:
            await ws_by_cookie(streaming, cookie, FOREIGN)
        except Exception as error:  # refused handshake or close
            return heard, error
        return heard, None

    heard, refused = in_new_loop(run())

    assert "over a websocket" in heard["content"]
    assert refused is not None
    status = getattr(getattr(refused, "response", None), "status_code", None)
    code = getattr(getattr(refused, "rcvd", None), "code", None)
    assert status == 403 or code == 4403, refused
