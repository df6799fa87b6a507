"""The inboxes: the accept path (social/federation/inbox.py) and the job that verifies and
applies an activity (social/work_handlers/inbox.py, activities.py), on real Redis.

Activities are shaped as Mastodon 4 sends them and signed as it signs (draft-cavage,
rsa-sha256) with keys made here. The remote account zed@remote.test is stored through the
remote actor store, or served by a small HTTP server of ours standing in for remote.test
(reached through FEDERATION_HOSTS, FEDERATION_ALLOW_HTTP, FEDERATION_ALLOW_ADDRESSES) when a
test needs its key fetched. Jobs are run in this process (work.run_pending); the Accept a
follow sends is asserted as the delivery job it queues.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.test import Client

from social import keys, work
from social.federation.actor_documents import ActorDocument
from social.federation.signatures import KeyPair, generate_key_pair, sign_request
from social.repository import Repository, User
from social.repository.federation.actors import RemoteActor
from social.work.queues import QUEUES
from tests.federation_actors import mastodon_note

SITE = "http://testserver"
REMOTE = "http://remote.test"
ZED = f"{REMOTE}/users/zed"
ZED_KEY = f"{ZED}#main-key"
PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
AS = "https://www.w3.org/ns/activitystreams"
ACTIVITY = "application/activity+json"
READY = "jobs:{inbox}:ready"
DELIVER_READY = "jobs:{deliver}:ready"


@cache
def key(which: int = 0) -> KeyPair:
    """An RSA-2048 key pair, each made once for the run."""
    return generate_key_pair()


def actor_document(public_pem: str, name: str = "zed", host: str = "remote.test") -> dict:
    """The actor document Mastodon 4 serves for http://host/users/name."""
    uri = f"http://{host}/users/{name}"
    return {
        "@context": [AS, "https://w3id.org/security/v1"],
        "id": uri,
        "type": "Person",
        "following": f"{uri}/following",
        "followers": f"{uri}/followers",
        "inbox": f"{uri}/inbox",
        "outbox": f"{uri}/outbox",
        "preferredUsername": name,
        "name": name.capitalize(),
        "summary": "<p>remote</p>",
        "url": f"http://{host}/@{name}",
        "manuallyApprovesFollowers": False,
        "publicKey": {"id": f"{uri}#main-key", "owner": uri, "publicKeyPem": public_pem},
        "endpoints": {"sharedInbox": f"http://{host}/inbox"},
    }


def store_zed(repo: Repository, public_pem: str | None = None) -> RemoteActor:
    """zed@remote.test as the remote actor store keeps it (as if fetched before)."""
    document = ActorDocument(
        uri=ZED,
        name="zed",
        domain="remote.test",
        actor_type="Person",
        inbox=f"{ZED}/inbox",
        key_id=ZED_KEY,
        public_key=public_pem or key(0).public_pem,
        shared_inbox=f"{REMOTE}/inbox",
        display_name="Zed",
    )
    return repo.remote_actors.upsert(document)


@pytest.fixture(autouse=True)
def peers(settings):
    """remote.test reachable over plain http on loopback (only the fetch tests serve it)."""
    settings.FEDERATION_ALLOW_HTTP = True
    settings.FEDERATION_ALLOW_ADDRESSES = ["127.0.0.0/8"]
    settings.SITE_URL = SITE


@pytest.fixture
def zed(repo) -> RemoteActor:
    return store_zed(repo)


def signed_post(
    activity: dict | bytes,
    *,
    path: str = "/ap/inbox",
    pair: KeyPair | None = None,
    key_id: str = ZED_KEY,
    content_type: str = ACTIVITY,
    now: float | None = None,
    body: bytes | None = None,
) -> Any:
    """POST activity to path signed as Mastodon signs (with pair's key under key_id); body:
    the bytes sent instead of the signed ones (a body changed after signing)."""
    signed = activity if isinstance(activity, bytes) else json.dumps(activity).encode()
    headers = sign_request(
        "POST", f"{SITE}{path}", {}, signed, key_id, (pair or key(0)).private_pem, now=now
    )
    return Client().post(
        path, body if body is not None else signed, content_type=content_type, headers=headers
    )


def run_inbox() -> int:
    return work.run_pending("inbox")


def totals(repo: Repository) -> dict[str, int]:
    return repo.federation_inbox.totals()


def ours(path: str) -> str:
    """One of our ids: ours("users/1"), ours("posts/7")."""
    return f"{SITE}/ap/{path}"


def activity(kind: str, obj: Any, suffix: str, *, actor: str = ZED, **more: Any) -> dict:
    """An activity of actor's with its id on actor's server (actor#suffix)."""
    return {
        "@context": AS,
        "id": f"{actor}#{suffix}",
        "type": kind,
        "actor": actor,
        "object": obj,
        **more,
    }


