"""The public pages as a screen reader, a phone and a link preview see them (issue 11):
labels, help and errors tied to their inputs, one <h1> per page, times shown once and short,
the composer's limit said instead of enforced by cutting, the head's description, icon and
OpenGraph tags, and a site footer."""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders

from social import keys
from social.post_forms import POST_MAX


class Page(HTMLParser):
    """The parts of a page these tests read: every element's attributes (with the form it
    sits in), and the text of its <h1>s and <time>s."""

    def __init__(self, html: bytes | str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict, int | None]] = []
        self.h1s: list[str] = []
        self.times: list[str] = []
        self.form = None
        self.forms = 0
        self.open: list[list[str]] = []  # text collectors of the <h1> or <time> we are in
        self.feed(html.decode() if isinstance(html, bytes) else html)

    def handle_starttag(self, tag, attrs):
        attrs = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms += 1
            self.form = self.forms
        self.elements.append((tag, attrs, self.form))
        if tag in ("h1", "time"):
            self.open.append([tag, ""])

    def handle_endtag(self, tag):
        if tag == "form":
            self.form = None
        if self.open and self.open[-1][0] == tag:
            name, text = self.open.pop()
            (self.h1s if name == "h1" else self.times).append(" ".join(text.split()))

    def handle_data(self, data):
        for collector in self.open:
            collector[1] += f" {data}"  # text of adjacent elements (<span>s) stays apart

    def ids(self) -> Counter:
        return Counter(attrs["id"] for _, attrs, _ in self.elements if "id" in attrs)

    def by_id(self, element_id: str) -> tuple[str, dict, int | None]:
        (found,) = [e for e in self.elements if e[1].get("id") == element_id]
        return found

    def all(self, tag: str, **wanted: str) -> list[dict]:
        return [
            attrs
            for name, attrs, _ in self.elements
            if name == tag and all(attrs.get(k) == v for k, v in wanted.items())
        ]

    def meta(self, key: str) -> str:
        (found,) = [a for a in self.all("meta") if key in (a.get("name"), a.get("property"))]
        return found["content"]


def assert_labels_and_descriptions_resolve(page: Page) -> None:
    """No id twice; every label names an input of its own form; every aria-describedby
    names elements that exist."""
    assert [i for i, n in page.ids().items() if n > 1] == []
    for _, attrs, form in page.elements:
        if "for" in attrs:
            _, _, target_form = page.by_id(attrs["for"])
            assert target_form == form, f"label for={attrs['for']} points into another form"
        for target in attrs.get("aria-describedby", "").split():
            page.by_id(target)


# Welcome page: two forms with fields of the same names.


def test_the_welcome_page_has_no_duplicate_ids_and_each_label_finds_its_own_input(client):
    page = Page(client.get("/").content)

    assert_labels_and_descriptions_resolve(page)
    forms = {attrs["action"]: n for name, attrs, n in page.elements if name == "form"}
    assert page.by_id("login_username")[2] == forms["/login/"]
    assert page.by_id("login_password")[2] == forms["/login/"]
    assert page.by_id("id_username")[2] == forms["/register/"]
    assert page.all("label", **{"for": "login_password"})  # the log-in form's own label
    # The sign-up help is read with its input.
    assert page.by_id("id_username")[1]["aria-describedby"] == "id_username_helptext"


def test_the_log_in_page_keeps_its_usual_ids(client):
    page = Page(client.get("/login/").content)

    assert page.by_id("id_username")[0] == "input"
    assert_labels_and_descriptions_resolve(page)


# Errors and help are read with the input they belong to.


