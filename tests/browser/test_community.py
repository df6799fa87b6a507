"""The community-safety features of issue 17 in a real browser: block, mute, word filters,
notifications, reposts and search, one flow each (and one in Chinese), each checked on the
page and in Redis afterwards."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from social import keys
from tests.browser.conftest import open_nav_menu


def click_and_wait(page, locator) -> None:
    """Click a button or link that loads a page, and wait for that page."""
    with page.expect_navigation():
        locator.click()


def profile_menu(page):
    """The profile's "More" menu (block, mute), opened."""
    menu = page.locator(".profile-actions details.menu")
    menu.locator("summary").click()
    return menu


@pytest.mark.without_script
def test_blocking_from_a_profile_menu_cuts_the_follows_and_keeps_the_blocked_account_out(
    live_url, page_as, person, repo, r
):
    ada = person("ada")
    troll = person("troll")
    repo.graph.follow(ada.id, troll.id)
    repo.posts.create_post(ada.id, "Ada writes about sorted sets")
    # The troll's old tab on ada's profile, opened before it followed her: it offers Follow.
    old_tab = page_as(troll, 390)
    old_tab.goto(live_url + "/u/ada/")
    expect(old_tab.locator(".profile-actions").get_by_role("button", name="Follow")).to_be_visible()
    repo.graph.follow(troll.id, ada.id)
    assert r.zscore(keys.following(troll.id), ada.id) is not None
    assert r.zscore(keys.following(ada.id), troll.id) is not None

    page = page_as(ada)
    page.goto(live_url + "/u/troll/")
    click_and_wait(page, profile_menu(page).get_by_role("link", name="Block @troll"))
    assert page.url == live_url + "/u/troll/block/"  # it asks first (issue 27)
    assert r.zcard(keys.blocks(ada.id)) == 0
    click_and_wait(page, page.locator("main").get_by_role("button", name="Block @troll"))
    assert page.url == live_url + "/u/troll/"
    expect(page.locator(".messages")).to_have_text(
        "You blocked @troll. Neither of you sees the other now."
    )
    expect(page.locator("main .message.warning")).to_have_text(
        "You block @troll: neither of you sees the other's posts."
    )
    actions = page.locator(".profile-actions")
    expect(actions.get_by_role("button", name="Unblock")).to_be_visible()
    expect(actions.get_by_role("button", name="Unfollow")).to_have_count(0)
    assert r.zrange(keys.blocks(ada.id), 0, -1) == [str(troll.id)]
    assert r.zrange(keys.blocked_by(troll.id), 0, -1) == [str(ada.id)]
    assert r.zcard(keys.blocks(troll.id)) == 0
    for key in (keys.following, keys.followers):  # the follows are gone both ways
        assert r.zcard(key(ada.id)) == 0
        assert r.zcard(key(troll.id)) == 0

    # The blocked account, logged in, sees that it is blocked, and no posts.
    blocked = page_as(troll)
    blocked.goto(live_url + "/u/ada/")
    expect(blocked.locator("main .message.warning")).to_have_text(
        "@ada blocks you: you cannot see their posts, follow them or reply to them."
    )
    expect(blocked.locator("article.post")).to_have_count(0)
    expect(blocked.get_by_text("Ada writes about sorted sets")).to_have_count(0)
    expect(blocked.locator(".profile-actions").get_by_role("button", name="Follow")).to_have_count(
        0
    )
    # The old tab still shows Follow: pressing it is refused, and nothing is stored.
    click_and_wait(
        old_tab, old_tab.locator(".profile-actions").get_by_role("button", name="Follow")
    )
    assert old_tab.url == live_url + "/u/ada/"
    expect(old_tab.locator(".messages")).to_have_text("This account does not let you follow it.")
    assert r.zcard(keys.following(troll.id)) == 0
    assert r.zcard(keys.followers(ada.id)) == 0

    # Unblocking from the settings page empties both sets.
    page.goto(live_url + "/settings/blocks/")
    expect(page.get_by_role("heading", name="Blocked accounts")).to_be_visible()
    row = page.locator("ul.people li", has_text="@troll")
    click_and_wait(page, row.get_by_role("button", name="Unblock @troll"))
    assert page.url == live_url + "/settings/blocks/"
    expect(page.locator(".messages")).to_have_text("You unblocked @troll.")
    expect(page.locator("ul.people")).to_have_text("You block no one.")
    assert r.zcard(keys.blocks(ada.id)) == 0
    assert r.zcard(keys.blocked_by(troll.id)) == 0

    blocked.reload()
    expect(blocked.get_by_text("Ada writes about sorted sets")).to_be_visible()
    expect(blocked.locator("main .message.warning")).to_have_count(0)
    expect(blocked.locator(".profile-actions").get_by_role("button", name="Follow")).to_be_visible()
    assert r.zcard(keys.following(troll.id)) == 0  # unblocking restores no follow