def follow_of(target: str, number: int = 1) -> dict:
    return {
        "@context": AS,
        "id": f"{REMOTE}/{number:08x}-follow",
        "type": "Follow",
        "actor": ZED,
        "object": target,
    }


def note(number: int, **changes: Any) -> dict:
    """A public Note of zed's, as Mastodon writes one (a script in it the sanitiser drops)."""
    return mastodon_note(ZED, number, before="<script>alert(1)</script>", **changes)


def create(note_data: dict, number: int | None = None) -> dict:
    return {
        "@context": [AS, {"sensitive": "as:sensitive"}],
        "id": f"{note_data['id']}/activity",
        "type": "Create",
        "actor": ZED,
        "published": note_data.get("published"),
        "to": note_data.get("to"),
        "cc": note_data.get("cc"),
        "object": note_data,
    }


def mention(user: User) -> dict:
    return {
        "type": "Mention",
        "href": ours(f"users/{user.id}"),
        "name": f"@{user.username}@testserver",
    }


def deliveries(r) -> list[dict]:
    """The deliver queue's jobs: their payloads, activity decoded."""
    found = []
    for _, fields in r.xrange(DELIVER_READY):
        payload = json.loads(fields["job"])["payload"]
        found.append({**payload, "activity": json.loads(payload["activity"])})
    return found


# --- The accept path -----------------------------------------------------------------------


def test_a_signed_activity_is_queued_with_what_verifying_needs_and_answered_202(repo, r):
    before = time.time()
    answer = signed_post(follow_of(f"{SITE}/ap/users/1"))
    assert answer.status_code == 202
    [(_, fields)] = r.xrange(READY)
    job = json.loads(fields["job"])
    assert (job["kind"], job["dest"]) == ("activity", "remote.test")
    payload = job["payload"]
    assert json.loads(payload["body"])["type"] == "Follow"
    headers = json.loads(payload["headers"])
    assert {"signature", "digest", "date", "host"} <= set(headers)
    assert (payload["method"], payload["target"], payload["user"]) == ("POST", "/ap/inbox", "")
    assert before <= float(payload["received"]) <= time.time()
    assert len(payload["receipt"]) == 16


def test_a_personal_inbox_queues_too_and_names_its_account(repo, r, alice):
    path = f"/ap/users/{alice.id}/inbox"
    answer = signed_post(follow_of(ours(f"users/{alice.id}")), path=path)
    assert answer.status_code == 202
    [(_, fields)] = r.xrange(READY)
    payload = json.loads(fields["job"])["payload"]
    assert (payload["target"], payload["user"]) == (f"/ap/users/{alice.id}/inbox", str(alice.id))


def test_the_inbox_takes_only_post(repo, r):
    assert Client().get("/ap/inbox").status_code == 405
    assert not r.exists(READY)


def test_an_oversized_body_is_refused_413_before_it_is_read(repo, r):
    big = json.dumps({**follow_of(ZED), "padding": "x" * (256 * 1024)}).encode()
    answer = signed_post(big)
    assert answer.status_code == 413
    assert answer.json()["error"] == f"the body is over {256 * 1024} bytes"
    assert not r.exists(READY)


@pytest.mark.parametrize("kind", ["application/json", "text/plain", "multipart/form-data"])
def test_a_body_of_another_type_is_refused_415(repo, r, kind):
    assert signed_post(follow_of(ZED), content_type=kind).status_code == 415
    assert not r.exists(READY)


def test_ld_json_with_the_activitystreams_profile_is_taken(repo, r):
    kind = f'application/ld+json; profile="{AS}"'
    assert signed_post(follow_of(ZED), content_type=kind).status_code == 202


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[1, 2]",
        b'{"type": "Follow", "actor": "http://remote.test/users/zed"}',  # no id
        b'{"id": "http://remote.test/1", "actor": "http://remote.test/users/zed"}',  # no type
        b'{"id": "http://remote.test/1", "type": "Follow"}',  # no actor
        '{"id": "http://remote.test/1", "type": "Follow", "actor": "x"}'.encode("utf-16"),
    ],
)
def test_a_body_that_is_no_activity_is_refused_400(repo, r, body):
    answer = signed_post(body)
    assert answer.status_code == 400
    assert answer.json()["error"]
    assert not r.exists(READY)


def test_json_nested_too_deep_is_refused_400(repo, r):
    deep: Any = "end"
    for _ in range(40):
        deep = {"a": deep}
    answer = signed_post({**follow_of(ZED), "x": deep})
    assert answer.status_code == 400
    assert "deeper" in answer.json()["error"]
    shallow: Any = "end"
    for _ in range(20):
        shallow = [shallow]
    assert signed_post({**follow_of(ZED), "x": shallow}).status_code == 202


def test_json_nested_past_the_parsers_own_limit_is_refused_400(repo, r):
    head = (
        b'{"id": "http://remote.test/1", "type": "Follow", "actor": "http://remote.test/u/z", "x": '
    )
    body = head + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert signed_post(body).status_code == 400


