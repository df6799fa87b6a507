"""What a web process remembers between requests never hides a change made in Redis.

Run on real Redis and on fakeredis (any_repo): the repository remembers posts' unchanging
parts and secrets' user ids (social/repository/cache.py), and every read still checks them.
"""

from __future__ import annotations

from django.contrib.auth.hashers import make_password

from social import keys
from social.repository.cache import BoundedCache, KnownPost
from social.repository.moderation import SYSTEM_ACTOR

T0 = 1_700_000_000


def people(repo):
    alice = repo.create_user("alice", make_password("pw-alice-123"))
    bob = repo.create_user("bob", make_password("pw-bob-123"))
    repo.follow(alice.id, bob.id, at=T0)
    return alice, bob


def test_a_feed_remembers_the_posts_it_showed(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.create_post(bob.id, "hello", at=T0 + 1)

    any_repo.home_page(alice.id)

    assert any_repo.cache.posts.get(post_id) == KnownPost(bob.id, T0 + 1, "hello", "bob")


def test_a_remembered_post_deleted_by_staff_disappears_at_once(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.create_post(bob.id, "spam", at=T0 + 1)
    assert [p.id for p in any_repo.home_page(alice.id).feed.items] == [post_id]

    any_repo.delete_posts([post_id], SYSTEM_ACTOR, "spam")

    assert any_repo.home_page(alice.id).feed.items == []
    assert any_repo.get_post(post_id, include_hidden=True).is_deleted
    assert any_repo.r.hget(keys.post(post_id), "deleted") == b"1"


def test_a_remembered_author_suspended_by_staff_disappears_at_once(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.create_post(bob.id, "hi", at=T0 + 1)
    assert len(any_repo.timeline_page().posts.items) == 1

    any_repo.suspend(bob.id, SYSTEM_ACTOR, "abuse")

    assert any_repo.timeline_page().posts.items == []
    assert any_repo.get_post(post_id, include_hidden=True).author_suspended


def test_a_post_that_no_longer_matches_what_was_remembered_is_read_afresh(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.create_post(bob.id, "old text", at=T0 + 1)
    any_repo.home_page(alice.id)
    # The database was replaced under the process: same id, another author and time.
    any_repo.r.hset(keys.post(post_id), mapping={"user_id": alice.id, "time": T0 + 9})
    any_repo.r.hset(keys.post(post_id), "body", "new text")

    post = any_repo.get_post(post_id)

    assert (post.author_name, post.time, post.body) == ("alice", T0 + 9, "new text")
    assert any_repo.cache.posts.get(post_id) == KnownPost(alice.id, T0 + 9, "new text", "alice")


def test_a_remembered_secret_stops_working_once_rotated(any_repo):
    alice, _ = people(any_repo)
    old = any_repo.record_login(alice.id)
    assert any_repo.user_for_secret(old).id == alice.id
    assert any_repo.cache.secrets.get(old) == alice.id

    new = any_repo.rotate_secret(alice.id)

    assert any_repo.user_for_secret(old) is None
    assert any_repo.cache.secrets.get(old) is None
    assert any_repo.user_for_secret(new).id == alice.id
    assert any_repo.r.hget(keys.auths(), old) is None


def test_a_remembered_secret_of_a_suspended_user_lets_nobody_in(any_repo):
    alice, _ = people(any_repo)
    secret = any_repo.record_login(alice.id)
    any_repo.user_for_secret(secret)

    any_repo.suspend(alice.id, SYSTEM_ACTOR, "abuse")

    assert any_repo.user_for_secret(secret) is None


def test_the_bounded_cache_lets_its_oldest_entries_go():
    cache: BoundedCache[int, str] = BoundedCache(3)
    for i in range(5):
        cache.put(i, str(i))

    assert len(cache) == 3
    assert [cache.get(i) for i in range(5)] == [None, None, "2", "3", "4"]


def test_a_cache_of_size_zero_remembers_nothing():
    cache: BoundedCache[int, str] = BoundedCache(0)
    cache.put(1, "one")

    assert cache.get(1) is None and len(cache) == 0
