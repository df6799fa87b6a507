"""Live pages (issue 28) in Chromium against the served site and its streaming API: home
says "1 new post" when a followed account posts (and one click shows it, in place), the notification
count grows by itself, and Like, Follow and Mute act in place, without the page navigating,
leaving the same Redis state as the form; axe finds nothing on the page as it has become."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from social import keys
from tests.browser.test_accessibility import axe_violations, describe


def listening(page, streams: int = 1) -> None:
    """Wait until the page's script has its streams open (the header's data-listening)."""
    expect(page.locator(f".topbar[data-listening='{streams}']")).to_be_attached(timeout=15_000)


def axe_page(browser, repo, user, live_url, **options):
    """A page logged in as user in a context of its own that lets axe-core's script in."""
    context = browser.new_context(bypass_csp=True, **options)
    context.set_default_timeout(10_000)
    secret = repo.users.record_login(user.id, "127.0.0.1")
    context.add_cookies([{"name": "auth", "value": secret, "url": live_url, "sameSite": "Lax"}])
    return context.new_page()


def test_home_shows_new_posts_and_the_count_without_a_reload(browser, person, repo, live_url):
    ann, ben = person("ann"), person("ben")
    repo.graph.follow(ann.id, ben.id)
    older = repo.posts.create_post(ben.id, "An older post by ben")
    page = axe_page(browser, repo, ann, live_url, viewport={"width": 1280, "height": 900})
    page.goto(live_url + "/")
    listening(page)
    page.evaluate("window.stayed = true")
    scrolled = page.evaluate("window.scrollY")

    repo.posts.create_post(ben.id, "Fresh from ben, live")
    bar = page.locator(".new-posts[aria-live=polite] button.new-posts-button")
    expect(bar).to_have_text("1 new post", timeout=15_000)
    repo.posts.create_post(ben.id, "And another one")
    expect(bar).to_have_text("2 new posts", timeout=15_000)
    repo.likes.like(ben.id, repo.posts.create_post(ann.id, "ann's own post"))
    badge = page.locator("header a.notes .count-badge")
    expect(badge).to_contain_text("1", timeout=15_000)

    assert page.evaluate("window.stayed") is True  # no reload, no navigation
    assert page.evaluate("window.scrollY") == scrolled  # nothing moved
    assert "Fresh from ben, live" not in page.locator("main").inner_text()
    assert page.locator(f"#post-{older}").is_visible()
    assert not [describe("home, live", v) for v in axe_violations(page)]

    bar.focus()  # keyboard reachable: Enter shows them above the list, in place (issue 37)
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_contain_text("Fresh from ben, live")
    assert page.evaluate("window.stayed") is True
    page.context.close()


def test_like_follow_and_mute_act_in_place(page_as, person, repo, r, live_url):
    cy, dee = person("cy"), person("dee")
    post = repo.posts.create_post(dee.id, "Like me in place")
    page = page_as(cy)
    page.goto(live_url + "/timeline/")
    listening(page, 2)  # its notifications and the public stream, as the page's CSP allows
    page.evaluate("window.stayed = true")
    url = page.url

    like = page.locator(f"#post-{post} .like button")
    like.click()
    expect(like).to_have_attribute("aria-pressed", "true")
    expect(like).to_contain_text("Liked")
    expect(page.locator(f"#post-{post} .like .likes")).to_have_text("1")
    assert r.zscore(keys.likes(post), cy.id) is not None
    assert r.hget(keys.post(post), "likes") == "1"
    like.click()
    expect(like).to_have_attribute("aria-pressed", "false")
    expect(page.locator(f"#post-{post} .like .likes")).to_have_count(0)
    assert r.zcard(keys.likes(post)) == 0

    mute = page.locator(f"#post-{post} button.mute")
    mute.click()
    expect(mute).to_have_text("Unmute")
    assert r.zscore(keys.mutes(cy.id), dee.id) is not None
    expect(page.locator(f"#post-{post} .live-note")).to_contain_text("You muted @dee.")

    assert page.evaluate("window.stayed") is True and page.url == url

    page.goto(live_url + "/u/dee/")
    page.evaluate("window.stayed = true")
    follow = page.locator(".profile-actions > form button")
    follow.click()
    expect(follow).to_have_text("Unfollow")
    assert r.zscore(keys.following(cy.id), dee.id) is not None
    expect(page.locator(".profile-actions .live-note")).to_have_text(
        re.compile("You are now following @dee.")
    )
    assert page.evaluate("window.stayed") is True


def test_block_still_confirms_then_acts_in_place(page_as, person, repo, r, live_url):
    eve, fay = person("eve"), person("fay")
    page = page_as(eve)
    page.goto(live_url + "/u/fay/")
    page.evaluate("window.stayed = true")
    page.locator(".profile-actions details.menu > summary").click()
    asked = []

    def dismiss_then_accept(dialog):
        asked.append(dialog.message)
        dialog.dismiss() if len(asked) == 1 else dialog.accept()

    page.on("dialog", dismiss_then_accept)
    block = page.locator(".profile-actions a[data-confirm]")
    block.click()  # dismissed: nothing happens
    assert asked and asked[0].startswith("Block @fay?")
    assert r.zscore(keys.blocks(eve.id), fay.id) is None

    block.click()
    main = page.locator(".profile-actions > form button")
    expect(main).to_have_text("Unblock")
    assert r.zscore(keys.blocks(eve.id), fay.id) is not None
    assert page.evaluate("window.stayed") is True
