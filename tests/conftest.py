"""Shared fixtures: a real redis-server started by the suite, fakeredis, personas.

Personas: alice, bob and charlie are users; sam (and olga, a second one) are staff. Every
persona comes from make_user or make_staff below, through a fixture where the test runs on
the site's repository and by a direct call otherwise (any_repo, a pinned time, a name of the
test's own).

Nothing here touches a Redis the suite did not start: the session's server runs on a free
port in a temporary directory, and only it is flushed between tests.

RETWIS_TEST_CLUSTER=1 makes that server a Redis Cluster of three primaries instead: the site
runs with REDIS_CLUSTER on, `r` and any_repo's "real" client are RedisCluster clients, and
every primary is flushed between tests (.ci/run runs a subset of the suite this way).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import fakeredis
import pytest
import redis
from django.contrib.auth.hashers import make_password
from django.test import Client
from django.utils import translation
from redis.cluster import RedisCluster

from social.repository import PROCESS_CACHE, Repository, User, get_repository
from social.repository.moderation.actions import SYSTEM_ACTOR
from tests.counting import CountingConnection, RoundTrips
from tests.redis_server import RedisClusterServer, RedisServer

PASSWORD = "correct horse battery"
CLUSTER = os.environ.get("RETWIS_TEST_CLUSTER", "") == "1"


def cache_settings(url: str, **pool_kwargs) -> dict:
    """Return a CACHES setting that points django-redis (and so the repository) at url."""
    return {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "cache",
            "OPTIONS": {
                "CLIENT_CLASS": "django_redis.client.DefaultClient",
                "SOCKET_CONNECT_TIMEOUT": 0.5,
                "SOCKET_TIMEOUT": 2,
                # No CLIENT SETINFO on connect, so round-trip counts see only our commands.
                "CONNECTION_POOL_KWARGS": {"driver_info": None, **pool_kwargs},
            },
        }
    }


class WholeCluster(RedisCluster):
    """A RedisCluster whose DBSIZE counts the keys of every primary, not of one node (what
    a test asserting "nothing was written" means)."""

    def dbsize(self, **kwargs) -> int:
        return super().dbsize(target_nodes=RedisCluster.PRIMARIES, **kwargs)


def raw_client(url: str, **kwargs) -> redis.Redis | RedisCluster:
    """Return a client on the test server, a cluster client when the server is one."""
    if CLUSTER:
        return WholeCluster.from_url(url, **kwargs)
    return redis.Redis.from_url(url, **kwargs)


@pytest.fixture(scope="session")
def redis_server():
    """A redis-server of our own for the whole run (a three-node cluster under
    RETWIS_TEST_CLUSTER=1)."""
    server = RedisClusterServer().start() if CLUSTER else RedisServer().start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def redis_url(redis_server, settings, tmp_path_factory):
    """Point the site at our own server, emptied before each test."""
    redis_server.flushall()
    if CLUSTER:
        settings.REDIS_CLUSTER = True
        settings.REDIS_URL = redis_server.url
        # No CLIENT SETINFO on connect, so round-trip counts see only our commands.
        settings.REDIS_CLUSTER_OPTIONS = {
            "connection_class": CountingConnection,
            "driver_info": None,
        }
    PROCESS_CACHE.clear()  # ids start again at 1: nothing remembered may carry over
    # Uploaded pictures go to a directory of the test's own (social/media.py).
    settings.MEDIA_ROOT = tmp_path_factory.mktemp("media")
    settings.CACHES = cache_settings(redis_server.url, connection_class=CountingConnection)
    yield redis_server.url
    # A page in Chinese leaves its language active in this thread (LocaleMiddleware does not
    # deactivate it): a later test's dates and messages would be in Chinese.
    translation.deactivate()


@pytest.fixture
def r(redis_url) -> Iterator[redis.Redis | RedisCluster]:
    """A raw client on the test server, for asserting the resulting Redis state."""
    client = raw_client(redis_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def repo(redis_url) -> Repository:
    """The site's repository on the test server."""
    return get_repository()


@pytest.fixture(params=["real", "fake"])
def any_repo(request, redis_server) -> Iterator[Repository]:
    """The repository on real Redis and on fakeredis: contract tests run on both."""
    if request.param == "real":
        client = raw_client(redis_server.url)
    else:
        client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    client.flushall()
    yield Repository(client, home_feed_cap=1000, timeline_cap=1000, fanout_batch=3)
    client.close()


@pytest.fixture
def round_trips():
    """Count round trips from here on: `round_trips.count` after the code under test."""
    RoundTrips.reset()
    return RoundTrips


def make_user(
    repo: Repository, name: str, password: str = PASSWORD, *, at: int | None = None
) -> User:
    """Create a persona through the repository, as sign-up does (at: the sign-up time)."""
    return repo.users.create_user(name, make_password(password), at=at)


def make_staff(repo: Repository, who: str | User = "sam", *, at: int | None = None) -> User:
    """Return a staff persona, made staff the way `manage.py createstaff` does.

    who is a name to create with make_user, or a user made already (the browser tests make
    theirs with a hash the live site accepts). at pins the sign-up and grant times.
    """
    user = make_user(repo, who, at=at) if isinstance(who, str) else who
    repo.moderation.grant_staff(user.id, SYSTEM_ACTOR, at=at)
    staff = repo.users.get_user(user.id)
    assert staff is not None
    return staff


@pytest.fixture
def alice(repo) -> User:
    return make_user(repo, "alice")


@pytest.fixture
def bob(repo) -> User:
    return make_user(repo, "bob")


@pytest.fixture
def charlie(repo) -> User:
    return make_user(repo, "charlie")


def login(client: Client, repo: Repository, user: User) -> Client:
    """Give client the `auth` cookie of user, as a successful login would."""
    client.cookies["auth"] = repo.users.record_login(user.id, "127.0.0.1")
    return client


@pytest.fixture
def sam(repo) -> User:
    """A staff member."""
    return make_staff(repo, "sam")


@pytest.fixture
def olga(repo) -> User:
    """A second staff member."""
    return make_staff(repo, "olga")


@pytest.fixture
def sam_client(repo, sam) -> Client:
    return login(Client(), repo, sam)


@pytest.fixture
def alice_client(repo, alice) -> Client:
    return login(Client(), repo, alice)


@pytest.fixture
def bob_client(repo, bob) -> Client:
    return login(Client(), repo, bob)


@pytest.fixture
def any_r(any_repo, redis_server) -> Iterator[redis.Redis | RedisCluster]:
    """A decoded raw client on any_repo's server (real or fake), for asserting its state."""
    if isinstance(any_repo.r, RedisCluster):
        client = raw_client(redis_server.url, decode_responses=True)
    else:
        pool = any_repo.r.connection_pool
        kwargs = {**pool.connection_kwargs, "decode_responses": True}
        client = redis.Redis(
            connection_pool=type(pool)(connection_class=pool.connection_class, **kwargs)
        )
    yield client
    client.close()