def test_an_unsigned_request_is_refused_401(repo, r):
    answer = Client().post("/ap/inbox", json.dumps(follow_of(ZED)), content_type=ACTIVITY)
    assert answer.status_code == 401
    assert "not signed" in answer.json()["error"]
    assert not r.exists(READY)


def test_an_unparseable_signature_is_refused_401(repo, r):
    answer = Client().post(
        "/ap/inbox", json.dumps(follow_of(ZED)), content_type=ACTIVITY,
        headers={"Signature": 'keyId="x",,,', "Date": "now"},
    )  # fmt: skip
    assert answer.status_code == 401
    assert not r.exists(READY)


def test_a_body_changed_after_signing_fails_its_digest_401(repo, r):
    signed = json.dumps(follow_of(ZED)).encode()
    answer = signed_post(signed, body=signed.replace(b"Follow", b"Undo"))
    assert answer.status_code == 401
    assert "digest" in answer.json()["error"]
    assert not r.exists(READY)


def test_a_signature_older_than_its_window_is_refused_401(repo, r):
    answer = signed_post(follow_of(ZED), now=time.time() - 3 * 3600)
    assert answer.status_code == 401
    assert "expired" in answer.json()["error"]


def test_an_activity_from_a_blocked_server_or_its_subdomain_is_refused_403(repo, r, sam):
    assert repo.federation_domains.block("remote.test", sam, "spam")
    assert signed_post(follow_of(ZED)).status_code == 403
    sub_zed = "http://social.remote.test/users/zed"
    sub = {**follow_of(ZED), "actor": sub_zed, "id": "http://social.remote.test/1"}
    assert signed_post(sub, key_id=f"{sub_zed}#main-key").status_code == 403
    assert not r.exists(READY)


def test_a_key_on_a_blocked_server_is_refused_403(repo, r, sam):
    repo.federation_domains.block("evil.test", sam)
    answer = signed_post(follow_of(ZED), key_id="http://evil.test/users/x#main-key")
    assert answer.status_code == 403


def test_a_delete_from_an_actor_we_do_not_know_is_dropped_unqueued_with_202(repo, r):
    delete = activity("Delete", ZED, "delete", to=[PUBLIC])
    assert signed_post(delete).status_code == 202
    assert not r.exists(READY)


def test_a_delete_from_an_actor_we_know_is_queued(repo, r, zed):
    delete = activity("Delete", ZED, "delete", to=[PUBLIC])
    assert signed_post(delete).status_code == 202
    assert r.xlen(READY) == 1


def test_a_full_queue_answers_503_with_retry_after(repo, r, monkeypatch):
    monkeypatch.setitem(QUEUES, "inbox", replace(QUEUES["inbox"], limit=1))
    assert signed_post(follow_of(ZED, 1)).status_code == 202
    answer = signed_post(follow_of(ZED, 2))
    assert answer.status_code == 503
    assert answer["Retry-After"] == "60"
    assert r.xlen(READY) == 1


# --- Blocked domains -----------------------------------------------------------------------


def test_blocking_a_domain_is_audited_and_covers_its_subdomains_and_ports(repo, r, sam):
    assert repo.federation_domains.block("Remote.Test", sam, "spam")
    assert not repo.federation_domains.block("remote.test", sam)  # blocked already
    assert repo.federation_domains.is_blocked("remote.test")
    assert repo.federation_domains.is_blocked("a.b.remote.test:8443")
    assert not repo.federation_domains.is_blocked("notremote.test")
    assert [b.domain for b in repo.federation_domains.blocked()] == ["remote.test"]
    [entry] = repo.audit.audit_page(action="block_domain").items
    assert (entry.target_name, entry.reason) == ("remote.test", "spam")
    assert repo.federation_domains.unblock("remote.test", sam)
    assert not repo.federation_domains.unblock("remote.test", sam)
    assert not repo.federation_domains.is_blocked("a.b.remote.test")
    [entry] = repo.audit.audit_page(action="unblock_domain").items
    assert (entry.actor_id, entry.target_name) == (sam.id, "remote.test")
    assert r.hlen(keys.blocked_domains()) == 0


def test_the_accept_path_screens_with_a_list_a_few_seconds_old(repo, r, sam):
    domains = repo.federation_domains
    assert not domains.screened_out("remote.test", at=1000.0)
    r.hset(keys.blocked_domains(), "remote.test", 1)  # blocked by another process
    assert not domains.screened_out("remote.test", at=1004.0)
    assert domains.screened_out("sub.remote.test", at=1006.0)
    domains.unblock("remote.test", sam)  # this process's own change: at once
    assert not domains.screened_out("remote.test", at=1006.5)


def test_text_that_is_no_domain_counts_as_blocked(repo):
    assert repo.federation_domains.is_blocked("not a domain")
    assert repo.federation_domains.is_blocked("ok.test", "")


