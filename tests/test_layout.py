"""The page's layout (base.html's head links, header and footer) is rendered once per
language and what it shows (social/templating/ Layout), and never shows one reader's
name, counts or CSRF token to another."""

from __future__ import annotations

import re

from django.template import engines
from django.test import RequestFactory
from markupsafe import Markup

from social.repository import AnonymousUser, User
from social.repository.cache import BoundedCache
from social.templating import layout

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


def site_layout() -> layout.Layout:
    """The site's Layout (what site_nav and site_footer are bound to)."""
    return engines["jinja2"].env.globals["site_nav"].__self__


class Token:
    """A page's CSRF input."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __html__(self) -> Markup:
        return Markup('<input type="hidden" name="csrfmiddlewaretoken" value="{}">').format(
            self.value
        )


def page(user, path: str = "/", token: str = "t0", **context) -> str:
    """Render a page extending base.html for user at path, with token as its CSRF field."""
    template = engines["jinja2"].env.from_string(
        '{% extends "base.html" %}{% block content %}<p>body</p>{% endblock %}'
    )
    request = RequestFactory().get(path)
    return template.render(user=user, request=request, csrf_input=Token(token), **context)


def remembered() -> list[str]:
    return [str(html) for html in site_layout().parts._data.values()]


def test_the_nav_marks_the_page_shown_as_current(client):
    timeline = client.get("/timeline/").content.decode()
    login = client.get("/login/").content.decode()

    assert '<a href="/timeline/" aria-current="page">Timeline</a>' in timeline
    assert '<a href="/" aria-current="page">' not in timeline
    assert 'aria-current="page"' not in login


def test_a_part_is_rendered_once_and_the_same_for_every_visitor():
    first = site_layout().part("footer", "en", layout.CSRF_SLOT)

    assert site_layout().part("footer", "en", layout.CSRF_SLOT) is first
    assert site_layout().part("footer", "zh-hans", layout.CSRF_SLOT) is not first


def test_a_readers_header_shows_their_name_and_counts_and_the_pages_own_token():
    alice = User(id=1, username="alice", unread_mentions=3, unread_notifications=120)
    bob = User(id=2, username="bob")

    as_alice = page(alice, "/mentions/", token="AAA")
    as_bob = page(bob, token="BBB")
    again = page(alice, "/mentions/", token="CCC")

    assert '<a href="/u/alice/">@alice</a>' in as_alice and "@alice" not in as_bob
    # Mentions are a tab of the notifications: one count, for both (issue 27).
    assert 'aria-current="true" title="120 new notifications">Notifications' in as_alice
    assert as_alice.count("count-badge") == 1 and "new mention" not in as_alice
    assert '<span class="count-badge">99+' in as_alice
    assert "count-badge" not in as_bob
    assert 'value="BBB"' in as_bob and "AAA" not in as_bob
    assert 'value="CCC"' in again and "AAA" not in again
    assert not any(t in html for html in remembered() for t in ("AAA", "BBB", "CCC"))


def test_a_pages_token_reaches_the_log_out_and_language_forms_and_no_slot_is_left():
    html = page(User(id=1, username="alice"), token="TTT")

    assert html.count('value="TTT"') == 2  # the header's log-out and the footer's switch
    assert str(layout.CSRF_SLOT) not in html
    assert str(layout.CSRF_SLOT) not in page(AnonymousUser())


def test_a_visitors_header_offers_log_in_and_sign_up_and_no_form_but_the_footers():
    html = page(AnonymousUser(), token="VVV")

    assert '<a href="/login/">Log in</a>' in html and "Log out" not in html
    assert html.count('value="VVV"') == 1


def test_the_layout_is_in_the_pages_language_with_its_own_selected(client):
    chinese = client.get("/login/", **ZH).content.decode()
    english = client.get("/login/").content.decode()

    assert '<html lang="zh-hans">' in chinese and '<html lang="en">' in english
    assert ">首页</a>" in chinese and ">Home</a>" in english
    assert '<option value="zh-hans" lang="zh-hans" selected>' in chinese
    assert '<option value="en" lang="en" selected>' in english


def test_while_templates_auto_reload_each_part_is_rendered_afresh(monkeypatch):
    monkeypatch.setattr(site_layout().env, "auto_reload", True)

    first = site_layout().part("head_links", "en")

    assert "css/site" in first and site_layout().part("head_links", "en") is not first


def test_a_blank_forms_remembered_rows_never_stand_in_for_a_filled_one_or_another_language(
    client, repo, alice
):
    """field_row() remembers a blank form's rows per language; a refused log-in renders its
    own rows: the name typed kept, the error shown."""
    blank = client.get("/login/").content.decode()
    chinese = client.get("/login/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    refused = client.post("/login/", {"username": "alice", "password": "wrong"})
    again = client.get("/login/").content.decode()

    assert ">Username</label>" in blank and ">用户名</label>" in chinese
    assert ">Username</label>" not in chinese
    html = refused.content.decode()
    assert refused.status_code == 400
    assert 'value="alice"' in html and 'class="field has-error"' not in blank
    assert 'value="alice"' not in again and again.count("<label") == blank.count("<label")


def test_the_remembered_composer_greets_each_reader_in_their_language_with_the_pages_csrf(
    alice_client, bob_client
):
    """The blank composer is rendered once per reader name and language (page_part); the
    page's own CSRF field and a fresh submission token go into it on every request."""
    pages = [
        alice_client.get("/").content.decode(),
        bob_client.get("/").content.decode(),
        alice_client.get("/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode(),
    ]
    composers = [
        re.search(r'<form class="card compose".*?</form>', html, re.S).group(0) for html in pages
    ]

    assert "What are you doing, alice?" in composers[0]
    assert "What are you doing, bob?" in composers[1]
    assert "alice，你在做什么？" in composers[2]
    for html, composer in zip(pages, composers):
        field = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', composer)
        page_fields = set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', html))
        assert len(field) == 1 and page_fields == set(field) and "<!--" not in composer
        assert len(re.findall(r'name="token" value="[A-Za-z0-9_-]{16,}"', composer)) == 1


def test_the_blank_composer_is_rendered_once_per_reader_and_language(
    alice_client, bob_client, monkeypatch
):
    monkeypatch.setattr(site_layout(), "parts", BoundedCache(64))  # nothing remembered yet

    pages = [c.get("/").content.decode() for c in (alice_client, alice_client, bob_client)]

    added = [key for key in site_layout().parts._data if key[0] == "social/_compose.html"]
    # (template, macro, language, script prefix, (reader's name, CSRF slot)): alice's second
    # page used the composer her first one rendered.
    assert sorted(key[4][0] for key in added) == ["alice", "bob"]
    tokens = [re.search(r'name="token" value="([^"]+)"', html)[1] for html in pages]
    assert len(set(tokens)) == 3  # each page still has a fresh submission token


def test_the_search_query_goes_into_the_header_afterwards_and_is_never_remembered(client):
    html = client.get("/search/", {"q": "zz<top>"}).content.decode()
    timeline = client.get("/timeline/").content.decode()

    header = html.split("</header>")[0]
    assert re.search(r'<input id="nav-search"[^>]* value="zz&lt;top&gt;">', header)
    assert not any("zz" in part for part in remembered())  # the part holds the slot
    assert str(layout.QUERY_SLOT) not in html and str(layout.QUERY_SLOT) not in timeline
    assert 'id="nav-search" type="search" name="q" placeholder="Search">' in timeline


def test_every_settings_page_marks_settings_current_and_no_other_page_does():
    alice = User(id=1, username="alice")

    for path in ("/settings/", "/settings/apps/", "/settings/language/"):
        assert '<a href="/settings/" aria-current="page">' in page(alice, path), path
    for path in ("/", "/settingsx/", "/u/settings/"):
        assert 'aria-current="page">Settings' not in page(alice, path), path
