"""base.user_from_hash, the one place a user hash (or some of its fields) becomes a User."""

from __future__ import annotations

from social.repository.base import USER_DECODERS, USER_FIELDS, user_from_hash
from social.repository.models import User


def test_a_whole_user_hash_becomes_its_user():
    h = {
        "username": "alice", "signup": "1700000000", "staff": "1", "status": "",
        "last_login": "1700000100", "last_login_ip": "192.0.2.1", "unread_mentions": "3",
        "relations": "1", "unread_notifications": "4", "display_name": "Alice A.",
        "note": "hi @bob #redis", "note_mentions": "2:bob", "note_tags": "redis", "avatar": "a1",
        "header": "h1", "domain": "", "password": "not a field of User", "auth": "secret",
    }  # fmt: skip

    assert user_from_hash(7, h) == User(
        id=7, username="alice", signup_time=1700000000, is_staff=True, last_login=1700000100,
        last_login_ip="192.0.2.1", unread_mentions=3, has_relations=True,
        unread_notifications=4, display_name="Alice A.", note="hi @bob #redis",
        note_mentions=(("bob", 2),), note_tags=("redis",), avatar="a1", header="h1",
    )  # fmt: skip


def test_some_fields_leave_the_others_at_their_defaults():
    assert user_from_hash(3, {"username": "bob", "status": None}) == User(3, "bob")
    assert user_from_hash(3, {"username": "bob", "display_name": "", "signup": None}) == User(
        3, "bob"
    )


def test_a_suspended_or_deleted_account_is_hidden_and_a_deleted_one_says_so():
    suspended = user_from_hash(3, {"username": "bob", "status": "suspended"})
    deleted = user_from_hash(3, {"username": "bob", "status": "deleted"})

    assert suspended is not None and (suspended.is_suspended, suspended.is_deleted) == (True, False)
    assert deleted is not None and (deleted.is_suspended, deleted.is_deleted) == (True, True)


def test_junk_counts_read_as_zero_and_no_name_is_no_account():
    user = user_from_hash(3, {"username": "bob", "unread_mentions": "-2", "signup": "soon"})

    assert user == User(3, "bob")
    assert user_from_hash(3, {"username": "", "signup": "1"}) is None
    assert user_from_hash(3, {}) is None


def test_every_field_the_pages_read_has_a_decoder():
    assert set(USER_FIELDS) - {"username", "status"} == set(USER_DECODERS)
    assert {attribute for attribute, _ in USER_DECODERS.values()} <= set(User.__dataclass_fields__)
