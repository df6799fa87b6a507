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
from django.test import Client

from social import keys, work
from social.federation import deliver as outbox
from social.federation import documents, outgoing
from social.federation.actor_documents import parse_actor
from social.federation.signatures import (
    RequestParts,
    generate_key_pair,
    load_public_key,
    parse_signature,
    sign_request,
    verify_signature,
)
from social.repository.federation.actors import RemoteActor
from social.repository.federation.deliveries import UNAVAILABLE_AFTER_DAYS
from social.repository.work.jobs import now_ms
from social.text import encode_mentions
from social.work_handlers.deliver import signing_keys
from tests.conftest import make_user
from tests.federation_actors import mastodon_actor

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
    assert keys.activities_sent(7) == "ap:sent:7"
    with pytest.raises(ValueError):
        keys.delivery_failure("a b")


# --- Fan-out of our actions ----------------------------------------------------------------

OTHER = "other.test"  # a second server, served by the same test inbox (its Host tells)


@pytest.fixture
def peers(remote, settings) -> RemoteInbox:
    settings.FEDERATION_HOSTS = {
        REMOTE: ("127.0.0.1", remote.port),
        OTHER: ("127.0.0.1", remote.port),
    }
    return remote


def remote_account(repo, name: str, host: str = REMOTE, *, shared: bool = True) -> RemoteActor:
    """A remote account stored as the resolver stores one (Mastodon's actor document)."""
    changes = {} if shared else {"endpoints": None}
    document = mastodon_actor(name, host, "http", **changes)
    return repo.remote_actors.upsert(parse_actor(document, fetched_from=document["id"]))


def remote_post(repo, r, author: RemoteActor, text: str = "from afar") -> tuple[int, str]:
    """A post kept here of a remote author's, with its id there (objects.py's `uri`)."""
    post_id = repo.posts.create_post(author.id, text)
    uri = f"{author.uri}/statuses/{post_id}"
    r.hset(keys.post(post_id), "uri", uri)
    return post_id, uri


def fan_out() -> int:
    """Run the fan-out jobs, then the deliveries they queued; return how many ran."""
    return run_deliveries() + run_deliveries()


def sent(remote: RemoteInbox) -> list[tuple[str, str, dict]]:
    """(host, path, activity) of each delivery received, in order."""
    return [(got.headers["Host"], got.path, got.activity) for got in remote.received]


def test_a_post_reaches_each_server_of_remote_followers_once(repo, peers, alice, alice_client):
    on_remote = [remote_account(repo, name) for name in ("bob", "carol", "dan")]
    lone = remote_account(repo, "erin", OTHER, shared=False)
    local = make_user(repo, "lou")
    for follower in [*on_remote, lone, local]:
        repo.graph.follow(follower.id, alice.id)

    assert alice_client.post("/post/", {"status": "hello fediverse"}).status_code == 302
    fan_out()

    got = sorted((host, path) for host, path, _ in sent(peers))
    assert got == [(OTHER, "/users/erin/inbox"), (REMOTE, "/inbox")]
    activity = peers.received[0].activity
    post_id = int(r_last_post(repo, alice.id))
    assert activity["type"] == "Create" and activity["actor"] == documents.actor_id(alice.id)
    assert activity["object"]["id"] == documents.post_id(post_id)
    assert activity["object"]["content"] == "<p>hello fediverse</p>"
    assert activity["to"] == [documents.PUBLIC]
    assert activity["cc"] == [documents.actor_id(alice.id) + "/followers"]


def r_last_post(repo, user_id: int) -> int:
    return repo.r.lrange(keys.own_posts(user_id), 0, 0)[0]


def test_a_post_reaches_the_remote_accounts_it_mentions_and_answers(repo, r, peers, alice):
    bob = remote_account(repo, "bob")
    erin = remote_account(repo, "erin", OTHER, shared=False)
    parent, parent_uri = remote_post(repo, r, erin)
    reply = repo.posts.create_post(alice.id, "@bob@remote.test indeed", reply_to=parent)
    r.hset(keys.post(reply), "mentions", encode_mentions({"bob@remote.test": bob.id}))

    outgoing.posted(alice.id, reply)
    fan_out()

    got = {host: activity for host, _path, activity in sent(peers)}
    assert set(got) == {REMOTE, OTHER}
    note = got[REMOTE]["object"]
    assert note["inReplyTo"] == parent_uri  # their id, not our address of their post
    assert bob.uri in note["cc"] and documents.actor_id(bob.id) not in note["cc"]
    assert {"type": "Mention", "href": bob.uri, "name": "@bob@remote.test"} in note["tag"]


