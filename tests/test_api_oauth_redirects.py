"""The browser login for every kind of app (RFC 8252 native apps, web apps): the redirect
URIs an app may register, which one an authorisation may use (any port of a loopback
address), where the consent sends the browser (Authorise and Deny), the consent page's
Content-Security-Policy that lets exactly that redirect through, and the errors shown on
the site's own page before anyone has pressed anything (RFC 9700 §4.11.2)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from social import keys
from social.api.redirect_uris import form_action_source, matches, problem
from social.middleware import form_action_allowing
from social.repository.clients.oauth import digest
from tests.api import OOB, all_keys
from tests.conftest import login
from tests.test_api_oauth import challenge_of, register

LOOPBACK = "http://127.0.0.1/callback"


def consent(browser: Client, app: dict, redirect_uri: str, **extra) -> dict:
    """Open the consent page for redirect_uri; return the fields its form posts back."""
    params = {"client_id": app["client_id"], "redirect_uri": redirect_uri,
              "response_type": "code", "scope": "read", **extra}  # fmt: skip
    page = browser.get("/oauth/authorize", params)
    assert page.status_code == 200, page.content
    return params


def code_and_state(location: str, redirect_uri: str) -> dict:
    """The query the app's URI received; asserts it is that URI."""
    assert location.split("?")[0] == redirect_uri, location
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


# --- Registration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "uri",
    [
        OOB,
        "myapp://oauth",
        "com.example.app:/oauth2redirect",
        "https://app.example/cb?from=mastodon",
        LOOPBACK,
        "http://127.0.0.1:8123/callback",
        "http://[::1]/callback",
        "http://localhost:3000/auth",
    ],
)
def test_every_kind_of_app_registers_its_redirect_uri(client, r, uri):
    app = register(client, redirect_uris=uri)
    assert app["redirect_uris"] == [uri]
    assert r.hget(keys.oauth_app(app["client_id"]), "redirect_uris") == uri


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("javascript:alert(document.domain)", "is forbidden by the server"),
        ("JavaScript://%0aalert(1)", "is forbidden by the server"),
        ("data:text/html,<script>alert(1)</script>", "is forbidden by the server"),
        ("vbscript:msgbox", "is forbidden by the server"),
        ("file:///etc/passwd", "is forbidden by the server"),
        ("http://app.example/cb", "must be an HTTPS/SSL URI"),
        ("http://127.0.0.1.evil.example/cb", "must be an HTTPS/SSL URI"),
        ("https://app.example/cb#part", "cannot contain a fragment"),
        ("https:///cb", "must be an absolute URI"),
        ("https://app_example;/cb", "must be an absolute URI"),
        ("/relative/cb", "must be an absolute URI"),
        ("https://app.example:99999/cb", "must be an absolute URI"),
        ("http://[::1%25eth0]/cb", "must be an absolute URI"),
        ("https://[2001:db8::1]/cb", "must be an absolute URI"),
        ("https://me@app.example/cb", "must be an absolute URI"),
    ],
)
def test_a_dangerous_redirect_uri_is_refused_with_mastodons_422(client, r, uri, says):
    response = client.post(
        "/api/v1/apps", {"client_name": "Evil", "redirect_uris": f"{OOB}\n{uri}"}
    )
    assert response.status_code == 422
    assert response.json() == {"error": f"Validation failed: Redirect URI {says}."}
    assert not all_keys(r, "oauth:*")


def test_loopback_addresses_match_on_any_port_and_nothing_else_does():
    assert matches(LOOPBACK, "http://127.0.0.1:49152/callback")
    assert matches("http://[::1]:8080/callback", "http://[::1]:1234/callback")
    assert matches("https://app.example/cb", "https://app.example/cb")
    assert not matches("https://app.example/cb", "https://app.example:8443/cb")
    assert not matches("http://localhost:3000/cb", "http://localhost:3001/cb")  # a name
    assert not matches(LOOPBACK, "http://127.0.0.1:49152/callback/x")
    assert not matches(LOOPBACK, "http://127.0.0.1:49152/callback?next=1")
    assert not matches(LOOPBACK, "http://me@127.0.0.1:49152/callback")
    assert not matches(LOOPBACK, "https://127.0.0.1:49152/callback")
    assert not matches(LOOPBACK, "http://127.0.0.1:49152@evil.example/callback")
    assert not matches(LOOPBACK, "http://127.0.0.1:x/callback")
    assert not matches("myapp://oauth", "myapp://oauth/")
    assert problem("http://127.0.0.1:49152/callback") is None


