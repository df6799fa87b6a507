"""`manage.py rebuild_feeds` and `manage.py repair`."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command

from social import keys
from social.repository import ANONYMOUS
from tests.conftest import make_user


def run(command: str, **options) -> str:
    out = StringIO()
    call_command(command, stdout=out, **options)
    return out.getvalue()


def feed(r, user_id: int) -> list[int]:
    return [int(p) for p in r.lrange(keys.home_feed(user_id), 0, -1)]


# --- rebuild_feeds -----------------------------------------------------------------------


def test_rebuild_feeds_restores_feeds_that_drifted_from_the_graph(r, repo, alice, bob, charlie):
    repo.graph.follow(alice.id, bob.id)
    mine = repo.posts.create_post(alice.id, "mine")
    bobs = repo.posts.create_post(bob.id, "bob's")
    charlies = repo.posts.create_post(charlie.id, "charlie's")
    r.delete(keys.home_feed(alice.id))
    r.rpush(keys.home_feed(bob.id), charlies, 9999)  # not followed, and a dangling id
    output = run("rebuild_feeds")
    assert "Rebuilt 3 home feeds" in output
    assert feed(r, alice.id) == [bobs, mine]
    assert feed(r, bob.id) == [bobs]
    assert feed(r, charlie.id) == [charlies]


def test_rebuild_feeds_applies_the_cap_setting(r, repo, alice, bob, settings):
    repo.graph.follow(alice.id, bob.id)
    ids = [repo.posts.create_post(bob.id, f"post {i}") for i in range(30)]
    settings.RETWIS_HOME_FEED_CAP = 10
    run("rebuild_feeds")
    assert feed(r, alice.id) == ids[::-1][:10]


def test_rebuild_feeds_empties_the_feed_of_someone_with_nothing_to_read(r, alice):
    r.rpush(keys.home_feed(alice.id), 1, 2)
    run("rebuild_feeds")
    assert r.exists(keys.home_feed(alice.id)) == 0


def test_rebuild_feeds_dry_run_changes_nothing(r, repo, alice, bob):
    r.rpush(keys.home_feed(alice.id), 9999)
    output = run("rebuild_feeds", dry_run=True)
    assert "would rebuild 2 home feeds" in output
    assert feed(r, alice.id) == [9999]


def test_rebuild_feeds_agrees_with_what_the_site_wrote(r, repo, alice, bob, charlie):
    repo.graph.follow(alice.id, bob.id)
    repo.graph.follow(bob.id, charlie.id)
    for i in range(5):
        repo.posts.create_post((alice, bob, charlie)[i % 3].id, f"post {i}")
    repo.graph.follow(alice.id, charlie.id)
    repo.graph.unfollow(alice.id, bob.id)
    before = {u.id: feed(r, u.id) for u in (alice, bob, charlie)}
    run("rebuild_feeds")
    assert {u.id: feed(r, u.id) for u in (alice, bob, charlie)} == before


# --- repair ------------------------------------------------------------------------------


def test_repair_frees_a_claim_whose_account_was_never_written(r, repo, alice):
    r.hset(keys.usernames_lower(), "ghost", 999)  # a sign-up that died after its claim
    output = run("repair", grace=0)
    assert "'ghost' claimed by missing user 999" in output
    assert "Freed 1 orphan" in output
    assert r.hget(keys.usernames_lower(), "ghost") is None
    assert r.hget(keys.usernames_lower(), "alice") == str(alice.id)
    assert make_user(repo, "Ghost").username == "Ghost"


def test_repair_dry_run_lists_but_keeps_the_claim(r, alice):
    r.hset(keys.usernames_lower(), "ghost", 999)
    output = run("repair", dry_run=True)
    assert (
        "1 orphan username claim(s), 0 unlisted post(s), 0 unindexed username(s), "
        "0 interrupted fan-out(s), 0 deleted account(s) to purge, "
        "0 post(s) with wrong counters, 0 upload(s) unattached for over a day, 0 orphan "
        "picture file(s), 0 picture(s) without files, 0 picture(s) queued again; nothing changed"
        in output
    )
    assert r.hget(keys.usernames_lower(), "ghost") == "999"


def test_repair_leaves_a_claim_whose_account_appeared_meanwhile(r, repo):
    r.hset(keys.usernames_lower(), "late", 5)
    orphans = repo.repair.orphan_username_claims()
    assert orphans == [("late", 5)]
    r.hset(keys.user(5), "username", "late")  # the sign-up in flight writes its account
    assert repo.repair.free_username_claims(orphans, grace=0) == []
    assert r.hget(keys.usernames_lower(), "late") == "5"


def test_repair_with_nothing_to_do_says_so(repo, alice):
    repo.posts.create_post(alice.id, "listed")
    assert "Freed 0 orphan username claim(s); added 0 post(s)" in run("repair", grace=0)


def reference_post(r, author_id: int, body: str, at: int) -> int:
    """Write a post the way the PHP Retwis does: no own-posts list."""
    post_id = r.incr(keys.next_post_id())
    r.hset(keys.post(post_id), mapping={"user_id": author_id, "time": at, "body": body})
    r.lpush(keys.home_feed(author_id), post_id)
    r.lpush(keys.timeline(), post_id)
    return post_id


def test_repair_lists_reference_posts_on_their_authors_profiles(r, repo, alice):
    old = reference_post(r, alice.id, "from PHP", 1_000)
    ours = repo.posts.create_post(alice.id, "from Django")
    older = reference_post(r, alice.id, "PHP again", 2_000)
    output = run("repair", grace=0)
    assert f"user {alice.id}: 2 post(s) not listed" in output
    assert "added 2 post(s)" in output
    assert [int(p) for p in r.lrange(keys.own_posts(alice.id), 0, -1)] == [older, ours, old]
    assert [p.id for p in repo.pages.profile(alice.id, ANONYMOUS).posts.items] == [older, ours, old]


def test_repair_dry_run_leaves_own_posts_lists_alone(r, repo, alice):
    reference_post(r, alice.id, "from PHP", 1_000)
    assert "1 unlisted post(s)" in run("repair", dry_run=True)
    assert r.exists(keys.own_posts(alice.id)) == 0


def test_rebuild_after_repair_keeps_reference_posts_in_feeds(r, repo, alice, bob):
    repo.graph.follow(bob.id, alice.id)
    post = reference_post(r, alice.id, "from PHP", 1_000)
    run("repair", grace=0)
    run("rebuild_feeds")
    assert feed(r, bob.id) == [post]


def test_repair_indexes_the_tags_filed_before_the_tag_index(r, repo, alice):
    repo.posts.create_post(alice.id, "about #redis and #日本語")
    r.delete(keys.tag_index())  # as a database written before the index
    r.rpush(keys.tag_posts("old_one"), 1)  # a list no post names any more: indexed all the same

    assert sorted(repo.repair.unindexed_tags()) == ["old_one", "redis", "日本語"]
    run("repair", dry_run=True)
    assert r.exists(keys.tag_index()) == 0
    run("repair", grace=0)

    assert sorted(r.zrange(keys.tag_index(), 0, -1)) == ["old_one", "redis", "日本語"]
    assert repo.repair.unindexed_tags() == []