def test_no_remote_follower_no_delivery(repo, peers, alice):
    repo.graph.follow(make_user(repo, "lou").id, alice.id)
    post = repo.posts.create_post(alice.id, "local news")

    outgoing.posted(alice.id, post)
    fan_out()

    assert peers.received == []
    assert repo.jobs.stats([outbox.QUEUE])[0].done == 1  # the fan-out alone


def test_a_site_that_does_not_federate_queues_nothing(repo, settings, alice, alice_client):
    settings.SITE_URL = "http://127.0.0.1:8000"
    settings.FEDERATION_HOSTS = {}

    assert alice_client.post("/post/", {"status": "hello"}).status_code == 302

    assert repo.jobs.stats([outbox.QUEUE])[0].ready == 0


def test_deleting_a_post_sends_its_tombstone_to_the_same_servers(repo, peers, alice):
    bob = remote_account(repo, "bob")
    repo.graph.follow(bob.id, alice.id)
    post = repo.posts.create_post(alice.id, "regrets")
    repo.posts.delete_own_post(alice.id, post)

    outgoing.deleted(alice.id, post)
    fan_out()

    [(host, path, activity)] = sent(peers)
    assert (host, path) == (REMOTE, "/inbox")
    assert activity == {
        "@context": documents.AS_PROFILE,
        "id": documents.post_id(post) + "#delete",
        "type": "Delete",
        "actor": documents.actor_id(alice.id),
        "object": {"id": documents.post_id(post), "type": "Tombstone"},
        "to": [documents.PUBLIC],
    }


def test_a_post_still_standing_is_not_deleted_remotely(repo, peers, alice):
    repo.graph.follow(remote_account(repo, "bob").id, alice.id)
    post = repo.posts.create_post(alice.id, "still here")

    outgoing.deleted(alice.id, post)
    fan_out()

    assert peers.received == []


def test_liking_a_remote_post_tells_its_author_and_unliking_undoes_that_like(
    repo, r, peers, alice, alice_client
):
    erin = remote_account(repo, "erin", OTHER)
    post, uri = remote_post(repo, r, erin)

    assert alice_client.post(f"/p/{post}/like/").status_code == 302
    fan_out()
    assert alice_client.post(f"/p/{post}/unlike/").status_code == 302
    fan_out()

    (_, path1, like), (_, path2, undo) = sent(peers)
    assert path1 == path2 == "/users/erin/inbox"  # the author's own inbox, as Mastodon
    actor = documents.actor_id(alice.id)
    assert like["type"] == "Like" and like["actor"] == actor and like["object"] == uri
    assert like["id"].startswith(f"{actor}#likes/{post}/")
    assert undo["type"] == "Undo" and undo["id"] == like["id"] + "/undo"
    assert undo["object"] == {k: v for k, v in like.items() if k != "@context"}
    assert r.hgetall(keys.activities_sent(alice.id)) == {}


def test_liking_a_local_post_tells_no_one(repo, peers, alice, bob):
    repo.graph.follow(remote_account(repo, "carol").id, alice.id)
    post = repo.posts.create_post(bob.id, "local")
    repo.likes.like(alice.id, post)

    outgoing.liked(alice.id, post)
    fan_out()

    assert peers.received == []


def test_a_like_taken_back_before_its_fan_out_sends_nothing_at_all(repo, r, peers, alice):
    post, _ = remote_post(repo, r, remote_account(repo, "erin"))
    repo.likes.like(alice.id, post)
    outgoing.liked(alice.id, post)
    repo.likes.unlike(alice.id, post)
    outgoing.unliked(alice.id, post)

    fan_out()

    assert peers.received == []


