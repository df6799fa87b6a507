"""Fan-out on read: authors with many followers are merged into home pages when read.

Contract tests run on real Redis and fakeredis (`any_repo`, here with a threshold of 3
followers). Below the threshold the reference layout holds exactly (a copy per follower);
at or above it the post is only in the author's own list and the timeline, and every
follower's home page shows it at once.
"""

from __future__ import annotations

import pytest
from django.test import Client

from social import keys
from social.repository import PROCESS_CACHE, Repository
from social.repository.cache import ProcessCache
from tests.conftest import login, make_staff
from tests.test_round_trips import pin

T0 = 1_700_000_000
THRESHOLD = 3


@pytest.fixture
def fan_repo(any_repo) -> Repository:
    """any_repo's server with a fan-out-on-read threshold of 3 followers."""
    return Repository(
        any_repo.r, home_feed_cap=1000, timeline_cap=1000, fanout_batch=2,
        fanout_read_threshold=THRESHOLD,
    )  # fmt: skip


def users(repo: Repository, *names: str) -> list[int]:
    return [repo.users.create_user(name, "h", at=T0).id for name in names]


def feed(r, user_id: int) -> list[int]:
    return [int(i) for i in r.lrange(keys.home_feed(user_id), 0, -1)]


def home_ids(repo: Repository, user_id: int, number: int = 1, per_page: int = 10) -> list[int]:
    return [p.id for p in repo.pages.home(user_id, number, per_page).feed.items]


def test_below_the_threshold_every_follower_gets_a_copy(fan_repo, any_r):
    author, *fans = users(fan_repo, "author", "f1", "f2")
    for fan in fans:
        fan_repo.graph.follow(fan, author, at=T0)

    post_id = fan_repo.posts.create_post(author, "hi", at=T0 + 1)

    assert all(feed(any_r, fan) == [post_id] for fan in fans)
    assert any_r.zcard(keys.celebrities()) == 0
    assert all(home_ids(fan_repo, fan) == [post_id] for fan in fans)


def test_at_the_threshold_the_post_is_merged_when_read_not_copied(fan_repo, any_r):
    author, *fans = users(fan_repo, "star", "f1", "f2", "f3")
    (bystander,) = users(fan_repo, "bystander")
    for fan in fans:
        fan_repo.graph.follow(fan, author, at=T0)
    before = any_r.get(keys.visibility_version())

    post_id = fan_repo.posts.create_post(author, "to my fans", at=T0 + 1)

    # Written where the reference writes: the hash, the author's lists, the timeline...
    assert any_r.hgetall(keys.post(post_id))["body"] == "to my fans"
    assert feed(any_r, author) == [post_id]
    assert [int(i) for i in any_r.lrange(keys.timeline(), 0, -1)] == [post_id]
    # ...but in no follower's feed; the author joined the set, and processes re-read it.
    assert all(feed(any_r, fan) == [] for fan in fans)
    assert any_r.zscore(keys.celebrities(), author) == T0 + 1
    assert any_r.get(keys.visibility_version()) != before
    # Every follower sees it, the bystander does not.
    assert all(home_ids(fan_repo, fan) == [post_id] for fan in fans)
    assert home_ids(fan_repo, bystander) == []


def test_membership_stays_once_followers_drop_below(fan_repo, any_r):
    author, *fans = users(fan_repo, "star", "f1", "f2", "f3")
    for fan in fans:
        fan_repo.graph.follow(fan, author, at=T0)
    first = fan_repo.posts.create_post(author, "one", at=T0 + 1)
    fan_repo.graph.unfollow(fans[0], author)

    second = fan_repo.posts.create_post(author, "two", at=T0 + 2)

    assert any_r.zcard(keys.celebrities()) == 1
    assert feed(any_r, fans[1]) == []
    assert home_ids(fan_repo, fans[1]) == [second, first]
    assert home_ids(fan_repo, fans[0]) == []  # unfollowed: neither shows


def test_merged_pages_are_in_order_and_page_correctly(fan_repo, any_r):
    star, friend, reader, f2, f3 = users(fan_repo, "star", "friend", "reader", "f2", "f3")
    for fan in (reader, f2, f3):
        fan_repo.graph.follow(fan, star, at=T0)
    fan_repo.graph.follow(reader, friend, at=T0)
    posted = []
    for i in range(12):  # alternate: the friend's are copied, the star's merged
        author = star if i % 2 else friend
        posted.append(fan_repo.posts.create_post(author, f"post {i}", at=T0 + i))
    fan_repo.posts.create_post(reader, "mine", at=T0 + 20)
    mine = int(any_r.get(keys.next_post_id()))
    newest_first = [mine, *reversed(posted)]

    page1 = fan_repo.pages.home(reader, 1, 5).feed
    page2 = fan_repo.pages.home(reader, 2, 5).feed
    page3 = fan_repo.pages.home(reader, 3, 5).feed

    assert [p.id for p in page1.items] == newest_first[:5] and page1.has_next
    assert [p.id for p in page2.items] == newest_first[5:10] and page2.has_next
    assert [p.id for p in page3.items] == newest_first[10:] and not page3.has_next
    # Three followers at the star's first post: none of the star's posts was copied.
    friends = [p for i, p in enumerate(posted) if i % 2 == 0]
    assert feed(any_r, reader) == [mine, *reversed(friends)]


