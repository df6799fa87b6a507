"""Staff actions on an account, through the pages: the Redis state and the log they leave."""

from __future__ import annotations

import html
import json
import re

from django.test import Client

from social.repository.moderation.actions import SYSTEM_ACTOR
from tests.conftest import login


def last_entry(r) -> dict:
    ((_, fields),) = r.xrevrange("audit", count=1)
    return fields


def messages_of(response) -> list[str]:
    """Return the texts of the messages the page shows (base.html's list), unescaped."""
    shown = re.search(r'<ul class="messages">(.*?)</ul>', response.content.decode(), re.S)
    if not shown:
        return []
    return [html.unescape(m) for m in re.findall(r'<li class="message[^"]*">(.*?)</li>', shown[1])]


def logged_out(response) -> bool:
    """Return whether the page was rendered for a visitor: the nav offers login, not logout."""
    page = response.content.decode()
    offers_login = '<a href="/login/">Log in</a>' in page
    return response.status_code == 200 and offers_login and "Log out" not in page


def test_the_account_page_shows_the_file(repo, sam, sam_client, alice, bob):
    repo.users.record_login(alice.id, "198.51.100.7")
    post_id = repo.posts.create_post(alice.id, "hello <b>world</b>")
    repo.reports.report_post(bob, post_id, "spam", "looks like spam")
    repo.moderation.add_note(alice.id, sam, "first warning")

    response = sam_client.get("/staff/users/alice/")

    html = response.content.decode()
    assert response.status_code == 200
    assert "198.51.100.7" in html
    assert "hello &lt;b&gt;world&lt;/b&gt;" in html
    assert "looks like spam" in html and "first warning" in html
    assert "Added note" in html  # the account's history from the log
    assert 'action="/staff/users/alice/suspend/"' in html


def test_suspending_through_the_page_logs_the_user_out_and_records_why(
    repo, r, sam, sam_client, alice
):
    alice_client = login(Client(), repo, alice)

    response = sam_client.post(
        "/staff/users/alice/suspend/", {"suspend-reason": "  spam \n links "}
    )

    assert response.status_code == 302 and response["Location"] == "/staff/users/alice/"
    assert r.hget(f"user:{alice.id}", "status") == "suspended"
    assert r.hget(f"user:{alice.id}", "suspended_reason") == "spam links"
    assert r.zscore("suspended_users", "alice") is not None
    assert logged_out(alice_client.get("/"))
    entry = last_entry(r)
    assert (entry["actor"], entry["action"], entry["user"], entry["reason"]) == (
        str(sam.id),
        "suspend",
        str(alice.id),
        "spam links",
    )
    page = sam_client.get("/staff/users/alice/")
    assert b"is suspended and logged out everywhere" in page.content
    assert b'action="/staff/users/alice/unsuspend/"' in page.content


def test_suspending_without_a_reason_shows_the_error_and_changes_nothing(r, sam_client, alice):
    response = sam_client.post("/staff/users/alice/suspend/", {"suspend-reason": " "})

    assert response.status_code == 400
    assert b"Say why" in response.content
    assert r.hget(f"user:{alice.id}", "status") is None
    assert r.zcard("audit:action:suspend") == 0


def test_a_reason_over_the_limit_is_refused(r, sam_client, alice):
    response = sam_client.post("/staff/users/alice/suspend/", {"suspend-reason": "x" * 501})
    assert response.status_code == 400
    assert r.hget(f"user:{alice.id}", "status") is None


def test_unsuspending_through_the_page(repo, r, sam, sam_client, alice):
    repo.moderation.suspend(alice.id, sam, "spam")

    sam_client.post("/staff/users/alice/unsuspend/", {"unsuspend-reason": "appeal"})

    assert r.hget(f"user:{alice.id}", "status") is None
    assert r.zscore("suspended_users", "alice") is None
    assert (last_entry(r)["action"], last_entry(r)["reason"]) == ("unsuspend", "appeal")


def test_forcing_logout_through_the_page(repo, r, sam_client, alice):
    alice_client = login(Client(), repo, alice)
    old = r.hget(f"user:{alice.id}", "auth")

    sam_client.post("/staff/users/alice/logout/", {"logout-reason": ""})

    assert r.hget(f"user:{alice.id}", "auth") != old
    assert logged_out(alice_client.get("/"))
    assert last_entry(r)["action"] == "force_logout"


def test_granting_and_revoking_staff_through_the_page(repo, r, sam, sam_client, alice):
    repo.moderation.grant_owner(sam.id, SYSTEM_ACTOR)  # owners alone grant and revoke staff
    sam_client.post("/staff/users/alice/grant_staff/", {"grant_staff-reason": "new mod"})
    assert r.hget(f"user:{alice.id}", "staff") == "1"
    assert last_entry(r)["action"] == "grant_staff"

    sam_client.post("/staff/users/alice/revoke_staff/", {"revoke_staff-reason": ""})
    assert r.hget(f"user:{alice.id}", "staff") is None
    assert last_entry(r)["action"] == "revoke_staff"


def test_staff_cannot_revoke_their_own_staff(r, sam, sam_client):
    response = sam_client.post("/staff/users/sam/revoke_staff/", {}, follow=True)

    assert "You cannot change your own staff status." in messages_of(response)
    assert r.hget(f"user:{sam.id}", "staff") == "1"
    assert r.zcard("audit:action:revoke_staff") == 0
    assert b"This is your own account" in response.content


def test_adding_a_note_through_the_page(r, sam, sam_client, alice):
    response = sam_client.post("/staff/users/alice/note/", {"note-reason": "  keeps arguing  "})

    assert response.status_code == 302
    note = json.loads(r.lindex(f"notes:{alice.id}", 0))
    assert (note["text"], note["by"], note["by_name"]) == ("keeps arguing", sam.id, "sam")
    assert (last_entry(r)["action"], last_entry(r)["reason"]) == ("add_note", "keeps arguing")


def test_an_empty_note_is_refused(r, sam_client, alice):
    response = sam_client.post("/staff/users/alice/note/", {"note-reason": ""})
    assert response.status_code == 400
    assert b"Write the note first." in response.content
    assert r.exists(f"notes:{alice.id}") == 0


def test_an_action_on_an_unknown_user_is_a_404(sam_client):
    assert (
        sam_client.post("/staff/users/nobody/suspend/", {"suspend-reason": "abc"}).status_code
        == 404
    )


def test_names_are_matched_ignoring_case(r, sam_client, alice):
    sam_client.post("/staff/users/ALICE/note/", {"note-reason": "hi"})
    assert r.llen(f"notes:{alice.id}") == 1
