"""Issue 37's rough edges on a profile and the home page, as views (each failed before its
fix): counts in words that agree with their number, a follow in place answering the new
followers count, Edit profile on one's own profile, the home card's avatar and name. The
browser's side: tests/browser/test_live_edges.py, test_profile_head.py."""

from __future__ import annotations

import html as html_module
import json
import re

from social import keys


def text_of(html: str) -> str:
    """The page's words without tags, spaces collapsed, characters as they show."""
    return re.sub(r"\s+", " ", html_module.unescape(re.sub(r"<[^>]+>", "", html)))


def section(html: str, start: str, end: str) -> str:
    begin = html.index(start)
    return html[begin : html.index(end, begin)]


# --- Counts in words that agree with their number -------------------------------------


def test_a_profile_says_1_post_and_1_follower_in_the_singular(repo, alice, bob, client):
    repo.posts.create_post(alice.id, "my only post")
    repo.graph.follow(bob.id, alice.id)

    counts = text_of(section(client.get("/u/alice/").content.decode(), 'class="counts"', "</p>"))

    assert "1 post ·" in counts and "1 posts" not in counts
    assert "1 follower ·" in counts and "1 followers" not in counts
    assert "0 following" in counts


def test_a_profile_says_2_posts_and_2_followers_in_the_plural(repo, alice, bob, charlie, client):
    for text in ("one", "two"):
        repo.posts.create_post(alice.id, text)
    for fan in (bob, charlie):
        repo.graph.follow(fan.id, alice.id)

    counts = text_of(section(client.get("/u/alice/").content.decode(), 'class="counts"', "</p>"))

    assert "2 posts ·" in counts and "2 followers ·" in counts


def test_a_profile_in_chinese_counts_without_english_plurals(repo, alice, bob, client):
    repo.graph.follow(bob.id, alice.id)
    client.cookies["django_language"] = "zh-hans"

    counts = text_of(section(client.get("/u/alice/").content.decode(), 'class="counts"', "</p>"))

    assert "follower" not in counts and "post" not in counts, counts


# --- A follow in place answers the profile's new followers count ------------------------


def test_a_follow_asked_by_the_script_answers_the_followers_count_in_words(
    repo, r, alice, bob, bob_client
):
    json_accept = {"HTTP_ACCEPT": "application/json"}

    followed = bob_client.post("/u/alice/follow/", **json_accept)
    body = json.loads(followed.content)

    assert followed.status_code == 200 and body["ok"]
    assert body["control"]["count_html"] == "<strong>1</strong> follower"
    assert r.zscore(keys.followers(alice.id), bob.id) is not None
    body = json.loads(bob_client.post("/u/alice/unfollow/", **json_accept).content)
    assert body["control"]["count_html"] == "<strong>0</strong> followers"
    assert r.zcard(keys.followers(alice.id)) == 0


def test_a_follow_without_the_script_still_redirects_with_no_count(repo, alice, bob, bob_client):
    followed = bob_client.post("/u/alice/follow/")

    assert followed.status_code == 302 and followed["Location"] == "/u/alice/"


# --- One's own profile: Edit profile ----------------------------------------------------


def test_ones_own_profile_offers_edit_profile_and_others_do_not(repo, alice, bob, alice_client):
    own = alice_client.get("/u/alice/").content.decode()
    other = alice_client.get("/u/bob/").content.decode()

    actions = section(own, 'class="profile-actions"', "</section>")
    assert 'href="/settings/profile/"' in actions and "Edit profile" in actions
    assert "Edit profile" not in other


# --- The home page's card: avatar and name ----------------------------------------------


def test_the_home_sidebar_shows_the_readers_avatar_and_display_name(repo, alice, alice_client):
    repo.profiles.update(alice.id, display_name="Alice Liddell")

    aside = section(alice_client.get("/").content.decode(), '<aside class="card stats">', "<dl>")

    assert 'class="avatar avatar-small avatar-initial' in aside and 'data-initial="A"' in aside
    assert "Alice Liddell" in aside and "@alice" in aside
