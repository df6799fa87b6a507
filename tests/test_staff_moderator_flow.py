"""The issue's "done": createstaff, log in, find a user by prefix, suspend them, delete a
reported post, and see both in the log, all through the pages, with CSRF checks on."""

from __future__ import annotations

import io
import re

from django.core.management import call_command
from django.test import Client

from tests.conftest import login, make_user

PASSWORD = "a long and quiet passphrase"


def csrf(client: Client, url: str) -> str:
    """GET url (as a browser would before posting) and return the CSRF token it set."""
    assert client.get(url).status_code == 200
    return client.cookies["csrftoken"].value


def test_a_moderator_suspends_a_user_and_deletes_a_reported_post(repo, r, monkeypatch):
    frank, bob = make_user(repo, "frank"), make_user(repo, "bob")
    make_user(repo, "fred")
    post_id = repo.posts.create_post(frank.id, "buy followers at example.com")
    reporter = login(Client(enforce_csrf_checks=True), repo, bob)
    token = csrf(reporter, f"/p/{post_id}/report/")
    reporter.post(f"/p/{post_id}/report/", {"reason": "spam", "csrfmiddlewaretoken": token})
    monkeypatch.setenv("MOD_PASSWORD", PASSWORD)
    call_command(
        "createstaff", "moddy", "--password-from-env", "MOD_PASSWORD", stdout=io.StringIO()
    )

    mod = Client(enforce_csrf_checks=True)
    token = csrf(mod, "/login/?next=/staff/")
    response = mod.post(
        "/login/",
        {
            "username": "moddy",
            "password": PASSWORD,
            "next": "/staff/",
            "csrfmiddlewaretoken": token,
        },
    )
    assert response["Location"] == "/staff/"

    found = mod.get("/staff/users/?q=FR").content.decode()
    assert re.findall(r"@(fr\w+)</strong>", found) == ["frank", "fred"]

    token = csrf(mod, "/staff/users/frank/")
    mod.post(
        "/staff/users/frank/suspend/",
        {"suspend-reason": "spam account", "csrfmiddlewaretoken": token},
    )
    assert r.hget(f"user:{frank.id}", "status") == "suspended"

    reports = mod.get("/staff/reports/").content.decode()
    (report_id,) = re.findall(r'action="/staff/reports/(\d+)/resolve/"', reports)
    mod.post(
        f"/staff/reports/{report_id}/resolve/",
        {"outcome": "deleted", "reason": "spam link", "csrfmiddlewaretoken": token},
    )
    assert r.hget(f"post:{post_id}", "deleted") == "1"

    page = mod.get("/staff/log/?actor=moddy").content.decode()
    log = page[page.index('<ol class="audit">') :]  # past the filter's option labels
    assert log.index("Deleted post") < log.index("Suspended account")
    assert "spam link" in log and "spam account" in log and "@frank" in log