# --- The seen store ------------------------------------------------------------------------


def test_an_activity_id_is_claimed_once_for_a_week_and_its_own_job_may_run_again(repo, r):
    seen = repo.federation_inbox
    assert seen.claim("http://remote.test/1", "receipt-a")
    assert seen.claim("http://remote.test/1", "receipt-a")  # the same job, run again
    assert not seen.claim("http://remote.test/1", "receipt-b")  # a replay
    ttl = r.ttl(keys.inbox_seen("http://remote.test/1"))
    assert keys.INBOX_SEEN_TTL - 5 <= ttl <= keys.INBOX_SEEN_TTL
    assert not seen.release("http://remote.test/1", "receipt-b")  # not its claim
    assert seen.release("http://remote.test/1", "receipt-a")
    assert seen.claim("http://remote.test/1", "receipt-b")


def test_the_inbox_keys_are_spelled_as_documented():
    assert keys.blocked_domains() == "ap:domains:blocked"
    assert keys.inbox_totals() == "ap:inbox:totals"
    assert keys.inbox_seen("x").startswith("ap:seen:") and len(keys.inbox_seen("x")) == 8 + 64
    assert keys.remote_object("x") == "ap:object:" + keys.inbox_seen("x")[8:]


# --- The job: applying each activity --------------------------------------------------------


def test_a_follow_of_a_local_account_is_written_at_once_and_accepted(repo, r, zed, alice):
    follow = follow_of(ours(f"users/{alice.id}"))
    assert signed_post(follow).status_code == 202
    assert run_inbox() == 1
    assert r.zscore(keys.followers(alice.id), zed.id) is not None
    assert r.zscore(keys.following(zed.id), alice.id) is not None
    [accept] = deliveries(r)
    assert accept["inbox"] == f"{ZED}/inbox"
    assert accept["signer"] == str(alice.id)
    assert accept["activity"]["type"] == "Accept"
    assert accept["activity"]["actor"] == ours(f"users/{alice.id}")
    assert accept["activity"]["object"] == {k: follow[k] for k in ("id", "type", "actor", "object")}
    assert totals(repo) == {"applied:Follow": 1}
    assert r.xlen(READY) == 0  # done and deleted


def test_a_follow_across_a_block_is_rejected_and_not_written(repo, r, zed, alice):
    repo.relations.block(alice.id, zed.id)
    signed_post(follow_of(ours(f"users/{alice.id}")))
    run_inbox()
    assert r.zscore(keys.followers(alice.id), zed.id) is None
    [reject] = deliveries(r)
    assert reject["activity"]["type"] == "Reject"
    assert totals(repo) == {"rejected:Follow": 1}


def test_a_follow_of_no_account_here_is_dropped(repo, r, zed):
    signed_post(follow_of(f"{SITE}/ap/users/999"))
    signed_post(follow_of("http://other.test/users/x", 2))
    run_inbox()
    assert deliveries(r) == []
    assert totals(repo) == {"dropped:no_account": 1, "dropped:not_ours": 1}


def test_undo_follow_takes_the_follow_back(repo, r, zed, alice):
    follow = follow_of(ours(f"users/{alice.id}"))
    signed_post(follow)
    signed_post(activity("Undo", follow, "follows/1/undo"))
    run_inbox()
    assert r.zscore(keys.followers(alice.id), zed.id) is None
    assert r.zscore(keys.following(zed.id), alice.id) is None


def test_accept_of_our_follow_keeps_it_and_reject_removes_it(repo, r, zed, alice):
    repo.graph.follow(alice.id, zed.id)
    mine = {"id": ours(f"users/{alice.id}#follows/1"), "type": "Follow", "object": ZED}
    mine["actor"] = ours(f"users/{alice.id}")
    signed_post(activity("Accept", mine, "accepts/1"))
    run_inbox()
    assert r.zscore(keys.following(alice.id), zed.id) is not None
    signed_post(activity("Reject", mine, "rejects/1"))
    run_inbox()
    assert r.zscore(keys.following(alice.id), zed.id) is None
    assert totals(repo) == {"applied:Accept": 1, "applied:Reject": 1}


def test_an_accept_of_a_follow_that_is_not_ours_is_dropped(repo, r, zed, alice, bob):
    repo.graph.follow(alice.id, zed.id)
    theirs = {
        "id": f"{REMOTE}/f",
        "type": "Follow",
        "actor": "http://other.test/u/q",
        "object": ZED,
    }
    signed_post(activity("Reject", theirs, "rejects/2"))
    run_inbox()
    assert r.zscore(keys.following(alice.id), zed.id) is not None
    assert totals(repo) == {"dropped:not_ours": 1}


