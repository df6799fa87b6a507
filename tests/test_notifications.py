"""Notifications (issue 17, part 4): follows, likes, replies and mentions of the reader's
posts, grouped per post and kind, with an unread count; none across a block or a mute."""

from __future__ import annotations

import pytest
from django.test import Client

from social import keys
from social.repository import Viewer
from tests.conftest import login, make_user

T0 = 1_700_000_000


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
    repo.posts.create_post(people["bob"].id, "nice", reply_to=post, at=T0 + 2)
    mention = repo.posts.create_post(people["carol"].id, "hi @alice", at=T0 + 3)
    repo.graph.follow(people["dan"].id, alice.id, at=T0 + 4)
    repo.likes.like(alice.id, post)  # one's own like tells no one

    assert r.hget(keys.user(alice.id), "unread_notifications") == "7"
    assert groups(repo, alice) == [
        ("follow", None, ["dan"], 0),
        ("mention", mention, ["carol"], 0),
        ("reply", post, ["bob"], 0),
        ("like", post, ["erin", "dan", "carol"], 1),
    ]
    assert r.hget(keys.user(alice.id), "unread_notifications") == "0"  # seen


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
    assert '<a href="/u/bob/">@bob</a> liked your post.' in page
    assert 'class="count-badge">1<' not in after


def test_old_or_foreign_entries_are_skipped_and_the_list_is_bounded(repo, r, people):
    alice = people["alice"]
    r.lpush(keys.notifications(alice.id), f"follow|{people['bob'].id}||{T0 - 91 * 86400}")
    r.lpush(keys.notifications(alice.id), "junk")
    post = repo.posts.create_post(alice.id, "ask me", at=T0)
    for i in range(keys.NOTIFICATIONS_CAP + 5):  # replies: each one told (test_likes.py)
        repo.posts.create_post(people["carol"].id, "again", reply_to=post, at=T0 + i)

    assert r.llen(keys.notifications(alice.id)) == keys.NOTIFICATIONS_CAP
    assert [g[0] for g in groups(repo, alice)] == ["reply"]


def test_notifications_need_a_login(client):
    assert client.get("/notifications/").status_code == 302
