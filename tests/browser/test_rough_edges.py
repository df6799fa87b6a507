"""The rough edges a new user hit (issue 27), in the browser: the composer over the limit,
a refused post shown once where it was written, a repost's time, Unmute and Block on one
line, at a desktop's and a phone's width."""

from __future__ import annotations

import pytest

from social import keys

PHONE = 390


@pytest.fixture
def ada(person):
    return person("ada")


def test_post_is_disabled_while_over_the_limit_and_says_why(page_as, ada, live_url, r):
    page = page_as(ada)
    page.goto(live_url + "/")
    area, button = page.locator("#id_status"), page.locator("form.compose button[type=submit]")
    help_text = page.locator("#id_status_helptext")

    area.fill("x" * 1000)

    assert button.is_disabled()
    assert help_text.inner_text() == "720 characters over the 280 limit"
    assert button.get_attribute("aria-describedby") == "id_status_helptext"
    area.fill("x" * 280)
    assert button.is_enabled() and help_text.inner_text() == "0 characters left"
    assert not r.exists(keys.next_post_id())


def test_a_refused_post_is_shown_once_where_it_was_written(page_as, ada, live_url, r):
    page = page_as(ada)
    page.goto(live_url + "/")
    page.locator("#id_status").fill("y" * 999 + "\nz")
    with page.expect_navigation():  # as without the script: the form sent as it is
        page.evaluate("document.querySelector('form.compose').submit()")

    assert page.url == live_url + "/"  # not /post/
    main = page.locator("main").inner_text()
    assert main.count("characters over") == 1 and "That is 721 characters over." in main
    assert page.locator("#id_status").input_value() == "y" * 999 + "\nz"
    assert page.locator("form.compose button[type=submit]").is_disabled()
    page.locator("#id_status").fill("short now")  # the server's message is out of date: gone
    assert page.locator("#id_status_error").count() == 0
    assert "id_status_error" not in (page.locator("#id_status").get_attribute("aria-describedby"))
    assert not r.exists(keys.next_post_id())


@pytest.mark.without_script
@pytest.mark.parametrize("width", [1280, PHONE])
def test_block_asks_first_on_one_line_and_a_muted_authors_card_offers_unmute(
    page_as, person, repo, live_url, r, width
):
    reader = person("ada")
    long_name = person("a_name_of_twenty_chr")  # sign-up allows 20 characters at most
    repo.posts.create_post(long_name.id, "words worth muting")
    repo.relations.mute(reader.id, long_name.id)
    page = page_as(reader, width)
    page.goto(f"{live_url}/u/{long_name.username}/")

    assert page.locator("article.post .mute").inner_text() == "Unmute"
    page.locator(".profile-actions details.menu summary").click()
    block = page.locator(".profile-actions details.menu a.danger")
    height = block.evaluate("el => el.getBoundingClientRect().height")
    line = block.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)")
    assert height < 1.5 * line, (height, line)  # one line
    menu = page.locator(".profile-actions details.menu .menu-items").bounding_box()
    assert menu["x"] >= 0 and menu["x"] + menu["width"] <= width, menu  # on the screen
    with page.expect_navigation():
        block.click()
    assert page.locator("h1").inner_text() == f"Block @{long_name.username}?"
    assert not r.exists(keys.blocks(reader.id))
    with page.expect_navigation():
        page.locator("main form button.danger").click()
    assert "You blocked" in page.locator("main").inner_text()
    assert r.zscore(keys.blocks(reader.id), long_name.id) is not None