def test_like_and_undo_like_of_a_local_post(repo, r, zed, alice):
    post_id = repo.posts.create_post(alice.id, "hello fediverse")
    like = activity("Like", ours(f"posts/{post_id}"), "likes/1")
    signed_post(like)
    run_inbox()
    assert r.zscore(keys.likes(post_id), zed.id) is not None
    assert r.hget(keys.post(post_id), "likes") == "1"
    signed_post(activity("Undo", like, "likes/1/undo"))
    run_inbox()
    assert r.zscore(keys.likes(post_id), zed.id) is None
    assert r.hget(keys.post(post_id), "likes") == "0"


def test_a_like_and_a_reply_from_another_remote_account_reach_a_remote_note_we_keep(
    repo, r, zed, alice
):
    repo.graph.follow(alice.id, zed.id)
    data = note(20)
    signed_post(create(data))
    run_inbox()
    eve = store_eve(repo)
    signed_post(
        activity("Like", data["id"], "likes/1", actor=eve.uri), pair=key(2), key_id=eve.key_id
    )
    reply = note(21, id=f"{eve.uri}/statuses/21", attributedTo=eve.uri, inReplyTo=data["id"])
    signed_post({**create(reply), "id": f"{eve.uri}/statuses/21/activity", "actor": eve.uri},
                pair=key(2), key_id=eve.key_id)  # fmt: skip
    run_inbox()
    kept = r.get(keys.remote_object(data["id"]))
    assert r.zscore(keys.likes(int(kept)), eve.id) is not None
    reply_id = r.get(keys.remote_object(reply["id"]))
    assert r.lrange(keys.replies(int(kept)), 0, -1) == [reply_id]
    assert r.hget(keys.post(reply_id), "user_id") == str(eve.id)


def test_a_like_of_a_post_we_do_not_keep_is_dropped(repo, r, zed):
    like = activity("Like", "http://other.test/notes/1", "likes/2")
    signed_post(like)
    run_inbox()
    assert totals(repo) == {"dropped:unknown_object": 1}


def announce_of(post_uri: str, number: int = 1, **changes: Any) -> dict:
    data = {
        "@context": AS,
        "id": f"{ZED}/statuses/{900 + number}/activity",
        "type": "Announce",
        "actor": ZED,
        "published": "2026-11-27T10:00:00Z",
        "to": [PUBLIC],
        "cc": [f"{ZED}/followers"],
        "object": post_uri,
    }
    data.update(changes)
    return data


def test_announce_reposts_a_local_post_and_undo_takes_it_back(repo, r, zed, alice):
    post_id = repo.posts.create_post(alice.id, "worth sharing")
    announce = announce_of(ours(f"posts/{post_id}"))
    signed_post(announce)
    run_inbox()
    repost_id = int(r.zscore(keys.user_reposts(zed.id), post_id))
    assert r.hget(keys.post(repost_id), "repost_of") == str(post_id)
    assert r.hget(keys.post(post_id), "reposts") == "1"
    assert r.get(keys.remote_object(announce["id"])) == str(repost_id)
    signed_post(activity("Undo", announce["id"], "announces/1/undo"))
    run_inbox()
    assert r.zscore(keys.user_reposts(zed.id), post_id) is None
    assert not r.exists(keys.post(repost_id))
    again = announce_of(ours(f"posts/{post_id}"), 2)
    signed_post(again)
    signed_post(activity("Undo", again, "announces/2/undo"))
    run_inbox()
    assert r.zscore(keys.user_reposts(zed.id), post_id) is None
    assert r.hget(keys.post(post_id), "reposts") == "0"


def test_a_followers_only_announce_is_dropped(repo, r, zed, alice):
    post_id = repo.posts.create_post(alice.id, "x")
    signed_post(announce_of(ours(f"posts/{post_id}"), to=[f"{ZED}/followers"], cc=[]))
    run_inbox()
    assert r.zscore(keys.user_reposts(zed.id), post_id) is None
    assert totals(repo) == {"dropped:not_public": 1}


def test_a_note_mentioning_a_local_account_is_kept_as_a_remote_accounts_post(repo, r, zed, alice):
    redis_tag = {"type": "Hashtag", "href": f"{REMOTE}/tags/redis", "name": "#Redis"}
    link = f'<a href="{SITE}/u/alice/" class="u-url mention">@<span>alice</span></a>'
    data = note(
        1, tag=[mention(alice), redis_tag], cc=[f"{ZED}/followers", ours(f"users/{alice.id}")],
        content=f'<p><span class="h-card">{link}</span> hi <script>x()</script></p>',
    )  # fmt: skip
    signed_post(create(data))
    run_inbox()
    post_id = int(r.get(keys.remote_object(data["id"])))
    post = r.hgetall(keys.post(post_id))
    assert post["user_id"] == str(zed.id)
    assert post["uri"] == data["id"]
    assert post["url"] == data["url"]
    assert "<script>" not in post["html"] and "hi" in post["html"]
    assert post["body"] == "@alice hi"
    assert post["mentions"] == f"{alice.id}:alice"
    assert post["tags"] == "redis"
    assert r.zscore(keys.mentions(alice.id), post_id) is not None
    assert str(post_id) in r.lrange(keys.own_posts(zed.id), 0, -1)
    assert str(post_id) in r.lrange(keys.tag_posts("redis"), 0, -1)
    assert totals(repo) == {"applied:Create": 1}


