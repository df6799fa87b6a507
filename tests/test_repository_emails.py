"""Repository contract for addresses and mailed links, on real Redis and on fakeredis."""

from __future__ import annotations

import pytest

from social import keys
from social.repository import EmailTaken
from social.repository.clients.oauth import digest
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


def test_a_live_claim_refuses_another_account_a_link(any_repo, any_r):
    alice, bob = make_user(any_repo, "alice"), make_user(any_repo, "bob")
    any_repo.emails.confirm(any_repo.emails.request_change(bob.id, "x@example.org"))
    any_repo.emails.note_pending(alice.id, "X@example.org")  # the page answers alike

    with pytest.raises(EmailTaken):
        any_repo.emails.make_confirmation(alice.id, "X@example.org")
    assert list(any_r.scan_iter("email_confirm:*")) == []
    assert any_r.hget("emails", "x@example.org") == str(bob.id)


def test_no_confirmation_link_for_an_address_no_longer_pending(any_repo, any_r):
    alice = make_user(any_repo, "alice")
    any_repo.emails.note_pending(alice.id, "first@example.org")
    any_repo.emails.note_pending(alice.id, "second@example.org")  # a newer request

    assert any_repo.emails.make_confirmation(alice.id, "first@example.org") is None
    any_repo.emails.drop_pending(alice.id)
    assert any_repo.emails.make_confirmation(alice.id, "second@example.org") is None
    assert list(any_r.scan_iter("email_confirm:*")) == []
    assert any_repo.emails.state(alice.id).pending == ""


def test_a_queued_mail_is_claimed_once_and_marked_sent(any_repo, any_r):
    mail_id = "a" * 32
    key = keys.mail_sent(mail_id)

    assert any_repo.emails.claim_mail(mail_id) == "claimed"
    assert any_r.get(key) == "sending" and 0 < any_r.ttl(key) <= keys.MAIL_SENDING_TTL
    assert any_repo.emails.claim_mail(mail_id) == "sending"
    any_repo.emails.unclaim_mail(mail_id)  # the server refused it: the next try sends
    assert any_repo.emails.claim_mail(mail_id) == "claimed"
    any_repo.emails.mail_done(mail_id)

    assert any_repo.emails.claim_mail(mail_id) == "sent"
    assert any_r.get(key) == "sent" and any_r.ttl(key) > keys.MAIL_SENDING_TTL
    assert any_r.ttl(key) <= keys.MAIL_SENT_TTL


def test_links_made_for_a_mail_that_did_not_go_out_are_dropped(any_repo, any_r):
    alice = make_user(any_repo, "alice")
    any_repo.emails.confirm(any_repo.emails.request_change(alice.id, "a@example.org"))
    any_repo.emails.note_pending(alice.id, "b@example.org")
    links = [
        any_repo.emails.make_reset(alice.id),
        any_repo.emails.make_confirmation(alice.id, "b@example.org"),
    ]
    assert len(list(any_r.scan_iter("password_reset:*"))) == 1

    any_repo.emails.drop_links(links)

    assert list(any_r.scan_iter("password_reset:*")) == []
    assert list(any_r.scan_iter("email_confirm:*")) == []
    assert any_repo.emails.state(alice.id).pending == "b@example.org"


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