@pytest.mark.without_script
def test_muting_from_a_card_takes_the_author_out_of_the_feeds_and_folds_their_replies(
    live_url, page_as, person, repo, r
):
    ada = person("ada")
    bob = person("bob")
    dan = person("dan")
    repo.graph.follow(ada.id, bob.id)
    repo.graph.follow(ada.id, dan.id)
    thread = repo.posts.create_post(bob.id, "Who else keeps counters in Redis hashes?")
    loud = repo.posts.create_post(dan.id, "Dan shouts about everything")
    reply = repo.posts.create_post(dan.id, "Dan's reply, soon muted", reply_to=thread)

    page = page_as(ada)
    page.goto(live_url + "/")
    expect(page.locator(f"#post-{loud}")).to_be_visible()
    page.goto(live_url + "/timeline/")
    card = page.locator(f"#post-{loud}")
    expect(page.locator(f"#post-{reply}")).to_be_visible()
    click_and_wait(page, card.get_by_role("button", name="Mute", exact=True))
    assert page.url == live_url + "/timeline/"  # the card is gone: the page's top
    expect(page.locator(".messages")).to_have_text(
        "You muted @dan. Their posts stay out of your feeds."
    )
    expect(page.locator(f"#post-{thread}")).to_be_visible()
    expect(page.locator(f"#post-{loud}")).to_have_count(0)
    expect(page.locator(f"#post-{reply}")).to_have_count(0)
    assert r.zrange(keys.mutes(ada.id), 0, -1) == [str(dan.id)]
    assert r.zrange(keys.muted_by(dan.id), 0, -1) == [str(ada.id)]
    assert r.zscore(keys.following(ada.id), dan.id) is not None  # muting does not unfollow
    assert r.zscore(keys.followers(dan.id), ada.id) is not None

    page.goto(live_url + "/")
    expect(page.locator(f"#post-{thread}")).to_be_visible()
    expect(page.get_by_text("Dan shouts about everything")).to_have_count(0)
    expect(page.get_by_text("Dan's reply, soon muted")).to_have_count(0)

    # In the thread the muted reply is folded; one click shows it.
    page.goto(f"{live_url}/p/{thread}/")
    folded = page.locator("#replies details.folded")
    expect(folded).to_have_count(1)
    summary = folded.locator("summary")
    expect(summary).to_have_text("Hidden: a post by an account you mute. Show it")
    expect(folded.locator(f"#post-{reply}")).to_be_hidden()
    summary.click()
    expect(folded.locator(f"#post-{reply} .body")).to_be_visible()
    expect(folded.locator(f"#post-{reply} .body")).to_have_text("Dan's reply, soon muted")

    # The muted account notices nothing: its own pages are as before.
    muted = page_as(dan, 390)
    muted.goto(live_url + "/u/ada/")
    expect(muted.locator("main .message")).to_have_count(0)
    expect(muted.locator(".profile-actions").get_by_role("button", name="Follow")).to_be_visible()

    page.goto(live_url + "/settings/mutes/")
    expect(page.get_by_role("heading", name="Muted accounts")).to_be_visible()
    click_and_wait(page, page.get_by_role("button", name="Unmute @dan"))
    assert page.url == live_url + "/settings/mutes/"
    expect(page.locator(".messages")).to_have_text("You unmuted @dan.")
    expect(page.locator("ul.people")).to_have_text("You mute no one.")
    assert r.zcard(keys.mutes(ada.id)) == 0
    assert r.zcard(keys.muted_by(dan.id)) == 0
    page.goto(live_url + "/")
    expect(page.locator(f"#post-{loud} .body")).to_have_text("Dan shouts about everything")


