"""What a web process remembers between requests never hides a change made in Redis.

Run on real Redis and on fakeredis (any_repo): the repository remembers posts' unchanging
parts and secrets' user ids (social/repository/cache.py), and every read still checks them.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.hashers import make_password

from social import keys
from social.repository import ANONYMOUS, STAFF, Repository, UserNotFound, Viewer
from social.repository.accounts import profile_changes
from social.repository.cache import (
    CHANGES_KEPT,
    BoundedCache,
    ProcessCache,
    RememberedPost,
    RememberedPosts,
)
from social.repository.models import Post, User
from social.repository.moderation.actions import SYSTEM_ACTOR

T0 = 1_700_000_000


def people(repo):
    alice = repo.users.create_user("alice", make_password("pw-alice-123"))
    bob = repo.users.create_user("bob", make_password("pw-bob-123"))
    repo.graph.follow(alice.id, bob.id, at=T0)
    return alice, bob


def version(repo) -> int:
    return int(repo.r.get(keys.visibility_version()))


def test_a_database_gets_a_random_visibility_version_with_its_first_post(any_repo):
    _, bob = people(any_repo)
    assert any_repo.r.get(keys.visibility_version()) is None

    any_repo.posts.create_post(bob.id, "first", at=T0 + 1)
    first = version(any_repo)
    any_repo.posts.create_post(bob.id, "second", at=T0 + 2)

    assert version(any_repo) == first  # set once, never reset by later posts


def test_a_database_replaced_under_the_process_is_read_afresh(any_repo):
    alice, bob = people(any_repo)
    any_repo.posts.create_post(bob.id, "from the old database", at=T0 + 1)
    assert [p.body for p in any_repo.pages.home(alice.id).feed.items] == ["from the old database"]

    any_repo.r.flushall()
    alice, bob = people(any_repo)  # the same ids and names again
    any_repo.posts.create_post(bob.id, "from the new one", at=T0 + 2)

    assert [p.body for p in any_repo.pages.home(alice.id).feed.items] == ["from the new one"]


def test_posts_of_a_database_without_a_version_are_checked_every_time(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "written by the reference", at=T0 + 1)
    any_repo.r.delete(keys.visibility_version())  # as the reference Retwis leaves it
    any_repo.pages.home(alice.id)
    any_repo.r.hset(keys.post(post_id), "deleted", "1")  # by hand: no version moves

    assert any_repo.pages.home(alice.id).feed.items == []


def test_a_feed_remembers_the_posts_it_showed(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "hello", at=T0 + 1)

    any_repo.pages.home(alice.id)

    remembered = any_repo.cache.posts.get(post_id)
    assert (remembered.post.author_name, remembered.post.body) == ("bob", "hello")
    assert remembered.version == any_repo.r.get(keys.visibility_version())


def test_a_remembered_post_deleted_by_staff_disappears_at_once(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "spam", at=T0 + 1)
    assert [p.id for p in any_repo.pages.home(alice.id).feed.items] == [post_id]

    any_repo.moderation.delete_posts([post_id], SYSTEM_ACTOR, "spam")

    assert any_repo.pages.home(alice.id).feed.items == []
    assert any_repo.pages.post(post_id, STAFF)[0].is_deleted
    assert any_repo.r.hget(keys.post(post_id), "deleted") == b"1"


def test_a_remembered_author_suspended_by_staff_disappears_at_once(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "hi", at=T0 + 1)
    assert len(any_repo.pages.timeline().posts.items) == 1

    any_repo.moderation.suspend(bob.id, SYSTEM_ACTOR, "abuse")

    assert any_repo.pages.timeline().posts.items == []
    assert any_repo.pages.post(post_id, STAFF)[0].author_suspended


def test_a_post_that_no_longer_matches_what_was_remembered_is_read_afresh(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "old text", at=T0 + 1)
    any_repo.pages.home(alice.id)
    # The database was replaced under the process: same id, another author and time.
    any_repo.r.hset(keys.post(post_id), mapping={"user_id": alice.id, "time": T0 + 9})
    any_repo.r.hset(keys.post(post_id), "body", "new text")

    post = any_repo.pages.post(post_id, ANONYMOUS)[0]

    assert (post.author_name, post.time, post.body) == ("alice", T0 + 9, "new text")
    assert any_repo.cache.posts.get(post_id).post == post


def test_a_remembered_secret_stops_working_once_rotated(any_repo):
    alice, _ = people(any_repo)
    old = any_repo.users.record_login(alice.id)
    assert any_repo.users.user_for_secret(old).id == alice.id
    assert any_repo.cache.secrets.get(old).id == alice.id

    new = any_repo.users.rotate_secret(alice.id)

    assert any_repo.users.user_for_secret(old) is None
    assert any_repo.cache.secrets.get(old) is None
    assert any_repo.users.user_for_secret(new).id == alice.id
    assert any_repo.r.hget(keys.auths(), old) is None


def test_a_remembered_secret_of_a_suspended_user_lets_nobody_in(any_repo):
    alice, _ = people(any_repo)
    secret = any_repo.users.record_login(alice.id)
    any_repo.users.user_for_secret(secret)

    any_repo.moderation.suspend(alice.id, SYSTEM_ACTOR, "abuse")

    assert any_repo.users.user_for_secret(secret) is None


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


def test_the_timeline_page_is_reused_while_nothing_changed(any_repo):
    _, bob = people(any_repo)
    any_repo.posts.create_post(bob.id, "one", at=T0 + 1)
    first = any_repo.pages.timeline()
    any_repo.likes.like(bob.id, 1)

    again = any_repo.pages.timeline(Viewer(bob.id))

    # The same posts (the remembered page's), with the counts read afresh.
    assert again.posts.items == first.posts.items
    assert again.posts.counts[1].likes == 1 and again.posts.counts[1].liked
    assert first.posts.counts[1].likes == 0


def test_a_new_post_makes_the_timeline_page_read_afresh(any_repo):
    _, bob = people(any_repo)
    any_repo.posts.create_post(bob.id, "one", at=T0 + 1)
    any_repo.pages.timeline()

    any_repo.posts.create_post(bob.id, "two", at=T0 + 2)

    assert [p.body for p in any_repo.pages.timeline().posts.items] == ["two", "one"]
    assert [p.body for p in any_repo.pages.latest(5).items] == ["two", "one"]


def test_a_suspension_makes_the_remembered_timeline_and_welcome_posts_read_afresh(any_repo):
    alice, bob = people(any_repo)
    any_repo.posts.create_post(bob.id, "bob's", at=T0 + 1)
    any_repo.posts.create_post(alice.id, "alice's", at=T0 + 2)
    assert len(any_repo.pages.timeline().posts.items) == 2
    assert len(any_repo.pages.latest(5).items) == 2
    assert len(any_repo.pages.home(alice.id).feed.items) == 2
    before = version(any_repo)

    any_repo.moderation.suspend(bob.id, SYSTEM_ACTOR, "abuse")

    assert [p.body for p in any_repo.pages.timeline().posts.items] == ["alice's"]
    assert any_repo.pages.timeline().latest_users == ("alice",)
    assert [p.body for p in any_repo.pages.latest(5).items] == ["alice's"]
    assert [p.body for p in any_repo.pages.home(alice.id).feed.items] == ["alice's"]
    assert version(any_repo) == before + 1

    any_repo.moderation.unsuspend(bob.id, SYSTEM_ACTOR)

    assert len(any_repo.pages.timeline().posts.items) == 2
    assert len(any_repo.pages.home(alice.id).feed.items) == 2
    assert version(any_repo) == before + 2


def test_a_deletion_moves_the_visibility_version(any_repo):
    _, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "spam", at=T0 + 1)
    any_repo.pages.latest(5)
    before = version(any_repo)

    any_repo.moderation.delete_posts([post_id], SYSTEM_ACTOR, "spam")

    assert any_repo.pages.latest(5).items == []
    assert version(any_repo) == before + 1


def test_a_remembered_home_page_reads_its_counts_afresh_with_its_ids(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "one", at=T0 + 1)
    first = any_repo.pages.home(alice.id)
    any_repo.likes.like(alice.id, post_id)
    any_repo.posts.create_post(alice.id, "a reply", reply_to=post_id, at=T0 + 2)

    again = any_repo.pages.home(alice.id)

    assert first.feed.counts[post_id].likes == 0 and not first.feed.counts[post_id].liked
    assert [p.body for p in again.feed.items] == ["a reply", "one"]
    assert again.feed.counts[post_id].likes == 1 and again.feed.counts[post_id].liked
    assert again.feed.counts[post_id].replies == 1
    assert any_repo.r.zscore(keys.likes(post_id), alice.id) is not None


def test_a_home_page_that_lists_new_posts_reads_their_counts_not_the_last_pages(any_repo):
    alice, bob = people(any_repo)
    old = any_repo.posts.create_post(bob.id, "old", at=T0 + 1)
    any_repo.pages.home(alice.id, per_page=1)
    new = any_repo.posts.create_post(bob.id, "new", at=T0 + 2)
    any_repo.likes.like(bob.id, new)

    page = any_repo.pages.home(alice.id, per_page=1)

    assert [p.id for p in page.feed.items] == [new]
    assert set(page.feed.counts) == {new} and page.feed.counts[new].likes == 1
    assert old not in page.feed.counts


def test_the_remembered_timeline_reads_each_readers_own_likes(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "one", at=T0 + 1)
    any_repo.likes.like(bob.id, post_id)
    any_repo.pages.timeline(Viewer(bob.id))

    for_alice = any_repo.pages.timeline(Viewer(alice.id)).posts.counts[post_id]
    for_bob = any_repo.pages.timeline(Viewer(bob.id)).posts.counts[post_id]

    assert (for_alice.likes, for_alice.liked) == (1, False)
    assert (for_bob.likes, for_bob.liked) == (1, True)


def test_the_remembered_welcome_posts_read_their_counts_afresh(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "one", at=T0 + 1)
    assert any_repo.pages.latest(5).counts[post_id].likes == 0

    any_repo.likes.like(alice.id, post_id)
    page = any_repo.pages.latest(5)

    assert [p.body for p in page.items] == ["one"]
    assert page.counts[post_id].likes == 1 and not page.counts[post_id].liked


def test_a_profile_name_is_remembered_only_while_its_user_bears_it(any_repo):
    alice, bob = people(any_repo)
    assert any_repo.pages.profile_for_name("bob", Viewer.of(alice)).user.id == bob.id
    assert any_repo.cache.names.get("bob") == bob.id

    # The user hash no longer bears the name (an account replaced under the process).
    any_repo.r.hset(keys.user(bob.id), "username", "robert")
    any_repo.r.hset(keys.users(), "robert", bob.id)
    any_repo.r.hdel(keys.users(), "bob")
    any_repo.r.hdel(keys.usernames_lower(), "bob")

    with pytest.raises(UserNotFound):
        any_repo.pages.profile_for_name("bob", Viewer.of(alice))
    assert any_repo.cache.names.get("bob") is None


def test_a_name_typed_in_another_case_finds_the_user_but_is_not_remembered(any_repo):
    alice, bob = people(any_repo)

    assert any_repo.pages.profile_for_name("BOB", Viewer.of(alice)).user.id == bob.id
    assert any_repo.cache.names.get("BOB") is None


def test_one_repository_serves_every_request_until_its_settings_change(redis_url, settings):
    from social.repository import PROCESS_CACHE, get_repository

    first = get_repository()
    assert get_repository() is first and first.cache is PROCESS_CACHE

    settings.RETWIS_FANOUT_BATCH = 7
    rebuilt = get_repository()

    assert rebuilt is not first and rebuilt.posts.fanout_batch == 7
    assert rebuilt.cache is PROCESS_CACHE


def test_a_post_replaced_with_the_same_author_and_second_is_read_afresh(any_repo):
    """A database replaced under a running process (the browser tests' live server does
    this between tests) can hold a post with the same id, author and second: the text
    tells them apart once the version moves."""
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "old text", at=T0 + 1)
    any_repo.pages.post(post_id, ANONYMOUS)
    any_repo.r.hset(keys.post(post_id), "body", "another database's text")
    any_repo.r.incr(keys.visibility_version())

    post = any_repo.pages.post(post_id, ANONYMOUS)[0]

    assert post.body == "another database's text"


# --- Cards invalidated per author (issue 34, part 3: accounts/profile_changes.py) ---------


def another_process(repo) -> Repository:
    """A second web process on the same Redis: a repository with a cache of its own."""
    return Repository(repo.r, cache=ProcessCache())


def shown_names(posts) -> dict[str, str]:
    """{body: the author's display name as the card shows it}."""
    return {post.body: post.author_display for post in posts}


def test_a_name_changed_by_another_process_shows_on_every_page_the_version_unmoved(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "about #redis", at=T0 + 1)
    pages = {
        "timeline": lambda: any_repo.pages.timeline().posts.items,
        "welcome": lambda: any_repo.pages.latest(5).items,
        "home": lambda: any_repo.pages.home(alice.id).feed.items,
        "profile": lambda: any_repo.pages.profile(bob.id, Viewer(alice.id)).posts.items,
        "permalink": lambda: [any_repo.pages.conversation(post_id, Viewer(alice.id)).post],
        "tag": lambda: any_repo.pages.tag("redis", Viewer(alice.id)).items,
    }
    for read in pages.values():
        read()
        assert shown_names(read()) == {"about #redis": ""}  # remembered now
    before = version(any_repo)

    another_process(any_repo).profiles.update(bob.id, display_name="Bob Builder")

    for name, read in pages.items():
        assert shown_names(read()) == {"about #redis": "Bob Builder"}, name
    assert version(any_repo) == before


def test_another_authors_remembered_posts_are_used_as_they_were(any_repo):
    alice, bob = people(any_repo)
    alices = any_repo.posts.create_post(alice.id, "alice's", at=T0 + 1)
    bobs = any_repo.posts.create_post(bob.id, "bob's", at=T0 + 2)
    any_repo.pages.timeline()
    kept = any_repo.cache.posts.get(bobs)

    another_process(any_repo).profiles.update(alice.id, display_name="Alice")
    profile = any_repo.pages.profile(bob.id, Viewer(bob.id))  # shows bob's post alone

    assert [p.body for p in profile.posts.items] == ["bob's"]
    assert any_repo.cache.posts.get(bobs) is kept  # neither read again nor checked
    assert any_repo.cache.posts.get(alices).version is None  # checked when next listed
    assert shown_names(any_repo.pages.timeline().posts.items) == {"alice's": "Alice", "bob's": ""}
    assert any_repo.cache.posts.get(alices).version == any_repo.r.get(keys.visibility_version())


def test_an_avatar_removed_elsewhere_leaves_the_cards_at_once(any_repo):
    alice, bob = people(any_repo)
    any_repo.r.hset(keys.user(bob.id), "avatar", "0123456789abcdef")  # adopted earlier
    any_repo.posts.create_post(bob.id, "with a face", at=T0 + 1)
    home = any_repo.pages.home(alice.id).feed.items
    assert [p.author_avatar for p in home] == ["0123456789abcdef"]

    another_process(any_repo).profiles.update(bob.id, remove=["avatar"])

    assert [p.author_avatar for p in any_repo.pages.home(alice.id).feed.items] == [""]


def test_more_changes_at_once_than_a_page_reads_forget_every_post(any_repo, monkeypatch):
    monkeypatch.setattr(profile_changes, "READ_LIMIT", 3)
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "hello", at=T0 + 1)
    any_repo.pages.timeline()
    others = [any_repo.users.create_user(f"user{i}", "x").id for i in range(3)]
    elsewhere = another_process(any_repo)
    elsewhere.profiles.update(alice.id, display_name="first")
    any_repo.pages.timeline()  # taken in: one change, not bob's
    kept = any_repo.cache.posts.get(post_id)
    assert any_repo.pages.timeline().posts.items == [kept.post]
    assert any_repo.cache.posts.get(post_id) is kept

    for user_id in others:  # none of them on the page, but too many to read at once
        elsewhere.profiles.update(user_id, display_name="renamed")
    assert any_repo.pages.timeline().posts.items == [kept.post]

    assert any_repo.cache.posts.get(post_id) is not kept  # forgotten, read again