def test_a_repost_is_announced_to_followers_and_the_author_then_undone(
    repo, r, peers, alice, alice_client
):
    repo.graph.follow(remote_account(repo, "bob").id, alice.id)
    erin = remote_account(repo, "erin", OTHER, shared=False)
    post, uri = remote_post(repo, r, erin)

    assert alice_client.post(f"/p/{post}/repost/").status_code == 302
    fan_out()
    repost_id = repo.r.zscore(keys.user_reposts(alice.id), post)
    assert alice_client.post(f"/p/{post}/unrepost/").status_code == 302
    fan_out()

    announces = [activity for _h, _p, activity in sent(peers) if activity["type"] == "Announce"]
    undos = [activity for _h, _p, activity in sent(peers) if activity["type"] == "Undo"]
    assert len(announces) == len(undos) == 2  # bob's server and erin's
    announce = announces[0]
    assert announce["id"] == documents.activity_id(int(repost_id))
    assert announce["object"] == uri and erin.uri in announce["cc"]
    assert undos[0]["object"]["id"] == announce["id"] and undos[0]["object"]["object"] == uri
    assert {h for h, _p, _a in sent(peers)} == {REMOTE, OTHER}


def test_following_a_remote_account_sends_follow_and_unfollowing_its_undo(repo, r, peers, alice):
    bob = remote_account(repo, "bob")
    repo.graph.follow(alice.id, bob.id)
    outgoing.followed(alice.id, bob.id)
    fan_out()
    repo.graph.unfollow(alice.id, bob.id)
    outgoing.unfollowed(alice.id, bob.id)
    fan_out()

    (_, path, follow), (_, path2, undo) = sent(peers)
    assert path == path2 == "/users/bob/inbox"
    actor = documents.actor_id(alice.id)
    assert {k: follow[k] for k in ("type", "actor", "object")} == {
        "type": "Follow",
        "actor": actor,
        "object": bob.uri,
    }
    assert undo["type"] == "Undo" and undo["object"]["id"] == follow["id"]
    assert undo["object"]["type"] == "Follow"


def test_following_again_is_a_new_follow(repo, peers, alice):
    bob = remote_account(repo, "bob")
    ids = []
    for _ in range(2):
        repo.graph.follow(alice.id, bob.id)
        outgoing.queue_action(outgoing.FOLLOW, alice.id, bob.id)
        fan_out()
        ids.append(peers.received[-1].activity["id"])
        repo.graph.unfollow(alice.id, bob.id)
        outgoing.unfollowed(alice.id, bob.id)
        fan_out()

    assert ids[0] != ids[1]


def test_blocking_a_remote_follower_sends_block_and_stops_deliveries_to_it(repo, peers, alice):
    bob = remote_account(repo, "bob")
    repo.graph.follow(bob.id, alice.id)
    repo.graph.follow(alice.id, bob.id)
    outgoing.followed(alice.id, bob.id)
    fan_out()

    repo.relations.block(alice.id, bob.id)
    outgoing.blocked(alice.id, bob.id)
    fan_out()
    post = repo.posts.create_post(alice.id, "not for bob")
    outgoing.posted(alice.id, post)
    fan_out()
    repo.relations.unblock(alice.id, bob.id)
    outgoing.unblocked(alice.id, bob.id)
    fan_out()

    kinds = [(a["type"], a["object"]["type"] if isinstance(a["object"], dict) else "")
             for _h, _p, a in sent(peers)]  # fmt: skip
    assert kinds == [("Follow", ""), ("Undo", "Follow"), ("Block", ""), ("Undo", "Block")]
    block = peers.received[2].activity
    assert block["actor"] == documents.actor_id(alice.id) and block["object"] == bob.uri


def test_a_profile_change_updates_the_person_at_followers_servers(repo, peers, alice, alice_client):
    repo.graph.follow(remote_account(repo, "bob").id, alice.id)

    response = alice_client.post("/settings/profile/", {"display_name": "Alice A."})
    assert response.status_code == 302
    fan_out()

    [(_, path, update)] = sent(peers)
    assert path == "/inbox"
    assert update["type"] == "Update" and update["actor"] == documents.actor_id(alice.id)
    person = update["object"]
    assert person["type"] == "Person" and person["id"] == documents.actor_id(alice.id)
    assert person["name"] == "Alice A." and "@context" not in person
    assert person["publicKey"]["publicKeyPem"].startswith("-----BEGIN PUBLIC KEY-----")
    assert update["to"] == [documents.PUBLIC]


