"""`manage.py seed` and the bulk repository methods it writes through."""

from __future__ import annotations

import gc
import re
import time
from collections import Counter, defaultdict
from io import StringIO
from statistics import median
from types import SimpleNamespace

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.management import CommandError, call_command

from social import keys
from social.auth import authenticate
from social.demo import DEMO_MENTIONED
from social.management.commands.seed import DEMO_FOLLOWS, DEMO_PASSWORD, DEMO_USERNAME
from social.repository import PostNotFound, UserNotFound, Viewer
from social.repository.posts.posting import ANCESTORS_KEPT, TRENDING_HOUR_TTL
from social.text import encode_mentions, hashtags, mentioned_names
from tests.conftest import CLUSTER, make_user

SMALL = {"users": 40, "follows": 300, "posts": 400, "seed": 7}
MEDIUM = {"users": 200, "follows": 2000, "posts": 3000, "seed": 11}  # the launcher's sizes


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


def posts_by_id(r) -> dict[int, dict[str, str]]:
    """Return every post hash by id."""
    last = int(r.get(keys.next_post_id()) or 0)
    pipe = r.pipeline(transaction=False)
    for post_id in range(1, last + 1):
        pipe.hgetall(keys.post(post_id))
    return dict(zip(range(1, last + 1), pipe.execute()))


def user_for(r, name: str) -> int | None:
    """Return the id a mention of name means: the exact name wins, else ignoring case."""
    found = r.hget(keys.users(), name) or r.hget(keys.usernames_lower(), name.lower())
    return int(found) if found else None


def hour_of(ts: int | str) -> str:
    return time.strftime("%Y%m%d%H", time.gmtime(int(ts)))


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
    mentioned = r.zcard(keys.mentions(user.id))  # the mentions page shows something
    assert mentioned >= DEMO_MENTIONED // 2
    assert int(r.hget(keys.user(user.id), "unread_mentions")) == mentioned


def test_every_seeded_user_shares_the_demo_password(repo, r):
    seed(**SMALL)
    name = usernames_by_id(r)[-1]
    assert authenticate(repo, name, DEMO_PASSWORD) is not None


def test_the_demo_password_passes_djangos_validators():
    validate_password(DEMO_PASSWORD, user=SimpleNamespace(username=DEMO_USERNAME))


def test_it_prints_stage_timings_and_the_total():
    output = seed(**SMALL)
    for stage in ("users", "follows", "posts", "likes", "logins", "home feeds"):
        assert re.search(rf"{stage} +[\d,]+ in +[\d.]+s", output)
    assert re.search(r"Done in [\d.]+s\.", output)


def conversation_state(r) -> tuple:
    """Return what a seed decides, without the times (they follow the clock): names, each
    post's text, parent, mentions and tags, and who likes each post."""
    posts = posts_by_id(r)
    return (
        usernames_by_id(r),
        {
            pid: (h["user_id"], h["body"], h.get("reply_to"), h.get("mentions"), h.get("tags"))
            for pid, h in posts.items()
        },
        {pid: sorted(r.zrange(keys.likes(pid), 0, -1)) for pid in posts},
    )


def test_it_leaves_the_garbage_collector_as_it_found_it(r):
    seed(**SMALL)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert r.hlen(keys.users()) == 40


def test_the_same_seed_gives_the_same_data(r):
    seed(**SMALL)
    first = conversation_state(r)
    r.flushall()
    seed(**SMALL)
    assert conversation_state(r) == first
    r.flushall()
    seed(**{**SMALL, "seed": 8})
    other = conversation_state(r)
    assert other[1] != first[1] and other[2] != first[2]


# --- Conversations: replies, mentions, tags, likes ----------------------------------------


def test_about_a_fifth_of_posts_answer_an_older_post_by_someone_else(r):
    seed(**MEDIUM)
    posts = posts_by_id(r)
    replies = {pid: h for pid, h in posts.items() if "reply_to" in h}
    assert 0.12 * len(posts) <= len(replies) <= 0.3 * len(posts)
    for pid, h in replies.items():
        parent = posts[int(h["reply_to"])]
        assert int(h["reply_to"]) < pid and int(parent["time"]) < int(h["time"])
        assert h["reply_to_user"] == parent["user_id"] != h["user_id"]
        assert h["reply_to_name"] == r.hget(keys.user(int(parent["user_id"])), "username")
        above = [*parent.get("ancestors", "").split(), h["reply_to"]][-ANCESTORS_KEPT:]
        assert h["ancestors"].split() == above
    depths = Counter(len(h["ancestors"].split()) for h in replies.values())
    assert depths[1] > depths[2] > depths[3] > 0  # replies chain into threads, a few deep


