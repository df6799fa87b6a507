"""`manage.py seed` and the bulk repository methods it writes through."""

from __future__ import annotations

import re
from io import StringIO
from statistics import median
from types import SimpleNamespace

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.management import CommandError, call_command

from social import keys
from social.auth import authenticate
from social.management.commands.seed import DEMO_FOLLOWS, DEMO_PASSWORD, DEMO_USERNAME
from social.repository import UserNotFound
from tests.conftest import make_user

SMALL = {"users": 40, "follows": 300, "posts": 400, "seed": 7}


def seed(**options) -> str:
    """Run the seed command quietly-ish and return what it printed."""
    out = StringIO()
    call_command("seed", stdout=out, **options)
    return out.getvalue()


def usernames_by_id(r) -> list[str]:
    """Return every account's username in id order."""
    by_id = {int(uid): name for name, uid in r.hgetall(keys.users()).items()}
    return [by_id[uid] for uid in sorted(by_id)]


def user_ids(r) -> list[int]:
    return sorted(int(uid) for uid in r.hvals(keys.users()))


def expected_feed(r, user_id: int, cap: int) -> list[int]:
    """Return the home feed the follow graph implies: own + followees' posts, newest first."""
    authors = [user_id] + [int(f) for f in r.zrange(keys.following(user_id), 0, -1)]
    ids = [int(p) for a in authors for p in r.lrange(keys.own_posts(a), 0, -1)]
    return sorted(ids, reverse=True)[:cap]


# --- The data set ------------------------------------------------------------------------


def test_it_creates_the_requested_number_of_users(r):
    seed(**SMALL)
    assert r.hlen(keys.users()) == 40
    assert r.get(keys.next_user_id()) == "40"
    assert r.zcard(keys.users_by_time()) == 40
    assert r.hlen(keys.usernames_lower()) == 40


def test_a_seeded_user_has_the_reference_layout(r):
    seed(**SMALL)
    h = r.hgetall(keys.user(5))
    assert {"username", "password", "auth", "signup"} <= h.keys()
    assert h["password"].startswith("md5$")  # a Django hash (the tests' fast hasher)
    assert r.hget(keys.users(), h["username"]) == "5"
    assert r.hget(keys.auths(), h["auth"]) == "5"
    assert r.zscore(keys.users_by_time(), h["username"]) == int(h["signup"])
    assert r.hget(keys.usernames_lower(), h["username"].lower()) == "5"
    assert r.zscore(keys.username_index(), h["username"].lower()) == 0


def test_usernames_are_valid_and_unique_ignoring_case(r):
    seed(users=300, follows=0, posts=0, seed=3)
    names = usernames_by_id(r)
    assert names[0] == DEMO_USERNAME
    assert all(re.fullmatch(r"[A-Za-z0-9_]{3,20}", n) for n in names)
    assert len({n.lower() for n in names}) == 300


def test_follows_are_recorded_on_both_sides_at_the_same_time(r):
    seed(**SMALL)
    total = 0
    for uid in user_ids(r):
        for followee, ts in r.zrange(keys.following(uid), 0, -1, withscores=True):
            assert int(followee) != uid
            assert r.zscore(keys.followers(int(followee)), uid) == ts
            total += 1
    followers = sum(r.zcard(keys.followers(uid)) for uid in user_ids(r))
    assert total == followers == 300


def test_follows_happen_after_both_signups(r):
    seed(**SMALL)
    for uid in user_ids(r):
        signup = int(r.hget(keys.user(uid), "signup"))
        for followee, ts in r.zrange(keys.following(uid), 0, -1, withscores=True):
            assert ts >= max(signup, int(r.hget(keys.user(int(followee)), "signup")))


def test_the_follow_graph_is_skewed(r):
    seed(users=300, follows=3000, posts=0, seed=5)
    counts = sorted(r.zcard(keys.followers(uid)) for uid in user_ids(r))
    assert counts[-1] >= 8 * max(1, median(counts))


def test_posts_are_in_their_authors_lists_with_ids_in_time_order(r):
    seed(**SMALL)
    assert r.get(keys.next_post_id()) == "400"
    times = []
    for post_id in range(1, 401):
        h = r.hgetall(keys.post(post_id))
        assert 1 <= len(h["body"]) <= 280
        assert h["body"] == h["body"].strip() and "\n" not in h["body"]
        assert str(post_id) in r.lrange(keys.own_posts(int(h["user_id"])), 0, -1)
        times.append(int(h["time"]))
    assert times == sorted(times)
    own = [int(p) for p in r.lrange(keys.own_posts(1), 0, -1)]
    assert own == sorted(own, reverse=True)
    assert sum(r.llen(keys.own_posts(uid)) for uid in user_ids(r)) == 400


def test_the_timeline_holds_exactly_the_newest_1000(r):
    seed(users=20, follows=50, posts=1100, seed=1)
    assert [int(p) for p in r.lrange(keys.timeline(), 0, -1)] == list(range(1100, 100, -1))


def test_home_feeds_are_what_the_follow_graph_implies(r):
    seed(**SMALL)
    for uid in user_ids(r):
        assert [int(p) for p in r.lrange(keys.home_feed(uid), 0, -1)] == expected_feed(r, uid, 1000)


def test_home_feeds_respect_the_cap_setting(r, settings):
    settings.RETWIS_HOME_FEED_CAP = 15
    seed(**SMALL)
    for uid in user_ids(r):
        feed = [int(p) for p in r.lrange(keys.home_feed(uid), 0, -1)]
        assert feed == expected_feed(r, uid, 15)


