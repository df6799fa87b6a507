"""Repository contract for addresses and mailed links, on real Redis and on fakeredis."""

from __future__ import annotations

import pytest

from social import keys
from social.repository import EmailTaken
from social.repository.oauth import digest
from tests.conftest import make_user


def test_a_confirmation_link_lives_a_day_and_names_its_account(any_repo, any_r):
    alice = make_user(any_repo, "alice")

    token = any_repo.emails.request_change(alice.id, " Alice@Example.org ")

    key = keys.email_confirmation(digest(token))
    assert any_r.hgetall(key)["email"] == "Alice@Example.org"
    assert 0 < any_r.ttl(key) <= keys.EMAIL_CONFIRMATION_TTL
    link = any_repo.emails.confirmation(token)
    assert link is not None and link.user.id == alice.id
    assert any_repo.emails.state(alice.id).pending == "Alice@Example.org"


def test_confirming_claims_the_address_and_uses_the_link_up(any_repo, any_r):
    alice = make_user(any_repo, "alice")
    token = any_repo.emails.request_change(alice.id, "Alice@Example.org")

    link = any_repo.emails.confirm(token, at=1_700_000_000)

    assert link is not None and link.email == "Alice@Example.org"
    assert any_r.hget("emails", "alice@example.org") == str(alice.id)
    assert any_repo.emails.state(alice.id).confirmed_at == 1_700_000_000
    assert any_repo.emails.confirm(token) is None
    assert any_repo.emails.account_for("ALICE@example.org").id == alice.id


def test_a_stale_claim_is_taken_over(any_repo, any_r):
    alice, bob = make_user(any_repo, "alice"), make_user(any_repo, "bob")
    any_r.hset("emails", "x@example.org", bob.id)  # bob's hash never got the address

    any_repo.emails.confirm(any_repo.emails.request_change(alice.id, "x@example.org"))

    assert any_r.hget("emails", "x@example.org") == str(alice.id)


def test_a_live_claim_refuses_another_account(any_repo, any_r):
    alice, bob = make_user(any_repo, "alice"), make_user(any_repo, "bob")
    any_repo.emails.confirm(any_repo.emails.request_change(bob.id, "x@example.org"))

    with pytest.raises(EmailTaken):
        any_repo.emails.request_change(alice.id, "X@example.org")
    assert any_r.hget(f"user:{alice.id}", "email_pending") is None


def test_a_reset_link_dies_when_the_password_field_changes(any_repo, any_r):
    alice = make_user(any_repo, "alice")
    any_repo.emails.confirm(any_repo.emails.request_change(alice.id, "a@example.org"))
    link = any_repo.emails.make_reset(alice.id)
    assert 0 < any_r.ttl(keys.password_reset(digest(link.token))) <= keys.PASSWORD_RESET_TTL
    assert any_repo.emails.reset_link(link.token).user.id == alice.id

    any_repo.users.set_password_hash(alice.id, "md5$other$hash")

    assert any_repo.emails.reset_link(link.token) is None
    assert any_repo.emails.take_reset(link.token) is None


def test_a_reset_link_is_taken_once(any_repo):
    alice = make_user(any_repo, "alice")
    any_repo.emails.confirm(any_repo.emails.request_change(alice.id, "a@example.org"))
    link = any_repo.emails.make_reset(alice.id)

    assert any_repo.emails.take_reset(link.token).user.id == alice.id
    assert any_repo.emails.take_reset(link.token) is None


def test_no_reset_link_without_a_confirmed_address(any_repo):
    alice = make_user(any_repo, "alice")
    any_repo.emails.request_change(alice.id, "a@example.org")  # pending only

    assert any_repo.emails.make_reset(alice.id) is None