def test_a_note_by_an_author_followed_here_reaches_its_followers_feeds(repo, r, zed, alice, bob):
    repo.graph.follow(alice.id, zed.id)
    data = note(2)
    signed_post(create(data))
    run_inbox()
    post_id = r.get(keys.remote_object(data["id"]))
    assert post_id in r.lrange(keys.home_feed(alice.id), 0, -1)
    assert post_id not in r.lrange(keys.home_feed(bob.id), 0, -1)


def test_a_reply_to_a_local_post_is_filed_under_it(repo, r, zed, alice):
    parent = repo.posts.create_post(alice.id, "question?")
    data = note(3, inReplyTo=ours(f"posts/{parent}"))
    signed_post(create(data))
    run_inbox()
    post_id = r.get(keys.remote_object(data["id"]))
    assert r.lrange(keys.replies(parent), 0, -1) == [post_id]
    assert r.hget(keys.post(post_id), "reply_to") == str(parent)
    assert r.hget(keys.post(parent), "replies") == "1"


def test_a_note_that_concerns_no_one_here_is_not_kept(repo, r, zed, alice):
    signed_post(create(note(4)))
    run_inbox()
    assert totals(repo) == {"dropped:unconcerned": 1}
    assert not r.exists(keys.remote_object(f"{ZED}/statuses/4"))
    assert not r.exists(keys.inbox_seen(f"{ZED}/statuses/4/activity"))  # its claim given back
    taken = int(r.get(keys.next_post_id()))  # an id was taken (as a failed post takes one)
    assert not r.exists(keys.post(taken))
    assert r.llen(keys.own_posts(zed.id)) == 0 and r.llen(keys.timeline()) == 0


def test_a_note_naming_only_an_account_that_blocks_its_author_is_not_kept(repo, r, zed, alice):
    repo.relations.block(alice.id, zed.id)
    signed_post(create(note(30, tag=[mention(alice)])))
    run_inbox()
    assert totals(repo) == {"dropped:unconcerned": 1}
    assert r.zcard(keys.mentions(alice.id)) == 0


@pytest.mark.parametrize(
    ("to", "cc"),
    [
        ([f"{ZED}/followers"], []),  # followers only
        ([f"{SITE}/ap/users/1"], []),  # direct
    ],
)
def test_a_note_not_addressed_to_the_public_is_dropped_and_counted(repo, r, zed, alice, to, cc):
    repo.graph.follow(alice.id, zed.id)
    data = note(5, to=to, cc=cc, tag=[mention(alice)])
    signed_post(create(data))
    run_inbox()
    assert totals(repo) == {"dropped:not_public": 1}
    assert not r.exists(keys.remote_object(data["id"]))
    assert r.lrange(keys.home_feed(alice.id), 0, -1) == []
    assert r.zcard(keys.mentions(alice.id)) == 0


def test_an_unlisted_note_is_kept(repo, r, zed, alice):
    repo.graph.follow(alice.id, zed.id)
    signed_post(create(note(6, to=[f"{ZED}/followers"], cc=[PUBLIC])))
    run_inbox()
    assert totals(repo) == {"applied:Create": 1}


def test_a_note_with_attachments_keeps_them_as_links_with_their_metadata(repo, r, zed, alice):
    repo.graph.follow(alice.id, zed.id)
    picture = {
        "type": "Document", "mediaType": "image/jpeg", "url": f"{REMOTE}/media/1.jpg",
        "name": "a cat", "blurhash": "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH", "width": 640,
        "height": 480,
    }  # fmt: skip
    data = note(7, attachment=[picture, {"type": "Document", "url": "javascript:alert(1)"}])
    signed_post(create(data))
    run_inbox()
    post_id = r.get(keys.remote_object(data["id"]))
    [kept] = json.loads(r.hget(keys.post(post_id), "remote_media"))
    assert kept == {
        "url": picture["url"], "media_type": "image/jpeg", "type": "Document",
        "description": "a cat", "blurhash": picture["blurhash"], "width": 640, "height": 480,
    }  # fmt: skip


def test_the_same_note_twice_is_one_post(repo, r, zed, alice):
    repo.graph.follow(alice.id, zed.id)
    data = note(8)
    signed_post(create(data))
    other = {**create(data), "id": f"{data['id']}/activity-again"}
    signed_post(other)
    run_inbox()
    assert r.llen(keys.own_posts(zed.id)) == 1
    assert totals(repo) == {"applied:Create": 1, "duplicate": 1}


