"""Notifications (issue 17, part 4; issue 27, rough edge 3): follows, likes, reposts
(grouped per post; follows per day), replies and mentions (each alone, the reply or
mention itself) of the reader's posts, with one unread count and the unread marked until
seen (the `notifications` marker, shared with apps); none across a block or a mute."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from social import keys
from social.repository import Viewer
from social.repository.live.notification_events import event_from
from tests.conftest import login, make_user

T0 = 1_700_000_000
NOW = int(time.time())  # the pages show none older than keys.NOTIFICATIONS_DAYS


@pytest.fixture
def people(repo):
    return {name: make_user(repo, name) for name in ("alice", "bob", "carol", "dan", "erin")}


def groups(repo, user, at: float = T0 + 5000) -> list[tuple[str, int | None, list[str], int]]:
    page = repo.notifications.page(Viewer.of(repo.users.get_user(user.id)), at=at)
    return [
        (g.kind, g.post.id if g.post else None, [a.username for a in g.actors], g.others)
        for g in page.items
    ]


def test_likes_replies_mentions_and_follows_are_told_grouped_newest_first(repo, r, people):
    alice = people["alice"]
    post = repo.posts.create_post(alice.id, "my post", at=T0)
    for name in ("bob", "carol", "dan", "erin"):
        repo.likes.like(people[name].id, post, at=T0 + 1)
    reply = repo.posts.create_post(people["bob"].id, "nice", reply_to=post, at=T0 + 2)
    mention = repo.posts.create_post(people["carol"].id, "hi @alice", at=T0 + 3)
    repo.graph.follow(people["dan"].id, alice.id, at=T0 + 4)
    repo.likes.like(alice.id, post)  # one's own like tells no one

    assert r.hget(keys.user(alice.id), "unread_notifications") == "7"
    assert groups(repo, alice) == [
        ("follow", None, ["dan"], 0),
        ("mention", mention, ["carol"], 0),
        ("reply", reply, ["bob"], 0),  # the reply itself, not alice's post
        ("like", post, ["erin", "dan", "carol"], 1),
    ]
    assert r.hget(keys.user(alice.id), "unread_notifications") == "0"  # seen
    newest = r.lindex(keys.notifications(alice.id), 0)
    assert r.hget(keys.markers(alice.id), "notifications") == str(event_from(newest).id)
    assert r.hget(keys.markers(alice.id), "notifications:version") == "1"


def test_none_from_blocked_or_muted_accounts_or_about_filtered_posts(repo, people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    post = repo.posts.create_post(alice.id, "about spoilers", at=T0)
    repo.likes.like(bob.id, post)
    repo.likes.like(carol.id, post)
    repo.relations.mute(alice.id, carol.id)

    assert groups(repo, alice) == [("like", post, ["bob"], 0)]
    repo.relations.block(alice.id, bob.id)
    assert groups(repo, alice) == []
    repo.relations.unmute(alice.id, carol.id)
    repo.filters.add(alice.id, "spoilers", "never")
    assert groups(repo, alice) == []


def test_the_page_says_it_and_the_navigation_counts_it(repo, people):
    alice = people["alice"]
    post = repo.posts.create_post(alice.id, "my post", at=T0)
    repo.likes.like(people["bob"].id, post)
    client = login(Client(), repo, alice)

    home = client.get("/").content.decode()
    page = client.get("/notifications/").content.decode()
    after = client.get("/").content.decode()

    assert 'href="/notifications/"' in home and 'class="count-badge">1<' in home
    assert '<a class="actor" href="/u/bob/">@bob</a> liked your post.' in page
    assert 'class="count-badge">1<' not in after


def test_old_or_foreign_entries_are_skipped_and_the_list_is_bounded(repo, r, people):
    alice = people["alice"]
    r.lpush(keys.notifications(alice.id), f"follow|{people['bob'].id}||{T0 - 91 * 86400}")
    r.lpush(keys.notifications(alice.id), "junk")
    post = repo.posts.create_post(alice.id, "ask me", at=T0)
    for i in range(keys.NOTIFICATIONS_CAP + 5):  # replies: each one told (test_likes.py)
        repo.posts.create_post(people["carol"].id, "again", reply_to=post, at=T0 + i)

    assert r.llen(keys.notifications(alice.id)) == keys.NOTIFICATIONS_CAP
    shown = groups(repo, alice, at=T0 + keys.NOTIFICATIONS_CAP + 5)
    assert [g[0] for g in shown] == ["reply"] * 20  # a page: each reply alone, no junk
    assert shown[0][1] == int(r.lindex(keys.own_posts(people["carol"].id), 0))


def test_notifications_need_a_login(client):
    assert client.get("/notifications/").status_code == 302


def test_a_reply_is_told_as_a_reply_with_its_own_words_even_when_it_names_the_reader(
    repo, r, people
):
    alice, bob = people["alice"], people["bob"]
    post = repo.posts.create_post(alice.id, "Counters belong in hashes", at=NOW)
    plain = repo.posts.create_post(bob.id, "Sorted sets too", reply_to=post, at=NOW + 1)
    named = repo.posts.create_post(bob.id, "@alice and lists", reply_to=post, at=NOW + 2)

    told = [item.split("|")[:3] for item in r.lrange(keys.notifications(alice.id), 0, -1)]
    assert told == [["reply", str(bob.id), str(named)], ["reply", str(bob.id), str(plain)]]
    assert r.zscore(keys.mentions(alice.id), named) is not None  # still in her mentions
    page = login(Client(), repo, alice).get("/notifications/").content.decode()

    assert page.count("@bob</a> replied to your post.") == 2
    assert "mentioned you" not in page
    assert f'id="post-{named}"' in page and f'id="post-{plain}"' in page  # the replies' cards
    assert "Sorted sets too" in page and "@alice</a> and lists" in page
    assert "Counters belong in hashes" not in page


def test_a_reply_stored_as_a_mention_before_is_shown_as_a_reply(repo, r, people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    post = repo.posts.create_post(alice.id, "Counters belong in hashes", at=NOW)
    reply = repo.posts.create_post(bob.id, "@alice yes", reply_to=post, at=NOW + 1)
    aside = repo.posts.create_post(carol.id, "@alice look", reply_to=reply, at=NOW + 2)
    r.delete(keys.notifications(alice.id))
    for actor, post_id, ts in ((bob.id, reply, NOW + 1), (carol.id, aside, NOW + 2)):
        r.lpush(keys.notifications(alice.id), f"mention|{actor}|{post_id}|{ts}")

    assert groups(repo, alice, at=NOW + 10) == [
        ("mention", aside, ["carol"], 0),
        ("reply", reply, ["bob"], 0),
    ]


def test_unread_ones_are_marked_until_seen_and_the_marker_says_where_reading_stopped(
    repo, r, people
):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    post = repo.posts.create_post(alice.id, "my post", at=NOW)
    repo.likes.like(bob.id, post, at=NOW + 1)
    client = login(Client(), repo, alice)
    first = client.get("/notifications/").content.decode()
    repo.graph.follow(carol.id, alice.id, at=NOW + 2)
    assert r.hget(keys.user(alice.id), "unread_notifications") == "1"

    second = client.get("/notifications/").content.decode()
    third = client.get("/notifications/").content.decode()

    assert first.count('<span class="new-badge">New</span>') == 1
    assert "1 new since you last looked." in first
    assert 'class="card notification like unread"' in first
    assert 'class="card notification follow unread"' in second
    assert 'class="card notification like"' in second  # seen the first time
    assert second.count('<span class="new-badge">New</span>') == 1
    assert "new-badge" not in third and "since you last looked" not in third
    assert 'class="card notification follow"' in third
    newest = event_from(r.lindex(keys.notifications(alice.id), 0))
    assert r.hget(keys.markers(alice.id), "notifications") == str(newest.id)
    assert r.hget(keys.markers(alice.id), "notifications:version") == "2"  # not on the third
    assert r.hget(keys.user(alice.id), "unread_notifications") == "0"


def test_before_any_marker_the_unread_count_says_which_are_new(repo, r, people):
    alice, bob = people["alice"], people["bob"]
    post = repo.posts.create_post(alice.id, "my post", at=NOW)
    repo.likes.like(bob.id, post, at=NOW + 1)
    repo.graph.follow(bob.id, alice.id, at=NOW + 2)
    r.hset(keys.user(alice.id), "unread_notifications", 1)  # the like was seen before
    assert not r.exists(keys.markers(alice.id))

    page = login(Client(), repo, alice).get("/notifications/").content.decode()

    assert 'class="card notification follow unread"' in page
    assert 'class="card notification like"' in page


def test_one_count_in_the_navigation_for_notifications_mentions_included(repo, r, people):
    alice, bob = people["alice"], people["bob"]
    repo.posts.create_post(bob.id, "hi @alice", at=NOW)
    client = login(Client(), repo, alice)

    home = client.get("/").content.decode()
    mentions = client.get("/mentions/").content.decode()
    seen = client.get("/notifications/").content.decode()
    after = client.get("/mentions/").content.decode()

    assert home.count('class="count-badge"') == 1
    nav = home[home.index("<header") : home.index("</header>")]
    assert 'title="1 new notification"' in nav and 'href="/mentions/"' not in nav
    assert "count-badge" not in mentions  # its tab shows the mention: read (issue 37)
    assert '<a class="notes" href="/notifications/" aria-current="true"' in mentions  # section
    assert '<a href="/mentions/" aria-current="page">Mentions</a>' in mentions  # the tabs
    assert '<a href="/mentions/">Mentions</a>' in seen
    assert "count-badge" not in seen and "count-badge" not in after
    assert r.hget(keys.user(alice.id), "unread_notifications") == "0"