@pytest.mark.parametrize("restored", ["older", "empty"])
def test_a_log_that_went_back_forgets_every_post(any_repo, restored):
    alice, bob = people(any_repo)
    any_repo.posts.create_post(bob.id, "hello", at=T0 + 1)
    another_process(any_repo).profiles.update(bob.id, display_name="Bob")
    any_repo.pages.timeline()
    assert shown_names(any_repo.pages.timeline().posts.items) == {"hello": "Bob"}

    # As a database restored from an older copy: a number below the last taken in, or none.
    if restored == "older":
        any_repo.r.decr(keys.profile_newest())
    else:
        any_repo.r.delete(keys.profile_newest(), keys.profile_changes())
    any_repo.r.hset(keys.user(bob.id), "display_name", "Bob Restored")

    assert shown_names(any_repo.pages.timeline().posts.items) == {"hello": "Bob Restored"}
    newest = any_repo.r.get(keys.profile_newest())
    assert any_repo.cache.profile_log.seen == (None if newest is None else int(newest))


def test_a_process_reading_the_log_first_forgets_what_it_remembered_before(any_repo):
    alice, bob = people(any_repo)
    post_id = any_repo.posts.create_post(bob.id, "hello", at=T0 + 1)
    fresh = another_process(any_repo)
    fresh.reader.loader.load([post_id])  # remembered, not by a page: the log is unread
    any_repo.r.hset(keys.user(bob.id), "display_name", "Bob")  # by hand: nothing numbered
    any_repo.profiles.update(alice.id, display_name="Alice")  # the log holds a change

    fresh.pages.profile(alice.id, Viewer(alice.id))  # no post: the log is read all the same

    assert fresh.cache.profile_log.seen == int(any_repo.r.get(keys.profile_newest()))
    assert len(fresh.cache.posts) == 0
    assert shown_names(fresh.pages.timeline().posts.items) == {"hello": "Bob"}


