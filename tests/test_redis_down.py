"""Redis down: every page that needs Redis answers a friendly 503, and the site recovers."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.conftest import cache_settings
from tests.redis_server import RedisServer, free_port


@pytest.fixture
def dead_redis(settings):
    """Point the site at a port nothing listens on."""
    settings.CACHES = cache_settings(f"redis://127.0.0.1:{free_port()}/0")


def assert_friendly_503(response) -> None:
    assert response.status_code == 503
    assert b"right back" in response.content
    assert b'class="brand"' in response.content  # the site's look
    assert b"Traceback" not in response.content and b"ConnectionError" not in response.content
    assert response["Retry-After"]


@pytest.mark.parametrize(
    "url",
    ["/", "/timeline/", "/u/x/", "/u/x/followers/", "/u/x/following/", "/p/1/"],
)
def test_every_page_answers_a_friendly_503_to_a_visitor(dead_redis, client, url):
    assert_friendly_503(client.get(url))


@pytest.mark.parametrize("url", ["/", "/timeline/", "/u/x/", "/p/1/", "/register/", "/nowhere/"])
def test_every_page_answers_a_friendly_503_to_someone_with_a_cookie(dead_redis, url):
    client = Client()
    client.cookies["auth"] = "a" * 40

    assert_friendly_503(client.get(url))


@pytest.mark.parametrize(
    ("url", "data"),
    [
        ("/login/", {"username": "alice", "password": "correct horse battery"}),
        (
            "/register/",
            {"username": "alice", "password": "a fine pass", "password2": "a fine pass"},
        ),
        ("/post/", {"status": "hello"}),
        ("/u/x/follow/", {}),
        ("/logout/", {}),
    ],
)
def test_every_form_answers_a_friendly_503_without_setting_a_cookie(dead_redis, url, data):
    client = Client()
    client.cookies["auth"] = "a" * 40

    response = client.post(url, data)

    assert_friendly_503(response)
    assert "auth" not in response.cookies


def test_a_pages_script_is_answered_503_in_words(dead_redis):
    client = Client()
    client.cookies["auth"] = "a" * 40

    response = client.post("/u/x/follow/", HTTP_ACCEPT="application/json")

    assert response.status_code == 503 and response["Retry-After"] == "10"
    assert response.json()["message"].startswith("Retwis cannot reach its database right now.")


def test_health_says_redis_is_unavailable_as_json(dead_redis, client):
    response = client.get("/healthz")

    assert response.status_code == 503
    assert json.loads(response.content) == {"redis": "unavailable"}


def test_health_says_redis_is_fine_when_it_is(client):
    response = client.get("/healthz")

    assert response.status_code == 200
    assert json.loads(response.content) == {"redis": "ok"}


def test_pages_that_need_no_redis_still_answer_a_visitor(dead_redis, client):
    assert client.get("/register/").status_code == 200
    assert client.get("/login/").status_code == 200
    assert client.get("/nowhere/").status_code == 404


def test_it_recovers_by_itself_when_the_same_redis_comes_back(settings, client):
    server = RedisServer().start()
    settings.CACHES = cache_settings(server.url)
    try:
        assert client.get("/timeline/").status_code == 200
        server.stop()
        assert_friendly_503(client.get("/timeline/"))
        assert client.get("/healthz").status_code == 503

        revived = RedisServer()
        revived.port = server.port  # same address, so the site's settings do not change
        server = revived.start()

        assert client.get("/timeline/").status_code == 200
        assert client.get("/healthz").status_code == 200
    finally:
        server.stop()


def test_it_recovers_when_pointed_back_at_a_live_redis(settings, redis_url, client):
    live = settings.CACHES
    settings.CACHES = cache_settings(f"redis://127.0.0.1:{free_port()}/0")
    assert client.get("/").status_code == 503

    settings.CACHES = live

    assert client.get("/").status_code == 200
