"""A post's reply and like counts are fields of its hash (loading.COUNT_FIELDS), kept in
step by every write that changes its lists and mended by `manage.py repair`."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command

from social import keys
from social.repository import ANONYMOUS, Viewer
from tests.conftest import make_user

T0 = 1_700_000_000


def fields(r, post_id: int) -> tuple:
    replies, likes = r.hmget(keys.post(post_id), ["replies", "likes"])
    return int(replies or 0), int(likes or 0)


def test_a_reply_counts_on_its_parent_and_the_pages_show_it(any_repo, any_r):
    alice, bob = make_user(any_repo, "alice"), make_user(any_repo, "bob")
    root = any_repo.posts.create_post(alice.id, "root", at=T0)
    any_repo.pages.timeline()  # remembered with 0 replies

    any_repo.posts.create_post(bob.id, "one", reply_to=root, at=T0 + 1)
    any_repo.posts.create_post(bob.id, "two", reply_to=root, at=T0 + 2)

    assert fields(any_r, root) == (2, 0)
    assert any_repo.pages.timeline().posts.counts[root].replies == 2
    assert any_repo.pages.conversation(root, ANONYMOUS).counts[root].replies == 2


def test_likes_count_once_each_and_unlikes_take_them_back(any_repo, any_r):
    alice, bob, carol = (make_user(any_repo, n) for n in ("alice", "bob", "carol"))
    post_id = any_repo.posts.create_post(alice.id, "hi", at=T0)

    any_repo.likes.like(bob.id, post_id)
    any_repo.likes.like(bob.id, post_id)  # a no-op: counted once
    any_repo.likes.like(carol.id, post_id)
    assert fields(any_r, post_id) == (0, 2)
    any_repo.likes.unlike(bob.id, post_id)
    any_repo.likes.unlike(bob.id, post_id)  # a no-op: taken back once

    assert fields(any_r, post_id) == (0, 1)
    _, seen_by_carol = any_repo.pages.post(post_id, Viewer(carol.id))
    assert seen_by_carol.likes == 1 and seen_by_carol.liked


def test_a_deleted_account_takes_its_likes_off_the_counters(any_repo, any_r):
    alice, bob = make_user(any_repo, "alice"), make_user(any_repo, "bob")
    post_id = any_repo.posts.create_post(alice.id, "hi", at=T0)
    any_repo.likes.like(bob.id, post_id)

    any_repo.accounts.delete_account(bob)

    assert any_r.zcard(keys.likes(post_id)) == 0
    assert fields(any_r, post_id) == (0, 0)


def test_repair_sets_counters_that_disagree_with_the_lists(repo, r):
    alice, bob = make_user(repo, "alice"), make_user(repo, "bob")
    root = repo.posts.create_post(alice.id, "root", at=T0)
    repo.posts.create_post(bob.id, "re", reply_to=root, at=T0 + 1)
    repo.likes.like(bob.id, root)
    r.hdel(keys.post(root), "replies", "likes")  # as a database from before the counters
    untouched = repo.posts.create_post(alice.id, "no one cares", at=T0 + 2)

    dry = StringIO()
    call_command("repair", dry_run=True, grace=0, stdout=dry)
    assert f"post {root}: counters should say 1 replies, 1 likes, 0 reposts" in dry.getvalue()
    assert "1 post(s) with wrong counters" in dry.getvalue()
    assert fields(r, root) == (0, 0)  # a dry run changes nothing

    out = StringIO()
    call_command("repair", grace=0, stdout=out)

    assert "mended the counters of 1 post(s)" in out.getvalue()
    assert fields(r, root) == (1, 1)
    assert r.hget(keys.post(untouched), "likes") is None  # right already: not written
    again = StringIO()
    call_command("repair", grace=0, stdout=again)
    assert "mended the counters of 0 post(s)" in again.getvalue()