@pytest.mark.parametrize(
    ("site", "hosts", "federates"),
    [
        ("https://social.example.org", {}, True),
        ("https://203.0.113.9", {}, False),  # documentation range: not global
        ("https://8.8.8.8", {}, True),
        ("http://127.0.0.1:8000", {}, False),
        ("http://testserver", {}, False),
        ("http://localhost:8000", {}, False),
        ("https://alpha.test:18001", {}, False),
        ("https://box.local", {}, False),
        ("http://alpha.test:18001", {"beta.test": ("127.0.0.1", 18002)}, True),
    ],
)
def test_a_site_federates_with_a_public_address_or_routed_peers(settings, site, hosts, federates):
    settings.SITE_URL, settings.FEDERATION_HOSTS = site, hosts

    assert outgoing.federating() is federates


# --- Staff ------------------------------------------------------------------------------


def test_staff_see_failing_servers_and_the_deliveries_given_up(repo, remote, sam_client, alice):
    fail_on_days(repo, "down.test", UNAVAILABLE_AFTER_DAYS)
    remote.answers = [410, 500]
    outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[f"http://{REMOTE}/gone/inbox"])
    run_deliveries()
    outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX])
    run_deliveries()

    page = sam_client.get("/staff/jobs/").content.decode()

    section = page[page.index('id="failing-domains"') :].split("</section>")[0]
    assert "down.test" in section and REMOTE in section
    assert 'action="/staff/jobs/domains/down.test/available/"' in section
    down = section[section.index("down.test") :].split("</tr>")[0]
    assert f'<td class="num">{UNAVAILABLE_AFTER_DAYS}</td>' in down
    assert '<span class="badge">' in down  # unavailable since
    failed = page[page.index('id="queue-deliver"') :].split("</section>")[0]
    assert f"&rarr; {REMOTE}" in failed and "answered 410" in failed


def revivals(r) -> list[dict]:
    return [f for _, f in r.xrange(keys.audit_log()) if f["action"] == "revive_domain"]


def test_staff_mark_a_server_available_again_and_it_is_logged(repo, r, sam_client, sam):
    fail_on_days(repo, "down.test", UNAVAILABLE_AFTER_DAYS)
    repo.jobs.destination_failed(
        outbox.QUEUE, "down.test", base_ms=60_000, max_ms=86_400_000, keep_ms=10**9
    )

    response = sam_client.post("/staff/jobs/domains/down.test/available/", follow=True)

    assert response.redirect_chain == [("/staff/jobs/#failing-domains", 302)]
    assert "Deliveries to down.test are tried again." in response.content.decode()
    assert repo.federation_deliveries.failing() == []
    assert repo.federation_deliveries.unavailable_among({"down.test"}) == set()
    assert repo.jobs.backoff_until(outbox.QUEUE, "down.test") == 0
    [entry] = revivals(r)
    assert (entry["user_name"], entry["actor"]) == ("down.test", str(sam.id))


def test_marking_a_server_that_was_not_failing_changes_and_logs_nothing(r, sam_client):
    response = sam_client.post("/staff/jobs/domains/fine.test/available/", follow=True)

    assert "No deliveries to fine.test were failing." in response.content.decode()
    assert revivals(r) == []


@pytest.mark.parametrize("domain", ["Down.Test", "a%20b", "-x.test"])
def test_a_server_name_not_in_its_one_spelling_is_not_found(sam_client, domain):
    assert sam_client.post(f"/staff/jobs/domains/{domain}/available/").status_code == 404


def test_only_staff_mark_servers_available_and_only_by_post(repo, client, alice_client, sam_client):
    fail_on_days(repo, "down.test", UNAVAILABLE_AFTER_DAYS)
    url = "/staff/jobs/domains/down.test/available/"

    assert client.post(url).status_code == 302  # to the login page
    assert alice_client.post(url).status_code == 403
    assert sam_client.get(url).status_code == 405
    assert repo.federation_deliveries.unavailable_among({"down.test"}) == {"down.test"}