def test_following_a_star_shows_their_posts_without_rewriting_the_feed(fan_repo, any_r):
    star, f1, f2, f3, late = users(fan_repo, "star", "f1", "f2", "f3", "late")
    for fan in (f1, f2, f3):
        fan_repo.graph.follow(fan, star, at=T0)
    post_id = fan_repo.posts.create_post(star, "hello", at=T0 + 1)

    assert fan_repo.graph.follow(late, star, at=T0 + 2)

    assert feed(any_r, late) == []
    assert home_ids(fan_repo, late) == [post_id]
    assert any_r.zscore(keys.followers(star), late) == T0 + 2
    assert fan_repo.graph.unfollow(late, star)
    assert home_ids(fan_repo, late) == []


def test_deleted_posts_and_suspended_stars_do_not_show(fan_repo, any_r):
    star, f1, f2, f3 = users(fan_repo, "star", "f1", "f2", "f3")
    for fan in (f1, f2, f3):
        fan_repo.graph.follow(fan, star, at=T0)
    kept = fan_repo.posts.create_post(star, "kept", at=T0 + 1)
    gone = fan_repo.posts.create_post(star, "gone", at=T0 + 2)
    staff = make_staff(fan_repo, "staffer", at=T0)

    fan_repo.moderation.delete_posts([gone], staff, "spam", at=T0 + 3)
    assert home_ids(fan_repo, f1) == [kept]
    fan_repo.moderation.suspend(star, staff, "abuse", at=T0 + 4)
    assert home_ids(fan_repo, f1) == []
    assert any_r.hget(keys.post(gone), "deleted") == "1"


def test_another_process_learns_of_a_promotion_at_once(fan_repo, any_r):
    star, f1, f2, f3 = users(fan_repo, "star", "f1", "f2", "f3")
    for fan in (f1, f2):
        fan_repo.graph.follow(fan, star, at=T0)
    fan_repo.posts.create_post(f3, "first post: the database gets a version", at=T0)
    reader = Repository(
        any_repo_client := fan_repo.r, cache=ProcessCache(), fanout_read_threshold=THRESHOLD
    )
    assert home_ids(reader, f1) == []  # the reader process remembers "no stars"
    writer = Repository(any_repo_client, cache=ProcessCache(), fanout_read_threshold=THRESHOLD)
    writer.graph.follow(f3, star, at=T0)

    post_id = writer.posts.create_post(star, "promoted", at=T0 + 1)

    assert feed(any_r, f1) == []
    assert home_ids(reader, f1) == [post_id]
    assert reader.cache.celebrities is not None and reader.cache.celebrities[1] == (star,)


def test_rebuilding_feeds_leaves_stars_posts_to_the_read(fan_repo, any_r):
    star, friend, f1, f2, f3 = users(fan_repo, "star", "friend", "f1", "f2", "f3")
    for fan in (f1, f2, f3):
        fan_repo.graph.follow(fan, star, at=T0)
    fan_repo.graph.follow(f1, friend, at=T0)
    theirs = fan_repo.posts.create_post(star, "star post", at=T0 + 1)
    friends = fan_repo.posts.create_post(friend, "friend post", at=T0 + 2)

    fan_repo.fanouts.rebuild_home_feeds([f1, f2, f3])

    assert feed(any_r, f1) == [friends]
    assert home_ids(fan_repo, f1) == [friends, theirs]


# --- Round trips, through the site -------------------------------------------------------

# (cold, warm) round trips of the home page, the auth cookie's included: the reader follows
# a fan-out-on-read author (one more round trip than HOME in test_round_trips.py when warm:
# the author's newest ids), or does not while such authors exist (the same as HOME when
# warm; two more when cold, to learn the set).
HOME_FOLLOWING_A_STAR = pin((8, 2), (12, 4))
HOME_WHILE_STARS_EXIST = pin(
    (7, 1), (11, 3)
)  # cold: two more to learn the set (and that it is not his)


@pytest.fixture
def stars(repo, settings, alice, bob, charlie):
    """bob is a fan-out-on-read author followed by alice; charlie follows no one and has
    posts of his own."""
    settings.RETWIS_FANOUT_READ_THRESHOLD = 1
    from social.repository import get_repository

    site_repo = get_repository()
    site_repo.graph.follow(alice.id, bob.id, at=T0)
    for i in range(30):
        site_repo.posts.create_post(bob.id, f"post {i}", at=T0 + i)
    for i in range(3):
        site_repo.posts.create_post(charlie.id, f"charlie {i}", at=T0 + 100 + i)
    assert site_repo.r.zcard(keys.celebrities()) == 1
    return site_repo


def cost(client: Client, round_trips, *, cold: bool) -> int:
    client.get("/healthz")
    if cold:
        PROCESS_CACHE.clear()
    round_trips.reset()
    response = client.get("/")
    assert response.status_code == 200
    return round_trips.count


def test_the_home_page_of_a_stars_follower_costs_one_more_round_trip(stars, alice, round_trips):
    client = login(Client(), stars, alice)
    cold = cost(client, round_trips, cold=True)
    warm = cost(client, round_trips, cold=False)
    page = client.get("/")

    assert (cold, warm) == HOME_FOLLOWING_A_STAR
    assert page.content.decode().count('class="post') >= 10
    assert "post 29" in page.content.decode()


def test_the_home_page_of_others_costs_what_it_did(stars, charlie, round_trips):
    client = login(Client(), stars, charlie)
    assert (cost(client, round_trips, cold=True), cost(client, round_trips, cold=False)) == (
        HOME_WHILE_STARS_EXIST
    )
    assert "charlie 2" in client.get("/").content.decode()