def test_a_word_filter_with_an_expiry_hides_matching_posts_and_refuses_bad_phrases(
    live_url, page_as, person, repo, r
):
    ada = person("ada")
    bob = person("bob")
    repo.graph.follow(ada.id, bob.id)
    spoiler = repo.posts.create_post(bob.id, "Huge Spoilers for the finale tonight")
    kept = repo.posts.create_post(bob.id, "Nothing to hide here")

    page = page_as(ada)
    page.goto(live_url + "/settings/filters/")
    expect(page.get_by_role("heading", name="Word filters")).to_be_visible()
    expect(page.locator("ul.people")).to_have_text("No filters yet.")
    phrase = page.get_by_label("Word or phrase")
    add = page.get_by_role("button", name="Add filter")
    phrase.fill("spoilers")
    page.get_by_label("For", exact=True).select_option(label="7 days")
    before = int(time.time())
    click_and_wait(page, add)
    after = int(time.time())
    assert page.url == live_url + "/settings/filters/"
    expect(page.locator(".messages")).to_have_text(
        "Posts with “spoilers” stay out of your feeds now."
    )
    expect(page.locator("main h2")).to_contain_text("1 filter")
    row = page.locator("ul.people li", has_text="spoilers")
    expect(row).to_contain_text("until ")
    [(member, expires)] = r.zrange(keys.filters(ada.id), 0, -1, withscores=True)
    assert member == "1|spoilers"
    assert before + 7 * 86400 <= expires <= after + 7 * 86400
    assert r.hget(keys.user(ada.id), "relations") == "1"

    for path in ("/", "/timeline/"):
        page.goto(live_url + path)
        expect(page.locator(f"#post-{kept}")).to_be_visible()
        expect(page.locator(f"#post-{spoiler}")).to_have_count(0)
        expect(page.get_by_text("Huge Spoilers")).to_have_count(0)
    # Its permalink folds it, the filter named.
    page.goto(f"{live_url}/p/{spoiler}/")
    expect(page.locator(".permalink details.folded summary")).to_have_text(
        "Hidden: it contains “spoilers”, which you filter. Show it"
    )

    # A duplicate (in another case) and a phrase over 100 characters: a clear error, the
    # typed text kept, nothing stored.
    page.goto(live_url + "/settings/filters/")
    error = page.locator("#id_phrase_error")
    phrase.fill("SPOILERS")
    click_and_wait(page, add)
    expect(error).to_have_text("You already filter “SPOILERS”.")
    expect(phrase).to_have_value("SPOILERS")
    expect(phrase).to_have_attribute("aria-invalid", "true")
    long_phrase = "spoiler " * 12 + "alert"  # 101 characters
    assert len(long_phrase) == 101
    phrase.fill(long_phrase)
    click_and_wait(page, add)
    expect(error).to_have_text(
        "Keep it to 100 characters (this one has 101). That is 1 character over."
    )
    expect(phrase).to_have_value(long_phrase)
    expect(page.locator(".messages")).to_have_count(0)
    assert r.zrange(keys.filters(ada.id), 0, -1) == ["1|spoilers"]

    click_and_wait(page, page.get_by_role("button", name="Delete the filter “spoilers”"))
    assert page.url == live_url + "/settings/filters/"
    expect(page.locator(".messages")).to_have_text("The filter is deleted.")
    expect(page.locator("ul.people")).to_have_text("No filters yet.")
    assert r.exists(keys.filters(ada.id)) == 0
    page.goto(live_url + "/")
    expect(page.locator(f"#post-{spoiler} .body")).to_have_text(
        "Huge Spoilers for the finale tonight"
    )


