"""/healthz on a frozen Redis (SIGSTOP): it answers 503 within its own short timeout
(REDIS_HEALTH_TIMEOUT), not after the site's socket timeout and retries, and 200 again as
soon as Redis is back.

Each test freezes a redis-server of its own, never the suite's shared one.
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
import redis
from django.test import Client

from tests.conftest import cache_settings
from tests.redis_server import RedisServer


@pytest.fixture
def own_redis(settings):
    """A redis-server of this test's own, the site pointed at it; thawed and stopped after."""
    server = RedisServer().start()
    settings.REDIS_CLUSTER = False  # this one server, even when the suite runs on a cluster
    settings.CACHES = cache_settings(server.url)
    try:
        yield server
    finally:
        os.kill(server.process.pid, signal.SIGCONT)  # a stopped process ignores SIGTERM
        server.stop()


def frozen(server: RedisServer):
    """Stop the server's process (SIGSTOP): connections open, nothing answers."""
    os.kill(server.process.pid, signal.SIGSTOP)


def timed_health() -> tuple[int, dict, float]:
    started = time.monotonic()
    response = Client().get("/healthz")
    return response.status_code, json.loads(response.content), time.monotonic() - started


def test_health_answers_503_within_its_own_timeout_when_redis_is_frozen(own_redis, settings):
    settings.REDIS_HEALTH_TIMEOUT = 0.3
    r = redis.Redis.from_url(own_redis.url, decode_responses=True)
    r.set("kept", "before the freeze")
    assert timed_health()[:2] == (200, {"redis": "ok"})  # also warms the site's pool
    frozen(own_redis)

    status, body, took = timed_health()

    assert (status, body) == (503, {"redis": "unavailable"})
    # The site's socket timeout here is 2 s: the health check must not wait for it.
    assert took < 1.5, f"/healthz took {took:.2f} s on a frozen Redis"
    os.kill(own_redis.process.pid, signal.SIGCONT)
    assert timed_health()[:2] == (200, {"redis": "ok"})
    assert r.get("kept") == "before the freeze" and r.dbsize() == 1  # the check wrote nothing
    r.close()


def test_health_answers_503_quickly_on_a_cold_start_against_a_frozen_redis(own_redis, settings):
    settings.REDIS_HEALTH_TIMEOUT = 0.3
    frozen(own_redis)  # before the site ever connected: the new connection's hello waits

    status, body, took = timed_health()

    assert (status, body) == (503, {"redis": "unavailable"})
    assert took < 1.5, f"/healthz took {took:.2f} s on a frozen Redis"


def test_health_uses_the_health_timeout_setting(own_redis, settings):
    settings.REDIS_HEALTH_TIMEOUT = 1.0
    frozen(own_redis)

    status, _, took = timed_health()

    assert status == 503
    assert 0.9 <= took < 1.9, f"/healthz took {took:.2f} s with a 1 s health timeout"


def test_the_default_timeouts_are_sane():
    from django.conf import settings

    assert settings.REDIS_HEALTH_TIMEOUT < settings.REDIS_SOCKET_TIMEOUT
    assert 0 < settings.REDIS_CONNECT_TIMEOUT <= settings.REDIS_SOCKET_TIMEOUT