def test_the_log_numbers_one_above_the_newest_and_keeps_the_newest_accounts(any_repo, monkeypatch):
    monkeypatch.setattr(profile_changes, "CAP", 3)
    users = [any_repo.users.create_user(f"user{i}", "x").id for i in range(5)]

    for user_id in [*users, users[0]]:
        any_repo.profiles.update(user_id, display_name="renamed")

    numbered = any_repo.r.zrange(keys.profile_changes(), 0, -1, withscores=True)
    members = [int(member) for member, _ in numbered]
    numbers = [int(score) for _, score in numbered]
    assert members == [users[3], users[4], users[0]]  # user 0 again, at its newest
    assert numbers == [numbers[0], numbers[0] + 1, numbers[0] + 2]


def test_a_bio_or_header_change_numbers_nothing(any_repo):
    _, bob = people(any_repo)

    any_repo.profiles.update(bob.id, note="a new bio")

    assert any_repo.r.zcard(keys.profile_changes()) == 0


def remembered(post_id: int, author_id: int, read_at: int) -> RememberedPost:
    return RememberedPost(Post(post_id, author_id, f"user{author_id}", T0, "x"), b"1", read_at)


def test_a_post_read_before_its_authors_change_was_taken_in_is_not_remembered():
    posts = RememberedPosts(10)
    read_at = posts.tick  # a load reads the authors...
    posts.authors_changed({1})  # ...another thread takes in author 1's change...

    posts.put(1, remembered(1, 1, read_at))  # ...the load remembers what it read
    posts.put(2, remembered(2, 2, read_at))

    assert posts.get(1) is None and posts.get(2) is not None
    for author in range(3, 3 + CHANGES_KEPT):  # more changes than kept in mind
        posts.authors_changed({author})
    posts.put(3, remembered(3, 2, read_at))
    assert posts.get(3) is None


def test_the_posts_cache_finds_each_authors_posts_through_evictions():
    posts = RememberedPosts(2)
    for post_id in (1, 2, 3):
        posts.put(post_id, remembered(post_id, 7, posts.tick))
    posts.put(4, remembered(4, 8, posts.tick))

    posts.authors_changed({7})

    assert posts.get(1) is None and posts.get(2) is None  # let go, oldest first
    assert posts.get(3).version is None and posts.get(4).version == b"1"
    posts.discard(3)
    posts.authors_changed({7})
    assert len(posts) == 1


def test_suggestions_naming_a_changed_author_are_forgotten():
    cache = ProcessCache()
    pool = (T0, (User(1, "one"), User(2, "two")))
    cache.suggestions = pool

    cache.authors_changed(frozenset({3}))
    kept = cache.suggestions
    cache.authors_changed(frozenset({2}))

    assert kept == pool and cache.suggestions is None