def test_sign_up_errors_and_help_have_the_ids_the_inputs_point_at(client, r):
    response = client.post(
        "/register/", {"username": "a!", "password": "short", "password2": "other"}
    )

    assert response.status_code == 200
    page = Page(response.content)
    assert_labels_and_descriptions_resolve(page)
    described = page.by_id("id_username")[1]["aria-describedby"].split()
    assert described == ["id_username_helptext", "id_username_error"]
    assert page.by_id("id_username")[1]["aria-invalid"] == "true"
    assert page.by_id("id_username_error")[0] == "div"
    assert page.by_id("id_password2_error")  # "The two passwords do not match."
    assert r.hget("users", "a!") is None  # nothing was created


def test_a_refused_post_has_its_error_read_with_the_composer(alice_client, r):
    response = alice_client.post("/post/", {"status": "   "})

    assert response.status_code == 400
    page = Page(response.content)
    assert_labels_and_descriptions_resolve(page)
    textarea = page.by_id("id_status")[1]
    assert textarea["aria-describedby"].split() == ["id_status_helptext", "id_status_error"]
    assert r.llen("timeline") == 0


def test_a_refused_report_has_its_error_read_with_the_reasons(alice_client, bob, repo, r):
    post_id = repo.posts.create_post(bob.id, "report me")

    response = alice_client.post(f"/p/{post_id}/report/", {"text": "no reason picked"})

    assert response.status_code == 400
    page = Page(response.content)
    assert_labels_and_descriptions_resolve(page)
    fieldset = page.all("fieldset")[0]
    assert fieldset["aria-describedby"] == "id_reason_error"
    assert page.by_id("id_text_helptext")  # "Optional, up to 500 characters."
    assert r.zcard(keys.open_reports()) == 0


# One <h1> on every page; the permalink's back link and its one exact time.


@pytest.fixture
def a_post(repo, alice):
    return repo.posts.create_post(alice.id, "a post to read", at=1_700_000_000)


@pytest.mark.parametrize(
    ("path", "heading"),
    [
        ("/", "Home"),
        ("/p/{id}/", "Post by @alice"),
        ("/p/{id}/report/", "Report a post by @alice"),
        ("/timeline/", "Everyone's latest posts"),
        ("/u/alice/", "@alice"),
    ],
)
def test_every_page_a_reader_lands_on_has_one_h1(bob_client, a_post, path, heading):
    page = Page(bob_client.get(path.format(id=a_post)).content)

    assert page.h1s == [heading]


def test_the_permalink_shows_its_exact_time_once_and_links_back(client, a_post):
    html = client.get(f"/p/{a_post}/").content.decode()
    page = Page(html)

    exact = "14 Nov 2023, 22:13 UTC"  # 1_700_000_000 in the site's time zone
    assert html.count(exact) == 1
    assert page.times == [exact]
    assert 'datetime="2023-11-14T22:13:20+00:00"' in html
    assert "Posted " not in html
    back = page.all("p", **{"class": "back"})
    assert back and '<p class="back"><a href="/timeline/">' in html  # a visitor: the timeline


def test_the_permalink_links_a_logged_in_reader_back_home(bob_client, a_post):
    html = bob_client.get(f"/p/{a_post}/").content.decode()

    assert '<p class="back"><a href="/">' in html


# Short ages, with the exact time for screen readers and on hover.


def test_feeds_show_short_ages_with_the_exact_time(client, alice, repo):
    now = int(time.time())
    repo.posts.create_post(alice.id, "three hours old", at=now - 3 * 3600 - 10)
    repo.posts.create_post(alice.id, "just now", at=now)

    page = Page(client.get("/timeline/").content)

    ages = [t.split(" ", 1)[0] for t in page.times]  # the visible age, then the exact time
    assert ages == ["now", "3h"]
    exact = datetime.fromtimestamp(now - 3 * 3600 - 10, tz=UTC).strftime("%-d %b %Y, %H:%M UTC")
    assert page.times[1] == f"3h {exact}"
    assert page.all("time", title=exact)


# The composer says the limit instead of cutting a paste.