def test_an_activity_from_an_unavailable_server_revives_it_and_the_answer_goes_out(
    repo, remote, settings, alice
):
    settings.SITE_URL = "http://testserver"  # the test client's host: the inbox's URL
    signing_keys.forget()
    pair = generate_key_pair()
    document = mastodon_actor("zed", REMOTE, "http")
    document["publicKey"] = {**document["publicKey"], "publicKeyPem": pair.public_pem}
    zed = repo.remote_actors.upsert(parse_actor(document, fetched_from=document["id"]))
    fail_on_days(repo, REMOTE, UNAVAILABLE_AFTER_DAYS)
    follow = {
        "@context": documents.AS_PROFILE,
        "id": f"{zed.uri}#follows/1",
        "type": "Follow",
        "actor": zed.uri,
        "object": documents.actor_id(alice.id),
    }
    body = json.dumps(follow).encode()
    signed = sign_request(
        "POST", "http://testserver/ap/inbox", {}, body, zed.key_id, pair.private_pem
    )

    answer = Client().post("/ap/inbox", body, content_type=documents.ACTIVITY_JSON, headers=signed)
    assert answer.status_code == 202
    work.run_pending("inbox")

    assert repo.federation_deliveries.unavailable_among({REMOTE}) == set()
    run_deliveries()
    [(host, path, accept)] = sent(remote)
    assert (host, path, accept["type"]) == (REMOTE, "/users/zed/inbox", "Accept")


def test_nothing_goes_to_a_server_staff_block_or_under_it(repo, remote, sam, alice):
    outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX])  # queued before the block
    repo.federation_domains.block(REMOTE, sam)
    sub = "http://social.remote.test/inbox"

    assert outbox.deliver(ACTIVITY, signer=alice.id, inboxes=[INBOX, sub]) == 0
    assert run_deliveries() == 1  # the one queued before: dropped unsent
    assert remote.received == [] and dead_letters(repo) == []


def test_the_remote_followers_index_holds_remote_followers_only(repo, r, peers, alice):
    """Deliveries read an author's remote followers from their own index, never every
    follower: a remote follow adds to it, a local one does not, an unfollow and the remote
    account's deletion take it out, and the author's deletion drops the index."""
    bob, carol = remote_account(repo, "bob"), remote_account(repo, "carol")
    lou = make_user(repo, "lou")
    for follower in (bob, carol, lou):
        repo.graph.follow(follower.id, alice.id)
    index = keys.remote_followers(alice.id)
    assert set(r.zrange(index, 0, -1)) == {str(bob.id), str(carol.id)}
    assert repo.federation_deliveries.follower_inboxes(alice.id) == {bob.delivery_inbox}

    repo.graph.unfollow(carol.id, alice.id)
    assert r.zrange(index, 0, -1) == [str(bob.id)]
    repo.accounts.delete_account(repo.users.get_user(bob.id))
    assert r.zrange(index, 0, -1) == []
    assert repo.federation_deliveries.follower_inboxes(alice.id) == set()

    repo.graph.follow(remote_account(repo, "dee").id, alice.id)
    repo.accounts.delete_account(alice)
    assert not r.exists(index)
    assert r.zrange(keys.followers(alice.id), 0, -1) == []


def test_a_purged_account_leaves_no_key_pair_or_sent_activities(repo, r, alice):
    repo.federation_keys.for_account(alice.id)
    repo.federation_deliveries.record_sent(alice.id, "like:7", "https://local.test/x")
    assert r.exists(keys.actor_key(alice.id)) and r.exists(keys.activities_sent(alice.id))
    repo.accounts.delete_account(alice, at=1_000_000)

    grace = keys.DELETED_ACCOUNT_GRACE_DAYS * 24 * 3600
    assert repo.accounts.purge_deleted_accounts(at=1_000_000 + grace + 1) == [alice.id]

    assert not r.exists(keys.actor_key(alice.id))
    assert not r.exists(keys.activities_sent(alice.id))