@pytest.mark.without_script
def test_likes_replies_and_reposts_are_counted_in_the_navigation_until_notifications_are_seen(
    live_url, page_as, person, repo, r
):
    ada = person("ada")
    bob = person("bob")
    carol = person("carol")
    post = repo.posts.create_post(ada.id, "Counters belong in hashes")
    repo.likes.like(carol.id, post)  # an earlier like: grouped with bob's
    assert r.hget(keys.user(ada.id), "unread_notifications") == "1"

    other = page_as(bob, 390)
    other.goto(f"{live_url}/p/{post}/")
    card = other.locator(f".permalink #post-{post}")
    click_and_wait(other, card.get_by_role("button", name="Like", exact=True))
    click_and_wait(other, card.get_by_role("button", name="Repost", exact=True))
    expect(other.locator(".messages")).to_have_text("Reposted: your followers see it now.")
    other.get_by_label("Reply to @ada").fill("Sorted sets for the rest")
    click_and_wait(other, other.get_by_role("button", name="Reply", exact=True))
    expect(other.locator(".messages")).to_have_text("Posted.")
    reply = int(r.lindex(keys.replies(post), 0))
    assert r.hget(keys.user(ada.id), "unread_notifications") == "4"
    kinds = [item.split("|")[:3] for item in r.lrange(keys.notifications(ada.id), 0, -1)]
    assert kinds == [
        ["reply", str(bob.id), str(reply)],
        ["repost", str(bob.id), str(post)],
        ["like", str(bob.id), str(post)],
        ["like", str(carol.id), str(post)],
    ]

    reader = page_as(ada)
    reader.goto(live_url + "/")
    nav = reader.locator("header nav")
    link = nav.get_by_role("link", name=re.compile("^Notifications"))
    expect(link).to_have_attribute("title", "4 new notifications")
    expect(link.locator(".count-badge")).to_have_text("4 new")
    click_and_wait(reader, link)
    assert reader.url == live_url + "/notifications/"
    expect(reader.get_by_role("heading", name="Notifications")).to_be_visible()
    groups = reader.locator("ul.notifications li.notification")
    expect(groups).to_have_count(3)  # the two likes are one entry
    expect(groups).to_contain_text(
        [
            "@bob replied to your post.",
            "@bob reposted your post.",
            "@bob, @carol liked your post.",
        ]
    )
    expect(groups.locator(".new-badge")).to_have_count(3)  # unread until seen
    reply_card = groups.nth(0).locator(f"article#post-{reply}")  # the reply itself (issue 27)
    expect(reply_card).to_contain_text("Sorted sets for the rest")
    expect(reply_card.get_by_role("link", name="Reply", exact=True)).to_be_visible()  # issue 37
    for index in (1, 2):
        expect(
            groups.nth(index).get_by_role("link", name="Counters belong in hashes")
        ).to_have_attribute("href", f"/p/{post}/")
    expect(link).to_have_attribute("aria-current", "page")
    expect(link.locator(".count-badge")).to_have_count(0)
    assert r.hget(keys.user(ada.id), "unread_notifications") == "0"
    assert r.llen(keys.notifications(ada.id)) == 4  # seen, still listed

    reader.goto(live_url + "/")  # cleared for good
    expect(link).to_have_text("Notifications")
    expect(link).not_to_have_attribute("title", re.compile("."))
    reader.goto(live_url + "/notifications/")  # seen: no longer marked
    expect(groups).to_have_count(3)
    expect(groups.locator(".new-badge")).to_have_count(0)
    assert r.hget(keys.post(reply), "reply_to") == str(post)


@pytest.mark.without_script
def test_a_repost_from_the_timeline_reaches_the_reposters_followers_until_it_is_undone(
    live_url, page_as, person, repo, r
):
    ada = person("ada")  # the reposter
    bob = person("bob")  # the author
    carol = person("carol")  # follows ada, not bob
    repo.graph.follow(carol.id, ada.id)
    post = repo.posts.create_post(bob.id, "Streams are a log you can read twice")
    other = repo.posts.create_post(bob.id, "A post nobody reposts")

    page = page_as(ada)
    page.goto(live_url + "/timeline/")
    card = page.locator(f"#post-{post}")
    expect(card.locator(".reposts")).to_have_count(0)
    click_and_wait(page, card.get_by_role("button", name="Repost", exact=True))
    assert page.url == f"{live_url}/timeline/#post-{post}"
    expect(page.locator(".messages")).to_have_text("Reposted: your followers see it now.")
    reposted = card.get_by_role("button", name="Reposted", exact=True)
    expect(reposted).to_have_attribute("aria-pressed", "true")
    expect(reposted).to_have_attribute("title", "Undo your repost")
    expect(card.locator(".reposts")).to_have_text("1")
    expect(card.locator(".reposts")).to_have_attribute("title", "1 repost")
    expect(
        page.locator(f"#post-{other}").get_by_role("button", name="Repost", exact=True)
    ).to_have_attribute("aria-pressed", "false")
    expect(page.locator(".reposted-by")).to_have_count(0)  # never on the timeline

    repost_id = int(r.lindex(keys.own_posts(ada.id), 0))
    assert r.hget(keys.post(repost_id), "repost_of") == str(post)
    assert r.hget(keys.post(repost_id), "user_id") == str(ada.id)
    assert r.hget(keys.post(repost_id), "body") == "RT @bob"
    assert r.zrange(keys.reposts(post), 0, -1, withscores=True) == [(str(ada.id), repost_id)]
    assert r.zrange(keys.user_reposts(ada.id), 0, -1, withscores=True) == [(str(post), repost_id)]
    assert r.lrange(keys.own_posts(ada.id), 0, -1) == [str(repost_id)]
    assert r.lrange(keys.home_feed(carol.id), 0, -1) == [str(repost_id)]
    assert r.hget(keys.post(post), "reposts") == "1"
    assert str(repost_id) not in r.lrange(keys.timeline(), 0, -1)

    follower = page_as(carol, 390)
    follower.goto(live_url + "/")
    shared = follower.locator(f"#post-{post}")
    expect(shared.locator(".reposted-by")).to_contain_text("reposted by @ada")
    expect(shared.locator(".reposted-by").get_by_role("link", name="@ada")).to_have_attribute(
        "href", "/u/ada/"
    )
    expect(shared.locator(".author")).to_have_text("@bob")
    expect(shared.locator(".body")).to_have_text("Streams are a log you can read twice")
    expect(shared.locator(".reposts")).to_have_text("1")
    expect(follower.get_by_text("A post nobody reposts")).to_have_count(0)
    follower.goto(live_url + "/u/ada/")  # and on the reposter's profile
    expect(follower.locator(f"#post-{post} .reposted-by")).to_contain_text("reposted by @ada")

    click_and_wait(page, reposted)
    assert page.url == f"{live_url}/timeline/#post-{post}"
    expect(page.locator(".messages")).to_have_text("Your repost is undone.")
    expect(card.get_by_role("button", name="Repost", exact=True)).to_have_attribute(
        "aria-pressed", "false"
    )
    expect(card.locator(".reposts")).to_have_count(0)
    follower.goto(live_url + "/")
    expect(follower.locator(f"#post-{post}")).to_have_count(0)
    expect(follower.get_by_text("Streams are a log you can read twice")).to_have_count(0)
    follower.goto(live_url + "/u/ada/")
    expect(follower.locator(f"#post-{post}")).to_have_count(0)

    assert r.zcard(keys.reposts(post)) == 0
    assert r.zcard(keys.user_reposts(ada.id)) == 0
    assert r.llen(keys.own_posts(ada.id)) == 0
    assert r.llen(keys.home_feed(carol.id)) == 0
    assert r.exists(keys.post(repost_id)) == 0
    assert r.hget(keys.post(post), "reposts") == "0"


