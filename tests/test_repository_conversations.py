"""Repository contract for conversations (replies, mentions, tags, likes, deleting one's
own post), on real Redis and fakeredis (`any_repo`)."""

from __future__ import annotations

import pytest

from social import keys
from social.repository import (
    ANONYMOUS,
    STAFF,
    NotAllowed,
    PostNotFound,
    Repository,
    UserNotFound,
    Viewer,
)
from tests.conftest import make_staff

T0 = 1_700_000_000  # 2023-11-14 22:13:20 UTC


def users(repo: Repository, *names: str) -> list[int]:
    return [repo.users.create_user(name, "h", at=T0).id for name in names]


def ids_of(posts) -> list[int]:
    return [p.id for p in posts]


# --- Replies ---------------------------------------------------------------------------------


def test_a_reply_records_its_parent_and_joins_the_parents_replies(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    parent = any_repo.posts.create_post(alice, "question?", at=T0)

    reply = any_repo.posts.create_post(bob, "answer!", at=T0 + 1, reply_to=parent)

    stored = any_r.hgetall(keys.post(reply))
    assert stored["reply_to"] == str(parent) and stored["reply_to_user"] == str(alice)
    assert stored["reply_to_name"] == "alice" and stored["ancestors"] == str(parent)
    assert any_r.lrange(keys.replies(parent), 0, -1) == [str(reply)]
    post = any_repo.pages.post(reply, ANONYMOUS)[0]
    assert (post.reply_to, post.reply_to_name) == (parent, "alice")
    # A reply is a post: the timeline and the author's list have it.
    assert any_r.lrange(keys.timeline(), 0, 0) == [str(reply)]


def test_a_conversation_shows_a_bounded_chain_above_and_pages_replies_below(any_repo):
    alice, bob = users(any_repo, "alice", "bob")
    chain = [any_repo.posts.create_post(alice, "root", at=T0)]
    for i in range(7):
        chain.append(any_repo.posts.create_post(bob, f"reply {i}", at=T0 + i, reply_to=chain[-1]))
    answers = [
        any_repo.posts.create_post(alice, f"answer {i}", at=T0 + 10 + i, reply_to=chain[-1])
        for i in range(3)
    ]

    talk = any_repo.pages.conversation(chain[-1], Viewer(alice), number=1, per_page=2)

    assert talk.post.id == chain[-1]
    assert ids_of(talk.ancestors) == chain[-6:-1]  # the five nearest, oldest first
    assert ids_of(talk.replies.items) == answers[:2] and talk.replies.has_next
    assert talk.counts[chain[-1]].replies == 3
    rest = any_repo.pages.conversation(chain[-1], Viewer(alice), number=2, per_page=2)
    assert ids_of(rest.replies.items) == answers[2:] and not rest.replies.has_next


def test_replying_to_a_missing_or_deleted_post_is_refused(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    gone = any_repo.posts.create_post(alice, "soon gone", at=T0)
    any_repo.posts.delete_own_post(alice, gone, at=T0 + 1)

    with pytest.raises(PostNotFound):
        any_repo.posts.create_post(bob, "hello?", reply_to=gone)
    with pytest.raises(PostNotFound):
        any_repo.posts.create_post(bob, "hello?", reply_to=999)

    assert any_r.llen(keys.own_posts(bob)) == 0
    assert any_r.exists(keys.replies(gone)) == 0


def test_hidden_replies_drop_out_of_the_conversation(any_repo):
    alice, bob, carol = users(any_repo, "alice", "bob", "carol")
    parent = any_repo.posts.create_post(alice, "hi", at=T0)
    kept = any_repo.posts.create_post(bob, "kept", at=T0 + 1, reply_to=parent)
    any_repo.posts.create_post(carol, "spam", at=T0 + 2, reply_to=parent)
    any_repo.moderation.suspend(carol, make_staff(any_repo, "sam"), "spam")

    talk = any_repo.pages.conversation(parent, ANONYMOUS)

    assert ids_of(talk.replies.items) == [kept]


# --- Mentions ---------------------------------------------------------------------------------


def test_a_mention_is_resolved_once_and_filed_for_the_mentioned(any_repo, any_r):
    alice, bob, carol = users(any_repo, "alice", "bob", "carol")

    post_id = any_repo.posts.create_post(
        alice, "hi @BOB and @carol, not @nobody nor @alice, mail a@bob.com", at=T0
    )

    # Every existing name links (the author's own too); unknown ones stay text.
    assert any_r.hget(keys.post(post_id), "mentions") == f"{bob}:BOB {carol}:carol {alice}:alice"
    assert any_repo.pages.post(post_id, ANONYMOUS)[0].mentions == (
        ("BOB", bob),
        ("carol", carol),
        ("alice", alice),
    )
    assert any_r.zrange(keys.mentions(bob), 0, -1) == [str(post_id)]
    assert any_r.zrange(keys.mentions(carol), 0, -1) == [str(post_id)]
    assert any_r.exists(keys.mentions(alice)) == 0  # naming yourself is no mention
    assert any_r.hget(keys.user(bob), "unread_mentions") == "1"


def test_a_legacy_exact_name_wins_over_its_case_twin(any_repo, any_r):
    (bob,) = users(any_repo, "bob")
    any_r.hset(keys.user(50), mapping={"username": "Bob", "password": "x", "auth": "s"})
    any_r.hset(keys.users(), "Bob", 50)
    (alice,) = users(any_repo, "alice")

    post_id = any_repo.posts.create_post(alice, "hey @Bob and @bob", at=T0)

    assert any_repo.pages.post(post_id, ANONYMOUS)[0].mentions == (("Bob", 50),)


def test_the_mentions_page_is_newest_first_and_clears_the_unread_count(any_repo, any_r):
    alice, bob, carol = users(any_repo, "alice", "bob", "carol")
    first = any_repo.posts.create_post(alice, "@bob one", at=T0)
    second = any_repo.posts.create_post(carol, "@bob two", at=T0 + 1)
    spam = any_repo.posts.create_post(carol, "@bob spam", at=T0 + 2)
    any_repo.posts.delete_own_post(carol, spam, at=T0 + 3)
    assert any_r.hget(keys.user(bob), "unread_mentions") == "3"

    page = any_repo.pages.mentions(bob)

    assert ids_of(page.items) == [second, first]
    assert any_r.zrange(keys.mentions(bob), 0, -1) == [str(first), str(second)]
    assert any_r.hget(keys.user(bob), "unread_mentions") == "0"
    any_repo.moderation.suspend(carol, make_staff(any_repo, "sam"), "spam")
    assert ids_of(any_repo.pages.mentions(bob).items) == [first]


def test_mentions_are_capped(any_repo, any_r, monkeypatch):
    monkeypatch.setattr(keys, "MENTIONS_CAP", 3)
    alice, bob = users(any_repo, "alice", "bob")
    posted = [any_repo.posts.create_post(alice, f"@bob {i}", at=T0 + i) for i in range(5)]

    assert any_r.zrange(keys.mentions(bob), 0, -1) == [str(p) for p in posted[2:]]


# --- Hashtags ---------------------------------------------------------------------------------


def test_tags_are_normalised_filed_and_counted_for_trending(any_repo, any_r):
    (alice,) = users(any_repo, "alice")

    first = any_repo.posts.create_post(alice, "#Redis is #fast, #redis! #日本語 #1 a#b", at=T0)
    second = any_repo.posts.create_post(alice, "more #REDIS", at=T0 + 60)

    assert any_r.hget(keys.post(first), "tags") == "redis fast 日本語"
    assert any_r.lrange(keys.tag_posts("redis"), 0, -1) == [str(second), str(first)]
    assert any_r.lrange(keys.tag_posts("日本語"), 0, -1) == [str(first)]
    assert any_r.exists(keys.tag_posts("1"), keys.tag_posts("b")) == 0
    hour = keys.trending_hour("2023111422")
    assert any_r.zscore(hour, "redis") == 2 and any_r.zscore(hour, "fast") == 1
    assert 0 < any_r.ttl(hour) <= 25 * 3600
    trending = any_repo.trending.trending(at=T0 + 120)
    assert trending[0] == ("redis", 2) and sorted(trending[1:]) == [("fast", 1), ("日本語", 1)]
    assert ids_of(any_repo.pages.tag("Redis", ANONYMOUS).items) == [second, first]


def test_trending_forgets_tags_older_than_a_day(any_repo):
    (alice,) = users(any_repo, "alice")
    any_repo.posts.create_post(alice, "#old", at=T0)
    any_repo.posts.create_post(alice, "#new", at=T0 + 86400)

    assert any_repo.trending.trending(at=T0 + 86400 + 60) == (("new", 1),)


# --- Likes -------------------------------------------------------------------------------------


def test_likes_are_idempotent_counted_and_listed(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    one = any_repo.posts.create_post(alice, "one", at=T0)
    two = any_repo.posts.create_post(alice, "two", at=T0 + 1)

    assert any_repo.likes.like(bob, one, at=T0 + 5)
    assert not any_repo.likes.like(bob, one, at=T0 + 6)
    assert any_repo.likes.like(bob, two, at=T0 + 7)

    assert any_r.zrange(keys.likes(one), 0, -1, withscores=True) == [(str(bob), T0 + 5)]
    assert any_r.zrange(keys.user_likes(bob), 0, -1) == [str(one), str(two)]
    _, counts = any_repo.pages.post(one, Viewer(bob))
    assert counts.likes == 1 and counts.liked
    assert any_r.hget(keys.post(one), "likes") == "1"  # the counter kept with the post
    assert not any_repo.pages.post(one, Viewer(alice))[1].liked
    owner, page = any_repo.pages.likes(bob, ANONYMOUS)
    assert owner.username == "bob" and ids_of(page.items) == [two, one]
    with pytest.raises(UserNotFound):
        any_repo.pages.likes(999, ANONYMOUS)
    assert any_repo.likes.unlike(bob, one)
    assert not any_repo.likes.unlike(bob, one)
    assert any_r.exists(keys.likes(one)) == 0
    assert any_r.hget(keys.post(one), "likes") == "0"
    assert any_r.zrange(keys.user_likes(bob), 0, -1) == [str(two)]


def test_a_deleted_post_cannot_be_liked(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    post_id = any_repo.posts.create_post(alice, "bye", at=T0)
    any_repo.posts.delete_own_post(alice, post_id)

    with pytest.raises(PostNotFound):
        any_repo.likes.like(bob, post_id)
    assert any_r.exists(keys.likes(post_id), keys.user_likes(bob)) == 0


def test_feeds_carry_reply_and_like_counts(any_repo):
    alice, bob = users(any_repo, "alice", "bob")
    any_repo.graph.follow(bob, alice, at=T0)
    post_id = any_repo.posts.create_post(alice, "count me", at=T0)
    any_repo.posts.create_post(bob, "a reply", at=T0 + 1, reply_to=post_id)
    any_repo.likes.like(bob, post_id)

    home = any_repo.pages.home(bob).feed
    timeline = any_repo.pages.timeline(Viewer(bob)).posts
    profile = any_repo.pages.profile(alice, ANONYMOUS).posts

    for page in (home, timeline, profile):
        assert page.counts[post_id].replies == 1 and page.counts[post_id].likes == 1
    assert home.counts[post_id].liked and not profile.counts[post_id].liked


# --- Deleting one's own post -------------------------------------------------------------------


def test_deleting_your_own_post_takes_it_out_everywhere(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    any_repo.graph.follow(bob, alice, at=T0)
    kept = any_repo.posts.create_post(alice, "kept #redis", at=T0)
    gone = any_repo.posts.create_post(alice, "oops #redis @bob", at=T0 + 1)
    version = any_r.get(keys.visibility_version())

    any_repo.posts.delete_own_post(alice, gone, at=T0 + 2)

    stored = any_r.hgetall(keys.post(gone))
    assert stored["deleted"] == "1" and stored["deleted_by"] == str(alice)
    assert stored["body"] == "oops #redis @bob"  # kept for the record, shown to no one
    assert any_r.lrange(keys.timeline(), 0, -1) == [str(kept)]
    assert any_r.lrange(keys.tag_posts("redis"), 0, -1) == [str(kept)]
    assert any_r.lrange(keys.own_posts(alice), 0, -1) == [str(kept)]
    assert any_repo.pages.profile(alice, ANONYMOUS).counts.posts == 1  # the profile says 1 post
    assert any_r.zcard(keys.mentions(bob)) == 0
    assert any_r.get(keys.visibility_version()) != version
    assert ids_of(any_repo.pages.home(bob).feed.items) == [kept]
    assert ids_of(any_repo.pages.home(alice).feed.items) == [kept]
    assert any_repo.pages.post(gone, STAFF)[0].deleted_by_author
    with pytest.raises(PostNotFound):
        any_repo.posts.delete_own_post(alice, gone)


def test_nobody_deletes_someone_elses_post(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    post_id = any_repo.posts.create_post(alice, "mine", at=T0)

    with pytest.raises(NotAllowed):
        any_repo.posts.delete_own_post(bob, post_id)

    assert "deleted" not in any_r.hgetall(keys.post(post_id))
