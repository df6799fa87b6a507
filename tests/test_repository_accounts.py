"""Repository contract for owning your account (change password, delete, purge), on real
Redis and fakeredis (`any_repo`)."""

from __future__ import annotations

import pytest

from social import keys
from social.repository import NotAllowed, Repository, UserNotFound
from tests.conftest import make_staff

T0 = 1_700_000_000
DAY = 86400


def users(repo: Repository, *names: str) -> list[int]:
    return [repo.users.create_user(name, "h", at=T0).id for name in names]


def test_changing_the_password_logs_out_every_other_device(any_repo, any_r):
    (alice,) = users(any_repo, "alice")
    old = any_repo.users.record_login(alice, "1.2.3.4")

    new = any_repo.accounts.change_password(alice, "new-hash")

    assert new != old
    assert any_r.hget(keys.user(alice), "password") == "new-hash"
    assert any_r.hget(keys.user(alice), "auth") == new
    assert any_repo.users.user_for_secret(old) is None
    assert any_repo.users.user_for_secret(new).id == alice
    assert any_r.hget(keys.auths(), old) is None


def test_deleting_an_account_hides_it_and_cuts_its_ties(any_repo, any_r):
    alice, bob, carol = users(any_repo, "alice", "bob", "carol")
    any_repo.graph.follow(alice, bob, at=T0)
    any_repo.graph.follow(carol, alice, at=T0)
    post_id = any_repo.posts.create_post(alice, "my post", at=T0 + 1)
    theirs = any_repo.posts.create_post(bob, "bob's", at=T0 + 2)
    any_repo.likes.like(alice, theirs)
    secret = any_repo.users.record_login(alice, "1.2.3.4")
    user = any_repo.users.get_user(alice)

    any_repo.accounts.delete_account(user, at=T0 + 10)

    stored = any_r.hgetall(keys.user(alice))
    assert stored["status"] == "deleted" and stored["deleted_at"] == str(T0 + 10)
    assert stored["password"] == "!deleted"
    assert any_repo.users.user_for_secret(secret) is None
    assert any_r.zscore(keys.deleted_users(), alice) == T0 + 10
    assert any_r.zscore(keys.users_by_time(), "alice") is None
    # Follows gone on both sides, the total recounted down, likes taken back.
    assert any_r.exists(keys.following(alice), keys.followers(alice)) == 0
    assert any_r.zscore(keys.followers(bob), alice) is None
    assert any_r.zscore(keys.following(carol), alice) is None
    assert any_r.get(keys.follows_total()) == "0"
    assert any_r.exists(keys.likes(theirs), keys.user_likes(alice)) == 0
    # Hidden everywhere, but the name stays taken.
    assert any_repo.users.get_user(alice).is_deleted
    assert [p.id for p in any_repo.pages.home(carol).feed.items] == []
    assert [p.id for p in any_repo.pages.timeline().posts.items] == [theirs]
    assert post_id not in [p.id for p in any_repo.pages.home(alice).feed.items]
    assert any_repo.users.user_id_for_name("alice") == alice
    # The audit log says who and when.
    entry = any_repo.audit.audit_page().items[0]
    assert (entry.action, entry.actor_id, entry.target_id) == ("delete_account", alice, alice)


def test_staff_and_deleted_accounts_cannot_be_deleted(any_repo):
    sam = make_staff(any_repo, "sam", at=T0)
    (alice,) = users(any_repo, "alice")
    with pytest.raises(NotAllowed):
        any_repo.accounts.delete_account(sam)
    user = any_repo.users.get_user(alice)
    any_repo.accounts.delete_account(user)
    with pytest.raises(UserNotFound):
        any_repo.accounts.delete_account(user)


def test_purging_after_the_grace_period_frees_the_name_and_the_text(any_repo, any_r):
    alice, bob = users(any_repo, "alice", "bob")
    any_repo.graph.follow(bob, alice, at=T0)
    post_id = any_repo.posts.create_post(alice, "secret thoughts", at=T0 + 1)
    any_repo.accounts.delete_account(any_repo.users.get_user(alice), at=T0 + 10)
    grace = keys.DELETED_ACCOUNT_GRACE_DAYS * DAY

    assert any_repo.accounts.purge_deleted_accounts(at=T0 + 10 + grace - 1) == []
    assert any_repo.accounts.purge_deleted_accounts(at=T0 + 10 + grace) == [alice]

    assert "body" not in any_r.hgetall(keys.post(post_id))
    assert any_r.hget(keys.post(post_id), "deleted") == "1"
    assert any_r.exists(keys.own_posts(alice), keys.home_feed(alice)) == 0
    assert any_r.hget(keys.users(), "alice") is None
    assert any_r.hget(keys.usernames_lower(), "alice") is None
    assert any_r.zscore(keys.username_index(), "alice") is None
    assert any_r.hgetall(keys.user(alice)) == {"status": "deleted", "username": ""}
    assert any_r.zcard(keys.deleted_users()) == 0
    assert any_repo.users.get_user(alice) is None
    # The name can be taken again; bob's feed skips the dangling id.
    assert any_repo.users.create_user("alice", "h").id != alice
    assert any_repo.pages.home(bob).feed.items == []
