"""The one client factory: the seam tests replace.

On one Redis server the repository and django-redis (the cache) share one connection
configuration, REDIS_URL, so the site talks to exactly one Redis. With REDIS_CLUSTER on,
REDIS_URL names any one node of a Redis Cluster and the repository gets one process-wide
`RedisCluster` built from it, which finds the other nodes itself (docs/scaling.md).
"""

from __future__ import annotations

import threading

import redis
import redis.asyncio
from django.conf import settings
from django_redis import get_redis_connection
from redis.backoff import NoBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

# What "Redis is unavailable" looks like to redis-py: the site answers 503 for these. On a
# cluster, also a slot whose node is down or unknown (the other nodes may still answer).
UNAVAILABLE = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.BusyLoadingError,
    redis.exceptions.ClusterDownError,
    redis.exceptions.SlotNotCoveredError,
)

_cluster: tuple[tuple, RedisCluster] | None = None
_cluster_lock = threading.Lock()


def get_redis() -> redis.Redis | RedisCluster:
    """Return the shared client: the process's RedisCluster when REDIS_CLUSTER is on, else
    the Redis client of the default cache."""
    if settings.REDIS_CLUSTER:
        return cluster_client()
    return get_redis_connection("default")


def cluster_client() -> RedisCluster:
    """Return the process's RedisCluster for REDIS_URL, built on first use.

    Built again only when the settings it is made from change (tests change them). The
    timeouts are the single server's (REDIS_SOCKET_TIMEOUT, REDIS_CONNECT_TIMEOUT);
    REDIS_CLUSTER_OPTIONS adds keyword arguments (tests pass a counting connection class).
    Raise ConnectionError when no node answers, as a single server's client would.
    """
    global _cluster
    config = (
        settings.REDIS_URL,
        settings.REDIS_SOCKET_TIMEOUT,
        settings.REDIS_CONNECT_TIMEOUT,
        tuple(settings.REDIS_CLUSTER_OPTIONS.items()),
    )
    built = _cluster
    if built is not None and built[0] == config:
        return built[1]
    with _cluster_lock:  # threads of one process share one client and its pools
        if _cluster is not None and _cluster[0] == config:
            return _cluster[1]
        try:
            client = RedisCluster.from_url(
                settings.REDIS_URL,
                socket_timeout=settings.REDIS_SOCKET_TIMEOUT,
                socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT,
                # No retries, as on one server (django-redis makes none): a write whose
                # reply timed out may have run, and sending it again would run it twice
                # (a post listed twice). The request answers 503 and the person retries.
                retry=Retry(NoBackoff(), 0),
                **settings.REDIS_CLUSTER_OPTIONS,
            )
        except redis.exceptions.RedisClusterException as error:  # no node reachable
            raise redis.exceptions.ConnectionError(str(error)) from error
        if _cluster is not None:
            _cluster[1].close()
        _cluster = (config, client)
        return client


def get_async_redis(*, wait: float = 0) -> redis.asyncio.Redis | redis.asyncio.RedisCluster:
    """Return a new asyncio client for REDIS_URL (a cluster's with REDIS_CLUSTER): the
    streaming process's (social/streaming/). wait: the longest a command blocks on the
    server (XREAD BLOCK), added to the reply timeout. The caller closes it (aclose)."""
    timeout, connect = settings.REDIS_SOCKET_TIMEOUT + wait, settings.REDIS_CONNECT_TIMEOUT
    if settings.REDIS_CLUSTER:
        return redis.asyncio.RedisCluster.from_url(
            settings.REDIS_URL, socket_timeout=timeout, socket_connect_timeout=connect
        )
    location = settings.CACHES["default"]["LOCATION"]  # django-redis's: REDIS_URL
    return redis.asyncio.Redis.from_url(
        location, socket_timeout=timeout, socket_connect_timeout=connect
    )


def ping() -> bool:
    """Return whether Redis answers: on a cluster, every primary."""
    try:
        client = get_redis()
        if isinstance(client, RedisCluster):
            return bool(client.ping(target_nodes=RedisCluster.PRIMARIES))
        return bool(client.ping())
    except (*UNAVAILABLE, redis.exceptions.ResponseError):
        return False


def ping_within(timeout: float) -> bool:
    """Return whether Redis answers PING within timeout seconds: on a cluster, every primary.

    For /healthz: each PING goes on a new connection of its own, with timeout for connecting
    and for the reply and no retries, so a frozen server is reported after about timeout
    (per primary), not after the site's socket timeout and its retries, and no pooled
    connection is left waiting for a late reply.
    """
    try:
        client = get_redis()
        if isinstance(client, RedisCluster):
            pools = [node.redis_connection.connection_pool for node in client.get_primaries()]
        else:
            pools = [client.connection_pool]
        return all(_ping_on_new_connection(pool, timeout) for pool in pools)
    except (*UNAVAILABLE, redis.exceptions.ResponseError, OSError):
        return False


def _ping_on_new_connection(pool: redis.ConnectionPool, timeout: float) -> bool:
    """PING on a connection made like pool's, but with timeout and no retries."""
    options = {**pool.connection_kwargs, "socket_timeout": timeout}
    options.update(socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0))
    connection = pool.connection_class(**options)
    try:
        connection.send_command("PING")  # connects (and says hello) first
        return connection.read_response() in (b"PONG", "PONG", True)
    finally:
        connection.disconnect()
