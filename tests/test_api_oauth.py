"""OAuth 2 for the client API: apps, the consent page, tokens (code with PKCE, password,
client credentials), revocation, /settings/apps/ and the staff's revoke; with the Redis
state each leaves (tokens and codes stored hashed)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from social import keys
from social.repository.clients.oauth import digest
from tests.api import Api, all_keys, token_for
from tests.conftest import PASSWORD, login

OOB = "urn:ietf:wg:oauth:2.0:oob"


def register(client: Client, **fields) -> dict:
    data = {"client_name": "Tusky", "redirect_uris": OOB, "scopes": "read write follow"}
    data.update(fields)
    response = client.post("/api/v1/apps", data)
    assert response.status_code == 200, response.content
    return response.json()


def password_token(client: Client, app: dict, username="alice", password=PASSWORD, **extra):
    data = {
        "grant_type": "password",
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
        "username": username,
        "password": password,
        "scope": "read write follow",
        **extra,
    }
    return client.post("/oauth/token", data)


def challenge_of(verifier: str) -> str:
    raw = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def authorize(browser: Client, app: dict, **extra) -> str:
    """Consent as the browser's user; return the code the oob page shows."""
    params = {
        "client_id": app["client_id"],
        "redirect_uri": OOB,
        "response_type": "code",
        "scope": "read write",
        **extra,
    }
    page = browser.get("/oauth/authorize", params)
    assert page.status_code == 200, page.content
    assert b"Tusky" in page.content
    answer = browser.post("/oauth/authorize", {**params, "decision": "allow"})
    assert answer.status_code == 200
    return re.search(rb'id="oauth-code" type="text" readonly value="([^"]+)"', answer.content)[
        1
    ].decode()


def test_registering_an_app_stores_it_hashed_and_expiring_until_used(client, r):
    app = register(client, website="https://tusky.example")
    assert app["name"] == "Tusky"
    assert app["redirect_uris"] == [OOB]
    assert app["scopes"] == ["read", "write", "follow"]
    stored = r.hgetall(keys.oauth_app(app["client_id"]))
    assert stored["name"] == "Tusky"
    assert stored["secret"] == digest(app["client_secret"])
    assert app["client_secret"] not in json.dumps(stored)
    assert 0 < r.ttl(keys.oauth_app(app["client_id"])) <= keys.OAUTH_APP_UNUSED_TTL


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"client_name": ""}, "name"),
        ({"redirect_uris": ""}, "Redirect"),
        ({"redirect_uris": "javascript:alert(1)"}, "Redirect"),
        ({"scopes": "read admin:write"}, "Scopes"),
        ({"client_name": "x" * 101}, "too long"),
    ],
)
def test_a_bad_registration_is_422_and_stores_nothing(client, r, fields, says):
    data = {"client_name": "Tusky", "redirect_uris": OOB, "scopes": "read", **fields}
    response = client.post("/api/v1/apps", data)
    assert response.status_code == 422
    assert says in response.json()["error"]
    assert not all_keys(r, "oauth:*")


def test_a_json_registration_works_and_bad_json_is_400(client):
    response = client.post(
        "/api/v1/apps",
        json.dumps({"client_name": "Ivory", "redirect_uris": [OOB, "ivory://cb"]}),
        content_type="application/json",
    )
    assert response.status_code == 200
    assert response.json()["redirect_uris"] == [OOB, "ivory://cb"]
    assert response.json()["scopes"] == ["read"]
    broken = client.post("/api/v1/apps", "{nope", content_type="application/json")
    assert broken.status_code == 400
    assert "error" in broken.json()


def test_the_password_grant_gives_a_token_stored_only_as_its_digest(client, r, alice):
    app = register(client)
    response = password_token(client, app)
    assert response.status_code == 200, response.content
    token = response.json()
    assert token["token_type"] == "Bearer"
    assert token["scope"] == "read write follow"
    assert "expires_in" not in token and "refresh_token" not in token
    stored = r.hgetall(keys.oauth_token(digest(token["access_token"])))
    assert stored == {
        "client_id": app["client_id"],
        "user_id": str(alice.id),
        "scopes": "read write follow",
        "created": str(token["created_at"]),
    }
    assert r.zrange(keys.oauth_user_tokens(alice.id), 0, -1) == [digest(token["access_token"])]
    assert r.ttl(keys.oauth_app(app["client_id"])) == -1  # authorised: kept
    assert not any(token["access_token"] in k for k in all_keys(r, "*"))


