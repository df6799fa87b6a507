"""Reporting a post, end to end: a user reports it, staff resolve it, the log records it."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from tests.conftest import login, make_user


@pytest.fixture
def post_id(repo, alice, bob):
    """A post by alice that bob sees in his home feed."""
    repo.graph.follow(bob.id, alice.id)
    return repo.posts.create_post(alice.id, "buy cheap followers at example.com")


def entries(response) -> str:
    """Return the log page's list of entries (not its filter, which names every action)."""
    html = response.content.decode()
    return html[html.index('<ol class="audit">') :]


def messages_of(response) -> list[str]:
    """Return the texts of the messages the page shows (base.html's list), unescaped."""
    shown = re.search(r'<ul class="messages">(.*?)</ul>', response.content.decode(), re.S)
    assert shown, "the page shows no messages"
    return [html.unescape(m) for m in re.findall(r'<li class="message[^"]*">(.*?)</li>', shown[1])]


def test_feeds_offer_a_report_link_to_others_but_not_to_the_author(
    post_id, alice_client, bob_client
):
    link = f'href="/p/{post_id}/report/"'.encode()
    assert link in bob_client.get("/").content
    assert link in bob_client.get("/timeline/").content
    assert link in bob_client.get(f"/p/{post_id}/").content
    assert link not in alice_client.get("/").content
    assert link not in Client().get("/timeline/").content


def test_the_report_form_shows_on_the_permalink(post_id, bob_client):
    response = bob_client.get(f"/p/{post_id}/report/")

    assert response.status_code == 200
    assert b'id="report"' in response.content
    assert b"Harassment or hate" in response.content
    assert b"buy cheap followers" in response.content


def test_a_visitor_is_sent_to_log_in_before_reporting(post_id, r):
    response = Client().post(f"/p/{post_id}/report/", {"reason": "spam"})
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert r.zcard("reports:open") == 0


def test_reporting_files_a_report_and_thanks_the_user(post_id, r, bob, bob_client):
    response = bob_client.post(
        f"/p/{post_id}/report/", {"reason": "spam", "text": " a scam link "}, follow=True
    )

    assert response.redirect_chain[-1][0] == f"/p/{post_id}/"
    assert "Thanks. Moderators will review this post." in messages_of(response)
    (report_id,) = r.zrange("reports:open", 0, -1)
    report = r.hgetall(f"report:{report_id}")
    assert (report["post_id"], report["reporter_id"], report["reason"], report["text"]) == (
        str(post_id),
        str(bob.id),
        "spam",
        "a scam link",
    )


def test_reporting_twice_keeps_one_open_report(post_id, r, bob_client):
    bob_client.post(f"/p/{post_id}/report/", {"reason": "spam"})

    response = bob_client.post(f"/p/{post_id}/report/", {"reason": "abuse"}, follow=True)

    assert "You already reported this post. Moderators will look." in messages_of(response)
    assert r.zcard("reports:open") == 1


def test_reporting_your_own_post_is_refused(post_id, r, alice_client):
    response = alice_client.post(f"/p/{post_id}/report/", {"reason": "spam"}, follow=True)

    assert "You cannot report your own post." in messages_of(response)
    assert r.zcard("reports:open") == 0


@pytest.mark.parametrize(
    "data",
    [{}, {"reason": "boring"}, {"reason": "spam", "text": "x" * 501}],
    ids=["no reason", "unknown reason", "text too long"],
)
def test_a_bad_report_shows_the_form_again(post_id, r, bob_client, data):
    response = bob_client.post(f"/p/{post_id}/report/", data)

    assert response.status_code == 400
    assert b'class="error"' in response.content
    assert r.zcard("reports:open") == 0


def test_a_deleted_post_cannot_be_reported(repo, post_id, r, bob_client, sam):
    repo.moderation.delete_posts([post_id], sam, "spam")
    assert bob_client.post(f"/p/{post_id}/report/", {"reason": "spam"}).status_code == 404
    assert bob_client.get(f"/p/{post_id}/report/").status_code == 404


