"""Conversations in a real browser: replying, mentions, tags, likes, deleting a post and
deleting an account, each checked on the page and in Redis afterwards."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from social import keys
from tests.conftest import PASSWORD


def log_in_with_form(page, username: str, password: str = PASSWORD) -> None:
    """Fill and send the site's own login form (the page must be showing it)."""
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    with page.expect_navigation():
        page.locator("main form").get_by_role("button", name="Log in").click()


def test_a_reader_logs_in_from_a_permalink_replies_and_the_feed_counts_the_reply(
    live_url, new_page, person, repo, r
):
    alice = person("alice")
    bob = person("bob")
    parent = repo.posts.create_post(alice.id, "Who else keeps counters in Redis hashes?")

    page = new_page(390)
    page.goto(f"{live_url}/p/{parent}/")
    expect(page.locator("#replies")).to_contain_text("No replies yet.")
    with page.expect_navigation():
        page.get_by_role("link", name="Log in to reply").click()
    log_in_with_form(page, "bob")
    assert page.url == f"{live_url}/p/{parent}/"  # back where the reader was

    page.get_by_label("Reply to @alice").fill("Me, with HINCRBY")
    with page.expect_navigation():
        page.get_by_role("button", name="Reply", exact=True).click()
    assert page.url == f"{live_url}/p/{parent}/"
    expect(page.locator(".messages")).to_have_text("Posted.")
    replies = page.locator("#replies article.post")
    expect(replies).to_have_count(1)
    expect(replies.locator(".body")).to_have_text("Me, with HINCRBY")
    expect(replies.locator(".replying")).to_have_text("replying to @alice")
    expect(page.locator("#replies h2")).to_have_text("Replies 1, oldest first")

    reply_id = int(r.lindex(keys.own_posts(bob.id), 0))
    assert r.lrange(keys.replies(parent), 0, -1) == [str(reply_id)]
    assert r.hget(keys.post(reply_id), "reply_to") == str(parent)
    assert r.hget(keys.post(reply_id), "reply_to_name") == "alice"
    assert r.lrange(keys.timeline(), 0, -1) == [str(reply_id), str(parent)]

    page.goto(live_url + "/timeline/")
    parent_card = page.locator(f"#post-{parent}")
    expect(parent_card.get_by_role("link", name="1 reply")).to_be_visible()
    expect(page.locator(f"#post-{reply_id} .replying")).to_have_text("replying to @alice")
    with page.expect_navigation():
        parent_card.get_by_role("link", name="1 reply").click()
    assert page.url == f"{live_url}/p/{parent}/#replies"
    expect(page.locator("#replies article.post .body")).to_have_text("Me, with HINCRBY")


def test_a_mention_is_counted_once_in_the_navigation_until_its_reader_opens_notifications(
    live_url, new_page, page_as, person, r
):
    alice = person("alice")
    bob = person("bob")

    writer = page_as(alice)
    writer.goto(live_url + "/")
    writer.get_by_label("What are you doing, alice?").fill("@bob hello from the composer")
    with writer.expect_navigation():
        writer.locator("form.compose").get_by_role("button", name="Post").click()
    expect(writer.locator(".messages")).to_have_text("Posted.")
    post_id = int(r.lindex(keys.own_posts(alice.id), 0))
    assert r.zscore(keys.mentions(bob.id), post_id) is not None
    assert r.hget(keys.user(bob.id), "unread_notifications") == "1"

    reader = new_page(1280)
    reader.goto(live_url + "/login/")
    log_in_with_form(reader, "bob")
    nav = reader.locator("header nav")
    link = nav.get_by_role("link", name=re.compile("^Notifications"))
    expect(link).to_have_attribute("title", "1 new notification")
    expect(link.locator(".count-badge")).to_have_text("1 new")
    expect(nav.locator(".count-badge")).to_have_count(1)  # one count: no Mentions badge

    with reader.expect_navigation():
        link.click()
    expect(reader.locator("li.notification.mention.unread")).to_contain_text(
        "New @alice mentioned you."
    )
    mentions_tab = reader.locator("main nav.tabs").get_by_role("link", name="Mentions")
    with reader.expect_navigation():
        mentions_tab.click()
    assert reader.url == live_url + "/mentions/"
    expect(reader.get_by_role("heading", name="Mentions")).to_be_visible()
    expect(mentions_tab).to_have_attribute("aria-current", "page")
    card = reader.locator(f"#post-{post_id}")
    expect(card.locator(".body")).to_have_text("@bob hello from the composer")
    expect(card.locator(".body").get_by_role("link", name="@bob")).to_have_attribute(
        "href", "/u/bob/"
    )
    expect(nav.locator(".count-badge")).to_have_count(0)  # cleared on Notifications
    assert r.hget(keys.user(bob.id), "unread_notifications") == "0"
    assert r.zscore(keys.mentions(bob.id), post_id) is not None  # seen, still listed