def test_the_demo_user_can_log_in_and_has_a_full_feed(r, repo):
    output = seed(**SMALL)
    assert f"Demo login: {DEMO_USERNAME} / {DEMO_PASSWORD}" in output
    user = authenticate(repo, DEMO_USERNAME, DEMO_PASSWORD)
    assert user is not None and user.username == DEMO_USERNAME
    assert r.zcard(keys.following(user.id)) >= DEMO_FOLLOWS
    assert r.llen(keys.home_feed(user.id)) >= 50


def test_every_seeded_user_shares_the_demo_password(repo, r):
    seed(**SMALL)
    name = usernames_by_id(r)[-1]
    assert authenticate(repo, name, DEMO_PASSWORD) is not None


def test_the_demo_password_passes_djangos_validators():
    validate_password(DEMO_PASSWORD, user=SimpleNamespace(username=DEMO_USERNAME))


def test_it_prints_stage_timings_and_the_total():
    output = seed(**SMALL)
    for stage in ("users", "follows", "posts", "logins", "home feeds"):
        assert re.search(rf"{stage} +[\d,]+ in +[\d.]+s", output)
    assert re.search(r"Done in [\d.]+s\.", output)


def test_the_same_seed_gives_the_same_data(r):
    seed(**SMALL)
    first = (usernames_by_id(r), r.hgetall(keys.post(123))["body"])
    r.flushall()
    seed(**SMALL)
    assert (usernames_by_id(r), r.hgetall(keys.post(123))["body"]) == first


# --- Refusals and modes -----------------------------------------------------------------


def test_it_refuses_a_non_empty_database_without_force(r, repo):
    make_user(repo, "alice")
    before = r.dbsize()
    with pytest.raises(CommandError, match="--force"):
        seed(**SMALL)
    assert r.dbsize() == before


def test_if_empty_leaves_a_non_empty_database_alone(r, repo):
    make_user(repo, "alice")
    before = r.dbsize()
    output = seed(if_empty=True, **SMALL)
    assert "not seeding" in output
    assert r.dbsize() == before


def test_if_empty_seeds_an_empty_database(r):
    seed(if_empty=True, **SMALL)
    assert r.hlen(keys.users()) == 40


def test_force_adds_to_a_non_empty_database_skipping_taken_names(r, repo):
    demo = make_user(repo, "Demo", "another password 1")
    output = seed(force=True, **SMALL)
    assert r.hlen(keys.users()) == 40  # the old Demo plus 39 new: "demo" was taken
    assert "names were taken already" in output
    assert repo.users.user_id_for_name("demo") == demo.id
    assert authenticate(repo, "Demo", "another password 1") is not None


def test_dry_run_writes_nothing(r):
    output = seed(dry_run=True, **SMALL)
    assert "Nothing was written" in output
    assert r.dbsize() == 0


def test_verbosity_zero_prints_nothing():
    assert seed(verbosity=0, **SMALL) == ""


@pytest.mark.parametrize("option", [{"users": 0}, {"posts": -1}, {"days": 0}])
def test_it_rejects_bad_sizes(option):
    with pytest.raises(CommandError):
        seed(**{**SMALL, **option})


# --- The bulk repository methods (real Redis and fakeredis) ------------------------------


def test_bulk_users_skip_names_taken_in_any_case_and_reference_names(any_repo):
    any_repo.users.create_user("Alice", "hash")
    any_repo.r.hset(keys.users(), mapping={"Legacy": 998, "old": 999})  # reference accounts
    made = any_repo.bulk.create_users_bulk(
        [("alice", 1), ("bob", 2), ("BOB", 3), ("Legacy", 4), ("OLD", 5)], "hash"
    )
    assert [u.username for u in made] == ["bob"]
    assert any_repo.r.hget(keys.usernames_lower(), "legacy") is None
    assert any_repo.r.hget(keys.usernames_lower(), "old") is None
    assert any_repo.users.get_user_by_name("bob").id == made[0].id


def test_bulk_follows_refuse_unknown_users_and_skip_self_follows(any_repo):
    a = any_repo.users.create_user("alice", "hash")
    b = any_repo.users.create_user("bob", "hash")
    with pytest.raises(UserNotFound):
        any_repo.bulk.add_follows_bulk([(a.id, 999, 10)])
    assert any_repo.bulk.add_follows_bulk([(a.id, b.id, 10), (a.id, a.id, 10)]) == 1
    assert any_repo.bulk.add_follows_bulk([(a.id, b.id, 20)]) == 0  # a no-op, like follow()
    assert any_repo.r.zscore(keys.followers(b.id), a.id) == 10


def test_bulk_posts_must_come_oldest_first(any_repo):
    a = any_repo.users.create_user("alice", "hash")
    with pytest.raises(ValueError):
        any_repo.bulk.create_posts_bulk([(a.id, "later", 20), (a.id, "earlier", 10)])
    assert any_repo.r.get(keys.next_post_id()) is None


def test_bulk_posts_continue_after_existing_posts_and_fill_the_timeline(any_repo):
    a = any_repo.users.create_user("alice", "hash")
    old = any_repo.posts.create_post(a.id, "by hand")
    ids = any_repo.bulk.create_posts_bulk([(a.id, "one", 10), (a.id, "two", 11)])
    assert list(ids) == [old + 1, old + 2]
    assert [int(p) for p in any_repo.r.lrange(keys.timeline(), 0, -1)] == [3, 2, 1]
    assert [int(p) for p in any_repo.r.lrange(keys.own_posts(a.id), 0, -1)] == [3, 2, 1]