def test_a_wrong_password_is_refused_and_counted(client, r, alice):
    app = register(client)
    response = password_token(client, app, password="wrong")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"
    assert not all_keys(r, "oauth:token:*")
    assert r.get(keys.rate_limit("login_user_ip", "127.0.0.1|alice")) == "1"


def test_a_wrong_client_secret_is_refused(client, r, alice):
    app = register(client)
    response = password_token(client, app, client_secret="nope")
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert not all_keys(r, "oauth:token:*")


def test_scopes_beyond_the_apps_registration_are_refused(client, r, alice):
    app = register(client, scopes="read")
    response = password_token(client, app)  # asks for read write follow
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_scope"
    assert not all_keys(r, "oauth:token:*")


def test_the_code_flow_with_pkce_gives_a_token_once(client, r, repo, alice):
    app = register(client)
    browser = login(Client(), repo, alice)
    verifier = "v" * 50
    code = authorize(
        browser, app, code_challenge=challenge_of(verifier), code_challenge_method="S256"
    )
    stored = r.hgetall(keys.oauth_code(digest(code)))
    assert stored["user_id"] == str(alice.id)
    assert stored["challenge_method"] == "S256"
    assert 0 < r.ttl(keys.oauth_code(digest(code))) <= keys.OAUTH_CODE_TTL
    exchange = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": app["client_id"],
        "redirect_uri": OOB,
        "code_verifier": verifier,
    }
    response = client.post("/oauth/token", exchange)  # a public client: no secret
    assert response.status_code == 200, response.content
    assert response.json()["scope"] == "read write"
    assert not r.exists(keys.oauth_code(digest(code)))
    again = client.post("/oauth/token", exchange)
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    assert r.zcard(keys.oauth_user_tokens(alice.id)) == 1


def test_a_wrong_verifier_burns_the_code(client, r, repo, alice):
    app = register(client)
    browser = login(Client(), repo, alice)
    code = authorize(
        browser, app, code_challenge=challenge_of("a" * 50), code_challenge_method="S256"
    )
    response = client.post(
        "/oauth/token",
        {
            "grant_type": "authorization_code",
            "code": code,
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "redirect_uri": OOB,
            "code_verifier": "b" * 50,
        },
    )
    assert response.status_code == 400
    assert not all_keys(r, "oauth:token:*")
    assert not r.exists(keys.oauth_code(digest(code)))


def test_a_code_issued_without_a_challenge_needs_the_client_secret(client, r, repo, alice):
    app = register(client)
    browser = login(Client(), repo, alice)
    code = authorize(browser, app)  # no PKCE: only the secret proves who exchanges it
    assert r.hget(keys.oauth_code(digest(code)), "challenge") == ""
    response = client.post(
        "/oauth/token",
        {"grant_type": "authorization_code", "code": code, "client_id": app["client_id"],
         "redirect_uri": OOB, "code_verifier": "any-verifier-of-43-characters-or-more-xxxxxxx"},
    )  # fmt: skip
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert not all_keys(r, "oauth:token:*")
    assert not r.exists(keys.oauth_code(digest(code)))  # used once, whatever happened
    assert r.zcard(keys.oauth_user_tokens(alice.id)) == 0


def test_a_code_issued_with_a_challenge_needs_its_verifier(client, r, repo, alice):
    app = register(client)
    browser = login(Client(), repo, alice)
    exchange = {"grant_type": "authorization_code", "client_id": app["client_id"],
                "redirect_uri": OOB}  # fmt: skip
    challenge = {"code_challenge": challenge_of("c" * 50), "code_challenge_method": "S256"}
    code = authorize(browser, app, **challenge)
    missing = client.post("/oauth/token", {**exchange, "code": code})
    assert missing.status_code == 400
    assert missing.json() == {
        "error": "invalid_request", "error_description": "Code verifier required."
    }  # fmt: skip
    code = authorize(browser, app, **challenge)
    with_secret = client.post(
        "/oauth/token", {**exchange, "code": code, "client_secret": app["client_secret"]}
    )
    assert with_secret.status_code == 400  # the secret does not stand in for the verifier
    assert with_secret.json()["error"] == "invalid_request"
    assert not all_keys(r, "oauth:token:*")
    assert not all_keys(r, "oauth:code:*")


