"""The public pages in a real browser (issue 11): the composer's live counter, the phone
layout, tap targets, the skip link, dark mode's contrast and times in the reader's zone."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from playwright.sync_api import expect

from social.repository import Repository, User
from tests.browser.conftest import open_nav_menu
from tests.conftest import PASSWORD


def make_user(repo: Repository, name: str) -> User:
    """A persona the live site (PBKDF2 only) can log in, cheaply hashed."""
    return repo.users.create_user(name, PBKDF2PasswordHasher().encode(PASSWORD, "issue11", 1000))


@pytest.fixture
def context_for(browser, live_url):
    """Return a function making a browser context (width, colour scheme, time zone), logged
    in as `user` when given (the auth cookie a login sets)."""
    contexts = []

    def make(repo=None, user=None, width=1280, scheme="light", zone="UTC"):
        context = browser.new_context(
            viewport={"width": width, "height": 900}, color_scheme=scheme, timezone_id=zone
        )
        context.set_default_timeout(10_000)
        if user is not None:
            secret = repo.users.record_login(user.id, "127.0.0.1")
            context.add_cookies([{"name": "auth", "value": secret, "url": live_url}])
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


def test_the_composer_counts_down_and_says_how_many_are_over(live_url, context_for, repo, r):
    writer = make_user(repo, "counter")
    page = context_for(repo, writer, width=390).new_page()
    page.goto(live_url + "/")
    help_text = page.locator("#id_status_helptext")
    expect(help_text).to_have_text("Up to 280 characters.")

    page.fill("#id_status", "é" * 270 + "\n\n" + "😀" * 5)  # 276 as the server counts
    expect(help_text).to_have_text("4 characters left")

    page.fill("#id_status", "x" * 300)
    expect(help_text).to_have_text("20 characters over the 280 limit")
    expect(help_text).to_have_class(re.compile(r"\bover\b"))
    assert len(page.input_value("#id_status")) == 300  # nothing cut
    expect(page.locator("form.compose button[type=submit]")).to_be_disabled()  # issue 27

    with page.expect_navigation():  # sent anyway (as without the script): the server says
        page.evaluate("document.querySelector('form.compose').submit()")
    expect(page.get_by_text("That is 20 characters over.")).to_be_visible()
    assert len(page.input_value("#id_status")) == 300  # all of it back, to shorten
    assert r.llen(f"user_posts:{writer.id}") == 0 and r.llen("timeline") == 0


def test_on_a_phone_the_composer_comes_first_and_home_is_in_the_nav(live_url, context_for, repo):
    reader = make_user(repo, "phone")
    page = context_for(repo, reader, width=390).new_page()
    page.goto(live_url + "/")

    expect(page.locator("nav.nav").get_by_role("link", name="Home", exact=True)).to_be_visible()
    compose = page.locator("form.compose").bounding_box()
    stats = page.locator("aside.stats").bounding_box()
    assert compose["y"] < stats["y"]
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # nothing pushes the page sideways


def test_tap_targets_are_at_least_24_px_on_a_phone(live_url, context_for, repo):
    author = make_user(repo, "tapauthor")
    reader = make_user(repo, "tapreader")
    repo.posts.create_post(author.id, "tap me")
    page = context_for(repo, reader, width=390).new_page()
    page.goto(live_url + "/timeline/")
    open_nav_menu(page)  # its links are targets too, once shown

    targets = {
        "nav links": page.locator("nav.nav a, nav.nav button, nav.nav summary"),
        "the time": page.locator("article.post a.when"),
        "Reply": page.locator("article.post a.action", has_text="Reply"),
        "Like": page.locator("article.post button.action"),
        "Report": page.locator("article.post a.report"),
    }
    for name, locator in targets.items():
        assert locator.count(), name
        for i in range(locator.count()):
            box = locator.nth(i).bounding_box()
            assert box["width"] >= 24 and box["height"] >= 24, (name, box)


def test_the_skip_link_is_the_first_stop_and_moves_focus_to_main(live_url, context_for):
    page = context_for().new_page()
    page.goto(live_url + "/timeline/")

    page.keyboard.press("Tab")
    skip = page.locator("a.skip-link")
    expect(skip).to_be_focused()
    box = skip.bounding_box()
    assert box["y"] >= 0 and box["height"] >= 24  # shown while focused
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"  # the focus ring
    page.keyboard.press("Enter")
    expect(page.locator("main#main")).to_be_focused()


CONTRAST = """
([fore, back]) => {
  const rgb = (css) => css.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = (css) => {
    const [r, g, b] = rgb(css).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const text = getComputedStyle(document.querySelector(fore)).color;
  let node = document.querySelector(back);
  let bg = getComputedStyle(node).backgroundColor;
  while (bg === "rgba(0, 0, 0, 0)" && node.parentElement) {
    node = node.parentElement;
    bg = getComputedStyle(node).backgroundColor;
  }
  const [hi, lo] = [lum(text), lum(bg)].sort((a, b) => b - a);
  return (hi + 0.05) / (lo + 0.05);
}
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_is_at_least_4_5_to_1_in_both_schemes(live_url, context_for, repo, scheme):
    author = make_user(repo, f"ink{scheme}")
    repo.posts.create_post(author.id, "contrast #check")
    page = context_for(scheme=scheme).new_page()
    page.goto(live_url + "/timeline/")
    dark = page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")
    assert dark == (scheme == "dark")

    pairs = [
        ("body", "body"),
        ("article.post .body", "article.post"),
        ("article.post .when", "article.post"),
        ("article.post .author", "article.post"),
        ("article.post .tag", "article.post"),
        ("article.post .action", "article.post"),
        ("aside h2", "aside"),
        (".nav a[href='/login/']", ".topbar"),
        (".nav .button", ".nav .button"),
        (".footer", "body"),
        (".footer a", "body"),
    ]
    for fore, back in pairs:
        assert page.locator(fore).count() and page.locator(back).count(), (fore, back)
        ratio = page.evaluate(CONTRAST, [fore, back])
        assert ratio >= 4.5, (scheme, fore, round(ratio, 2))


def test_exact_times_are_shown_in_the_readers_time_zone(live_url, context_for, repo):
    author = make_user(repo, "zoned")
    post_id = repo.posts.create_post(author.id, "what time is it", at=1_700_000_000)
    page = context_for(zone="Asia/Tokyo").new_page()

    page.goto(live_url + f"/p/{post_id}/")
    exact = page.locator(".permalink time.exact")
    expect(exact).to_contain_text("Nov 15, 2023")  # 22:13 UTC is 07:13 the next day there
    expect(exact).to_contain_text("07:13")
    assert exact.get_attribute("datetime") == "2023-11-14T22:13:20+00:00"

    page.goto(live_url + f"/u/{author.username}/")
    title = page.locator("article.post time").get_attribute("title")
    assert "Nov 15, 2023" in title and "07:13" in title