@pytest.mark.without_script
def test_the_navigation_search_finds_people_and_tags_by_prefix_and_follows_from_the_results(
    live_url, page_as, person, repo, r
):
    ada = person("ada")
    fan = person("redis_fan")
    bob = person("bob")
    repo.posts.create_post(fan.id, "Sorted sets everywhere #redis")
    repo.posts.create_post(bob.id, "Streams too #RedisStreams")
    repo.posts.create_post(bob.id, "Decorators, explained #python")

    page = page_as(ada, 390)
    page.goto(live_url + "/")
    open_nav_menu(page)  # on a phone the box is in the header's Menu
    box = page.locator("header nav").get_by_role("searchbox", name="Search people and tags")
    box.fill("red")
    with page.expect_navigation():
        box.press("Enter")
    assert page.url == live_url + "/search/?q=red"
    expect(page.get_by_role("heading", name="Search", exact=True)).to_be_visible()
    expect(page.locator("#search-q")).to_have_value("red")
    people = page.locator("h2:text-is('People') + ul.people > li")
    tags = page.locator("h2:text-is('Tags') + ul.people > li")
    expect(people).to_have_count(1)
    expect(people).to_contain_text(["@redis_fan 1 post · 0 followers"])
    expect(tags).to_have_text(
        [re.compile(r"^#redis 1 recent post$"), re.compile(r"^#redisstreams ")]
    )

    click_and_wait(page, people.get_by_role("button", name="Follow @redis_fan"))
    assert page.url == live_url + "/search/?q=red"
    expect(page.locator(".messages")).to_have_text("You are now following @redis_fan.")
    expect(people).to_contain_text(["@redis_fan 1 post · 1 follower"])
    expect(people.get_by_role("button", name="Unfollow @redis_fan")).to_be_visible()
    assert r.zrange(keys.following(ada.id), 0, -1) == [str(fan.id)]
    assert r.zrange(keys.followers(fan.id), 0, -1) == [str(ada.id)]

    click_and_wait(page, tags.get_by_role("link", name="#redis", exact=True))
    assert page.url == live_url + "/tag/redis/"
    expect(page.locator("article.post .body")).to_have_text(["Sorted sets everywhere #redis"])
    page.goto(live_url + "/")  # the follow put the posts in ada's home
    expect(page.get_by_text("Sorted sets everywhere #redis")).to_be_visible()