@pytest.mark.parametrize("method", [{"code_challenge_method": "plain"}, {}])
def test_plain_pkce_is_refused(client, r, repo, alice, method):
    """A challenge without a method is "plain" (RFC 7636 4.3): refused alike."""
    app = register(client)
    browser = login(Client(), repo, alice)
    params = {
        "client_id": app["client_id"], "redirect_uri": OOB, "response_type": "code",
        "code_challenge": "x" * 50, **method,
    }  # fmt: skip
    page = browser.get("/oauth/authorize", params)
    assert page.status_code == 400
    assert b"cannot be authorised" in page.content
    consent = browser.post("/oauth/authorize", {**params, "decision": "allow"})
    assert consent.status_code == 400
    assert not all_keys(r, "oauth:code:*")


def test_a_code_stored_with_a_plain_challenge_is_never_exchanged(client, r, repo, alice):
    """None is saved (the consent page refuses plain); one written by hand is refused
    rather than checked as plain by oauthlib, and is used up."""
    app = register(client)
    code = "handwritten-code"
    r.hset(keys.oauth_code(digest(code)), mapping={
        "client_id": app["client_id"], "user_id": alice.id, "redirect_uri": OOB,
        "scopes": "read", "challenge": "x" * 50, "challenge_method": "plain",
    })  # fmt: skip
    answer = client.post("/oauth/token", {
        "grant_type": "authorization_code", "client_id": app["client_id"],
        "redirect_uri": OOB, "code": code, "code_verifier": "x" * 50,
    })  # fmt: skip
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_grant"
    assert not r.exists(keys.oauth_code(digest(code)))
    assert r.zcard(keys.oauth_user_tokens(alice.id)) == 0


def test_the_consent_page_needs_a_login_and_redirects_with_the_code(client, r, repo, alice):
    app = register(client, redirect_uris="https://app.example/cb")
    params = {
        "client_id": app["client_id"],
        "redirect_uri": "https://app.example/cb",
        "response_type": "code",
        "state": "xyz",
    }
    anonymous = client.get("/oauth/authorize", params)
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith("/login/?next=")
    browser = login(Client(enforce_csrf_checks=True), repo, alice)
    page = browser.get("/oauth/authorize", params)
    assert b"csrfmiddlewaretoken" in page.content
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content)[1].decode()
    forged = browser.post("/oauth/authorize", {**params, "decision": "allow"})
    assert forged.status_code == 403
    answer = browser.post(
        "/oauth/authorize", {**params, "decision": "allow", "csrfmiddlewaretoken": token}
    )
    assert answer.status_code == 302
    location = urlsplit(answer["Location"])
    assert location.netloc == "app.example"
    query = parse_qs(location.query)
    assert query["state"] == ["xyz"]
    assert r.exists(keys.oauth_code(digest(query["code"][0])))


def test_denying_sends_the_app_access_denied(client, r, repo, alice):
    app = register(client, redirect_uris="https://app.example/cb")
    browser = login(Client(), repo, alice)
    params = {"client_id": app["client_id"], "redirect_uri": "https://app.example/cb",
              "response_type": "code"}  # fmt: skip
    answer = browser.post("/oauth/authorize", {**params, "decision": "deny"})
    assert answer.status_code == 302
    assert "error=access_denied" in answer["Location"]
    assert not all_keys(r, "oauth:code:*")


def test_an_unregistered_redirect_uri_is_never_followed(client, repo, alice):
    app = register(client, redirect_uris="https://app.example/cb")
    browser = login(Client(), repo, alice)
    params = {"client_id": app["client_id"], "redirect_uri": "https://evil.example/",
              "response_type": "code"}  # fmt: skip
    page = browser.get("/oauth/authorize", params)
    assert page.status_code == 400
    assert b"cannot be authorised" in page.content


