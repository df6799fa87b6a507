"""The client API's common behaviour: who is calling (Bearer token; the `auth` cookie with
CSRF), scopes, Mastodon's error JSON and statuses, CORS on the API only, bounded bodies,
the rate limits' headers, and Redis down; nothing stored when refused."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from social import keys
from tests.api import Api, all_keys, token_for
from tests.conftest import CLUSTER, cache_settings, login
from tests.redis_server import free_port


def test_a_missing_token_is_401_where_a_user_is_needed(client):
    response = client.get("/api/v1/timelines/home")
    assert response.status_code == 401
    assert response.json() == {"error": "The access token is invalid"}


@pytest.mark.parametrize("header", ["Bearer nope", "Bearer " + "x" * 300, "Basic abc", "Bearer "])
def test_a_bad_token_is_401(client, header):
    response = client.get("/api/v1/instance", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert response.json()["error"] == "The access token is invalid"


def test_a_revoked_token_is_401(repo, alice):
    token = token_for(repo, alice)
    api = Api(token)
    assert api.get("/api/v1/accounts/verify_credentials").status_code == 200
    repo.oauth.revoke(token)
    assert api.get("/api/v1/accounts/verify_credentials").status_code == 401


def test_a_suspended_accounts_token_is_refused_and_a_deleted_ones_invalid(repo, alice, bob, sam):
    api_alice, api_bob = Api(token_for(repo, alice)), Api(token_for(repo, bob))
    repo.moderation.suspend(alice.id, sam, "spam")
    refused = api_alice.get("/api/v1/accounts/verify_credentials")
    assert refused.status_code == 403
    assert refused.json() == {"error": "Your login is currently disabled"}
    repo.accounts.delete_account(bob)
    assert api_bob.get("/api/v1/accounts/verify_credentials").status_code == 401


def test_a_scope_too_small_is_403_and_stores_nothing(repo, r, alice):
    api = Api(token_for(repo, alice, "read"))
    response = api.post("/api/v1/statuses", {"status": "hello"})
    assert response.status_code == 403
    assert response.json() == {"error": "This action is outside the authorized scopes"}
    assert r.llen(keys.own_posts(alice.id)) == 0
    assert api.get("/api/v1/timelines/home").status_code == 200


@pytest.mark.parametrize(
    ("scopes", "allowed"),
    [("write:statuses", True), ("write", True), ("write:favourites", False), ("follow", False)],
)
def test_sub_scopes_cover_as_mastodons_do(repo, r, alice, scopes, allowed):
    response = Api(token_for(repo, alice, scopes)).post("/api/v1/statuses", {"status": "hi"})
    assert (response.status_code == 200) is allowed
    assert r.llen(keys.own_posts(alice.id)) == (1 if allowed else 0)


def test_follow_scope_covers_blocks_but_not_posting(repo, r, alice, bob):
    api = Api(token_for(repo, alice, "follow"))
    assert api.post(f"/api/v1/accounts/{bob.id}/block").status_code == 200
    assert r.zscore(keys.blocks(alice.id), bob.id) is not None


def test_an_apps_own_token_may_not_act_as_a_user(repo):
    api = Api(token_for(repo, None, "read write"))
    response = api.get("/api/v1/timelines/home")
    assert response.status_code == 422
    assert response.json()["error"] == "This method requires an authenticated user"
    assert api.get("/api/v1/instance").status_code == 200


def test_json_that_does_not_parse_is_400_and_an_array_too(repo, r, alice):
    api = Api(token_for(repo, alice))
    broken = api.client.post(
        "/api/v1/statuses", "{not json", content_type="application/json", **api.headers
    )
    assert broken.status_code == 400
    assert "error" in broken.json()
    array = api.client.post(
        "/api/v1/statuses", "[1, 2]", content_type="application/json", **api.headers
    )
    assert array.status_code == 400
    assert r.llen(keys.own_posts(alice.id)) == 0


def test_an_oversized_body_is_413(repo, r, alice):
    api = Api(token_for(repo, alice))
    response = api.post("/api/v1/statuses", {"status": "x" * 70_000})
    assert response.status_code == 413
    assert response.json() == {"error": "Request entity too large"}
    assert r.llen(keys.own_posts(alice.id)) == 0


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"status": ""}, "can't be blank"),
        ({"status": "x" * 281}, "character limit"),
        ({"status": "hi", "visibility": "direct"}, "public"),
        ({"status": "hi", "media_ids[]": ["1"]}, "Media 1 not found"),
        ({"status": "hi", "media_ids[]": list("12345")}, "more than 4 files"),
        ({"status": "hi", "spoiler_text": "x" * 141}, "spoiler_text is too long"),
        ({"status": "hi", "in_reply_to_id": "abc"}, "in_reply_to_id"),
        ({"status": ["a", "b"]}, None),
    ],
)
def test_bad_statuses_are_422_and_store_nothing(repo, r, alice, data, says):
    response = Api(token_for(repo, alice)).post("/api/v1/statuses", data)
    if says is None:  # a list is read as a form would read it: its first value
        assert response.status_code == 200
        return
    assert response.status_code == 422
    assert says in response.json()["error"]
    assert r.llen(keys.own_posts(alice.id)) == 0


@pytest.mark.parametrize(
    "path", ["/api/v1/statuses/999", "/api/v1/statuses/abc", "/api/v1/accounts/999",
             "/api/v1/accounts/-1", "/api/v1/statuses/99999999999999999999999", "/api/v1/nope"],
)  # fmt: skip
def test_unknown_ids_and_paths_are_404_json(repo, alice, path):
    response = Api(token_for(repo, alice)).get(path)
    assert response.status_code == 404
    assert response.json() == {"error": "Record not found"}


def test_cors_on_the_api_only(client):
    preflight = client.options("/api/v1/timelines/home", HTTP_ORIGIN="https://app.example")
    assert preflight.status_code == 204
    assert preflight["Access-Control-Allow-Origin"] == "*"
    assert "Authorization" in preflight["Access-Control-Allow-Headers"]
    assert client.get("/api/v1/instance")["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Origin" not in client.get("/timeline/")
    assert "Access-Control-Allow-Origin" not in client.get("/settings/apps/")


def test_a_cookie_session_is_checked_for_csrf_and_a_token_is_not(repo, r, alice):
    browser = login(Client(enforce_csrf_checks=True), repo, alice)
    read = browser.get("/api/v1/accounts/verify_credentials")
    assert read.status_code == 200 and read.json()["username"] == "alice"
    forged = browser.post("/api/v1/statuses", {"status": "forged"})
    assert forged.status_code == 403
    assert "CSRF" in forged.json()["error"]
    assert r.llen(keys.own_posts(alice.id)) == 0
    api = Api(token_for(repo, alice))
    api.client = Client(enforce_csrf_checks=True)
    assert api.post("/api/v1/statuses", {"status": "by token"}).status_code == 200
    assert r.llen(keys.own_posts(alice.id)) == 1


def test_writes_carry_the_rate_limit_headers_and_429_past_the_limit(repo, r, alice, settings):
    settings.RETWIS_LIMIT_POSTS = (2, 600)
    api = Api(token_for(repo, alice))
    first = api.post("/api/v1/statuses", {"status": "one"})
    assert first["X-RateLimit-Limit"] == "2"
    assert first["X-RateLimit-Remaining"] == "1"
    assert first["X-RateLimit-Reset"].endswith("Z")
    assert api.post("/api/v1/statuses", {"status": "two"})["X-RateLimit-Remaining"] == "0"
    refused = api.post("/api/v1/statuses", {"status": "three"})
    assert refused.status_code == 429
    assert refused.json() == {"error": "Too many requests"}
    assert refused["X-RateLimit-Remaining"] == "0"
    assert int(refused["Retry-After"]) > 0
    assert r.llen(keys.own_posts(alice.id)) == 2


def test_app_registration_is_limited_per_address(client, r, settings):
    settings.RETWIS_LIMIT_APPS = (1, 3600)
    data = {"client_name": "a", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob"}
    assert client.post("/api/v1/apps", data).status_code == 200
    assert client.post("/api/v1/apps", data).status_code == 429
    assert len(all_keys(r, "oauth:app:*")) == 1


@pytest.mark.skipif(CLUSTER, reason="points the one-server client at a dead port")
def test_redis_down_is_a_503_json_never_a_traceback(settings):
    settings.CACHES = cache_settings(f"redis://127.0.0.1:{free_port()}/0")
    client = Client()
    for response in (
        client.get("/api/v1/timelines/public"),
        client.get("/api/v1/instance", HTTP_AUTHORIZATION="Bearer abc"),
        client.post(
            "/oauth/token",
            {
                "grant_type": "password",
                "username": "a",
                "password": "b",
                "client_id": "c" * 43,
                "client_secret": "d",
            },
        ),  # fmt: skip
        client.post(
            "/api/v1/apps", {"client_name": "a", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob"}
        ),
    ):
        assert response.status_code == 503
        assert response.json() == {"error": "Service unavailable"}
        assert response["Retry-After"]


def test_a_form_body_and_a_json_body_post_alike(repo, r, alice):
    api = Api(token_for(repo, alice))
    assert api.post("/api/v1/statuses", {"status": "form"}).status_code == 200
    assert api.post("/api/v1/statuses", {"status": "json"}, as_json=True).status_code == 200
    bodies = [r.hget(keys.post(int(i)), "body") for i in r.lrange(keys.own_posts(alice.id), 0, -1)]
    assert bodies == ["json", "form"]
    assert json.loads(api.get("/api/v1/instance").content)["stats"]["status_count"] == 2
