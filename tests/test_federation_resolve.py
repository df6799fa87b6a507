"""Resolving remote accounts and posts (social/federation/resolve.py) against a server of our
own standing in for other servers, and what the site and the API then show of them.

One HTTP server on 127.0.0.1 answers for remote.test, other.test and split.test (its routes
are per Host), reached through FEDERATION_HOSTS with FEDERATION_ALLOW_HTTP and
FEDERATION_ALLOW_ADDRESSES=127.0.0.0/8, as two local instances would be; the tests that
prove a refusal take one of those away. It serves Mastodon-shaped WebFinger answers, actors
and collections (tests/federation_actors.py) and records every request.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest

from social import keys
from social.federation import resolve
from social.federation.resolve import ResolvedNote, ResolveError
from social.federation.signatures import (
    RequestParts,
    load_public_key,
    parse_signature,
    verify_signature,
)
from tests.api import Api, token_for
from tests.conftest import login
from tests.federation_actors import collection, mastodon_actor, public_pem, webfinger

ACTIVITY = "application/activity+json"
JRD = "application/jrd+json"
ALICE = "http://remote.test/users/alice"

Route = Callable[["Handler"], None] | tuple[int, Any, str]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: RemoteServer

    def do_GET(self) -> None:
        remote = self.server.remote
        host = (self.headers.get("Host") or "").split(":")[0]
        with remote.lock:
            remote.requests.append((host, self.path, dict(self.headers)))
        route = remote.routes.get((host, self.path)) or remote.routes.get(
            (host, self.path.partition("?")[0])
        )
        if route is None:
            self.answer(404, b"{}", JRD)
        elif callable(route):
            route(self)
        else:
            status, body, kind = route
            self.answer(
                status, body if isinstance(body, bytes) else json.dumps(body).encode(), kind
            )

    def answer(self, status: int, body: bytes, kind: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class RemoteServer(ThreadingHTTPServer):
    daemon_threads = True
    remote: Remote


class Remote:
    """Other servers on one port: routes by (Host, path), every request recorded."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.routes: dict[tuple[str, str], Route] = {}
        self.released = threading.Event()
        self.server = RemoteServer(("127.0.0.1", 0), Handler)
        self.server.remote = self
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def json(self, host: str, path: str, doc: Any, status: int = 200, kind: str = ACTIVITY) -> None:
        self.routes[(host, path)] = (status, doc, kind)

    def account(self, username: str = "alice", host: str = "remote.test", **changes: Any) -> dict:
        """Serve a Mastodon account: WebFinger, the actor and its three collections."""
        name = username
        doc = mastodon_actor(name, host, "http", **changes)
        uri = doc["id"]
        self.json(
            host,
            f"/.well-known/webfinger?resource=acct:{name}@{host}",
            webfinger(name, host, uri),
            kind=JRD,
        )
        self.json(host, urlsplit(uri).path, doc)
        for path, total in (("followers", 120), ("following", 45), ("outbox", 678)):
            self.json(host, f"{urlsplit(uri).path}/{path}", collection(f"{uri}/{path}", total))
        return doc

    def paths(self, host: str | None = None) -> list[str]:
        with self.lock:
            return [path for h, path, _ in self.requests if host is None or h == host]

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def remote(settings) -> Iterator[Remote]:
    server = Remote()
    hosts = ("remote.test", "other.test", "split.test")
    settings.FEDERATION_HOSTS = {host: ("127.0.0.1", server.port) for host in hosts}
    settings.FEDERATION_ALLOW_HTTP = True
    settings.FEDERATION_ALLOW_ADDRESSES = ["127.0.0.0/8"]
    yield server
    server.close()


# --- Resolving an address ------------------------------------------------------------------


