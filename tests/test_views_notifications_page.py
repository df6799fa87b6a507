"""Issue 37's rough edges of the notifications page and the Mentions tab, as views (each
failed before its fix): followers named with their avatars and a Follow back, a mention
shown as its card (Reply, Like), and reading the Mentions tab taking the mentions off the
navigation's count (the other kinds left), with the Redis state after each step."""

from __future__ import annotations

import html as html_module
import re

from social import keys
from social.repository import Viewer


def text_of(html: str) -> str:
    """The page's words without tags, spaces collapsed, characters as they show."""
    return re.sub(r"\s+", " ", html_module.unescape(re.sub(r"<[^>]+>", "", html)))


def section(html: str, start: str, end: str) -> str:
    begin = html.index(start)
    return html[begin : html.index(end, begin)]


# --- The notifications page -------------------------------------------------------------


def test_a_follow_notification_names_the_follower_and_offers_follow_back(
    repo, r, alice, bob, charlie, alice_client
):
    repo.profiles.update(bob.id, display_name="Bob the Builder")
    repo.graph.follow(bob.id, alice.id)
    repo.graph.follow(charlie.id, alice.id)
    repo.graph.follow(alice.id, charlie.id)  # charlie is followed already

    html = alice_client.get("/notifications/").content.decode()
    item = section(html, '<li class="card notification follow', "</li>\n  \n</ul>")

    assert "Bob the Builder" in text_of(section(item, "<p>", "</p>"))  # the display name
    assert 'aria-label="Follow back @bob"' in item
    assert 'aria-label="Follow back @charlie"' not in item
    assert 'action="/u/bob/follow/"' in item
    # the avatars are beside the names, each in its follower's row
    assert item.count('class="person"') == 2
    following = r.zrange(keys.following(alice.id), 0, -1)
    assert following == [str(charlie.id)]


def test_follow_back_from_the_notifications_page_follows_and_comes_back(
    repo, r, alice, bob, alice_client
):
    repo.graph.follow(bob.id, alice.id)

    done = alice_client.post("/u/bob/follow/", {"next": "/notifications/"})

    assert done.status_code == 302 and done["Location"] == "/notifications/"
    assert r.zscore(keys.following(alice.id), bob.id) is not None
    html = alice_client.get("/notifications/").content.decode()
    assert "Follow back @bob" not in html


def test_a_mention_notification_is_the_post_with_reply_and_like(repo, alice, bob, alice_client):
    post = repo.posts.create_post(bob.id, "@alice what do you think?")

    html = alice_client.get("/notifications/").content.decode()
    item = section(html, '<li class="card notification mention', "</article>")

    assert f'id="post-{post}"' in item
    assert f'href="/p/{post}/#reply"' in item  # Reply
    assert f'formaction="/p/{post}/like/"' in item  # Like
    assert 'id="card-actions"' in html  # the form the card's buttons submit


# --- The Mentions tab clears the mentions from the navigation's count --------------------


def nav_count(html: str) -> int:
    badge = re.search(r'<a class="notes"[^>]*>.*?(?:<span class="count-badge">(\d+)|</a>)', html)
    return int(badge.group(1)) if badge and badge.group(1) else 0


def test_reading_the_mentions_tab_takes_the_mentions_off_the_count(
    repo, r, alice, bob, charlie, alice_client
):
    own = repo.posts.create_post(alice.id, "something to like")
    repo.posts.create_post(bob.id, "@alice hello")
    repo.posts.create_post(charlie.id, "@alice hi there")
    repo.likes.like(bob.id, own)
    assert nav_count(alice_client.get("/").content.decode()) == 3

    mentions = alice_client.get("/mentions/").content.decode()

    assert nav_count(mentions) == 1  # the like is still to be seen
    assert r.hget(keys.user(alice.id), "unread_notifications") == "1"
    assert nav_count(alice_client.get("/").content.decode()) == 1
    alice_client.get("/mentions/")  # seen again: nothing more counted off
    assert r.hget(keys.user(alice.id), "unread_notifications") == "1"
    # the notifications page marks only the like "New" and clears the rest
    html = alice_client.get("/notifications/").content.decode()
    assert html.count('class="new-badge"') == 1
    assert "1 new since you last looked." in html
    assert r.hget(keys.user(alice.id), "unread_notifications") == "0"


def test_a_mention_arriving_after_the_tab_was_read_counts_again(repo, r, alice, bob, alice_client):
    repo.posts.create_post(bob.id, "@alice first")
    alice_client.get("/mentions/")
    assert r.hget(keys.user(alice.id), "unread_notifications") == "0"

    repo.posts.create_post(bob.id, "@alice second")
    assert nav_count(alice_client.get("/").content.decode()) == 1
    assert nav_count(alice_client.get("/mentions/").content.decode()) == 0
    assert r.hget(keys.user(alice.id), "unread_notifications") == "0"


def test_mentions_an_app_marked_read_are_not_taken_off_the_count_again(
    repo, r, alice, bob, alice_client
):
    repo.posts.create_post(bob.id, "@alice read in an app")
    newest = repo.notifications.listing(Viewer(alice.id)).newest
    repo.markers.save(alice.id, {"notifications": newest})  # as POST /api/v1/markers
    assert r.hget(keys.user(alice.id), "unread_mentions") == "0"
    repo.likes.like(bob.id, repo.posts.create_post(alice.id, "mine"))

    assert nav_count(alice_client.get("/mentions/").content.decode()) == 1  # the like stays
    assert r.hget(keys.user(alice.id), "unread_notifications") == "1"
