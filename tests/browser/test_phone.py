"""Every page of the site on a phone (issue 11): at 390 x 844 nothing overflows sideways
(the page is never wider than the screen), logged out, logged in and as staff, and a post's
270-letter word wraps inside its card."""

from __future__ import annotations

import pytest

from social import keys
from tests.browser.conftest import LONG_WORD

PHONE = {"width": 390, "height": 844}

# The elements wider than the window, for the failure message.
WIDER_THAN_THE_WINDOW = """
() => [...document.querySelectorAll('body *')]
  .filter((node) => node.getBoundingClientRect().right > window.innerWidth + 0.5)
  .filter((node) => !node.closest('.table-wrap') || node.matches('.table-wrap'))
  .slice(0, 5)
  .map((node) => node.tagName.toLowerCase() + (node.className ? '.' + node.className : ''))
"""


@pytest.mark.parametrize("audience", ["visitor", "reader", "staff"])
def test_nothing_overflows_sideways_at_390_px(site_tour, audience):
    page = site_tour.open(audience, **PHONE)
    overflowing = []
    for label, step in site_tour.pages(audience):
        site_tour.visit(page, step)
        width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert inner == PHONE["width"]
        if width > inner:
            overflowing.append(f"{label}: {width} px, {page.evaluate(WIDER_THAN_THE_WINDOW)}")
    assert not overflowing, f"{audience} at 390 px:\n" + "\n".join(overflowing)


def test_a_long_unbroken_word_wraps_inside_its_post(site_tour, r):
    page = site_tour.open("reader", **PHONE)
    for step in ("/timeline/", f"/p/{site_tour.long_post}/", "/u/ada/"):
        site_tour.visit(page, step)
        card = page.locator(f"#post-{site_tour.long_post}")
        body = card.locator(".body")
        card_box, body_box = card.bounding_box(), body.bounding_box()
        assert card_box["x"] >= 0 and card_box["x"] + card_box["width"] <= PHONE["width"]
        assert body_box["x"] + body_box["width"] <= card_box["x"] + card_box["width"]
        # The word takes several lines rather than one line running out of the card.
        line = float(body.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)"))
        assert body_box["height"] >= 4 * line, (step, body_box, line)
        assert body.evaluate("el => el.scrollWidth <= el.clientWidth"), step
    # What was wrapped is the word as stored: one 270-letter word, no space or hyphen in it.
    assert r.hget(keys.post(site_tour.long_post), "body") == f"The longest word: {LONG_WORD}"