def test_a_visitor_follows_a_tag_link_to_the_tag_page(live_url, new_page, person, repo, r):
    alice = person("alice")
    bob = person("bob")
    lower = repo.posts.create_post(alice.id, "Sorted sets make leaderboards easy #redis")
    repo.posts.create_post(bob.id, "Decorators, explained #python")
    upper = repo.posts.create_post(bob.id, "Streams are underrated #Redis")
    assert r.lrange(keys.tag_posts("redis"), 0, -1) == [str(upper), str(lower)]
    assert r.hget(keys.post(upper), "tags") == "redis"

    page = new_page(390)
    page.goto(live_url + "/timeline/")
    tag_link = page.locator(f"#post-{lower} .body").get_by_role("link", name="#redis")
    expect(tag_link).to_have_attribute("href", "/tag/redis/")
    expect(page.locator(f"#post-{upper} .body a.tag")).to_have_text("#Redis")  # as typed
    with page.expect_navigation():
        tag_link.click()
    assert page.url == live_url + "/tag/redis/"
    expect(page.get_by_role("heading", name="#redis")).to_be_visible()
    expect(page.locator("article.post .body")).to_have_text(
        ["Streams are underrated #Redis", "Sorted sets make leaderboards easy #redis"]
    )  # both spellings, newest first; the #python post is not there


@pytest.mark.without_script
def test_liking_and_unliking_from_the_timeline_comes_back_to_the_same_place(
    live_url, page_as, person, repo, r
):
    alice = person("alice")
    bob = person("bob")
    post_id = repo.posts.create_post(alice.id, "Like this if you use Redis streams")
    other = repo.posts.create_post(alice.id, "A post nobody likes")

    page = page_as(bob)
    page.goto(live_url + "/timeline/")
    card = page.locator(f"#post-{post_id}")
    with page.expect_navigation():
        card.get_by_role("button", name="Like", exact=True).click()
    assert page.url == f"{live_url}/timeline/#post-{post_id}"
    liked = card.get_by_role("button", name="Liked", exact=True)
    expect(liked).to_have_attribute("aria-pressed", "true")
    expect(card.locator(".likes")).to_have_text("1")
    expect(page.locator(f"#post-{other}").get_by_role("button", name="Like")).to_be_visible()
    assert r.zrange(keys.likes(post_id), 0, -1) == [str(bob.id)]
    assert r.zrange(keys.user_likes(bob.id), 0, -1) == [str(post_id)]

    with page.expect_navigation():
        liked.click()
    assert page.url == f"{live_url}/timeline/#post-{post_id}"
    expect(card.get_by_role("button", name="Like", exact=True)).to_have_attribute(
        "aria-pressed", "false"
    )
    expect(card.locator(".likes")).to_have_count(0)
    assert r.zcard(keys.likes(post_id)) == 0
    assert r.zcard(keys.user_likes(bob.id)) == 0