def test_an_address_is_resolved_by_webfinger_and_stored_with_its_counts(repo, r, remote):
    remote.account()
    actor = resolve.resolve_address(repo, "@alice@remote.test")
    assert actor.username == "alice@remote.test"
    assert (actor.uri, actor.inbox) == (ALICE, ALICE + "/inbox")
    assert (actor.followers_count, actor.following_count, actor.statuses_count) == (120, 45, 678)
    stored = r.hgetall(keys.user(actor.id))
    assert stored["username"] == "alice@remote.test" and stored["domain"] == "remote.test"
    assert stored["followers_count"] == "120" and stored["statuses_count"] == "678"
    assert stored["public_key"] == public_pem()
    assert remote.paths() == [
        "/.well-known/webfinger?resource=acct:alice@remote.test",
        "/users/alice",
        "/users/alice/followers",
        "/users/alice/following",
        "/users/alice/outbox",
    ]


def test_documents_are_fetched_signed_by_the_instance_actor_and_webfinger_is_not(repo, remote):
    remote.account()
    resolve.resolve_address(repo, "alice@remote.test")
    finger, actor = remote.requests[0][2], remote.requests[1][2]
    assert "Signature" not in finger
    assert actor["Accept"].startswith(ACTIVITY)
    request = RequestParts.of("GET", "/users/alice", actor, b"", "http")
    parsed = parse_signature(request)
    assert parsed.key_id == "http://testserver/ap/actor#main-key"
    key = load_public_key(repo.federation_keys.for_instance().public_pem)
    assert verify_signature(request, parsed, key).key_id == parsed.key_id


def test_a_known_account_is_answered_from_redis_for_a_day_then_fetched_again(repo, r, remote):
    remote.account()
    first = resolve.resolve_address(repo, "@alice@remote.test")
    asked = len(remote.requests)
    assert resolve.resolve_address(repo, "@ALICE@remote.test") == first
    assert len(remote.requests) == asked
    r.hset(keys.user(first.id), "fetched_at", first.fetched_at - 2 * 86400)
    remote.account(name="Alice New")  # its display name changed meanwhile
    again = resolve.resolve_address(repo, "@alice@remote.test")
    assert again.id == first.id and again.display_name == "Alice New"
    assert len(remote.requests) == asked * 2


def test_a_stale_account_whose_server_fails_is_kept_as_it_was(repo, r, remote):
    remote.account()
    first = resolve.resolve_address(repo, "@alice@remote.test")
    r.hset(keys.user(first.id), "fetched_at", 1)
    remote.routes.clear()  # every path now 404
    kept = resolve.resolve_address(repo, "@alice@remote.test")
    assert kept.id == first.id and kept.fetched_at == 1


def test_an_unknown_address_says_so(repo, r, remote):
    with pytest.raises(ResolveError, match="remote.test has no account @nobody@remote.test"):
        resolve.resolve_address(repo, "@nobody@remote.test")
    assert r.get(keys.next_user_id()) is None


def test_webfinger_pointing_to_an_actor_on_another_host_is_refused(repo, r, remote):
    remote.account(host="other.test")  # other.test's WebFinger says alice@other.test
    remote.json(
        "remote.test",
        "/.well-known/webfinger?resource=acct:alice@remote.test",
        webfinger("alice", "remote.test", "http://other.test/users/alice"),
        kind=JRD,
    )
    with pytest.raises(ResolveError, match="does not confirm @alice@remote.test"):
        resolve.resolve_address(repo, "@alice@remote.test")
    assert r.get(keys.next_user_id()) is None
    assert repo.remote_actors.by_acct("alice@remote.test") is None


def test_an_address_on_another_domain_than_its_server_is_taken_when_both_confirm(repo, remote):
    """Mastodon's WEB_DOMAIN: the address alice@split.test, the server remote.test."""
    doc = remote.account()
    remote.json(
        "split.test",
        "/.well-known/webfinger?resource=acct:alice@split.test",
        webfinger("alice", "split.test", doc["id"]),
        kind=JRD,
    )
    remote.json(
        "remote.test",
        "/.well-known/webfinger?resource=acct:alice@remote.test",
        webfinger("alice", "remote.test", doc["id"], subject="acct:alice@split.test"),
        kind=JRD,
    )
    actor = resolve.resolve_address(repo, "@alice@split.test")
    assert actor.username == "alice@split.test" and actor.uri == ALICE
    # Fetched again by its id later, it keeps the address its server confirmed.
    assert resolve.resolve_actor(repo, ALICE, refresh=True).username == "alice@split.test"