def test_replies_often_answer_someone_the_author_follows(r):
    seed(**MEDIUM)
    replies = [h for h in posts_by_id(r).values() if "reply_to" in h]
    followed = [
        r.zscore(keys.following(int(h["user_id"])), h["reply_to_user"]) is not None for h in replies
    ]
    assert sum(followed) >= 0.3 * len(replies)


def test_replies_lists_hold_each_posts_replies_oldest_first(r):
    seed(**SMALL)
    posts = posts_by_id(r)
    expected = defaultdict(list)
    for pid, h in posts.items():
        if "reply_to" in h:
            expected[int(h["reply_to"])].append(pid)
    assert expected
    for pid in posts:
        assert [int(i) for i in r.lrange(keys.replies(pid), 0, -1)] == expected.get(pid, [])


def test_mentions_are_filed_for_the_users_the_text_names(r):
    seed(**MEDIUM)
    posts = posts_by_id(r)
    filed: dict[int, dict[str, float]] = defaultdict(dict)
    mentioning = 0
    for pid, h in posts.items():
        named = {n: user_for(r, n) for n in mentioned_names(h["body"])}
        named = {n: uid for n, uid in named.items() if uid is not None}
        assert h.get("mentions", "") == encode_mentions(named)
        mentioning += bool(named)
        for uid in set(named.values()) - {int(h["user_id"])}:
            filed[uid][str(pid)] = float(h["time"])
    assert 0.08 * len(posts) <= mentioning <= 0.3 * len(posts)
    for uid in user_ids(r):
        assert dict(r.zrange(keys.mentions(uid), 0, -1, withscores=True)) == filed.get(uid, {})
        assert int(r.hget(keys.user(uid), "unread_mentions") or 0) == len(filed.get(uid, {}))


def test_posts_mostly_mention_people_their_author_follows(r):
    seed(**MEDIUM)
    pairs = [
        (int(h["user_id"]), int(item.partition(":")[0]))
        for h in posts_by_id(r).values()
        if "reply_to" not in h  # a reply greets the author it answers, followed or not
        for item in h.get("mentions", "").split()
    ]
    followed = [r.zscore(keys.following(a), b) is not None for a, b in pairs]
    assert len(pairs) > 100 and sum(followed) >= 0.6 * len(pairs)