def test_the_form_action_source_is_the_uris_origin_or_scheme():
    assert form_action_source("https://App.Example:8443/cb?x=1") == "https://app.example:8443"
    assert form_action_source("http://127.0.0.1:49152/callback") == "http://127.0.0.1:49152"
    assert form_action_source("http://[::1]:5000/cb") == "http://*:5000"  # no IPv6 in CSP
    assert form_action_source("myapp://oauth") == "myapp:"
    assert form_action_source("com.example.app:/oauth") == "com.example.app:"
    assert form_action_source(OOB) is None


# --- The consent: where it sends the browser --------------------------------------------------


def test_a_phone_app_with_its_own_scheme_gets_the_code_and_state_at_its_uri(client, r, repo, alice):
    app = register(client, redirect_uris="myapp://oauth")
    browser = login(Client(), repo, alice)
    verifier = "phone-app-verifier-" + "v" * 40
    params = consent(
        browser, app, "myapp://oauth", state="s t&a=te",
        code_challenge=challenge_of(verifier), code_challenge_method="S256",
    )  # fmt: skip
    answer = browser.post("/oauth/authorize", {**params, "decision": "allow"})
    assert answer.status_code == 302
    got = code_and_state(answer["Location"], "myapp://oauth")
    assert got["state"] == "s t&a=te"
    assert r.hget(keys.oauth_code(digest(got["code"])), "redirect_uri") == "myapp://oauth"
    exchange = client.post(
        "/oauth/token",
        {"grant_type": "authorization_code", "code": got["code"], "client_id": app["client_id"],
         "redirect_uri": "myapp://oauth", "code_verifier": verifier},
    )  # fmt: skip
    assert exchange.status_code == 200, exchange.content
    assert r.zcard(keys.oauth_user_tokens(alice.id)) == 1


def test_denying_a_phone_app_sends_access_denied_and_the_state_to_its_uri(client, r, repo, alice):
    app = register(client, redirect_uris="myapp://oauth")
    browser = login(Client(), repo, alice)
    params = consent(browser, app, "myapp://oauth", state="abc")
    answer = browser.post("/oauth/authorize", {**params, "decision": "deny"})
    assert answer.status_code == 302
    assert code_and_state(answer["Location"], "myapp://oauth") == {
        "error": "access_denied",
        "state": "abc",
    }
    assert not all_keys(r, "oauth:code:*")


def test_a_loopback_app_gets_the_code_on_the_port_it_listens_on(client, r, repo, alice):
    app = register(client, redirect_uris=LOOPBACK)
    browser = login(Client(), repo, alice)
    listening = "http://127.0.0.1:49152/callback"
    params = consent(browser, app, listening, state="1")
    answer = browser.post("/oauth/authorize", {**params, "decision": "allow"})
    got = code_and_state(answer["Location"], listening)
    exchange = {"grant_type": "authorization_code", "code": got["code"],
                "client_id": app["client_id"], "client_secret": app["client_secret"]}  # fmt: skip
    other_port = client.post(
        "/oauth/token", {**exchange, "redirect_uri": "http://127.0.0.1:49153/callback"}
    )
    assert other_port.status_code == 400  # the exchange names the URI the code went to
    assert not all_keys(r, "oauth:token:*")
    params = consent(browser, app, listening)
    answer = browser.post("/oauth/authorize", {**params, "decision": "allow"})
    got = code_and_state(answer["Location"], listening)
    same = client.post("/oauth/token", {**exchange, "code": got["code"], "redirect_uri": listening})
    assert same.status_code == 200, same.content
    assert r.zcard(keys.oauth_user_tokens(alice.id)) == 1


