"""A post's pictures in Chromium (issue 37), each failing before its fix: a picture opens
in an accessible viewer (a dialog: its description shown, Previous and Next and the arrow
keys through the post's pictures, Esc back to the picture's link) and, without the script,
still opens its file; a sensitive picture is blurred past recognising and can be hidden
again once shown. axe-core looks at the viewer open: tests/browser/conftest.py's tour."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_live_edges import no_script_errors

# --- The picture viewer -----------------------------------------------------------------


def test_a_picture_opens_in_a_viewer_with_its_description_and_the_posts_others(site_tour):
    page = site_tour.open("reader")
    errors = no_script_errors(page)
    site_tour.visit(page, "/timeline/")
    url = page.url
    links = page.locator(f"#post-{site_tour.pictured} a.media-item")

    links.nth(0).click()

    dialog = page.get_by_role("dialog", name="Picture viewer")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".viewer-alt")).to_have_text("Boats in a blue harbour")
    expect(dialog.locator(".viewer-position")).to_have_text("Picture 1 of 2")
    picture = dialog.locator("img.viewer-picture")
    href = links.nth(0).get_attribute("href")
    assert picture.get_attribute("src") == site_tour.live_url + href and href.endswith("-1600.webp")
    assert picture.get_attribute("alt") == "Boats in a blue harbour"
    page.keyboard.press("ArrowRight")
    expect(dialog.locator(".viewer-alt")).to_have_text("A lighthouse at dusk")
    expect(dialog.locator(".viewer-position")).to_have_text("Picture 2 of 2")
    page.keyboard.press("ArrowRight")  # round to the first
    expect(dialog.locator(".viewer-alt")).to_have_text("Boats in a blue harbour")
    dialog.get_by_role("button", name="Previous picture").click()
    expect(dialog.locator(".viewer-alt")).to_have_text("A lighthouse at dusk")
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=picture.element_handle()
    )

    page.keyboard.press("Escape")

    expect(dialog).to_be_hidden()
    expect(links.nth(1)).to_be_focused()  # back at the picture last seen
    assert page.url == url and not errors
    links.nth(0).focus()
    page.keyboard.press("Enter")  # the keyboard opens it too
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()


def test_a_pictures_without_a_description_say_so_in_the_viewer(site_tour):
    page = site_tour.open("reader")
    site_tour.visit(page, "/timeline/")
    card = page.locator(f"#post-{site_tour.sensitive}")
    card.locator("details.sensitive-media > summary").click()

    card.locator("a.media-item").click()

    dialog = page.get_by_role("dialog", name="Picture viewer")
    expect(dialog.locator(".viewer-alt")).to_have_text("A picture its author did not describe")
    expect(dialog.get_by_role("button", name="Next picture")).to_be_hidden()  # one picture
    expect(dialog.locator(".viewer-position")).to_be_hidden()


@pytest.mark.without_script
def test_without_the_script_a_picture_opens_its_file(site_tour, new_page):
    page = new_page()
    page.goto(site_tour.live_url + "/timeline/")
    link = page.locator(f"#post-{site_tour.pictured} a.media-item").first
    href = link.get_attribute("href")

    with page.expect_navigation():
        link.click()

    assert page.url == site_tour.live_url + href


# --- Sensitive pictures -------------------------------------------------------------------


def test_sensitive_pictures_are_blurred_hard_and_can_be_hidden_again(site_tour):
    page = site_tour.open("reader")
    site_tour.visit(page, "/timeline/")
    card = page.locator(f"#post-{site_tour.sensitive}")
    blurred = card.locator(".media-grid.blurred img")
    shown_filter = blurred.evaluate("img => getComputedStyle(img).filter")
    radius = float(re.search(r"blur\(([\d.]+)px\)", shown_filter).group(1))
    assert radius >= 40
    shown = card.locator("a.media-item img")
    assert not shown.is_visible()

    card.locator("details.sensitive-media > summary").click()
    assert shown.is_visible()
    hide = card.get_by_text("Hide the sensitive pictures")
    expect(hide).to_be_visible()
    hide.click()

    expect(shown).to_be_hidden()
    expect(card.locator(".sensitive-label")).to_be_visible()
    assert card.locator("details.sensitive-media[open]").count() == 0
