"""Repository contract for the follow graph and profiles, on real Redis and fakeredis."""

from __future__ import annotations

import pytest

from social import keys
from social.repository import ANONYMOUS, CannotFollowSelf, Repository, UserNotFound, Viewer

T0 = 1_700_000_000


def users(repo: Repository, *names: str) -> list[int]:
    return [repo.users.create_user(name, "h", at=T0).id for name in names]


def ids(values: list[str]) -> list[int]:
    return [int(v) for v in values]


def test_it_links_both_sorted_sets_scored_by_the_follow_time(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")

    assert any_repo.graph.follow(alice, bob, at=T0 + 10) is True

    assert any_r.zrange(f"following:{alice}", 0, -1, withscores=True) == [(str(bob), T0 + 10)]
    assert any_r.zrange(f"followers:{bob}", 0, -1, withscores=True) == [(str(alice), T0 + 10)]
    assert not any_r.exists(f"following:{bob}", f"followers:{alice}")


def test_it_treats_following_twice_as_a_no_op(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    any_repo.posts.create_post(bob, "once", at=T0)
    any_repo.graph.follow(alice, bob, at=T0 + 10)

    assert any_repo.graph.follow(alice, bob, at=T0 + 20) is False

    assert any_r.zscore(f"following:{alice}", bob) == T0 + 10
    assert any_r.zscore(f"followers:{bob}", alice) == T0 + 10
    assert ids(any_r.lrange(f"posts:{alice}", 0, -1)) == [1]


def test_it_refuses_following_yourself(any_repo, any_r):
    (alice,) = users(any_repo, "alice")

    with pytest.raises(CannotFollowSelf):
        any_repo.graph.follow(alice, alice)

    assert not any_r.exists(f"following:{alice}", f"followers:{alice}")


def test_it_refuses_following_someone_who_does_not_exist(any_repo, any_r):
    (alice,) = users(any_repo, "alice")

    with pytest.raises(UserNotFound):
        any_repo.graph.follow(alice, 99)

    assert not any_r.exists(f"following:{alice}")
    assert not any_r.exists("followers:99")


def test_it_merges_the_followees_posts_into_the_feed_newest_first(any_repo, any_r):
    alice, bob, carol = users(any_repo, "alice", "bob", "carol")
    a1 = any_repo.posts.create_post(alice, "a1", at=T0 + 1)
    b1 = any_repo.posts.create_post(bob, "b1", at=T0 + 2)
    c1 = any_repo.posts.create_post(carol, "c1", at=T0 + 3)
    a2 = any_repo.posts.create_post(alice, "a2", at=T0 + 4)
    b2 = any_repo.posts.create_post(bob, "b2", at=T0 + 5)

    any_repo.graph.follow(alice, bob, at=T0 + 6)

    assert ids(any_r.lrange(f"posts:{alice}", 0, -1)) == [b2, a2, b1, a1]
    assert c1 not in ids(any_r.lrange(f"posts:{alice}", 0, -1))
    assert [p.body for p in any_repo.pages.home(alice).feed.items] == ["b2", "a2", "b1", "a1"]
    assert any_r.llen(f"posts:{bob}") == 2  # the followee's own feed is untouched


def test_it_keeps_a_merged_feed_within_the_cap(any_repo, any_r):
    capped = Repository(any_repo.r, home_feed_cap=10, timeline_cap=1000, fanout_batch=3)
    alice, bob = users(capped, "alice", "bob")
    for i in range(6):
        capped.posts.create_post(alice, f"a{i}", at=T0 + 2 * i)
        capped.posts.create_post(bob, f"b{i}", at=T0 + 2 * i + 1)

    capped.graph.follow(alice, bob, at=T0 + 100)

    assert ids(any_r.lrange(f"posts:{alice}", 0, -1)) == list(range(12, 2, -1))


def test_it_delivers_new_posts_after_a_follow(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    any_repo.graph.follow(alice, bob, at=T0)

    post_id = any_repo.posts.create_post(bob, "fresh", at=T0 + 1)

    assert ids(any_r.lrange(f"posts:{alice}", 0, -1)) == [post_id]


def test_it_drops_their_posts_from_the_feed_on_unfollow(any_repo, any_r):
    alice, bob, carol = users(any_repo, "alice", "bob", "carol")
    any_repo.graph.follow(alice, bob, at=T0)
    any_repo.graph.follow(alice, carol, at=T0)
    own = any_repo.posts.create_post(alice, "mine", at=T0 + 1)
    any_repo.posts.create_post(bob, "bob's", at=T0 + 2)
    kept = any_repo.posts.create_post(carol, "carol's", at=T0 + 3)

    assert any_repo.graph.unfollow(alice, bob) is True

    assert ids(any_r.lrange(f"posts:{alice}", 0, -1)) == [kept, own]
    assert not any_r.exists(f"followers:{bob}")
    assert any_r.zrange(f"following:{alice}", 0, -1) == [str(carol)]
    assert any_r.llen(f"posts:{bob}") == 1


def test_it_treats_unfollowing_a_stranger_as_a_no_op(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    any_repo.posts.create_post(alice, "mine", at=T0)

    assert any_repo.graph.unfollow(alice, bob) is False

    assert any_r.lrange(f"posts:{alice}", 0, -1) == ["1"]


def test_it_retries_a_feed_rewrite_when_a_post_lands_meanwhile(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    any_repo.posts.create_post(alice, "first", at=T0)
    calls = []

    def change(feed: list[int]) -> list[int]:
        if not calls:  # a fan-out lands between our read and our write
            any_r.lpush(f"posts:{alice}", 77)
        calls.append(list(feed))
        return feed

    any_repo.graph._rewrite_feed(alice, change)

    assert calls == [[1], [77, 1]]
    assert ids(any_r.lrange(f"posts:{alice}", 0, -1)) == [77, 1]


def test_it_counts_followers_following_and_own_posts(any_repo):
    alice, bob, carol = users(any_repo, "alice", "bob", "carol")
    any_repo.graph.follow(bob, alice, at=T0)
    any_repo.graph.follow(carol, alice, at=T0)
    any_repo.graph.follow(alice, bob, at=T0)
    any_repo.posts.create_post(alice, "one", at=T0)
    any_repo.posts.create_post(bob, "not alice's", at=T0)

    counts = any_repo.pages.home(alice).counts

    assert (counts.followers, counts.following, counts.posts) == (2, 1, 1)


def test_it_lists_followers_and_following_newest_first(any_repo):
    star, *fans = users(any_repo, "star", "ann", "ben", "cat")
    for i, fan in enumerate(fans):
        any_repo.graph.follow(fan, star, at=T0 + i)

    first = any_repo.account_lists.follow_list(star, "followers", 1, per_page=2)
    second = any_repo.account_lists.follow_list(star, "followers", 2, per_page=2)

    assert [(e.user.username, e.since) for e in first.items] == [("cat", T0 + 2), ("ben", T0 + 1)]
    assert first.has_next and first.total == 3
    assert [e.user.username for e in second.items] == ["ann"] and not second.has_next
    assert [
        e.user.username for e in any_repo.account_lists.follow_list(fans[0], "following").items
    ] == ["star"]


def test_it_leaves_suspended_users_out_of_follow_lists(any_repo, any_r):
    star, ann, ben = users(any_repo, "star", "ann", "ben")
    any_repo.graph.follow(ann, star, at=T0)
    any_repo.graph.follow(ben, star, at=T0 + 1)
    any_r.hset(f"user:{ben}", "status", "suspended")

    assert [
        e.user.username for e in any_repo.account_lists.follow_list(star, "followers").items
    ] == ["ann"]


def test_it_shows_only_the_users_own_posts_on_the_profile(any_repo):
    alice, bob = users(any_repo, "alice", "bob")
    any_repo.graph.follow(alice, bob, at=T0)
    any_repo.posts.create_post(alice, "a1", at=T0 + 1)
    any_repo.posts.create_post(bob, "b1", at=T0 + 2)
    any_repo.posts.create_post(alice, "a2", at=T0 + 3)

    profile = any_repo.pages.profile(alice, ANONYMOUS)

    assert profile.user.username == "alice"
    assert [p.body for p in profile.posts.items] == ["a2", "a1"]
    assert (profile.counts.posts, profile.counts.following, profile.counts.followers) == (2, 1, 0)
    assert profile.posts.total == 2
    assert not profile.viewer_follows and profile.mutual_count == 0


def test_it_pages_the_profile(any_repo):
    (alice,) = users(any_repo, "alice")
    for i in range(12):
        any_repo.posts.create_post(alice, f"a{i}", at=T0 + i)

    second = any_repo.pages.profile(alice, ANONYMOUS, 2, per_page=10)

    assert [p.body for p in second.posts.items] == ["a1", "a0"]
    assert second.posts.has_previous and not second.posts.has_next
    assert second.posts.num_pages == 2


def test_it_tells_the_viewer_who_they_follow_also_follows_the_profile(any_repo):
    viewer, target, *friends = users(any_repo, "viewer", "target", "f1", "f2", "f3", "f4", "f5")
    stranger = any_repo.users.create_user("stranger", "h", at=T0).id
    for friend in friends:
        any_repo.graph.follow(viewer, friend, at=T0)
        any_repo.graph.follow(friend, target, at=T0)
    any_repo.graph.follow(
        stranger, target, at=T0
    )  # follows target, but viewer does not follow them
    any_repo.graph.follow(viewer, target, at=T0)

    profile = any_repo.pages.profile(target, Viewer.of(any_repo.users.get_user(viewer)))

    assert profile.viewer_follows
    assert profile.mutual_count == 5
    assert len(profile.mutual_names) == 3
    assert set(profile.mutual_names) <= {"f1", "f2", "f3", "f4", "f5"}
    assert profile.counts.followers == 7


def test_mutuals_are_named_newest_followed_first_and_a_suspended_one_neither_named_nor_counted(
    any_repo,
):
    viewer, target, *friends = users(any_repo, "viewer", "target", "f1", "f2", "f3", "f4")
    for i, friend in enumerate(friends):
        any_repo.graph.follow(viewer, friend, at=T0 + i)  # f4 followed last
        any_repo.graph.follow(friend, target, at=T0)
    any_repo.r.hset(keys.user(friends[3]), "status", "suspended")  # f4

    profile = any_repo.pages.profile(target, Viewer.of(any_repo.users.get_user(viewer)))

    assert profile.mutual_count == 3
    assert profile.mutual_names == ("f3", "f2", "f1")


def test_mutuals_from_the_smaller_side_are_named_newest_followed_first(any_repo):
    """The owner has fewer followers than the viewer follows: the one-server script walks
    the owner's followers, and still names the viewer's newest followings first."""
    viewer, target, *people = users(any_repo, "viewer", "target", *(f"p{i}" for i in range(8)))
    for i, person in enumerate(people):
        any_repo.graph.follow(viewer, person, at=T0 + i)  # p7 followed last
    for person in (people[1], people[6], people[3]):  # followed by the target in another order
        any_repo.graph.follow(person, target, at=T0 + 100 - person)

    profile = any_repo.pages.profile(target, Viewer.of(any_repo.users.get_user(viewer)))

    assert any_repo.r.zcard(keys.followers(target)) < any_repo.r.zcard(keys.following(viewer))
    assert profile.mutual_count == 3
    assert profile.mutual_names == ("p6", "p3", "p1")


def test_it_shows_no_follow_state_on_your_own_profile(any_repo):
    alice, bob = users(any_repo, "alice", "bob")
    any_repo.graph.follow(alice, bob, at=T0)
    any_repo.graph.follow(bob, alice, at=T0)

    profile = any_repo.pages.profile(alice, Viewer.of(any_repo.users.get_user(alice)))

    assert not profile.viewer_follows and profile.mutual_count == 0


def test_it_raises_user_not_found_for_the_profile_of_nobody(any_repo):
    with pytest.raises(UserNotFound):
        any_repo.pages.profile(42, ANONYMOUS)
