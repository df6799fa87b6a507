"""Mail by the worker (issue 33): the pages queue mail on the "mail" queue and answer at
once; the worker (work.run_pending here) writes and sends it, once in effect, links from
SITE_URL, in the language it was asked in. Mail goes to Django's test outbox."""

from __future__ import annotations

import json
import time

import pytest
from django.core import mail as django_mail
from django.test import Client
from django.utils import translation

from social import keys, work
from social.work.registry import handler_for
from tests.conftest import login

RESET_PAYLOAD = {"email", "lang", "mail"}


def queued(r) -> list[dict]:
    return [json.loads(fields["job"]) for _, fields in r.xrange(keys.job_stream("mail"))]


def delayed(r) -> list[dict]:
    return [json.loads(job) for job in r.zrange(keys.job_delayed("mail"), 0, -1)]


def dead(r) -> list[dict]:
    return [json.loads(job) for job in r.lrange(keys.job_dead("mail"), 0, -1)]


def later() -> int:
    return int((time.time() + 24 * 3600) * 1000)


def forgot(address: str, **extra):
    return Client().post("/password/forgot/", {"email": address}, **extra)


@pytest.fixture
def alice_address(repo, alice) -> str:
    repo.emails.confirm(repo.emails.request_change(alice.id, "alice@example.org"))
    return "alice@example.org"


def test_forgot_password_queues_the_reset_and_answers_before_any_mail_is_sent(
    alice, alice_address, r, settings
):
    response = forgot("Alice@Example.org")

    assert response.status_code == 302 and response["Location"] == "/login/"
    [job] = queued(r)
    assert job["kind"] == "password_reset" and set(job["payload"]) == RESET_PAYLOAD
    assert job["payload"]["email"] == "Alice@Example.org"  # no account, no link in it
    assert django_mail.outbox == [] and list(r.scan_iter("password_reset:*")) == []

    assert work.run_pending("mail") == 1

    [sent] = django_mail.outbox
    assert sent.to == ["alice@example.org"] and sent.subject == "Reset your Retwis password"
    assert f"{settings.SITE_URL}/password/reset/" in sent.body
    [link_key] = r.scan_iter("password_reset:*")
    assert r.hget(link_key, "user_id") == str(alice.id)
    assert queued(r) == [] and delayed(r) == [] and dead(r) == []
    assert r.get(keys.mail_sent(job["payload"]["mail"])) == "sent"
    assert 0 < r.ttl(keys.mail_sent(job["payload"]["mail"])) <= keys.MAIL_SENT_TTL


def test_forgot_password_does_the_same_work_whatever_the_address(
    repo, alice, alice_address, bob, sam, r, round_trips
):
    repo.emails.note_pending(bob.id, "pending@example.org")  # asked for, never confirmed
    asked = ["alice@example.org", "nobody@example.org", "pending@example.org"]
    answers, trips = [], []
    for address in asked:
        round_trips.reset()
        answers.append(forgot(address))
        trips.append(round_trips.count)

    assert len(set(trips)) == 1  # no look-up of the address in the request
    assert {(a.status_code, a["Location"]) for a in answers} == {(302, "/login/")}
    assert [(job["kind"], set(job["payload"])) for job in queued(r)] == [
        ("password_reset", RESET_PAYLOAD)
    ] * 3
    assert django_mail.outbox == []
    assert work.run_pending("mail") == 3
    assert [m.to for m in django_mail.outbox] == [["alice@example.org"]]


def test_an_address_change_does_the_same_work_whether_or_not_the_address_is_taken(
    repo, alice, alice_address, bob, charlie, r, round_trips
):
    data = {"password": "correct horse battery"}
    free_client, taken_client = login(Client(), repo, bob), login(Client(), repo, charlie)
    trips = []
    for client, address in ((free_client, "bob@example.org"), (taken_client, alice_address)):
        round_trips.reset()
        assert client.post("/settings/email/", {**data, "email": address}).status_code == 302
        trips.append(round_trips.count)

    assert trips[0] == trips[1]
    assert [job["kind"] for job in queued(r)] == ["confirm_address"] * 2
    assert django_mail.outbox == []
    work.run_pending("mail")
    assert [m.to for m in django_mail.outbox] == [["bob@example.org"], ["alice@example.org"]]
    assert "/settings/email/confirm/" in django_mail.outbox[0].body
    assert django_mail.outbox[1].subject == "Someone tried to use your e-mail address"


def test_a_mail_job_run_twice_sends_once(alice, alice_address, r):
    forgot(alice_address)
    [job] = queued(r)
    run = handler_for("mail", "password_reset")

    run(job["payload"])  # a worker sends it and dies before acknowledging: it runs again
    run(job["payload"])

    assert len(django_mail.outbox) == 1
    assert len(list(r.scan_iter("password_reset:*"))) == 1
    assert r.get(keys.mail_sent(job["payload"]["mail"])) == "sent"


def test_a_mail_another_worker_is_sending_waits_and_goes_once_its_claim_lapses(
    alice, alice_address, r
):
    forgot(alice_address)
    [job] = queued(r)
    marker = keys.mail_sent(job["payload"]["mail"])
    r.set(marker, "sending", ex=keys.MAIL_SENDING_TTL)  # a worker died while sending it

    assert work.run_pending("mail") == 1

    assert django_mail.outbox == []
    [waiting] = delayed(r)
    assert waiting["error"] == "Retry: another worker is sending it"
    r.delete(marker)  # its claim expired
    assert work.run_pending("mail", now=later()) == 1
    assert len(django_mail.outbox) == 1 and r.get(marker) == "sent"


def test_the_mail_is_written_in_the_language_it_was_asked_in(alice, alice_address, r):
    forgot(alice_address, HTTP_ACCEPT_LANGUAGE="zh-hans")

    assert queued(r)[0]["payload"]["lang"] == "zh-hans"
    translation.activate("en")  # the worker's own language
    work.run_pending("mail")

    with translation.override("zh-hans"):
        subject = translation.gettext("Reset your Retwis password")
    assert subject != "Reset your Retwis password"
    assert django_mail.outbox[0].subject == subject
    assert translation.get_language() == "en"  # the worker's own is left as it was


def test_a_mail_job_without_its_id_is_a_dead_letter_at_once(r):
    work.enqueue("mail", "password_reset", {"email": "a@example.org"})

    assert work.run_pending("mail") == 1

    [buried] = dead(r)
    assert buried["error"] == "Permanent: a mail job without its id"
    assert django_mail.outbox == [] and list(r.scan_iter("mail_sent:*")) == []
