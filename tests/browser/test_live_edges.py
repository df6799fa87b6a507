"""Issue 37's rough edges of the pages' script, in Chromium, each failing before its fix:
the live "new posts" bar shows the posts in place and keeps a half-written post (past the
first page, the text comes along), Block from a profile's menu says so without a script
error, Mute from one card reaches the author's every card, and a follow in place updates
the profile's followers count. The views' side: tests/test_views_profile_counts.py."""

from __future__ import annotations

from playwright.sync_api import expect

from social import keys
from tests.browser.test_live import listening


def no_script_errors(page) -> list[str]:
    """Collect the page's uncaught script errors (the list grows as they happen)."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


# --- The "new posts" bar keeps what is being written ------------------------------------


def test_new_posts_come_in_above_the_list_and_the_half_written_post_stays(
    page_as, person, repo, live_url
):
    ann, ben = person("ann"), person("ben")
    repo.graph.follow(ann.id, ben.id)
    older = repo.posts.create_post(ben.id, "An older post by ben")
    page = page_as(ann)
    errors = no_script_errors(page)
    page.goto(live_url + "/")
    listening(page)
    page.evaluate("window.stayed = true")
    page.fill("#id_status", "Half a thought I have not finished")
    page.locator("details.compose-extra > summary").click()
    page.fill("#id_spoiler_text", "a warning too")

    fresh = repo.posts.create_post(ben.id, "Fresh from ben, live")
    bar = page.locator(".new-posts button.new-posts-button")
    expect(bar).to_have_text("1 new post", timeout=15_000)
    bar.click()

    card = page.locator(f"#post-{fresh}")
    expect(card).to_be_visible()
    expect(card).to_be_focused()  # read on from the newest
    expect(bar).to_have_count(0)
    assert page.evaluate("window.stayed") is True  # no reload
    assert page.locator("#id_status").input_value() == "Half a thought I have not finished"
    assert page.locator("#id_spoiler_text").input_value() == "a warning too"
    cards = page.locator("main article.post").evaluate_all("els => els.map(e => e.id)")
    assert cards[:2] == [f"post-{fresh}", f"post-{older}"]  # the newest first, once each
    assert len(cards) == len(set(cards))
    # the new card's buttons work: it is liked in place through the page's form
    card.locator(".like button").click()
    expect(card.locator(".like button")).to_have_attribute("aria-pressed", "true")
    assert repo.r.zscore(keys.likes(fresh), ann.id) is not None
    assert not errors
    assert repo.r.llen(keys.own_posts(ann.id)) == 0  # nothing was posted


def test_past_the_first_page_the_bar_loads_it_and_the_text_comes_along(
    page_as, person, repo, live_url, settings
):
    ann, ben = person("ann"), person("ben")
    repo.graph.follow(ann.id, ben.id)
    for i in range(25):
        repo.posts.create_post(ben.id, f"ben's post {i}")
    page = page_as(ann)
    page.goto(live_url + "/?page=2")
    listening(page)
    page.fill("#id_status", "Typed on page two")

    fresh = repo.posts.create_post(ben.id, "Newer than all of them")
    bar = page.locator(".new-posts button.new-posts-button")
    expect(bar).to_have_text("1 new post", timeout=15_000)
    with page.expect_navigation():
        bar.click()

    assert page.url == live_url + "/"
    expect(page.locator(f"#post-{fresh}")).to_be_visible()
    assert page.locator("#id_status").input_value() == "Typed on page two"
    counter = page.locator("#id_status_helptext")
    expect(counter).to_have_text("263 characters left")  # the counter counts the kept text
    page.reload()  # kept once: a later visit starts blank
    assert page.locator("#id_status").input_value() == ""


# --- Block from a profile's menu --------------------------------------------------------


def test_block_from_a_profiles_menu_says_so_beside_the_unblock_button(
    page_as, person, repo, r, live_url
):
    eve, fay = person("eve"), person("fay")
    page = page_as(eve)
    errors = no_script_errors(page)
    page.goto(live_url + "/u/fay/")
    page.on("dialog", lambda dialog: dialog.accept())
    page.locator(".profile-actions details.menu > summary").click()

    page.locator(".profile-actions a[data-confirm]").click()

    main = page.locator(".profile-actions > form button")
    expect(main).to_have_text("Unblock")
    note = page.locator(".profile-actions .live-note")
    expect(note).to_have_text("You blocked @fay. Neither of you sees the other now.")
    expect(main).to_be_focused()
    assert not errors, errors  # was: TypeError ... at note
    assert r.zscore(keys.blocks(eve.id), fay.id) is not None


# --- Mute from one card -----------------------------------------------------------------


def test_muting_from_one_card_mutes_the_authors_other_cards_and_unmuting_brings_them_back(
    page_as, person, repo, r, live_url
):
    cy, dee, eve = person("cy"), person("dee"), person("eve")
    first = repo.posts.create_post(dee.id, "Dee's first")
    other = repo.posts.create_post(eve.id, "Eve's words")
    second = repo.posts.create_post(dee.id, "Dee's second")
    page = page_as(cy)
    errors = no_script_errors(page)
    page.goto(live_url + "/timeline/")
    page.evaluate("window.stayed = true")

    page.locator(f"#post-{second} button.mute").click()

    expect(page.locator(f"#post-{second} button.mute")).to_have_text("Unmute")
    expect(page.locator(f"#post-{second} .live-note")).to_contain_text("You muted @dee.")
    expect(page.locator(f"#post-{first}")).to_be_hidden()  # as the next page would
    expect(page.locator(f"#post-{first} button.mute")).to_have_text("Unmute")
    expect(page.locator(f"#post-{other}")).to_be_visible()
    expect(page.locator(f"#post-{other} button.mute")).to_have_text("Mute")
    assert r.zscore(keys.mutes(cy.id), dee.id) is not None

    page.locator(f"#post-{second} button.mute").click()

    expect(page.locator(f"#post-{first}")).to_be_visible()
    expect(page.locator(f"#post-{first} button.mute")).to_have_text("Mute")
    expect(page.locator(f"#post-{second} button.mute")).to_have_text("Mute")
    assert r.zscore(keys.mutes(cy.id), dee.id) is None
    assert page.evaluate("window.stayed") is True and not errors


def test_muting_from_a_profiles_menu_turns_its_cards_to_unmute_and_keeps_them(
    page_as, person, repo, r, live_url
):
    cy, dee = person("cy"), person("dee")
    posts = [repo.posts.create_post(dee.id, f"Dee says {i}") for i in range(2)]
    page = page_as(cy)
    page.goto(live_url + "/u/dee/")
    page.locator(".profile-actions details.menu > summary").click()

    page.locator(".profile-actions details.menu button").click()

    expect(page.locator(".profile-actions details.menu button")).to_have_text("Unmute @dee")
    for post in posts:  # on dee's own profile their posts stay, offering Unmute
        expect(page.locator(f"#post-{post}")).to_be_visible()
        expect(page.locator(f"#post-{post} button.mute")).to_have_text("Unmute")
    assert r.zscore(keys.mutes(cy.id), dee.id) is not None


# --- A follow in place updates the count -------------------------------------------------


def test_following_in_place_counts_the_new_follower_in_words(page_as, person, repo, r, live_url):
    cy, dee = person("cy"), person("dee")
    page = page_as(cy)
    page.goto(live_url + "/u/dee/")
    followers = page.locator(".profile-head .counts a.followers")
    expect(followers).to_have_text("0 followers")

    page.locator(".profile-actions > form button").click()

    expect(followers).to_have_text("1 follower")
    expect(followers.locator("strong")).to_have_text("1")
    assert r.zcard(keys.followers(dee.id)) == 1
    page.locator(".profile-actions > form button").click()
    expect(followers).to_have_text("0 followers")
    assert r.zcard(keys.followers(dee.id)) == 0
