"""The OAuth consent pages keep a popup's link to the web client that opened it
(Cross-Origin-Opener-Policy `unsafe-none`, as Mastodon's); every other page keeps the site's
`same-origin`. (In Chromium, with a client of our own on another origin:
tests/browser/test_oauth_popup.py.)"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from social import keys
from social.repository.clients.oauth import digest
from tests.conftest import login

WEB_APP = "https://client.example/callback"
HEADER = "Cross-Origin-Opener-Policy"


@pytest.fixture
def app(client) -> dict:
    answer = client.post(
        "/api/v1/apps",
        {"client_name": "Web client", "redirect_uris": WEB_APP, "scopes": "read"},
    )
    assert answer.status_code == 200
    return answer.json()


def query(app: dict, **extra) -> dict:
    return {"client_id": app["client_id"], "redirect_uri": WEB_APP, "response_type": "code",
            "scope": "read", "state": "s1", **extra}  # fmt: skip


def test_the_consent_page_lets_its_opener_keep_the_popup(repo, alice, app):
    browser = login(Client(), repo, alice)

    page = browser.get("/oauth/authorize", query(app))

    assert page.status_code == 200
    assert page[HEADER] == "unsafe-none"
    assert page["X-Frame-Options"] == "DENY"  # still never in a frame
    assert "frame-ancestors 'none'" in page["Content-Security-Policy"]


def test_the_answers_redirect_to_the_app_keeps_the_link_too(repo, r, alice, app):
    browser = login(Client(), repo, alice)

    answer = browser.post("/oauth/authorize", {**query(app), "decision": "allow"})

    assert answer.status_code == 302
    assert answer[HEADER] == "unsafe-none"
    sent = parse_qs(urlsplit(answer["Location"]).query)
    assert answer["Location"].startswith(WEB_APP + "?") and sent["state"] == ["s1"]
    assert r.exists(keys.oauth_code(digest(sent["code"][0])))
    denied = browser.post("/oauth/authorize", {**query(app), "decision": "deny"})
    assert denied.status_code == 302 and denied[HEADER] == "unsafe-none"


def test_a_visitor_is_sent_to_log_in_with_the_link_kept(client, app):
    answer = client.get("/oauth/authorize", query(app))

    assert answer.status_code == 302
    assert answer["Location"].startswith("/login/?next=")
    assert answer[HEADER] == "unsafe-none"


def test_a_refused_request_is_said_on_a_page_that_keeps_the_link(repo, alice, app):
    browser = login(Client(), repo, alice)

    answer = browser.get("/oauth/authorize", query(app, redirect_uri="https://other.example/"))

    assert answer.status_code == 400
    assert answer[HEADER] == "unsafe-none"


@pytest.mark.parametrize(
    ("path", "visitor"),  # what a visitor gets; alice gets each page (200)
    [
        ("/", 200), ("/timeline/", 200), ("/login/", 200), ("/settings/", 302),
        ("/settings/apps/", 302), ("/u/alice/", 200), ("/search/?q=a", 200),
    ],
)  # fmt: skip
def test_every_other_page_keeps_the_sites_isolation(repo, alice, path, visitor):
    for browser, status in ((Client(), visitor), (login(Client(), repo, alice), 200)):
        answer = browser.get(path)
        assert answer.status_code == status, (path, answer.status_code)
        assert answer[HEADER] == "same-origin", path


def test_the_login_page_on_the_way_to_the_consent_page_keeps_the_link(repo, alice, app):
    """A web client that opens the popup logged out: the login page and its redirect to the
    consent page keep the opener too; a login going anywhere else keeps same-origin."""
    from urllib.parse import urlencode

    from tests.conftest import PASSWORD

    consent = "/oauth/authorize?" + urlencode(query(app))
    browser = Client()

    page = browser.get("/login/", {"next": consent})
    answer = browser.post(
        "/login/?" + urlencode({"next": consent}),
        {"username": "alice", "password": PASSWORD, "next": consent},
    )

    assert page.status_code == 200 and page[HEADER] == "unsafe-none"
    assert answer.status_code == 302 and answer["Location"] == consent
    assert answer[HEADER] == "unsafe-none"
    assert Client().get("/login/")[HEADER] == "same-origin"
    assert Client().get("/login/", {"next": "/timeline/"})[HEADER] == "same-origin"
    assert (
        Client().get("/login/", {"next": "https://evil.example/oauth/authorize"})[HEADER]
        == "same-origin"
    )