def test_webfinger_redirecting_to_another_domain_is_followed_once(repo, remote):
    doc = remote.account()
    remote.json(
        "split.test",
        "/.well-known/webfinger?resource=acct:alice@split.test",
        webfinger("alice", "split.test", doc["id"], subject="acct:alice@remote.test"),
        kind=JRD,
    )
    assert resolve.resolve_address(repo, "@alice@split.test").username == "alice@remote.test"


def test_an_actor_whose_id_is_not_its_url_is_refused(repo, r, remote):
    remote.account()
    mallory = "http://remote.test/users/mallory"
    remote.json(
        "remote.test", "/users/alice", mastodon_actor("alice", "remote.test", "http", id=mallory)
    )
    # The id it names says it is someone else again: refused after one more fetch.
    remote.json("remote.test", "/users/mallory", mastodon_actor("eve", "remote.test", "http"))
    with pytest.raises(ResolveError, match=f"the document at {mallory} does not say it is"):
        resolve.resolve_address(repo, "@alice@remote.test")
    # The id it names holds: that actor is read, and refused for not being the address's.
    remote.json("remote.test", "/users/mallory", mastodon_actor("mallory", "remote.test", "http"))
    with pytest.raises(ResolveError, match="called 'mallory', not 'alice'"):
        resolve.resolve_address(repo, "@alice@remote.test")
    assert r.get(keys.next_user_id()) is None


def test_a_url_answering_another_id_is_read_from_that_id(repo, remote):
    doc = remote.account()
    remote.json("remote.test", "/@alice", doc)  # the profile page answers the actor
    actor = resolve.resolve_url(repo, "http://remote.test/@alice")
    assert actor.uri == ALICE
    assert remote.paths()[:2] == ["/@alice", "/users/alice"]


def test_a_private_address_is_refused_before_connecting_without_the_allow_setting(
    repo, remote, settings
):
    remote.account()
    settings.FEDERATION_ALLOW_ADDRESSES = []
    with pytest.raises(ResolveError, match="loopback"):
        resolve.resolve_address(repo, "@alice@remote.test")
    assert remote.requests == []


def test_plain_http_is_refused_without_the_allow_setting(repo, remote, settings):
    remote.account()
    settings.FEDERATION_ALLOW_HTTP = False
    with pytest.raises(ResolveError):
        resolve.resolve_actor(repo, ALICE)
    assert remote.requests == []


def test_an_oversized_or_garbled_or_slow_answer_is_a_clear_failure(repo, r, remote):
    remote.account()
    remote.json("remote.test", "/users/alice", b"x" * (resolve.DOCUMENT_MAX + 1))
    with pytest.raises(ResolveError, match="over"):
        resolve.resolve_actor(repo, ALICE)
    remote.json("remote.test", "/users/alice", b"{not json")
    with pytest.raises(ResolveError, match="other than JSON"):
        resolve.resolve_actor(repo, ALICE)
    remote.json("remote.test", "/users/alice", {"id": ALICE}, kind="text/html")
    with pytest.raises(ResolveError, match="text/html"):
        resolve.resolve_actor(repo, ALICE)

    def hold(handler: Handler) -> None:
        handler.server.remote.released.wait(30)

    remote.routes[("remote.test", "/users/alice")] = hold
    with pytest.raises(ResolveError, match="did not answer in time|took too long|no time"):
        resolve.Resolver(repo, timeout=0.5).actor(ALICE)
    assert r.get(keys.next_user_id()) is None


def test_a_hostile_actor_is_refused_with_its_reason(repo, r, remote):
    remote.account(publicKey=None)
    with pytest.raises(ResolveError, match="publicKey is missing"):
        resolve.resolve_address(repo, "@alice@remote.test")
    remote.account(preferredUsername="mallory")
    with pytest.raises(ResolveError, match="called 'mallory', not 'alice'"):
        resolve.resolve_address(repo, "@alice@remote.test")
    assert r.get(keys.next_user_id()) is None