def test_delete_of_a_note_deletes_the_post(repo, r, zed, alice):
    repo.graph.follow(alice.id, zed.id)
    data = note(9)
    signed_post(create(data))
    tomb = {"id": data["id"], "type": "Tombstone"}
    signed_post(activity("Delete", tomb, "statuses/9/delete", to=[PUBLIC]))
    run_inbox()
    post_id = r.get(keys.remote_object(data["id"]))
    assert r.hget(keys.post(post_id), "deleted") == "1"
    assert post_id not in r.lrange(keys.own_posts(zed.id), 0, -1)


def test_delete_of_an_actor_deletes_the_account_and_its_follows(repo, r, zed, alice):
    repo.graph.follow(alice.id, zed.id)
    signed_post(follow_of(ours(f"users/{alice.id}")))
    signed_post(activity("Delete", ZED, "delete", to=[PUBLIC]))
    run_inbox()
    assert r.hget(keys.user(zed.id), "status") == "deleted"
    assert r.zcard(keys.followers(zed.id)) == 0 and r.zcard(keys.following(zed.id)) == 0
    assert r.zscore(keys.followers(alice.id), zed.id) is None


def test_update_person_stores_the_actor_again_without_moving_the_visibility_version(repo, r, zed):
    version = r.get(keys.visibility_version())
    document = actor_document(key(0).public_pem)
    document["name"] = "Zed Renamed"
    signed_post(activity("Update", document, "updates/1", to=[PUBLIC]))
    run_inbox()
    assert repo.remote_actors.by_uri(ZED).display_name == "Zed Renamed"
    assert r.get(keys.visibility_version()) == version
    assert totals(repo) == {"applied:Update:actor": 1}


def test_update_note_replaces_its_content(repo, r, zed, alice):
    repo.graph.follow(alice.id, zed.id)
    data = note(10)
    signed_post(create(data))
    edited = {**data, "content": "<p>Edited words</p>", "summary": "spoilers"}
    signed_post(activity("Update", edited, "statuses/10/updates/1", to=[PUBLIC]))
    run_inbox()
    post = r.hgetall(keys.post(r.get(keys.remote_object(data["id"]))))
    assert (post["body"], post["html"], post["spoiler_text"], post["sensitive"]) == (
        "Edited words",
        "<p>Edited words</p>",
        "spoilers",
        "1",
    )
    assert "edited_at" in post


# --- The job: what it refuses ---------------------------------------------------------------


def test_a_replayed_activity_is_applied_once(repo, r, zed, alice):
    post_id = repo.posts.create_post(alice.id, "once")
    like = activity("Like", ours(f"posts/{post_id}"), "likes/9")
    signed_post(like)
    signed_post(like)  # the same request again, a second job
    repo.likes.unlike(zed.id, post_id)
    run_inbox()
    assert r.zscore(keys.likes(post_id), zed.id) is not None
    assert totals(repo) == {"applied:Like": 1, "dropped:replayed": 1}


def test_a_job_run_again_after_its_claim_still_applies(repo, r, zed, alice):
    post_id = repo.posts.create_post(alice.id, "again")
    like = activity("Like", ours(f"posts/{post_id}"), "likes/10")
    signed_post(like)
    [(_, fields)] = r.xrange(READY)
    receipt = json.loads(fields["job"])["payload"]["receipt"]
    assert repo.federation_inbox.claim(like["id"], receipt)  # a first run died after its claim
    run_inbox()
    assert r.zscore(keys.likes(post_id), zed.id) is not None


def test_a_forged_signature_is_dropped_and_nothing_applied(repo, r, zed, alice, remote):
    remote.serve_actor(key(0).public_pem)
    post_id = repo.posts.create_post(alice.id, "target")
    like = activity("Like", ours(f"posts/{post_id}"), "likes/11")
    signed_post(like, pair=key(1))  # not zed's key
    run_inbox()
    assert r.zscore(keys.likes(post_id), zed.id) is None
    assert totals(repo) == {"dropped:signature": 1}
    assert remote.paths().count("/users/zed") == 1  # fetched again once, no more


def test_a_key_that_changed_is_fetched_again_once_then_applied(repo, r, zed, alice, remote):
    remote.serve_actor(key(1).public_pem)  # zed's server has a new key; we store the old
    post_id = repo.posts.create_post(alice.id, "target")
    like = activity("Like", ours(f"posts/{post_id}"), "likes/12")
    signed_post(like, pair=key(1))
    run_inbox()
    assert r.zscore(keys.likes(post_id), zed.id) is not None
    assert repo.remote_actors.by_uri(ZED).public_key == key(1).public_pem
    assert remote.paths().count("/users/zed") == 1


def test_an_unknown_actor_is_fetched_stored_and_its_activity_applied(repo, r, alice, remote):
    remote.serve_actor(key(0).public_pem)
    signed_post(follow_of(ours(f"users/{alice.id}")))
    run_inbox()
    zed = repo.remote_actors.by_uri(ZED)
    assert zed is not None and zed.username == "zed@remote.test"
    assert r.zscore(keys.followers(alice.id), zed.id) is not None