def test_report_flow_end_to_end(repo, r, post_id, alice, bob_client, sam_client):
    carol = make_user(repo, "carol")
    carol_client = login(Client(), repo, carol)
    bob_client.post(f"/p/{post_id}/report/", {"reason": "spam", "text": "scam"})
    carol_client.post(f"/p/{post_id}/report/", {"reason": "abuse"})

    listing = sam_client.get("/staff/reports/")
    html = listing.content.decode()
    assert "buy cheap followers" in html and "@bob" in html and "@carol" in html
    assert "Spam or scam" in html and "Harassment or hate" in html
    first = int(r.zrange("reports:open", 0, 0)[0])

    response = sam_client.post(
        f"/staff/reports/{first}/resolve/",
        {"outcome": "deleted", "reason": "scam link", "next": "/staff/reports/"},
    )

    assert response.status_code == 302 and response["Location"] == "/staff/reports/"
    assert r.zcard("reports:open") == 0 and r.zcard("reports:resolved") == 2
    assert r.hget(f"post:{post_id}", "deleted") == "1"
    assert "scam link" in login(Client(), repo, alice).get("/").content.decode()
    assert b"No open reports" in sam_client.get("/staff/reports/").content
    resolved = sam_client.get("/staff/reports/resolved/").content.decode()
    assert "Post deleted by @sam" in resolved
    log = entries(sam_client.get("/staff/log/"))
    assert "Deleted post" in log and f"report #{first}" in log and "scam link" in log


def test_dismissing_from_the_page_leaves_the_post(r, post_id, bob_client, sam_client):
    bob_client.post(f"/p/{post_id}/report/", {"reason": "spam"})
    report_id = int(r.zrange("reports:open", 0, 0)[0])

    sam_client.post(f"/staff/reports/{report_id}/resolve/", {"outcome": "dismissed"})

    assert r.zcard("reports:open") == 0
    assert r.hget(f"post:{post_id}", "deleted") is None
    assert r.hget(f"report:{report_id}", "outcome") == "dismissed"
    assert "Dismissed report" in entries(sam_client.get("/staff/log/"))


def test_resolving_needs_a_known_outcome_and_report(r, post_id, bob_client, sam_client):
    bob_client.post(f"/p/{post_id}/report/", {"reason": "spam"})
    report_id = int(r.zrange("reports:open", 0, 0)[0])

    sam_client.post(f"/staff/reports/{report_id}/resolve/", {"outcome": "ignore"})
    assert r.zcard("reports:open") == 1
    assert (
        sam_client.post("/staff/reports/999/resolve/", {"outcome": "dismissed"}).status_code == 404
    )


def test_resolving_redirects_only_to_this_site(r, post_id, bob_client, sam_client):
    bob_client.post(f"/p/{post_id}/report/", {"reason": "spam"})
    report_id = int(r.zrange("reports:open", 0, 0)[0])

    response = sam_client.post(
        f"/staff/reports/{report_id}/resolve/",
        {"outcome": "dismissed", "next": "https://evil.example/"},
    )

    assert response["Location"] == "/staff/reports/"


def test_a_long_pasted_report_is_not_cut_but_kept_and_explained(post_id, r, bob_client):
    pasted = "y" * 520

    form = bob_client.get(f"/p/{post_id}/report/").content.decode()
    response = bob_client.post(f"/p/{post_id}/report/", {"reason": "spam", "text": pasted})

    html = response.content.decode()
    assert 'maxlength="500"' not in form  # a browser would silently cut a longer paste
    assert response.status_code == 400
    assert "Keep it to 500 characters (this one has 520)" in html
    assert "That is 20 characters over." in html
    assert pasted in html  # what the person typed is still there
    assert r.zcard("reports:open") == 0