def test_addresses_and_urls_of_this_site_are_not_resolved(repo, remote):
    with pytest.raises(ResolveError, match="of this site"):
        resolve.resolve_address(repo, "@alice@testserver")
    with pytest.raises(ResolveError, match="on this site"):
        resolve.resolve_actor(repo, "http://testserver/ap/users/1")
    assert resolve.resolve_query(repo, "@alice@testserver") is None
    assert resolve.resolve_query(repo, "alice") is None
    assert resolve.resolve_query(repo, "redis and python") is None
    assert remote.requests == []


def test_a_key_id_finds_its_actor_and_a_refresh_fetches_a_changed_key(repo, r, remote):
    remote.account()
    actor = resolve.resolve_key(repo, ALICE + "#main-key")
    assert actor.username == "alice@remote.test" and actor.public_key == public_pem()
    asked = len(remote.requests)
    assert resolve.resolve_key(repo, ALICE + "#main-key") == actor
    assert len(remote.requests) == asked  # known: no request
    key = {"id": ALICE + "#main-key", "owner": ALICE, "publicKeyPem": public_pem(1)}
    remote.account(publicKey=key)
    assert resolve.resolve_key(repo, ALICE + "#main-key", refresh=True).public_key == public_pem(1)
    with pytest.raises(ResolveError, match="does not hold the key"):
        resolve.resolve_key(repo, ALICE + "#other-key")


def test_a_key_served_as_a_document_of_its_own_finds_its_owner(repo, remote):
    """A key id that is a URL of its own answering a Key (not the actor): its owner."""
    key_url = ALICE + "/main-key"
    key = {"id": key_url, "owner": ALICE, "publicKeyPem": public_pem()}
    remote.account(publicKey=key)
    remote.json("remote.test", "/users/alice/main-key", {"type": "CryptographicKey", **key})
    assert resolve.resolve_key(repo, key_url).uri == ALICE


# --- Posts -----------------------------------------------------------------------------


def note(author: str = ALICE, **changes: Any) -> dict:
    doc = {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": "http://remote.test/users/alice/statuses/1",
        "type": "Note",
        "attributedTo": author,
        "content": "<p>Hello</p>",
        "to": ["https://www.w3.org/ns/activitystreams#Public"],
    }
    doc.update(changes)
    return doc


def test_a_post_url_gives_the_note_and_its_author_resolved(repo, remote):
    remote.account()
    remote.json("remote.test", "/users/alice/statuses/1", note())
    found = resolve.resolve_note(repo, "http://remote.test/users/alice/statuses/1")
    assert isinstance(found, ResolvedNote)
    assert found.note["content"] == "<p>Hello</p>"
    assert found.author.username == "alice@remote.test"
    assert resolve.resolve_query(repo, "http://remote.test/users/alice/statuses/1") == found.author


def test_a_post_whose_author_is_on_another_server_is_refused(repo, r, remote):
    remote.account(host="other.test")
    remote.json("remote.test", "/users/alice/statuses/1", note("http://other.test/users/alice"))
    with pytest.raises(ResolveError, match="author on another server"):
        resolve.resolve_note(repo, "http://remote.test/users/alice/statuses/1")
    assert r.get(keys.next_user_id()) is None


# --- The site --------------------------------------------------------------------------------


def test_search_resolves_an_address_for_a_logged_in_reader_and_links_its_profile(
    client, repo, alice, remote
):
    remote.account()
    login(client, repo, alice)
    page = client.get("/search/", {"q": "@alice@remote.test"})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'href="/u/alice@remote.test/"' in html
    assert "@alice@remote.test" in html
    assert 'action="/u/alice@remote.test/follow/"' in html


def test_search_refusal_is_said_and_a_visitor_does_not_resolve(client, repo, alice, remote):
    page = client.get("/search/", {"q": "@alice@remote.test"})
    assert remote.requests == []  # a visitor's search asks no other server
    assert "alice@remote.test" not in page.content.decode().split("<h2>")[1]
    login(client, repo, alice)
    page = client.get("/search/", {"q": "@nobody@remote.test"})
    assert "remote.test has no account @nobody@remote.test" in page.content.decode()


