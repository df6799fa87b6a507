"""What a person does, end to end in a real browser, and what it leaves in Redis."""

from __future__ import annotations

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from playwright.sync_api import expect

from social.repository import Repository, User
from tests.browser.conftest import open_nav_menu
from tests.conftest import PASSWORD, make_staff


def make_user(repo: Repository, name: str) -> User:
    """Create a persona the live site (PBKDF2 only, not the tests' MD5) can log in.

    Few iterations keep it fast; the site upgrades the hash at the first login.
    """
    return repo.users.create_user(
        name, PBKDF2PasswordHasher().encode(PASSWORD, "browsersalt", 1000)
    )


def log_in(page, base: str, username: str, password: str = PASSWORD) -> None:
    page.goto(base + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    with page.expect_navigation():
        page.click("main form button[type=submit]")


@pytest.mark.without_script
def test_a_newcomer_signs_up_posts_follows_and_unfollows(live_url, new_page, repo, r):
    bob = make_user(repo, "bob")
    repo.posts.create_post(bob.id, "Bob's first post about sorted sets")
    page = new_page(390)
    page.goto(live_url + "/register/")
    page.fill("#id_username", "newbie")
    page.fill("#id_password", "a-fine-password-9")
    page.fill("#id_password2", "a-fine-password-9")
    with page.expect_navigation():
        page.click("main form button[type=submit]")
    expect(page.get_by_text("Welcome to Retwis, newbie!")).to_be_visible()
    expect(page.get_by_text("No posts yet — follow someone")).to_be_visible()

    page.fill("#id_status", "Hello\nworld <b>from</b> the browser")
    with page.expect_navigation():
        page.click("form.compose button[type=submit]")
    expect(page.locator("article.post .body").first).to_have_text(
        "Hello world <b>from</b> the browser"
    )
    newbie_id = int(r.hget("users", "newbie"))
    assert r.lrange(f"user_posts:{newbie_id}", 0, -1) == [r.lindex("timeline", 0)]

    page.goto(live_url + "/u/bob/")
    with page.expect_navigation():
        page.get_by_role("button", name="Follow").click()
    expect(page.get_by_text("You are now following @bob.")).to_be_visible()
    assert r.zscore(f"followers:{bob.id}", newbie_id) is not None
    page.goto(live_url + "/")
    expect(page.get_by_text("Bob's first post about sorted sets")).to_be_visible()

    page.goto(live_url + "/u/bob/")
    with page.expect_navigation():
        page.get_by_role("button", name="Unfollow").click()
    page.goto(live_url + "/")
    expect(page.get_by_text("Bob's first post about sorted sets")).to_have_count(0)
    assert r.zcard(f"following:{newbie_id}") == 0

    open_nav_menu(page)  # on a phone Log out is in the header's Menu
    with page.expect_navigation():
        page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("link", name="Sign up")).to_be_visible()
    secret = r.hget(f"user:{newbie_id}", "auth")
    assert r.hget("auths", secret) == str(newbie_id)  # rotated: the old secret is gone
    assert r.hlen("auths") == 2  # bob's secret and newbie's new one


def test_a_moderator_finds_a_user_suspends_them_and_deletes_a_reported_post(
    live_url, new_page, repo, r
):
    sam = make_staff(repo, make_user(repo, "sam"))
    alice = make_user(repo, "alice")
    spammer = make_user(repo, "frank_spam")
    post_id = repo.posts.create_post(spammer.id, "Buy cheap followers now!!!")

    reporter = new_page(390)
    log_in(reporter, live_url, "alice")
    reporter.goto(live_url + "/timeline/")
    with reporter.expect_navigation():
        reporter.locator("article.post", has_text="Buy cheap").get_by_text("Report").click()
    reporter.get_by_label("Spam or scam").check()
    with reporter.expect_navigation():
        reporter.get_by_role("button", name="Send report").click()
    assert r.zcard("reports:open") == 1

    mod = new_page(1280)
    log_in(mod, live_url, "sam")
    mod.goto(live_url + "/staff/reports/")
    with mod.expect_navigation():
        mod.get_by_role("link", name="Delete post…").click()
    assert r.hget(f"post:{post_id}", "deleted") is None  # a confirmation page first
    with mod.expect_navigation():
        mod.get_by_role("button", name="Yes, delete the post").click()
    assert r.hget(f"post:{post_id}", "deleted") == "1"
    assert r.zcard("reports:open") == 0

    mod.goto(live_url + "/staff/users/?q=fra")
    with mod.expect_navigation():
        mod.get_by_role("link", name="@frank_spam").click()
    mod.get_by_label("Suspend", exact=True).fill("spam account")
    with mod.expect_navigation():
        mod.get_by_role("button", name="Suspend").click()
    assert r.hget(f"user:{spammer.id}", "status") == "suspended"
    assert r.zscore("suspended_users", "frank_spam") is not None

    mod.goto(live_url + "/staff/log/")
    expect(mod.locator("main")).to_contain_text("frank_spam")
    actions = [entry["action"] for _, entry in r.xrange("audit")]
    assert "suspend" in actions and "delete_post" in actions

    reporter.goto(live_url + "/timeline/")
    expect(reporter.get_by_text("Buy cheap followers now!!!")).to_have_count(0)
    assert reporter.goto(live_url + "/u/frank_spam/").status == 404
    newest_entry = r.xrevrange("audit", count=1)[0][0]
    assert r.zscore(f"audit:target:{spammer.id}", newest_entry) is not None
    assert alice.id not in (sam.id, spammer.id)