@pytest.mark.without_script
def test_in_chinese_a_repost_and_a_block_say_so_and_the_blocked_account_reads_it_too(
    live_url, browser, page_as, person, repo, r
):
    ada = person("ada")
    bob = person("bob")
    troll = person("troll")
    post = repo.posts.create_post(bob.id, "有序集合让时间线保持有序")

    # The footer's language switch.
    page = page_as(ada, 390)
    page.goto(live_url + "/timeline/")
    footer = page.locator("footer")
    footer.get_by_label("Language").select_option("zh-hans")
    click_and_wait(page, footer.get_by_role("button", name="Change"))
    assert page.url == live_url + "/timeline/"
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")

    card = page.locator(f"#post-{post}")
    click_and_wait(page, card.get_by_role("button", name="转发", exact=True))
    expect(page.locator(".messages")).to_have_text("已转发：你的关注者现在能看到它了。")
    expect(card.get_by_role("button", name="已转发", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    assert r.zrange(keys.reposts(post), 0, -1) == [str(ada.id)]
    click_and_wait(page, card.get_by_role("button", name="已转发", exact=True))
    expect(page.locator(".messages")).to_have_text("已撤销你的转发。")
    assert r.zcard(keys.reposts(post)) == 0

    page.goto(live_url + "/u/troll/")
    click_and_wait(page, profile_menu(page).get_by_role("link", name="屏蔽 @troll"))
    expect(page.locator("h1")).to_have_text("屏蔽 @troll？")
    click_and_wait(page, page.locator("main").get_by_role("button", name="屏蔽 @troll"))
    expect(page.locator(".messages")).to_have_text("你已屏蔽 @troll。现在你们彼此都看不到对方了。")
    assert r.zrange(keys.blocks(ada.id), 0, -1) == [str(troll.id)]
    assert r.zrange(keys.blocked_by(troll.id), 0, -1) == [str(ada.id)]

    # The blocked account's browser asks for Chinese (Accept-Language: zh-Hans).
    context = browser.new_context(locale="zh-Hans", viewport={"width": 1280, "height": 900})
    try:
        context.set_default_timeout(10_000)
        secret = repo.users.record_login(troll.id, "127.0.0.1")
        context.add_cookies([{"name": "auth", "value": secret, "url": live_url}])
        blocked = context.new_page()
        blocked.goto(live_url + "/u/ada/")
        expect(blocked.locator("html")).to_have_attribute("lang", "zh-hans")
        expect(blocked.locator("main .message.warning")).to_have_text(
            "@ada 屏蔽了你：你无法查看其帖子、关注或回复。"
        )
        expect(blocked.locator("article.post")).to_have_count(0)
        expect(
            blocked.locator(".profile-actions").get_by_role("button", name="关注")
        ).to_have_count(0)
    finally:
        context.close()


def test_a_filter_that_folds_keeps_the_post_one_click_away_where_it_was_told(
    live_url, page_as, person, repo, r
):
    ada = person("ada")
    bob = person("bob")
    repo.graph.follow(ada.id, bob.id)
    spoiler = repo.posts.create_post(bob.id, "The finale was a dream")

    page = page_as(ada)
    page.goto(live_url + "/settings/filters/")
    page.get_by_label("Word or phrase").fill("Finale")
    page.get_by_label("Fold it, with the word named").check()
    for place in ("Mentions and notifications", "The timeline and tags"):
        page.get_by_label(place).uncheck()
    click_and_wait(page, page.get_by_role("button", name="Add filter"))

    expect(page.locator(".messages")).to_have_text(
        "Posts with “Finale” are folded now, with the word named."
    )
    expect(page.locator("ul.people li", has_text="finale")).to_contain_text(
        "Folded in: Home, Conversations (always folded) ·"
    )
    [member] = r.zrange(keys.filters(ada.id), 0, -1)
    assert '"context":["home","thread"],"action":"warn"' in member
    page.goto(live_url + "/")
    summary = page.locator("details.folded summary")
    expect(summary).to_have_text("Hidden: it contains “finale”, which you filter. Show it")
    expect(page.locator(f"#post-{spoiler} .body")).to_be_hidden()
    summary.click()
    expect(page.locator(f"#post-{spoiler} .body")).to_have_text("The finale was a dream")
    page.goto(live_url + "/timeline/")  # not a place it was told
    expect(page.locator(f"#post-{spoiler} .body")).to_be_visible()
    expect(page.locator("details.folded")).to_have_count(0)