def test_search_finds_a_known_remote_account_without_asking_its_server(client, repo, remote):
    remote.account()
    resolve.resolve_address(repo, "@alice@remote.test")
    asked = len(remote.requests)
    page = client.get("/search/", {"q": "@alice@remote.test"})
    assert 'href="/u/alice@remote.test/"' in page.content.decode()
    assert len(remote.requests) == asked


def test_search_takes_a_profile_url_longer_than_a_word_search(client, repo, alice, remote):
    doc = remote.account()
    remote.json("remote.test", "/@alice", doc)
    login(client, repo, alice)
    long_url = "http://remote.test/@alice"
    page = client.get("/search/", {"q": long_url})
    assert 'href="/u/alice@remote.test/"' in page.content.decode()
    too_long = client.get("/search/", {"q": "word " * 20})
    assert "A search is at most 50 characters" in too_long.content.decode()


def test_the_profile_of_a_remote_account_shows_it_and_its_counts_as_reported(
    client, repo, r, alice, remote
):
    remote.account()
    actor = resolve.resolve_address(repo, "@alice@remote.test")
    login(client, repo, alice)
    page = client.get("/u/alice@remote.test/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Alice Remote" in html and "@alice@remote.test" in html
    assert (
        '<a href="https://remote.test/tags/redis"' in html
        or 'href="https://remote.test/tags/redis"' in html
    )
    assert "<script>alert" not in html
    assert 'href="http://remote.test/@alice"' in html and "View on remote.test" in html
    assert "<strong>120</strong> followers" in html and "<strong>678</strong> posts" in html
    assert 'action="/u/alice@remote.test/follow/"' in html
    # Following it writes the graph here, as a local follow does (delivery comes later).
    followed = client.post("/u/alice@remote.test/follow/")
    assert followed.status_code == 302
    assert r.zscore(keys.followers(actor.id), alice.id) is not None
    assert client.get("/u/nobody@remote.test/").status_code == 404


def test_the_api_names_a_remote_account_by_its_acct_and_its_own_urls(repo, alice, remote):
    remote.account()
    api = Api(token_for(repo, alice))
    assert api.get("/api/v1/accounts/lookup", {"acct": "alice@remote.test"}).status_code == 404
    assert remote.requests == []  # lookup does not resolve (Mastodon's does not)
    found = api.get("/api/v2/search", {"q": "@alice@remote.test", "resolve": "true"}).json()
    account = found["accounts"][0]
    assert account["acct"] == "alice@remote.test" and account["username"] == "alice"
    assert account["uri"] == ALICE and account["url"] == "http://remote.test/@alice"
    assert account["followers_count"] == 120 and account["statuses_count"] == 678
    assert account["avatar"] == "http://remote.test/avatars/alice.png"
    assert "<script>" not in account["note"] and "Hello from" in account["note"]
    looked = api.get("/api/v1/accounts/lookup", {"acct": "@alice@remote.test"}).json()
    assert looked["id"] == account["id"] and looked["acct"] == "alice@remote.test"
    by_id = api.get(f"/api/v1/accounts/{account['id']}").json()
    assert by_id["acct"] == "alice@remote.test" and by_id["url"] == "http://remote.test/@alice"


def test_the_api_search_resolves_only_when_asked_and_for_a_user(repo, alice, remote):
    remote.account()
    api = Api(token_for(repo, alice))
    plain = api.get("/api/v2/search", {"q": "@alice@remote.test"}).json()
    assert plain["accounts"] == [] and remote.requests == []
    visitor = Api(None).get("/api/v2/search", {"q": "@alice@remote.test", "resolve": "true"})
    assert visitor.json()["accounts"] == [] and remote.requests == []


def test_searching_other_servers_is_limited_per_person(client, repo, alice, remote, settings):
    settings.RETWIS_LIMIT_RESOLVES = (1, 600)
    remote.account()
    login(client, repo, alice)
    assert (
        'href="/u/alice@remote.test/"'
        in client.get("/search/", {"q": "@alice@remote.test"}).content.decode()
    )
    asked = len(remote.requests)
    page = client.get("/search/", {"q": "@bob@remote.test"}).content.decode()
    assert "You have searched other servers a lot in a short time." in page
    assert len(remote.requests) == asked
