"""Issue 37's rough edges of a permalink's back link (it says where it goes: the page the
reader came from) and of a suspended account's login (told the reason staff gave and
whom to write to), as views; each failed before its fix."""

from __future__ import annotations

import html as html_module
import re

import pytest
from django.test import Client

from social import keys
from tests.conftest import PASSWORD, make_staff, make_user
from tests.test_email import settings_error


def text_of(html: str) -> str:
    """The page's words without tags, spaces collapsed, characters as they show."""
    return re.sub(r"\s+", " ", html_module.unescape(re.sub(r"<[^>]+>", "", html)))


def section(html: str, start: str, end: str) -> str:
    begin = html.index(start)
    return html[begin : html.index(end, begin)]


# --- The permalink's back link says where it goes --------------------------------------


def back_link(html: str) -> tuple[str, str]:
    found = re.search(r'<p class="back"><a href="([^"]*)">(.*?)</a>', html, re.S)
    return found.group(1), text_of(found.group(2)).strip("← ").strip()


def test_the_back_link_returns_to_the_page_the_reader_came_from(repo, alice, bob, alice_client):
    post = repo.posts.create_post(bob.id, "a #redis post")
    came_from = {
        "/u/bob/": ("/u/bob/", "@bob"),
        "/tag/redis/": ("/tag/redis/", "#redis"),
        "/timeline/?page=2": ("/timeline/?page=2", "Timeline"),
        "/notifications/": ("/notifications/", "Notifications"),
        "/search/?q=redis": ("/search/?q=redis", "Search"),
        "/settings/": ("/settings/", "Back"),
        "/": ("/", "Home"),
    }
    for path, expected in came_from.items():
        page = alice_client.get(f"/p/{post}/", HTTP_REFERER=f"http://testserver{path}")
        assert back_link(page.content.decode()) == expected, path


def test_the_back_link_without_a_page_of_this_site_goes_home_or_to_the_timeline(
    repo, alice, bob, alice_client, client
):
    post = repo.posts.create_post(bob.id, "hello")
    for referer in ("", "https://elsewhere.example/u/bob/", "http://testserver//evil.example/",
                    f"http://testserver/p/{post}/", "http://testserver/nowhere/"):  # fmt: skip
        html = alice_client.get(f"/p/{post}/", HTTP_REFERER=referer).content.decode()
        assert back_link(html) == ("/", "Home"), referer
    visitor = client.get(f"/p/{post}/", HTTP_REFERER="https://elsewhere.example/").content
    assert back_link(visitor.decode()) == ("/timeline/", "Timeline")


# --- A suspended account is told why and whom to write to ----------------------------------


def test_a_suspended_account_is_told_the_reason_and_the_contact_at_login(repo, r, client, settings):
    settings.RETWIS_CONTACT_EMAIL = "moderators@example.org"
    sam = make_staff(repo)
    troll = make_user(repo, "troll")
    repo.moderation.suspend(troll.id, sam, "Spam links in every reply")

    page = client.post("/login/", {"username": "troll", "password": PASSWORD})

    said = text_of(page.content.decode())
    assert page.status_code == 400 and "auth" not in page.cookies
    assert "This account is suspended." in said
    assert "The moderators’ reason: “Spam links in every reply”." in said
    assert "To ask about it, write to moderators@example.org." in said
    assert r.hget(keys.user(troll.id), "suspended_reason") == "Spam links in every reply"


def test_without_a_contact_a_suspended_account_is_told_the_reason_alone(repo, client, settings):
    settings.RETWIS_CONTACT_EMAIL = ""
    troll = make_user(repo, "troll")
    repo.moderation.suspend(troll.id, make_staff(repo), "Spam <b>links</b>")

    html = client.post("/login/", {"username": "troll", "password": PASSWORD}).content.decode()

    assert "The moderators’ reason: “Spam &lt;b&gt;links&lt;/b&gt;”." in html  # escaped
    assert "write to" not in html


def test_an_active_account_still_logs_in(repo, alice, settings):
    settings.RETWIS_CONTACT_EMAIL = "moderators@example.org"

    page = Client().post("/login/", {"username": "alice", "password": PASSWORD})

    assert page.status_code == 302 and page.cookies["auth"].value


@pytest.mark.parametrize("address", ["moderators", "mods @example.org"])
def test_a_contact_that_is_no_address_stops_start_up(address):
    assert "RETWIS_CONTACT_EMAIL must be an e-mail address" in settings_error(
        RETWIS_CONTACT_EMAIL=address, SITE_URL="https://retwis.example.org"
    )
    assert (
        settings_error(
            RETWIS_CONTACT_EMAIL="moderators@example.org", SITE_URL="https://retwis.example.org"
        )
        == ""
    )