def test_client_credentials_give_an_expiring_app_token(client, r):
    app = register(client)
    response = client.post(
        "/oauth/token",
        json.dumps(
            {
                "grant_type": "client_credentials",
                "client_id": app["client_id"],
                "client_secret": app["client_secret"],
                "scope": "read",
            }
        ),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    token = response.json()["access_token"]
    key = keys.oauth_token(digest(token))
    assert r.hget(key, "user_id") == ""
    assert 0 < r.ttl(key) <= keys.OAUTH_APP_TOKEN_TTL
    verify = client.get("/api/v1/apps/verify_credentials", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert verify.status_code == 200
    assert verify.json()["name"] == "Tusky"
    assert "client_secret" not in verify.json()


def test_revoking_a_token_deletes_it(client, r, alice):
    app = register(client)
    token = password_token(client, app).json()["access_token"]
    response = client.post(
        "/oauth/revoke",
        {"client_id": app["client_id"], "client_secret": app["client_secret"], "token": token},
    )
    assert response.status_code == 200
    assert response.json() == {}
    assert not r.exists(keys.oauth_token(digest(token)))
    assert r.zcard(keys.oauth_user_tokens(alice.id)) == 0
    gone = client.get("/api/v1/apps/verify_credentials", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert gone.status_code == 401
    assert gone.json() == {"error": "The access token is invalid"}


def test_the_token_endpoint_speaks_cors_and_the_metadata_names_it(client):
    preflight = client.options("/oauth/token", HTTP_ORIGIN="https://web.example")
    assert preflight["Access-Control-Allow-Origin"] == "*"
    meta = client.get("/.well-known/oauth-authorization-server").json()
    assert meta["token_endpoint"].endswith("/oauth/token")
    assert "password" in meta["grant_types_supported"]
    assert meta["code_challenge_methods_supported"] == ["S256"]
    page = client.get("/login/")
    assert "Access-Control-Allow-Origin" not in page


def test_settings_apps_lists_and_revokes_an_authorised_app(client, r, repo, alice):
    app = register(client)
    password_token(client, app)
    password_token(client, app)
    browser = login(Client(), repo, alice)
    page = browser.get("/settings/apps/")
    assert page.status_code == 200
    assert b"Tusky" in page.content
    answer = browser.post(f"/settings/apps/{app['client_id']}/revoke/")
    assert answer.status_code == 302
    assert not all_keys(r, "oauth:token:*")
    assert r.zcard(keys.oauth_user_tokens(alice.id)) == 0
    assert b"No app may use your account" in browser.get("/settings/apps/").content


def test_staff_see_and_revoke_an_accounts_apps_in_the_audit_log(client, r, repo, alice, sam):
    app = register(client)
    password_token(client, app)
    staff = login(Client(), repo, sam)
    page = staff.get("/staff/users/alice/")
    assert b"Tusky" in page.content
    answer = staff.post(
        f"/staff/users/alice/apps/{app['client_id']}/revoke/", {"reason": "spam bot"}
    )
    assert answer.status_code == 302
    assert not all_keys(r, "oauth:token:*")
    entry = r.xrevrange(keys.audit_log(), count=1)[0][1]
    assert entry["action"] == "revoke_app"
    assert entry["user_name"] == "alice"
    assert "Tusky" in entry["reason"] and "spam bot" in entry["reason"]
    assert r.zcard(keys.audit_by_action("revoke_app")) == 1


def test_non_staff_cannot_revoke_others_apps(client, r, repo, alice, bob):
    app = register(client)
    password_token(client, app)
    answer = login(Client(), repo, bob).post(f"/staff/users/alice/apps/{app['client_id']}/revoke/")
    assert answer.status_code == 403
    assert all_keys(r, "oauth:token:*")


def test_a_user_keeps_at_most_the_cap_of_tokens(repo, r, alice, monkeypatch):
    monkeypatch.setattr(keys, "OAUTH_TOKENS_CAP", 3)
    app, _ = repo.oauth.register_app("Bot", [OOB], ["read"])
    tokens = [f"token-{i}" for i in range(5)]
    for i, token in enumerate(tokens):
        repo.oauth.save_token(token, app.client_id, alice.id, ["read"], at=1000 + i)
    assert r.zcard(keys.oauth_user_tokens(alice.id)) == 3
    assert not r.exists(keys.oauth_token(digest(tokens[0])))
    assert r.exists(keys.oauth_token(digest(tokens[4])))


def test_deleting_an_account_revokes_its_tokens(repo, r, alice, bob):
    token = token_for(repo, alice)
    kept = token_for(repo, bob)
    assert Api(token).get("/api/v1/accounts/verify_credentials").status_code == 200

    repo.accounts.delete_account(alice)

    assert Api(token).get("/api/v1/accounts/verify_credentials").status_code == 401
    assert not r.exists(keys.oauth_token(digest(token)))
    assert not r.exists(keys.oauth_user_tokens(alice.id))
    assert r.exists(keys.oauth_token(digest(kept)))  # another account's stays