def test_an_author_deletes_a_post_after_confirming(live_url, page_as, person, r):
    alice = person("alice")
    page = page_as(alice)
    page.goto(live_url + "/")
    for text in ["Keeping this one", "Oops, wrong tab #redis"]:
        page.get_by_label("What are you doing, alice?").fill(text)
        with page.expect_navigation():
            page.locator("form.compose").get_by_role("button", name="Post").click()
    kept, doomed = (int(i) for i in r.lrange(keys.own_posts(alice.id), 0, -1)[::-1])
    assert r.lrange(keys.tag_posts("redis"), 0, -1) == [str(doomed)]

    page.goto(live_url + "/u/alice/")
    with page.expect_navigation():
        page.locator(f"#post-{doomed}").get_by_role("link", name="Delete").click()
    assert page.url == f"{live_url}/p/{doomed}/delete/"
    expect(page.get_by_role("heading", name="Delete this post?")).to_be_visible()
    expect(page.locator("blockquote .body")).to_have_text("Oops, wrong tab #redis")
    assert r.hget(keys.post(doomed), "deleted") is None  # asking changed nothing
    with page.expect_navigation():
        page.get_by_role("button", name="Delete post").click()
    assert page.url == live_url + "/"
    expect(page.locator(".messages")).to_have_text("Your post is deleted.")

    for path in ["/", "/u/alice/", "/timeline/"]:
        page.goto(live_url + path)
        expect(page.get_by_text("Keeping this one")).to_be_visible()
        expect(page.get_by_text("Oops, wrong tab")).to_have_count(0)
    assert page.goto(f"{live_url}/p/{doomed}/").status == 404

    post = r.hgetall(keys.post(doomed))
    assert post["deleted"] == "1"
    assert post["deleted_by"] == str(alice.id)
    assert post["deleted_reason"] == "Deleted by its author."
    assert post["body"] == "Oops, wrong tab #redis"  # flagged, not erased
    assert r.lrange(keys.timeline(), 0, -1) == [str(kept)]
    assert r.llen(keys.tag_posts("redis")) == 0
    assert "deleted" not in r.hgetall(keys.post(kept))


def test_deleting_an_account_needs_the_password_then_logs_out_and_hides_everything(
    live_url, new_page, page_as, person, repo, r
):
    carol = person("carol")
    bob = person("bob")
    repo.posts.create_post(carol.id, "Carol was here")
    bobs = repo.posts.create_post(bob.id, "Bob stays")
    repo.graph.follow(bob.id, carol.id)
    repo.likes.like(carol.id, bobs)

    page = page_as(carol)
    page.goto(live_url + "/")
    with page.expect_navigation():
        page.locator(".settings-links").get_by_role("link", name="Settings").click()
    with page.expect_navigation():
        page.locator("main .settings-groups").get_by_role("link", name="Delete account").click()
    assert page.url == live_url + "/settings/delete/"
    expect(page.get_by_role("heading", name="Delete your account")).to_be_visible()
    page.get_by_label("Your password").fill("not my password")
    with page.expect_navigation():
        page.get_by_role("button", name="Delete my account").click()
    assert page.url == live_url + "/settings/delete/"
    expect(page.locator("main .error")).to_have_text("That is not your current password.")
    expect(page.locator("header nav").get_by_role("link", name="@carol")).to_be_visible()
    assert r.hget(keys.user(carol.id), "status") is None
    assert r.zscore(keys.deleted_users(), carol.id) is None
    assert r.zscore(keys.followers(carol.id), bob.id) is not None

    page.get_by_label("Your password").fill(PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Delete my account").click()
    assert page.url == live_url + "/"
    expect(page.locator(".messages")).to_have_text(
        "Your account carol is deleted. Its name stays reserved for 30 days."
    )
    expect(page.locator("header nav").get_by_role("link", name="Log in")).to_be_visible()
    assert page.goto(live_url + "/u/carol/").status == 404
    page.goto(live_url + "/timeline/")
    expect(page.get_by_text("Bob stays")).to_be_visible()
    expect(page.get_by_text("Carol was here")).to_have_count(0)

    assert r.zscore(keys.deleted_users(), carol.id) is not None
    assert r.hget(keys.user(carol.id), "status") == "deleted"
    assert r.zcard(keys.followers(carol.id)) == 0
    assert r.zcard(keys.following(bob.id)) == 0
    assert r.zcard(keys.likes(bobs)) == 0

    again = new_page(390)  # the old password no longer opens the account
    again.goto(live_url + "/login/")
    log_in_with_form(again, "carol")
    assert again.url == live_url + "/login/"
    expect(again.locator("main .error")).to_have_text(
        "That username and password do not match an account."
    )
    expect(again.locator("header nav").get_by_role("link", name="Log in")).to_be_visible()
