"""Logging in to an app through the browser (issue 24), in Chromium against the site served
for real, as the apps do it: a desktop or phone app listens on a loopback port it just got
(RFC 8252 §7.3) and takes the code there, a web app at its https address; each exchanges
the code at /oauth/token (with PKCE, or with its client secret). The consent page's
Content-Security-Policy must let exactly that redirect through (Chromium checks a form's
redirect against the submitting page's form-action)."""

from __future__ import annotations

import base64
import hashlib
import secrets
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests

from social import keys
from social.repository.clients.oauth import digest
from tests.api import all_keys


class Callback:
    """An app's loopback redirect endpoint: an HTTP server on 127.0.0.1 and a free port
    keeping the query of each request for /callback (the browser asks for a favicon too)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        queries = self.queries = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                asked = urlsplit(self.path)
                if asked.path == "/callback":
                    queries.append({k: v[0] for k, v in parse_qs(asked.query).items()})
                body = b"<!doctype html><title>Back in the app</title><p>You may close this."
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        server = ThreadingHTTPServer
        if ":" in host:

            class IPv6Server(ThreadingHTTPServer):
                address_family = socket.AF_INET6

            server = IPv6Server
        self.server = server((host, 0), Handler)
        named = f"[{host}]" if ":" in host else host
        self.registered = f"http://{named}/callback"  # what the app registers: no port
        self.uri = f"http://{named}:{self.server.server_address[1]}/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(params=["127.0.0.1", "::1"])
def callback(request):
    """An app listening on a free port of the loopback interface (IPv4, IPv6)."""
    listening = Callback(request.param)
    yield listening
    listening.close()


def register(live_url: str, redirect_uri: str) -> dict:
    answer = requests.post(
        live_url + "/api/v1/apps",
        data={"client_name": "Pocket client", "redirect_uris": redirect_uri, "scopes": "read"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def consent_url(live_url: str, app: dict, redirect_uri: str = "", **extra) -> str:
    query = {"client_id": app["client_id"], "redirect_uri": redirect_uri,
             "response_type": "code", "scope": "read", **extra}  # fmt: skip
    return f"{live_url}/oauth/authorize?{urlencode(query)}"


def press(page, button: str, lands_at: str) -> dict:
    """Press the consent page's button; return the query the browser lands with at the
    app's URI."""
    page.get_by_role("button", name=button, exact=True).click()
    page.wait_for_url(lambda url: url.startswith(lands_at + "?"))
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def exchange(live_url: str, app: dict, code: str, redirect_uri: str, **proof) -> requests.Response:
    data = {"grant_type": "authorization_code", "code": code, "client_id": app["client_id"],
            "redirect_uri": redirect_uri, **proof}  # fmt: skip
    return requests.post(live_url + "/oauth/token", data=data, timeout=10)


def username_for(live_url: str, token: str) -> str:
    me = requests.get(
        live_url + "/api/v1/accounts/verify_credentials",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    return me.json()["username"]


def test_a_phone_app_logs_in_on_a_loopback_port_with_pkce(live_url, page_as, person, callback, r):
    ada = person("ada")
    app = register(live_url, callback.registered)
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    page = page_as(ada, 390)
    page.goto(consent_url(
        live_url, app, callback.uri, state="phone-42",
        code_challenge=challenge.rstrip(b"=").decode(), code_challenge_method="S256",
    ))  # fmt: skip
    got = press(page, "Authorise", callback.uri)
    assert callback.queries == [got]
    assert got["state"] == "phone-42"
    assert page.title() == "Back in the app"
    code_key = keys.oauth_code(digest(got["code"]))
    assert r.hget(code_key, "redirect_uri") == callback.uri
    token = exchange(live_url, app, got["code"], callback.uri, code_verifier=verifier)
    assert token.status_code == 200, token.text
    assert username_for(live_url, token.json()["access_token"]) == "ada"
    assert not r.exists(code_key)
    assert r.zcard(keys.oauth_user_tokens(ada.id)) == 1


def test_a_web_app_logs_in_at_its_https_address_with_its_secret(live_url, page_as, person, r):
    ada = person("ada")
    app = register(live_url, "https://app.example/auth/done")
    page = page_as(ada)
    reached = []

    def the_web_app(route) -> None:
        reached.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<title>Signed in</title>")

    page.route("https://app.example/**", the_web_app)
    page.goto(consent_url(live_url, app, "https://app.example/auth/done", state="web-7"))
    got = press(page, "Authorise", "https://app.example/auth/done")
    assert len(reached) == 1 and got["state"] == "web-7"
    without_secret = exchange(live_url, app, got["code"], "https://app.example/auth/done")
    assert without_secret.status_code == 401  # no challenge: only the secret proves the app
    assert not all_keys(r, "oauth:token:*")
    page.goto(consent_url(live_url, app, "https://app.example/auth/done", state="web-8"))
    got = press(page, "Authorise", "https://app.example/auth/done")
    token = exchange(
        live_url, app, got["code"], "https://app.example/auth/done",
        client_secret=app["client_secret"],
    )  # fmt: skip
    assert token.status_code == 200, token.text
    assert username_for(live_url, token.json()["access_token"]) == "ada"
    assert r.zcard(keys.oauth_user_tokens(ada.id)) == 1


def test_denying_sends_the_browser_back_with_access_denied(live_url, page_as, person, callback, r):
    ada = person("ada")
    app = register(live_url, callback.registered)
    page = page_as(ada)
    page.goto(consent_url(live_url, app, callback.uri, state="no-thanks"))
    got = press(page, "Deny", callback.uri)
    assert got == {"error": "access_denied", "state": "no-thanks"}
    assert callback.queries == [got]
    assert not all_keys(r, "oauth:code:*")
    assert r.zcard(keys.oauth_user_tokens(ada.id)) == 0


@pytest.mark.parametrize(
    "change",
    [{"response_type": "token"}, {"redirect_uri": "LOOPBACK"}, {"scope": "read write"}],
)
def test_an_error_before_consent_stays_on_the_site(live_url, page_as, person, callback, r, change):
    ada = person("ada")
    app = register(live_url, "https://app.example/auth/done")
    page = page_as(ada)
    reached = []
    page.route("https://app.example/**", lambda route: reached.append(route) or route.abort())
    query = {"redirect_uri": "https://app.example/auth/done", "state": "s", **change}
    answer = page.goto(consent_url(live_url, app, **query))
    assert answer.status == 400
    assert page.url.startswith(live_url + "/oauth/authorize?")
    assert "This app cannot be authorised" in page.locator("main").inner_text()
    assert page.get_by_role("button", name="Authorise").count() == 0
    assert reached == []
    assert not all_keys(r, "oauth:code:*")
