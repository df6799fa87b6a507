"""The streaming process's hub in this process (social/streaming/hub.py): a Redis outage is
ridden out (the bus is read again from the last id handed out, so nothing the stream holds
is missed), a client that never reads is dropped at its bounded buffer, and an address's
(an IPv6 /64's) and an account's connections are counted."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest
import redis

from social import keys
from social.repository import get_repository
from social.streaming import hub as hub_module
from social.streaming.app import StreamingApp, address_of
from social.streaming.deliver import Listener
from social.streaming.hub import Connection, Hub
from social.streaming.streams import Stream
from tests.api import token_for
from tests.conftest import CLUSTER, cache_settings, make_staff, make_user
from tests.redis_server import RedisServer
from tests.test_streaming import in_new_loop


def connection(
    user, *, buffer: int = 10, address: str = "192.0.2.1", token: str = "token", secret: str = ""
) -> Connection:
    return Connection(
        Listener(user, ("read",)),
        token,
        address,
        "http://testserver",
        buffer=buffer,
        encode=lambda stream, event, payload: f"{stream.name} {event} {payload[:0]}",
        secret=secret,
    )


async def next_message(listening: Connection, wait: float) -> str:
    """The next message buffered for listening (one at a time, unlike the pump)."""
    while not listening.pending:
        await asyncio.wait_for(listening.wake.wait(), wait)
        listening.wake.clear()
    return listening.pending.popleft()


@pytest.mark.skipif(CLUSTER, reason="stops and restarts a server of its own")
def test_a_redis_outage_is_ridden_out_and_nothing_written_meanwhile_is_missed(settings):
    server = RedisServer().start("--appendonly", "yes")  # keeps its data over a restart
    settings.CACHES = cache_settings(server.url)
    try:
        repo = get_repository()
        alice, bob = make_user(repo, "alice"), make_user(repo, "bob")

        async def run() -> list[str]:
            hub, listening = Hub(), connection(alice)
            hub.admit(listening, 5, 5)
            hub.subscribe(listening, Stream("public"))
            hub.start()
            await asyncio.wait_for(hub.connected.wait(), 5)
            await asyncio.to_thread(repo.posts.create_post, bob.id, "before")
            got = [await next_message(listening, 5)]
            server.process.terminate()  # Redis goes away
            server.process.wait(timeout=10)
            while hub.connected.is_set():
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # a reconnection or two is refused meanwhile
            await asyncio.to_thread(server.start, "--appendonly", "yes")
            await asyncio.to_thread(repo.posts.create_post, bob.id, "after")
            got.append(await next_message(listening, 10))
            assert not listening.closed.is_set()  # the listener saw nothing wrong
            await hub.stop()
            return got

        assert in_new_loop(run()) == ["public update ", "public update "]
    finally:
        server.stop()


def test_a_client_that_never_reads_is_dropped_at_its_bounded_queue(repo, alice):
    async def run() -> tuple[bool, int]:
        slow = connection(alice, buffer=3)
        for _ in range(10):
            slow.put(Stream("public"), "update", "{}")
        return slow.closed.is_set() and slow.dropped, len(slow.pending)

    assert in_new_loop(run()) == (True, 3)


def test_an_address_holds_at_most_its_limit_and_a_freed_place_is_taken_again(repo, alice):
    async def run() -> list[str | None]:
        hub = Hub()
        first, second, third = (connection(alice) for _ in range(3))
        admitted = [hub.admit(c, 2, 10) for c in (first, second, third)]
        other = hub.admit(connection(alice, address="192.0.2.2"), 2, 10)
        hub.subscribe(first, Stream("user"))
        hub.leave(first)
        return [*admitted, other, hub.admit(third, 2, 10), not hub.subs]

    assert in_new_loop(run()) == [None, None, "address", None, None, True]


def test_an_account_holds_at_most_its_limit_from_any_address(repo, alice, bob):
    async def run() -> list[str | None]:
        hub = Hub()
        mine = [connection(alice, address=f"192.0.2.{n}") for n in range(1, 5)]
        admitted = [hub.admit(c, 10, 3) for c in mine]  # the fourth: the account is full
        others = hub.admit(connection(bob, address="192.0.2.4"), 10, 3)
        hub.leave(mine[0])
        return [*admitted, others, hub.admit(mine[3], 10, 3)]

    assert in_new_loop(run()) == [None, None, None, "account", None, None]
    # Nothing was counted for a refused connection: the counts are the open ones'.


def test_an_ipv6_64_is_one_address_and_a_mapped_ipv4_address_is_itself(settings):
    def address(client: str, forwarded: str = "") -> str:
        headers = {"x-forwarded-for": forwarded} if forwarded else {}
        return address_of({"client": (client, 1234)}, headers)

    same_64 = {address("2001:db8:1:2::1"), address("2001:db8:1:2:ffff::9")}
    assert same_64 == {"2001:db8:1:2::/64"}
    assert address("2001:db8:1:3::1") == "2001:db8:1:3::/64"  # the next /64 apart
    assert address("::ffff:203.0.113.9") == address("203.0.113.9") == "203.0.113.9"
    settings.TRUSTED_PROXY_HEADER = "HTTP_X_FORWARDED_FOR"
    assert address("127.0.0.1", "198.51.100.1, 2001:db8:1:2::7") == "2001:db8:1:2::/64"
    assert address("127.0.0.1", "::ffff:203.0.113.9") == "203.0.113.9"


def test_one_check_closes_the_revoked_the_suspended_and_the_stale_cookie_only(
    repo, r, alice, round_trips
):
    """The hub checks every connection's credential at once (Hub.check, every
    RECHECK_EVERY heartbeats): one round trip for all, whatever their number."""
    bob, carol, dave = (make_user(repo, name) for name in ("bob", "carol", "dave"))
    kept, revoked, suspended = (token_for(repo, u, "read") for u in (alice, bob, carol))
    repo.oauth.revoke(revoked)
    repo.moderation.suspend(carol.id, make_staff(repo), "spam")
    fresh = connection(dave, token="", secret=r.hget(keys.user(dave.id), "auth"))
    stale = connection(dave, token="", secret="no longer dave's")
    conns = [
        connection(alice, token=kept),
        connection(bob, token=revoked),
        connection(carol, token=suspended),
        connection(alice, token=token_for(repo, bob, "read")),  # bob's token, not alice's
        fresh,
        stale,
    ]

    async def run() -> list[bool]:
        hub = Hub()
        for c in conns:
            hub.admit(c, 100, 100)
        round_trips.reset()
        await hub.check()
        assert round_trips.count == (3 if CLUSTER else 1)  # on the cluster: each node
        return [not c.closed.is_set() for c in conns]

    assert in_new_loop(run()) == [True, False, False, False, True, False]
    assert r.zcard(keys.oauth_user_tokens(alice.id)) == 1  # a check writes nothing


def test_a_redis_outage_closes_no_connection_at_the_check(repo, alice, monkeypatch):
    """Listeners are to see nothing wrong during an outage: the check is skipped."""
    listening = connection(alice, token=token_for(repo, alice, "read"))

    def away(*args, **kwargs):
        raise redis.ConnectionError("Redis is away")

    monkeypatch.setattr(get_repository().live, "holding", away)

    async def run() -> bool:
        hub = Hub()
        hub.admit(listening, 5, 5)
        await hub.check()
        return listening.closed.is_set()

    assert in_new_loop(run()) is False


class Client:
    """An ASGI client of the streaming app in this process: what it is sent, and a receive
    that says the client went only when told to (gone)."""

    def __init__(self, *, stuck_after: int | None = None) -> None:
        self.sent: list[dict] = []
        self.gone = asyncio.Event()
        self.stuck_after = stuck_after  # body writes that complete before writes hang

    async def receive(self) -> dict:
        if not hasattr(self, "asked"):
            self.asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict) -> None:
        self.sent.append(message)
        bodies = [m for m in self.sent if m["type"] == "http.response.body"]
        if self.stuck_after is not None and len(bodies) > self.stuck_after:
            await asyncio.Event().wait()  # a client that is gone without a word: for ever


def sse_scope(token: str) -> dict:
    return {
        "type": "http",
        "method": "GET",
        "path": "/api/v1/streaming/user",
        "query_string": b"",
        "headers": [(b"host", b"testserver"), (b"authorization", f"Bearer {token}".encode())],
        "client": ("192.0.2.9", 1234),
    }


@pytest.fixture
def streaming_settings(settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    settings.RETWIS_STREAMING_HEARTBEAT = 0.05


def test_a_stream_whose_client_goes_is_let_go_even_when_its_writes_never_end(
    repo, alice, streaming_settings
):
    """A client may vanish without the server telling (no disconnect; its writes just hang):
    a write unfinished for WRITE_STUCK heartbeats drops it, and the hub forgets its
    subscription; one that says it went is forgotten at once."""
    token = token_for(repo, alice, "read")

    async def run() -> list[int]:
        app = StreamingApp()
        stuck, polite = Client(stuck_after=1), Client()
        handlers = [
            asyncio.ensure_future(app(sse_scope(token), c.receive, c.send)) for c in (stuck, polite)
        ]
        while len(app._hub().subs) < 2:
            await asyncio.sleep(0.01)
        held = [len(app._hub().subs)]
        polite.gone.set()
        await asyncio.wait_for(handlers[1], 2)
        held.append(len(app._hub().subs))
        await asyncio.wait_for(handlers[0], 3)  # heartbeats: the second write hangs
        held.append(len(app._hub().subs))
        held.append(len(app._hub().connections))
        await app._hub().stop()
        return held

    assert in_new_loop(run()) == [2, 1, 0, 0]


def test_connecting_while_redis_is_away_is_answered_503(
    repo, alice, streaming_settings, monkeypatch
):
    """Not a traceback: Mastodon's error, and the client connects again later."""

    def away(*args, **kwargs):
        raise redis.ConnectionError("Redis is away")

    monkeypatch.setattr("social.streaming.app.authenticate", away)

    async def run() -> list[dict]:
        app, client = StreamingApp(), Client()
        await asyncio.wait_for(app(sse_scope("some token"), client.receive, client.send), 2)
        await app._hub().stop()
        return client.sent

    start, body = in_new_loop(run())
    assert start["status"] == 503
    assert body["body"] == b'{"error": "Service Unavailable"}'