def test_the_composer_counts_instead_of_cutting(alice_client):
    page = Page(alice_client.get("/").content)

    textarea = page.by_id("id_status")[1]
    assert "maxlength" not in textarea
    assert textarea["data-maxchars"] == str(POST_MAX)
    assert textarea["aria-describedby"] == "id_status_helptext"
    assert page.by_id("id_status_helptext")[0] == "small"
    assert page.all("script", src="/static/js/site.js")


def test_a_300_character_post_is_refused_saying_how_many_are_over(alice_client, r):
    text = "x" * 300

    response = alice_client.post("/post/", {"status": text})

    assert response.status_code == 400
    assert b"Keep it to 280 characters (this one has 300). That is 20 characters over." in (
        response.content
    )
    assert f">\n{text}</textarea>".encode() in response.content  # all of it, to shorten
    assert r.llen("timeline") == 0


def test_a_post_one_over_says_one_character(alice_client, r):
    response = alice_client.post("/post/", {"status": "y" * 281})

    assert b"That is 1 character over." in response.content
    assert r.llen("timeline") == 0


def test_the_home_page_puts_the_composer_before_the_stats_and_shows_home(alice_client):
    html = alice_client.get("/").content.decode()

    assert html.index('class="card compose"') < html.index('class="card stats"')
    assert 'class="hide-sm"' not in html
    css = Path(finders.find("css/site.css")).read_text()
    assert "order: -1" not in css  # nothing moves the stats card above the composer
    assert "prefers-color-scheme: dark" in css and ":focus-visible" in css


# The head: description, icon, OpenGraph tags; the skip link and the footer.


def test_every_page_has_a_description_an_icon_and_a_skip_link(client):
    page = Page(client.get("/timeline/").content)

    assert page.meta("description").startswith("Retwis is a small, fast social site")
    (icon,) = page.all("link", rel="icon")
    assert icon["href"] == "/static/favicon.svg" and icon["type"] == "image/svg+xml"
    assert finders.find("favicon.svg") and finders.find("js/site.js")
    (skip,) = page.all("a", **{"class": "skip-link"})
    assert skip["href"] == "#main" and page.by_id("main")[0] == "main"


def test_a_post_has_opengraph_tags(client, repo, alice):
    post_id = repo.posts.create_post(alice.id, 'Sorted sets are "fun" <really>')

    page = Page(client.get(f"/p/{post_id}/").content)

    assert page.meta("og:type") == "article"
    assert page.meta("og:title") == "@alice on Retwis"
    assert page.meta("og:description") == 'Sorted sets are "fun" <really>'  # escaped, read back
    assert page.meta("og:url") == f"http://testserver/p/{post_id}/"
    assert page.meta("description") == '@alice on Retwis: Sorted sets are "fun" <really>'


def test_a_profile_has_opengraph_tags(client, repo, alice):
    repo.posts.create_post(alice.id, "one")

    page = Page(client.get("/u/alice/").content)

    assert page.meta("og:type") == "profile"
    assert page.meta("og:title") == "@alice on Retwis"
    assert page.meta("og:url") == "http://testserver/u/alice/"
    assert page.meta("og:description") == "Posts by @alice on Retwis: 1 post, 0 followers."
    assert page.meta("profile:username") == "alice"


def test_the_footer_is_a_site_footer(client):
    html = client.get("/").content.decode()
    footer = html[html.index("<footer") : html.index("</footer>")]

    assert 'href="/timeline/"' in footer
    assert "https://redis.io/topics/twitter-clone" in footer
    assert "only database" not in footer


def test_no_inline_script_or_style_for_the_content_security_policy(alice_client, a_post):
    for path in ("/", f"/p/{a_post}/", "/timeline/"):
        page = Page(alice_client.get(path).content)
        assert all(attrs.get("src") for attrs in page.all("script"))
        assert not [a for _, a, _ in page.elements if "style" in a]
    assert "script-src 'self'" in settings.CONTENT_SECURITY_POLICY