def test_tag_lists_hold_the_posts_whose_text_has_the_tag(r):
    seed(**MEDIUM)
    posts = posts_by_id(r)
    by_tag: dict[str, list[int]] = defaultdict(list)
    for pid, h in posts.items():
        tags = hashtags(h["body"])
        assert h.get("tags", "") == " ".join(tags) and len(tags) <= 2
        for tag in tags:
            by_tag[tag].append(pid)
    tagged = sum(bool(h.get("tags")) for h in posts.values())
    assert 0.08 * len(posts) <= tagged <= 0.25 * len(posts)
    for tag, ids in by_tag.items():
        assert [int(i) for i in r.lrange(keys.tag_posts(tag), 0, -1)] == ids[::-1]
    uses = sorted(map(len, by_tag.values()), reverse=True)
    assert 10 <= len(uses) <= 60  # a small vocabulary...
    assert uses[0] >= 5 * uses[len(uses) // 2]  # ...a few tags used far more than most


def test_trending_buckets_hold_the_last_days_tags_and_older_hours_are_gone(r, repo):
    before = int(time.time())
    seed(users=40, follows=300, posts=1500, days=2, seed=7)
    after = int(time.time())
    expected: dict[str, Counter] = defaultdict(Counter)
    newest: dict[str, int] = {}
    for h in posts_by_id(r).values():
        for tag in h.get("tags", "").split():
            expected[hour_of(h["time"])][tag] += 1
            newest[hour_of(h["time"])] = max(newest.get(hour_of(h["time"]), 0), int(h["time"]))
    live = [hour for hour, ts in newest.items() if ts + TRENDING_HOUR_TTL > after + 1]
    gone = [hour for hour, ts in newest.items() if ts + TRENDING_HOUR_TTL <= before]
    assert len(live) >= 10 and len(gone) >= 5
    for hour in live:  # what posting live would have left: the counts, 25 h after the last
        bucket = r.zrange(keys.trending_hour(hour), 0, -1, withscores=True)
        assert {tag: int(n) for tag, n in bucket} == expected[hour]
        ttl = r.ttl(keys.trending_hour(hour))
        expires = newest[hour] + TRENDING_HOUR_TTL
        assert expires - time.time() - 1 <= ttl <= expires - before
    assert not any(r.exists(keys.trending_hour(hour)) for hour in gone)
    day = sum((expected[hour_of(after - h * 3600)] for h in range(24)), Counter())
    trending = repo.trending.trending(at=after)
    assert trending and trending[0][1] == max(day.values())
    assert all(day[tag] == n for tag, n in trending)


def test_likes_agree_on_both_keys_and_come_after_the_post_and_the_sign_up(r):
    seed(**MEDIUM)
    posts = posts_by_id(r)
    signups = {uid: int(r.hget(keys.user(uid), "signup")) for uid in user_ids(r)}
    on_posts = {
        (int(uid), pid, ts)
        for pid in posts
        for uid, ts in r.zrange(keys.likes(pid), 0, -1, withscores=True)
    }
    on_users = {
        (uid, int(pid), ts)
        for uid in signups
        for pid, ts in r.zrange(keys.user_likes(uid), 0, -1, withscores=True)
    }
    assert on_posts == on_users
    assert 1.0 * len(posts) <= len(on_posts) <= 3.0 * len(posts)
    now = time.time()
    for uid, pid, ts in on_posts:
        assert uid != int(posts[pid]["user_id"])
        assert max(int(posts[pid]["time"]), signups[uid]) <= ts <= now


def test_popular_posts_get_many_likes_and_most_posts_few(r):
    seed(**MEDIUM)
    counts = sorted((r.zcard(keys.likes(pid)) for pid in posts_by_id(r)), reverse=True)
    assert counts[0] >= 10 * max(1, median(counts))
    assert sum(c <= 3 for c in counts) >= 0.7 * len(counts)


def test_it_reports_the_replies_mentions_tags_and_likes_it_wrote(r):
    output = seed(**SMALL)
    found = re.search(
        r"conversations: ([\d,]+) replies, ([\d,]+) mentions, ([\d,]+) posts with "
        r"([\d,]+) tags, ([\d,]+) likes",
        output,
    )
    assert found, output
    replies, mentions, tagged, tags, likes = (int(n.replace(",", "")) for n in found.groups())
    posts = posts_by_id(r).values()
    assert replies == sum("reply_to" in h for h in posts) > 0
    assert mentions == sum(r.zcard(keys.mentions(uid)) for uid in user_ids(r)) > 0
    assert tagged == sum(bool(h.get("tags")) for h in posts) > 0
    assert tags == sum(len(h.get("tags", "").split()) for h in posts)
    assert likes == sum(r.zcard(keys.likes(pid)) for pid in range(1, len(posts) + 1)) > 0


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
    assert re.search(r"400 posts \([\d,]+ replies\) and [\d,]+ likes", output)
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
    written = any_repo.bulk.create_posts_bulk([(a.id, "one", 10), (a.id, "two", 11)])
    assert written.ids == [old + 1, old + 2]
    assert [int(p) for p in any_repo.r.lrange(keys.timeline(), 0, -1)] == [3, 2, 1]
    assert [int(p) for p in any_repo.r.lrange(keys.own_posts(a.id), 0, -1)] == [3, 2, 1]


def conversation_keys(r, post_ids, user_ids, tags, hours) -> dict:
    """Return what a post's conversation writes: its hash and replies, the users' mentions
    and unread counts, the tags' lists, the trending hours' counts."""
    got: dict = {}
    for pid in post_ids:
        got[keys.post(pid)] = r.hgetall(keys.post(pid))
        got[keys.replies(pid)] = r.lrange(keys.replies(pid), 0, -1)
    for uid in user_ids:
        got[keys.mentions(uid)] = r.zrange(keys.mentions(uid), 0, -1, withscores=True)
        got[keys.user(uid)] = r.hget(keys.user(uid), "unread_mentions")
        got[keys.own_posts(uid)] = r.lrange(keys.own_posts(uid), 0, -1)
    for tag in tags:
        got[keys.tag_posts(tag)] = r.lrange(keys.tag_posts(tag), 0, -1)
    for hour in hours:
        got[hour] = r.zrange(keys.trending_hour(hour), 0, -1, withscores=True)
    return got


def test_bulk_posts_settle_replies_mentions_and_tags_as_create_post_does(any_repo):
    r, now = any_repo.r, int(time.time())
    posts = [
        (1, "Hello @bob, @nobody and @Bob #Redis #redis #1", now - 7200, None),
        (2, "@alice thanks! #python", now - 3600, 0),
        (1, "@ALICE: talking to myself, cc @bob", now - 60, 1),
        (2, "Another branch #Python", now - 30, 0),
    ]
    hours = {hour_of(ts) for *_, ts, _ in posts}
    a = any_repo.users.create_user("alice", "hash")
    b = any_repo.users.create_user("bob", "hash")
    ids: list[int] = []
    for author, body, ts, parent in posts:
        reply_to = ids[parent] if parent is not None else None
        ids.append(any_repo.posts.create_post(author, body, at=ts, reply_to=reply_to))
    by_hand = conversation_keys(r, ids, [a.id, b.id], ["redis", "python"], hours)
    r.flushall()
    any_repo.users.create_user("alice", "hash")
    any_repo.users.create_user("bob", "hash")
    written = any_repo.bulk.create_posts_bulk(posts)
    assert written.ids == ids == [1, 2, 3, 4]
    assert conversation_keys(r, ids, [a.id, b.id], ["redis", "python"], hours) == by_hand
    assert (written.replies, written.mentions, written.tagged, written.tags) == (3, 3, 3, 3)
    assert r.hget(keys.post(3), "ancestors") == b"1 2"
    assert r.hget(keys.post(1), "mentions") == b"2:bob"  # "@nobody" is nobody's


def test_bulk_posts_drop_trending_hours_that_would_have_expired(any_repo):
    a = any_repo.users.create_user("alice", "hash")
    now = int(time.time())
    old, recent = now - TRENDING_HOUR_TTL - 7200, now - 3600
    any_repo.bulk.create_posts_bulk([(a.id, "#old", old), (a.id, "#new and #new", recent)])
    assert not any_repo.r.exists(keys.trending_hour(hour_of(old)))
    bucket = keys.trending_hour(hour_of(recent))
    assert any_repo.r.zrange(bucket, 0, -1, withscores=True) == [(b"new", 1.0)]
    assert 0 < any_repo.r.ttl(bucket) <= recent + TRENDING_HOUR_TTL - now
    assert any_repo.r.lrange(keys.tag_posts("old"), 0, -1) == [b"1"]  # the list stays


@pytest.mark.parametrize("parent", [1, 2, -1, "0", 0.0, True])
def test_bulk_posts_refuse_a_parent_that_is_not_an_earlier_post(any_repo, parent):
    a = any_repo.users.create_user("alice", "hash")
    with pytest.raises(ValueError, match="not the index of an earlier post"):
        any_repo.bulk.create_posts_bulk([(a.id, "one", 10), (a.id, "two", 11, parent)])
    assert any_repo.r.get(keys.next_post_id()) is None


def test_bulk_posts_refuse_a_reply_to_a_post_by_nobody_before_writing_the_batch(any_repo):
    a = any_repo.users.create_user("alice", "hash")
    with pytest.raises(UserNotFound):
        any_repo.bulk.create_posts_bulk([(999, "a ghost's", 10), (a.id, "hi", 11, 0)])
    assert not any_repo.r.exists(keys.post(1)) and not any_repo.r.exists(keys.post(2))
    assert any_repo.r.llen(keys.own_posts(a.id)) == 0


def test_bulk_posts_cost_the_same_round_trips_for_ten_posts_or_three_hundred(repo, round_trips):
    a, b = make_user(repo, "alice"), make_user(repo, "bob")

    def cost(n: int) -> int:
        posts = [
            (a.id if i % 2 else b.id, f"hi @alice @bob @nobody{i} #t{i % 7}", 100 + i)
            + ((i - 1,) if i % 2 else ())
            for i in range(n)
        ]
        round_trips.reset()
        repo.bulk.create_posts_bulk(posts)
        return round_trips.count

    # The ids, the names, the parents' authors, the posts, the timeline.
    small, large = cost(10), cost(300)
    if CLUSTER:  # a pipeline costs a round trip per primary (of three) it reaches
        assert small <= large <= 5 * 3
    else:
        assert small == large == 5
    assert repo.r.zcard(keys.mentions(a.id)) == 155  # bob's 155 posts of the 310 name her


def test_bulk_likes_write_both_sets_as_like_does(any_repo):
    a = any_repo.users.create_user("alice", "hash")
    b = any_repo.users.create_user("bob", "hash")
    one, two = any_repo.bulk.create_posts_bulk([(a.id, "one", 10), (b.id, "two", 11)]).ids
    likes = [(b.id, one, 20), (a.id, two, 21), (b.id, one, 25), (a.id, one, 22)]
    assert any_repo.bulk.add_likes_bulk(likes) == 3
    r = any_repo.r
    assert r.zrange(keys.likes(one), 0, -1, withscores=True) == [(b"2", 20.0), (b"1", 22.0)]
    assert r.zrange(keys.user_likes(b.id), 0, -1, withscores=True) == [(b"1", 20.0)]
    assert r.zrange(keys.user_likes(a.id), 0, -1, withscores=True) == [(b"2", 21.0), (b"1", 22.0)]
    assert any_repo.bulk.add_likes_bulk([(b.id, one, 30)]) == 0  # a no-op, like like()
    assert r.zscore(keys.user_likes(b.id), one) == 20
    assert any_repo.likes.like(b.id, one, at=40) is False
    assert any_repo.pages.post(one, Viewer(b.id))[1].likes == 2
    assert r.hget(keys.post(one), "likes") == b"2"  # the counter, in step with the set


def test_bulk_likes_refuse_unknown_users_and_posts_before_writing(any_repo):
    a = any_repo.users.create_user("alice", "hash")
    (one,) = any_repo.bulk.create_posts_bulk([(a.id, "one", 10)]).ids
    with pytest.raises(UserNotFound):
        any_repo.bulk.add_likes_bulk([(a.id, one, 20), (999, one, 20)])
    with pytest.raises(PostNotFound):
        any_repo.bulk.add_likes_bulk([(a.id, one, 20), (a.id, one + 1, 20)])
    assert not any_repo.r.exists(keys.likes(one)) and not any_repo.r.exists(keys.user_likes(a.id))


def test_reposts_are_written_as_the_site_writes_them_on_request(r):
    out = seed(**SMALL, reposts=5)

    reposted = [(pid, h) for pid, h in posts_by_id(r).items() if "repost_of" in h]
    assert len(reposted) == 5 and "5 reposts" in out
    for repost_id, h in reposted:
        shared, reposter = int(h["repost_of"]), int(h["user_id"])
        assert r.zscore(keys.reposts(shared), reposter) == repost_id
        assert r.zscore(keys.user_reposts(reposter), shared) == repost_id
        assert str(repost_id) in r.lrange(keys.own_posts(reposter), 0, -1)
        assert int(r.hget(keys.post(shared), "reposts")) >= 1


def test_seeded_reposts_take_their_place_in_time_among_the_posts(r):
    seed(**SMALL, reposts=8)

    posts = posts_by_id(r)
    times = [int(h["time"]) for _, h in sorted(posts.items()) if h]
    assert times == sorted(times)  # ids grow with time, reposts included (issue 27)
    reposts = [pid for pid, h in posts.items() if "repost_of" in h]
    assert len(reposts) == 8 and max(reposts) < max(posts)  # not all at the end
    for user_id in {int(posts[pid]["user_id"]) for pid in reposts}:
        own = [int(i) for i in r.lrange(keys.own_posts(user_id), 0, -1)]
        assert own == sorted(own, reverse=True)


def test_negative_reposts_are_refused(r):
    with pytest.raises(CommandError, match="--reposts must not be negative"):
        seed(**SMALL, reposts=-1)
    assert r.dbsize() == 0


def test_a_share_of_the_newest_posts_get_pictures_drawn_here(r, repo):
    """Issue 26: pictures drawn with Pillow, stored as uploads are (files, attached image
    hashes, the post's `media`), on one post in eight of the newest."""
    import json
    from pathlib import Path

    from django.conf import settings

    from social.demo import PICTURED_EVERY

    seed(**SMALL)
    pictured = [
        (post_id, json.loads(media))
        for post_id in range(1, SMALL["posts"] + 1)
        if (media := r.hget(keys.post(post_id), "media"))
    ]
    assert SMALL["posts"] / PICTURED_EVERY / 2 < len(pictured) < SMALL["posts"] / PICTURED_EVERY * 2
    for post_id, rows in pictured:
        assert 1 <= len(rows) <= 4
        for token, width, height, *_rest in rows:
            image = r.hgetall(keys.image(token))
            assert image["state"] == "attached" and image["post"] == str(post_id)
            assert image["owner"] == r.hget(keys.post(post_id), "user_id")
            assert image["alt"].startswith("A drawing of ")
            assert Path(settings.MEDIA_ROOT, f"posts/{token}-1600.webp").is_file()
            assert max(width, height) <= 800
