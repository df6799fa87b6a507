"""Repository contract for posts and feeds, on real Redis and fakeredis (`any_repo`).

`any_repo` fans out in batches of 3, so seven followers take three batches.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from social import keys
from social.repository import ANONYMOUS, STAFF, PostNotFound, Repository

T0 = 1_700_000_000
DAY = datetime.fromtimestamp(T0, tz=UTC).date()


def users(repo: Repository, *names: str) -> list[int]:
    return [repo.users.create_user(name, "h", at=T0).id for name in names]


def ids(values: list[str]) -> list[int]:
    return [int(v) for v in values]


def test_it_writes_the_reference_post_layout(any_repo, any_r):
    (alice,) = users(any_repo, "alice")

    post_id = any_repo.posts.create_post(alice, "hello world", at=T0 + 5)

    assert post_id == 1
    assert any_r.get("next_post_id") == "1"
    assert any_r.hgetall("post:1") == {
        "user_id": str(alice),
        "time": str(T0 + 5),
        "body": "hello world",
    }
    assert any_r.lrange(f"posts:{alice}", 0, -1) == ["1"]
    assert any_r.lrange(f"user_posts:{alice}", 0, -1) == ["1"]
    assert any_r.lrange("timeline", 0, -1) == ["1"]


def test_it_counts_the_post_and_marks_the_author_active(any_repo, any_r):
    (alice,) = users(any_repo, "alice")

    any_repo.posts.create_post(alice, "hi", at=T0)

    counter = keys.daily_counter("posts", DAY)
    assert any_r.get(counter) == "1" and any_r.ttl(counter) > 0
    assert any_r.pfcount(keys.daily_active(DAY)) == 1


def test_it_fans_a_post_out_to_every_follower_in_batches(any_repo, any_r):
    author, *fans = users(any_repo, "author", *(f"fan{i}" for i in range(7)))
    (bystander,) = users(any_repo, "bystander")
    for fan in fans:
        any_repo.graph.follow(fan, author, at=T0)

    post_id = any_repo.posts.create_post(author, "news", at=T0 + 1)

    for fan in fans:
        assert ids(any_r.lrange(f"posts:{fan}", 0, -1)) == [post_id]
    assert ids(any_r.lrange(f"posts:{author}", 0, -1)) == [post_id]
    assert any_r.llen(f"posts:{bystander}") == 0
    assert any_r.llen(f"user_posts:{fans[0]}") == 0


@pytest.mark.parametrize("n_fans", [0, 3, 6, 7])
def test_it_reaches_followers_whatever_their_count_against_the_batch_size(any_repo, any_r, n_fans):
    author, *fans = users(any_repo, "author", *(f"fan{i}" for i in range(n_fans)))
    for fan in fans:
        any_repo.graph.follow(fan, author, at=T0)

    post_id = any_repo.posts.create_post(author, "news")

    reached = [fan for fan in fans if any_r.lrange(f"posts:{fan}", 0, 0) == [str(post_id)]]
    assert reached == fans


def test_it_keeps_exactly_the_newest_1000_posts_in_the_timeline(any_repo, any_r):
    (alice,) = users(any_repo, "alice")
    for i in range(1003):
        any_repo.posts.create_post(alice, f"post {i}", at=T0 + i)

    timeline = ids(any_r.lrange("timeline", 0, -1))
    assert len(timeline) == 1000
    assert timeline[0] == 1003 and timeline[-1] == 4
    assert any_r.llen(f"user_posts:{alice}") == 1003  # the archive is not capped


def test_it_caps_every_home_feed_at_the_setting(any_repo, any_r):
    capped = Repository(any_repo.r, home_feed_cap=10, timeline_cap=1000, fanout_batch=3)
    author, fan = users(capped, "author", "fan")
    capped.graph.follow(fan, author, at=T0)

    for i in range(12):
        capped.posts.create_post(author, f"post {i}", at=T0 + i)

    newest_ten = list(range(12, 2, -1))
    assert ids(any_r.lrange(f"posts:{author}", 0, -1)) == newest_ten
    assert ids(any_r.lrange(f"posts:{fan}", 0, -1)) == newest_ten
    assert any_r.llen(f"user_posts:{author}") == 12


def test_it_builds_the_home_page_from_the_feed_with_counts(any_repo):
    alice, bob = users(any_repo, "alice", "bob")
    any_repo.graph.follow(alice, bob, at=T0)
    for i in range(12):
        any_repo.posts.create_post(bob if i % 2 else alice, f"post {i}", at=T0 + i)

    first = any_repo.pages.home(alice, 1, per_page=10)
    second = any_repo.pages.home(alice, 2, per_page=10)

    assert [p.body for p in first.feed.items] == [f"post {i}" for i in range(11, 1, -1)]
    assert first.feed.has_next and not first.feed.has_previous
    assert [p.body for p in second.feed.items] == ["post 1", "post 0"]
    assert not second.feed.has_next and second.feed.has_previous
    assert (first.counts.followers, first.counts.following, first.counts.posts) == (0, 1, 6)
    post = first.feed.items[0]
    assert (post.author_id, post.author_name, post.time) == (bob, "bob", T0 + 11)


def test_it_skips_dangling_ids_and_hidden_posts_in_a_feed(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    kept = any_repo.posts.create_post(alice, "kept", at=T0)
    removed = any_repo.posts.create_post(alice, "removed", at=T0 + 1)
    any_r.hset(f"post:{removed}", "deleted", "1")
    any_r.lpush(f"posts:{alice}", 999)  # a post hash that does not exist

    page = any_repo.pages.home(alice)

    assert [p.id for p in page.feed.items] == [kept]


def test_it_hides_posts_of_suspended_authors_from_the_timeline(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    any_repo.posts.create_post(alice, "from alice", at=T0)
    any_repo.posts.create_post(bob, "from bob", at=T0 + 1)
    any_r.hset(f"user:{bob}", "status", "suspended")
    any_r.zadd("suspended_users", {"bob": T0})

    page = any_repo.pages.timeline()

    assert [p.body for p in page.posts.items] == ["from alice"]
    assert page.latest_users == ("alice",)


def test_it_pages_the_global_timeline_newest_first_with_the_latest_signups(any_repo):
    alice, bob = users(any_repo, "alice", "bob")
    for i in range(7):
        any_repo.posts.create_post(alice if i % 2 else bob, f"p{i}", at=T0 + i)

    first = any_repo.pages.timeline(ANONYMOUS, 1, per_page=5, latest_users=1)
    second = any_repo.pages.timeline(ANONYMOUS, 2, per_page=5)

    assert [p.body for p in first.posts.items] == ["p6", "p5", "p4", "p3", "p2"]
    assert first.posts.has_next
    assert [p.body for p in second.posts.items] == ["p1", "p0"]
    assert not second.posts.has_next
    assert first.latest_users == ("bob",)


def test_it_shows_the_latest_posts_to_visitors(any_repo):
    (alice,) = users(any_repo, "alice")
    for i in range(8):
        any_repo.posts.create_post(alice, f"p{i}", at=T0 + i)

    assert [p.body for p in any_repo.pages.latest(3).items] == ["p7", "p6", "p5"]


def test_it_returns_one_post_by_id(any_repo):
    (alice,) = users(any_repo, "alice")
    post_id = any_repo.posts.create_post(alice, "permalink me", at=T0)

    post = any_repo.pages.post(post_id, ANONYMOUS)[0]

    assert (post.id, post.body, post.author_name, post.time) == (
        post_id,
        "permalink me",
        "alice",
        T0,
    )
    assert post.created == datetime.fromtimestamp(T0, tz=UTC)


def test_it_raises_post_not_found_for_a_missing_or_removed_post(any_repo, any_r):
    (alice,) = users(any_repo, "alice")
    post_id = any_repo.posts.create_post(alice, "soon gone", at=T0)
    any_r.hset(f"post:{post_id}", "deleted", "1")

    with pytest.raises(PostNotFound):
        any_repo.pages.post(404, ANONYMOUS)[0]
    with pytest.raises(PostNotFound):
        any_repo.pages.post(post_id, ANONYMOUS)[0]
    assert any_repo.pages.post(post_id, STAFF)[0].is_deleted
