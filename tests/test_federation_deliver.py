"""Deliveries (social/federation/deliver.py, social/work_handlers/deliver.py): our activities
POSTed, signed, to the inboxes of other servers, on real Redis, with a small HTTP server
of ours as the remote inbox (remote.test through FEDERATION_HOSTS, plain http and
127.0.0.0/8 allowed, as two local instances are).

The worker tier runs the jobs in this process (work.run_pending); retries are made due by
running the queue at a later `now`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from social import keys, work
from social.federation import deliver as outbox
from social.federation import documents
from social.federation.signatures import (
    RequestParts,
    load_public_key,
    parse_signature,
    verify_signature,
)
from social.repository.federation.deliveries import UNAVAILABLE_AFTER_DAYS
from social.repository.work.jobs import now_ms
from social.work_handlers.deliver import signing_keys

REMOTE = "remote.test"
INBOX = f"http://{REMOTE}/inbox"
DAY = 24 * 3600
LATER = 40 * 24 * 3600 * 1000  # ms: past any retry's delay and any domain's backoff


# --- The remote inbox --------------------------------------------------------------------


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def activity(self) -> dict:
        return json.loads(self.body)


@dataclass
class RemoteInbox:
    """What the remote server received, and the statuses it answers next (202 after)."""

    port: int = 0
    received: list[Received] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)
    connections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_status(self) -> int:
        with self.lock:
            return self.answers.pop(0) if self.answers else 202


class InboxHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as servers answer
    server: InboxServer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        inbox = self.server.inbox
        with inbox.lock:
            inbox.received.append(Received("POST", self.path, dict(self.headers), body))
        status = inbox.next_status()
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


class InboxServer(ThreadingHTTPServer):
    daemon_threads = True
    inbox: RemoteInbox

    def get_request(self):
        accepted = super().get_request()
        with self.inbox.lock:
            self.inbox.connections += 1
        return accepted


@pytest.fixture
def remote(settings) -> Iterator[RemoteInbox]:
    server = InboxServer(("127.0.0.1", 0), InboxHandler)
    server.inbox = RemoteInbox(port=server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.SITE_URL = "https://local.test"
    settings.FEDERATION_HOSTS = {REMOTE: ("127.0.0.1", server.inbox.port)}
    settings.FEDERATION_ALLOW_HTTP = True
    settings.FEDERATION_ALLOW_ADDRESSES = ["127.0.0.0/8"]
    signing_keys.forget()  # key ids are SITE_URL's
    yield server.inbox
    server.shutdown()
    server.server_close()


def run_deliveries(*, now: int | None = None) -> int:
    return work.run_pending(outbox.QUEUE, now=now)


def dead_letters(repo) -> list:
    return repo.jobs.dead_letters(outbox.QUEUE)


def delayed(r) -> list[dict]:
    """The delayed jobs, each with its due time (ms) as `due`."""
    jobs = r.zrange(keys.job_delayed(outbox.QUEUE), 0, -1, withscores=True)
    return [{**json.loads(job), "due": due} for job, due in jobs]


ACTIVITY = {
    "@context": documents.AS_PROFILE,
    "id": "https://local.test/ap/users/1#likes/7",
    "type": "Like",
    "actor": "https://local.test/ap/users/1",
    "object": "http://remote.test/notes/7",
}


# --- One delivery ------------------------------------------------------------------------


def test_a_delivery_is_a_signed_post_that_verifies_with_the_signer_s_public_key(
    repo, remote, alice
):
    assert outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX]) == 1

    assert run_deliveries() == 1
    [got] = remote.received
    assert (got.method, got.path) == ("POST", "/inbox")
    assert got.headers["Content-Type"] == documents.ACTIVITY_JSON
    assert got.activity == ACTIVITY
    parts = RequestParts.of("POST", got.path, got.headers, got.body, "http")
    parsed = parse_signature(parts)
    assert parsed.key_id == f"https://local.test/ap/users/{alice.id}#main-key"
    public = load_public_key(repo.federation_keys.for_account(alice.id).public_pem)
    verified = verify_signature(parts, parsed, public)
    assert set(verified.components) >= {"(request-target)", "host", "date", "digest"}
    assert repo.jobs.stats([outbox.QUEUE])[0].done == 1


def test_the_instance_actor_signs_with_its_own_key(repo, remote):
    outbox.deliver(ACTIVITY, signer=outbox.INSTANCE, inboxes=[INBOX])
    run_deliveries()

    [got] = remote.received
    parts = RequestParts.of("POST", got.path, got.headers, got.body, "http")
    parsed = parse_signature(parts)
    assert parsed.key_id == "https://local.test/ap/actor#main-key"
    verify_signature(parts, parsed, load_public_key(repo.federation_keys.for_instance().public_pem))


def test_each_distinct_inbox_gets_one_delivery_and_ours_or_odd_ones_none(repo, remote, alice):
    inboxes = [
        INBOX,
        INBOX,
        f"http://{REMOTE}/users/bob/inbox",
        "https://local.test/ap/inbox",  # our own
        "ftp://remote.test/inbox",
        "not a url",
    ]

    assert outbox.deliver(ACTIVITY, signer=alice.id, inboxes=inboxes) == 2
    run_deliveries()

    assert sorted(got.path for got in remote.received) == ["/inbox", "/users/bob/inbox"]


def test_plain_http_inboxes_are_skipped_unless_allowed(repo, remote, settings, alice):
    settings.FEDERATION_ALLOW_HTTP = False

    assert outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX]) == 0
    assert repo.jobs.stats([outbox.QUEUE])[0].ready == 0


def test_a_server_error_is_retried_with_backoff_then_delivered(repo, r, remote, alice):
    remote.answers = [500]
    before = now_ms()
    outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX])

    run_deliveries()

    [waiting] = delayed(r)
    assert waiting["attempt"] == 1 and "500" in waiting["error"]
    assert waiting["due"] >= before + 15_000  # Mastodon's first wait: 15 s and more
    assert repo.jobs.backoff_until(outbox.QUEUE, REMOTE) > before  # the domain backs off
    assert repo.federation_deliveries.days_failing(REMOTE) == 1
    assert run_deliveries() == 0  # not due yet

    assert run_deliveries(now=now_ms() + LATER) == 1

    assert [got.activity for got in remote.received] == [ACTIVITY, ACTIVITY]
    assert delayed(r) == [] and dead_letters(repo) == []
    assert repo.jobs.backoff_until(outbox.QUEUE, REMOTE) == 0
    assert repo.federation_deliveries.days_failing(REMOTE) == 0


@pytest.mark.parametrize("status", [408, 429, 401, 502, 503])
def test_these_answers_are_retried(repo, r, remote, alice, status):
    remote.answers = [status]
    outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX])

    run_deliveries()

    assert [job["attempt"] for job in delayed(r)] == [1]
    assert dead_letters(repo) == []


@pytest.mark.parametrize("status", [410, 404, 400, 403, 422, 501])
def test_a_gone_inbox_or_a_refusal_is_given_up_at_once(repo, r, remote, alice, status):
    remote.answers = [status]
    outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX])

    run_deliveries()

    [letter] = dead_letters(repo)
    assert letter.destination == REMOTE and str(status) in letter.error
    assert delayed(r) == []
    assert len(remote.received) == 1
    # The server answered: not a failing domain.
    assert repo.federation_deliveries.days_failing(REMOTE) == 0


def test_a_refused_connection_is_retried(repo, r, remote, settings, alice):
    settings.FEDERATION_HOSTS = {REMOTE: ("127.0.0.1", 1)}  # nothing listens there
    outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX])

    run_deliveries()

    [waiting] = delayed(r)
    assert waiting["attempt"] == 1 and "connect" in waiting["error"]
    assert repo.federation_deliveries.days_failing(REMOTE) == 1


def test_a_private_address_is_given_up_before_connecting(repo, r, remote, settings, alice):
    settings.FEDERATION_ALLOW_ADDRESSES = []
    outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX])

    run_deliveries()

    [letter] = dead_letters(repo)
    assert "refused" in letter.error
    assert remote.connections == 0


def test_a_delivery_signed_by_no_account_is_given_up(repo, remote):
    outbox.deliver(ACTIVITY, signer=999, inboxes=[INBOX])

    run_deliveries()

    [letter] = dead_letters(repo)
    assert "999" in letter.error
    assert remote.received == []


def test_the_last_attempt_makes_a_dead_letter(repo, r, remote, alice):
    shape = work.queue(outbox.QUEUE)
    remote.answers = [500] * shape.attempts
    outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX])

    now = now_ms()
    for _ in range(shape.attempts):
        now += LATER
        assert run_deliveries(now=now) == 1

    assert len(remote.received) == shape.attempts == 17  # Mastodon: a try and 16 retries
    [letter] = dead_letters(repo)
    assert letter.attempt == shape.attempts - 1 and "500" in letter.error


def test_mastodon_s_schedule_spans_about_two_and_a_half_days():
    shape = work.queue(outbox.QUEUE)
    waits = [shape.backoff(attempt) for attempt in range(shape.attempts - 1)]

    assert waits[0] >= 15_000
    assert 2.0 * DAY * 1000 < sum(waits) < 3.2 * DAY * 1000


# --- Unavailable domains -----------------------------------------------------------------


def fail_on_days(repo, domain: str, days: int, *, first_day: int = 20_000) -> list[bool]:
    return [
        repo.federation_deliveries.failed(domain, now=(first_day + day) * DAY)
        for day in range(days)
    ]


def test_a_domain_failing_on_seven_days_is_unavailable_and_skipped(repo, remote, alice):
    made = fail_on_days(repo, REMOTE, UNAVAILABLE_AFTER_DAYS)
    fail_on_days(repo, REMOTE, 1)  # more failures on a day already counted

    assert made == [False] * (UNAVAILABLE_AFTER_DAYS - 1) + [True]
    assert repo.federation_deliveries.days_failing(REMOTE) == UNAVAILABLE_AFTER_DAYS
    assert outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX]) == 0
    assert repo.jobs.stats([outbox.QUEUE])[0].ready == 0


def test_failures_on_one_day_do_not_make_a_domain_unavailable(repo):
    for hour in range(48):
        assert not repo.federation_deliveries.failed(REMOTE, now=20_000 * DAY + hour * 1800)

    assert repo.federation_deliveries.days_failing(REMOTE) == 1


def test_a_job_queued_before_its_domain_became_unavailable_is_dropped_unsent(repo, remote, alice):
    outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX])
    fail_on_days(repo, REMOTE, UNAVAILABLE_AFTER_DAYS)

    assert run_deliveries() == 1

    assert remote.received == [] and dead_letters(repo) == []


def test_an_unavailable_domain_is_revived_by_a_success_from_it(repo, remote, alice):
    fail_on_days(repo, REMOTE, UNAVAILABLE_AFTER_DAYS)

    # The inbox verified an activity from it (or a delivery got through).
    assert repo.federation_deliveries.succeeded(REMOTE) is True

    assert outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX]) == 1
    run_deliveries()
    assert len(remote.received) == 1
    assert repo.federation_deliveries.days_failing(REMOTE) == 0
    assert repo.federation_deliveries.failing() == []


def test_a_delivery_that_gets_through_forgets_the_domain_s_failures(repo, remote, alice):
    fail_on_days(repo, REMOTE, 3)
    outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX])

    run_deliveries()

    assert repo.federation_deliveries.days_failing(REMOTE) == 0
    assert repo.federation_deliveries.failing() == []


def test_staff_lists_failing_and_unavailable_domains(repo):
    fail_on_days(repo, "down.test", UNAVAILABLE_AFTER_DAYS, first_day=20_000)
    fail_on_days(repo, "flaky.test", 2, first_day=20_010)

    listed = {item.domain: item for item in repo.federation_deliveries.failing()}

    assert listed["down.test"].days == UNAVAILABLE_AFTER_DAYS
    assert listed["down.test"].unavailable_since == 20_006 * DAY
    assert listed["down.test"].first == 20_000 * DAY
    assert listed["flaky.test"].days == 2 and listed["flaky.test"].unavailable_since is None
    assert listed["flaky.test"].last == 20_011 * DAY


def test_a_failure_record_expires_a_month_after_its_last_failure(repo, r):
    fail_on_days(repo, REMOTE, 2)

    ttl = r.ttl(keys.delivery_failure(REMOTE))
    assert keys.DELIVERY_FAILURE_KEEP - 60 < ttl <= keys.DELIVERY_FAILURE_KEEP


def test_the_delivery_keys_are_named_as_documented():
    assert keys.delivery_failure("a.test:8443") == "ap:{deliveries}:failure:a.test:8443"
    assert keys.delivery_failing() == "ap:{deliveries}:failing"
    assert keys.unavailable_domains() == "ap:{deliveries}:unavailable"
    assert keys.follows_sent(7) == "ap:follows:7"
    with pytest.raises(ValueError):
        keys.delivery_failure("a b")