def test_an_actor_whose_server_does_not_answer_is_retried(repo, r, alice, remote, settings):
    settings.FEDERATION_HOSTS = {"remote.test": ("127.0.0.1", remote.closed_port)}
    signed_post(follow_of(ours(f"users/{alice.id}")))
    run_inbox()
    assert r.zcard("jobs:{inbox}:delayed") == 1  # waiting for a retry
    assert r.zcard(keys.followers(alice.id)) == 0


def test_an_activity_whose_actor_is_not_the_key_owner_is_dropped(repo, r, zed, alice):
    other = {**follow_of(ours(f"users/{alice.id}")), "actor": "http://remote.test/users/eve"}
    signed_post(other)
    run_inbox()
    assert r.zcard(keys.followers(alice.id)) == 0
    assert totals(repo) == {"dropped:not_signer": 1}


def test_an_activity_whose_id_is_on_another_server_is_dropped(repo, r, zed, alice):
    signed_post({**follow_of(ours(f"users/{alice.id}")), "id": "http://other.test/follow/1"})
    run_inbox()
    assert totals(repo) == {"dropped:foreign_id": 1}


def test_a_note_on_another_server_than_its_actor_is_dropped(repo, r, zed, alice):
    repo.graph.follow(alice.id, zed.id)
    data = note(11, id="http://other.test/notes/11", tag=[mention(alice)])
    signed_post({**create(data), "id": f"{ZED}/statuses/11/activity"})
    run_inbox()
    assert totals(repo) == {"dropped:invalid_object": 1}
    assert not r.exists(keys.remote_object(data["id"]))


def test_a_delete_of_another_actors_note_is_refused(repo, r, zed, alice):
    repo.graph.follow(alice.id, zed.id)
    data = note(12)
    signed_post(create(data))
    run_inbox()
    eve = store_eve(repo)
    signed_post(activity("Delete", data["id"], "d", actor=eve.uri), pair=key(2), key_id=eve.key_id)
    run_inbox()
    assert r.hget(keys.post(r.get(keys.remote_object(data["id"]))), "deleted") is None
    assert totals(repo)["dropped:not_own"] == 1


def test_an_activity_from_a_server_blocked_after_its_accept_is_dropped(repo, r, zed, alice, sam):
    signed_post(follow_of(ours(f"users/{alice.id}")))
    repo.federation_domains.block("remote.test", sam)
    run_inbox()
    assert r.zcard(keys.followers(alice.id)) == 0
    assert totals(repo) == {"dropped:blocked": 1}


def test_an_activity_from_a_suspended_remote_account_is_dropped(repo, r, zed, alice, sam):
    repo.moderation.suspend(zed.id, sam, "spam")
    signed_post(follow_of(ours(f"users/{alice.id}")))
    run_inbox()
    assert r.zcard(keys.followers(alice.id)) == 0
    assert totals(repo) == {"dropped:suspended": 1}


def test_an_unsupported_activity_is_dropped(repo, r, zed):
    signed_post(activity("Move", ZED, "moves/1", target="http://x.test/u"))
    run_inbox()
    assert totals(repo) == {"dropped:unsupported": 1}


def store_eve(repo: Repository) -> RemoteActor:
    uri = "http://remote.test/users/eve"
    return repo.remote_actors.upsert(ActorDocument(
        uri=uri, name="eve", domain="remote.test", actor_type="Person", inbox=f"{uri}/inbox",
        key_id=f"{uri}#main-key", public_key=key(2).public_pem,
    ))  # fmt: skip


# --- remote.test, served ---------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: RemoteServer

    def do_GET(self) -> None:
        remote = self.server.remote
        with remote.lock:
            remote.requests.append(self.path)
        found = remote.documents.get(self.path.partition("?")[0])
        body = json.dumps(found).encode() if found is not None else b"{}"
        self.send_response(200 if found is not None else 404)
        self.send_header("Content-Type", ACTIVITY)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class RemoteServer(ThreadingHTTPServer):
    daemon_threads = True
    remote: Remote


class Remote:
    """remote.test on 127.0.0.1: serves the documents it is given, records the paths asked."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[str] = []
        self.documents: dict[str, Any] = {}
        self.server = RemoteServer(("127.0.0.1", 0), Handler)
        self.server.remote = self
        self.port = self.server.server_address[1]
        closed = RemoteServer(("127.0.0.1", 0), Handler)  # a port nobody listens on
        self.closed_port = closed.server_address[1]
        closed.server_close()
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def serve_actor(self, public_pem: str) -> None:
        self.documents["/users/zed"] = actor_document(public_pem)

    def paths(self) -> list[str]:
        with self.lock:
            return list(self.requests)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def remote(settings) -> Iterator[Remote]:
    server = Remote()
    settings.FEDERATION_HOSTS = {"remote.test": ("127.0.0.1", server.port)}
    yield server
    server.close()