def test_the_consent_page_lets_its_form_reach_only_the_apps_redirect(client, repo, alice):
    strict = client.get("/login/")["Content-Security-Policy"]
    assert "form-action 'self'" in strict
    browser = login(Client(), repo, alice)
    for registered, used, source in [
        ("https://app.example/cb", "https://app.example/cb", "https://app.example"),
        (LOOPBACK, "http://127.0.0.1:49152/callback", "http://127.0.0.1:49152"),
        ("myapp://oauth", "myapp://oauth", "myapp:"),
    ]:
        app = register(client, redirect_uris=registered)
        params = {"client_id": app["client_id"], "redirect_uri": used, "response_type": "code"}
        page = browser.get("/oauth/authorize", params)
        assert page.status_code == 200
        expected = strict.replace("form-action 'self'", f"form-action 'self' {source}")
        assert page["Content-Security-Policy"] == expected
    app = register(client)
    oob = browser.get(
        "/oauth/authorize",
        {"client_id": app["client_id"], "redirect_uri": OOB, "response_type": "code"},
    )
    assert oob["Content-Security-Policy"] == strict


# --- Errors before consent: on the site's own page ---------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"response_type": "token"},
        {"response_type": "code id_token"},
        {"scope": "read admin:write"},
        {"scope": "write"},  # beyond what the app registered
        {"code_challenge": "x" * 50, "code_challenge_method": "plain"},
        {"redirect_uri": "https://evil.example/cb/"},
        {"redirect_uri": "https://evil.example/cb#x"},
        {"client_id": "no-such-client-id-at-all"},
    ],
)
def test_an_error_before_consent_is_shown_on_the_site_never_redirected(
    client, r, repo, alice, change
):
    app = register(client, redirect_uris="https://evil.example/cb", scopes="read")
    browser = login(Client(), repo, alice)
    params = {"client_id": app["client_id"], "redirect_uri": "https://evil.example/cb",
              "response_type": "code", "scope": "read", "state": "s", **change}  # fmt: skip
    page = browser.get("/oauth/authorize", params)
    assert page.status_code == 400
    assert "Location" not in page
    assert b"cannot be authorised" in page.content
    assert "form-action 'self';" in page["Content-Security-Policy"] + ";"
    assert not all_keys(r, "oauth:code:*")


def test_a_forged_consent_for_an_unregistered_uri_is_refused_on_the_page(client, r, repo, alice):
    app = register(client, redirect_uris="https://app.example/cb")
    browser = login(Client(), repo, alice)
    for decision in ("allow", "deny"):
        answer = browser.post(
            "/oauth/authorize",
            {"client_id": app["client_id"], "redirect_uri": "https://evil.example/cb",
             "response_type": "code", "decision": decision},
        )  # fmt: skip
        assert answer.status_code == 400
        assert "Location" not in answer
    assert not all_keys(r, "oauth:code:*")


def test_an_app_registered_before_the_rules_cannot_use_a_forbidden_uri(client, r, repo, alice):
    app, _ = repo.oauth.register_app("Old", ["http://app.example/cb"], ["read"])
    browser = login(Client(), repo, alice)
    page = browser.get(
        "/oauth/authorize",
        {"client_id": app.client_id, "redirect_uri": "http://app.example/cb",
         "response_type": "code"},
    )  # fmt: skip
    assert page.status_code == 400
    assert re.search(rb"cannot be authorised", page.content)


def test_form_action_allowing_adds_the_source_to_that_directive_only():
    assert (
        form_action_allowing("default-src 'self'; form-action 'self'", "myapp:")
        == "default-src 'self'; form-action 'self' myapp:"
    )
    assert (
        form_action_allowing("form-action 'self' ; img-src x", "https://a.example")
        == "form-action 'self' https://a.example; img-src x"
    )
    assert form_action_allowing("Form-Action 'none'", "x:") == "Form-Action 'none'"
    assert form_action_allowing("default-src 'self'", "x:") == "default-src 'self'"
    assert form_action_allowing("x-form-action 'self'", "x:") == "x-form-action 'self'"
