"""The streaming process's hub in this process (social/streaming/hub.py): a Redis outage is
ridden out (the bus is read again from the last id handed out, so nothing the stream holds
is missed), a client that never reads is dropped at its bounded queue, and an address's
connections are counted."""

from __future__ import annotations

import asyncio

import pytest
import redis

from social import keys
from social.repository import get_repository
from social.streaming.deliver import Listener, still_valid
from social.streaming.hub import Connection, Hub
from social.streaming.streams import Stream
from tests.api import token_for
from tests.conftest import CLUSTER, cache_settings, make_user
from tests.redis_server import RedisServer
from tests.test_streaming import in_new_loop


def connection(user, *, buffer: int = 10, address: str = "192.0.2.1") -> Connection:
    return Connection(
        Listener(user, ("read",)),
        "token",
        address,
        "http://testserver",
        buffer=buffer,
        encode=lambda stream, event, payload: f"{stream.name} {event} {payload[:0]}",
    )


@pytest.mark.skipif(CLUSTER, reason="stops and restarts a server of its own")
def test_a_redis_outage_is_ridden_out_and_nothing_written_meanwhile_is_missed(settings):
    server = RedisServer().start("--appendonly", "yes")  # keeps its data over a restart
    settings.CACHES = cache_settings(server.url)
    try:
        repo = get_repository()
        alice, bob = make_user(repo, "alice"), make_user(repo, "bob")

        async def run() -> list[str]:
            hub, listening = Hub(), connection(alice)
            hub.admit(listening, 5)
            hub.subscribe(listening, Stream("public"))
            hub.start()
            await asyncio.wait_for(hub.connected.wait(), 5)
            await asyncio.to_thread(repo.posts.create_post, bob.id, "before")
            got = [await asyncio.wait_for(listening.queue.get(), 5)]
            server.process.terminate()  # Redis goes away
            server.process.wait(timeout=10)
            while hub.connected.is_set():
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # a reconnection or two is refused meanwhile
            await asyncio.to_thread(server.start, "--appendonly", "yes")
            await asyncio.to_thread(repo.posts.create_post, bob.id, "after")
            got.append(await asyncio.wait_for(listening.queue.get(), 10))
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
        return slow.closed.is_set() and slow.dropped, slow.queue.qsize()

    assert in_new_loop(run()) == (True, 3)


def test_an_address_holds_at_most_its_limit_and_a_freed_place_is_taken_again(repo, alice):
    async def run() -> list[bool]:
        hub = Hub()
        first, second, third = (connection(alice) for _ in range(3))
        admitted = [hub.admit(first, 2), hub.admit(second, 2), hub.admit(third, 2)]
        other = hub.admit(connection(alice, address="192.0.2.2"), 2)
        hub.subscribe(first, Stream("user"))
        hub.leave(first)
        return [*admitted, other, hub.admit(third, 2), not hub.subs]

    assert in_new_loop(run()) == [True, True, False, True, True, True]


def test_a_token_is_taken_to_hold_while_redis_is_away(repo, r, alice, monkeypatch):
    """The periodic check of an open connection's token (app.py's pump) must not close
    every listener during an outage: they are to see nothing wrong."""
    token = token_for(repo, alice, "read")
    assert still_valid(repo, token) and not still_valid(repo, "no such token")

    def away(*args, **kwargs):
        raise redis.ConnectionError("Redis is away")

    monkeypatch.setattr(repo.oauth, "authenticate", away)
    assert still_valid(repo, token)
    assert r.zcard(keys.oauth_user_tokens(alice.id)) == 1  # the token is as it was