def test_the_collector_freezes_survivors_and_still_frees_their_cycles_in_time(monkeypatch):
    """keep_collections_short: survivors are frozen out of the collector's sight (a full
    collection of 10,000 connections stalls every event), and a cycle frozen while alive
    and dropped later is still freed at the next full collection."""
    monkeypatch.setattr(hub_module, "FREEZE_EVERY", 0.02)
    monkeypatch.setattr(hub_module, "FULL_GC_EVERY", 5)

    class Node:
        pass

    async def run() -> list[bool]:
        cycle = Node()
        cycle.self = cycle  # type: ignore[attr-defined]
        gone = weakref.ref(cycle)
        collector = asyncio.ensure_future(hub_module.keep_collections_short())
        await asyncio.sleep(0.05)
        frozen = gc.get_freeze_count() > 0
        del cycle  # garbage now, but frozen: only a full collection frees it
        for _ in range(100):  # a full collection comes after 5 periods (0.1 s)
            if gone() is None:
                break
            await asyncio.sleep(0.02)
        collector.cancel()
        return [frozen, gone() is None]

    try:
        assert in_new_loop(run()) == [True, True]
    finally:
        gc.unfreeze()


def test_the_collector_frees_closed_connections_soon_after_many_leave(monkeypatch):
    """Objects frozen while their connection was open are freed by a full collection as
    soon as CHURN_COLLECT connections (and a quarter of those open) have left, not only
    every FULL_GC_EVERY periods: a crowd reconnecting must not grow the process."""
    monkeypatch.setattr(hub_module, "FREEZE_EVERY", 0.02)
    monkeypatch.setattr(hub_module, "FULL_GC_EVERY", 10_000)  # never, in this test
    monkeypatch.setattr(hub_module, "CHURN_COLLECT", 3)

    class Node:
        pass

    class Crowd:  # what keep_collections_short reads of the hub
        def __init__(self) -> None:
            self.left = 0
            self.connections = {object() for _ in range(8)}  # a quarter of 8 is 2 < 3

    async def run() -> list[bool]:
        crowd = Crowd()
        cycle = Node()
        cycle.self = cycle  # type: ignore[attr-defined]
        gone = weakref.ref(cycle)
        collector = asyncio.ensure_future(hub_module.keep_collections_short(crowd))  # type: ignore[arg-type]
        await asyncio.sleep(0.1)
        del cycle  # garbage, but frozen
        crowd.left = 2  # fewer than CHURN_COLLECT left: no full collection
        await asyncio.sleep(0.1)
        kept = gone() is not None
        crowd.left = 3
        for _ in range(100):
            if gone() is None:
                break
            await asyncio.sleep(0.02)
        collector.cancel()
        return [kept, gone() is None]

    try:
        assert in_new_loop(run()) == [True, True]
    finally:
        gc.unfreeze()
