"""The site on a Redis Cluster (REDIS_CLUSTER=true, REDIS_URL naming one node).

These run in every suite run: on the session's cluster under RETWIS_TEST_CLUSTER=1, else on
a three-node cluster this module starts for itself (about 3 s). The rest of the suite's run
on a cluster (.ci/run) covers the repository and the pages; this file covers what only a
cluster has: one client for the process, every node's health, a node going down.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client
from redis.cluster import RedisCluster

from social.redis_client import get_redis
from social.repository import PROCESS_CACHE
from tests.conftest import CLUSTER
from tests.counting import CountingConnection
from tests.redis_server import RedisClusterServer, free_port


@pytest.fixture(scope="module")
def cluster(request):
    """A three-primary cluster: the session's when the suite runs on one, else our own."""
    if CLUSTER:
        return request.getfixturevalue("redis_server")
    server = RedisClusterServer().start()
    request.addfinalizer(server.stop)
    return server


def point_site_at(settings, url: str) -> None:
    """Run the site on the cluster that url names one node of, counting round trips."""
    settings.REDIS_CLUSTER = True
    settings.REDIS_URL = url
    settings.REDIS_CLUSTER_OPTIONS = {"connection_class": CountingConnection, "driver_info": None}


@pytest.fixture(autouse=True)
def on_cluster(cluster, redis_url, settings):
    """Every test here runs the site on the cluster, emptied first."""
    cluster.flushall()
    PROCESS_CACHE.clear()
    point_site_at(settings, cluster.url)


@pytest.fixture
def cr(cluster) -> RedisCluster:
    """A raw cluster client, for asserting the resulting state."""
    client = RedisCluster.from_url(cluster.url, decode_responses=True)
    yield client
    client.close()


def addresses(cluster) -> list[str]:
    return sorted(f"127.0.0.1:{node.port}" for node in cluster.nodes)


def test_every_request_shares_one_cluster_client_that_found_every_node(cluster, settings):
    client = get_redis()

    assert isinstance(client, RedisCluster)
    assert get_redis() is client
    assert sorted(node.name for node in client.get_nodes()) == addresses(cluster)

    settings.REDIS_URL = cluster.nodes[1].url  # another node: another client, same cluster
    other = get_redis()
    assert other is not client and get_redis() is other
    assert sorted(node.name for node in other.get_nodes()) == addresses(cluster)


def test_a_sign_up_and_a_post_land_on_every_node_they_belong_to(cluster, cr):
    client = Client()
    client.post(
        "/register/",
        {"username": "alice", "password": "a fine pass", "password2": "a fine pass"},
    )
    response = client.post("/post/", {"status": "hello cluster"})

    assert response.status_code == 302
    assert cr.hget("user:1", "username") == "alice" and cr.hget("users", "alice") == "1"
    assert cr.hget("post:1", "body") == "hello cluster"
    assert cr.lrange("timeline", 0, -1) == ["1"] and cr.lrange("user_posts:1", 0, -1) == ["1"]
    holders = {cr.get_node_from_key(key).name for key in ("user:1", "users", "post:1")}
    assert len(holders) > 1  # the writes really did span nodes
    assert "hello cluster" in client.get("/").content.decode()


def test_the_dashboard_shows_the_health_of_every_node(cluster, cr, repo, alice, sam_client):
    repo.posts.create_post(alice.id, "hi")

    dashboard = repo.stats.dashboard()
    html = sam_client.get("/staff/").content.decode()

    assert dashboard.cluster and dashboard.silent == ()
    assert sorted(h.node for h in dashboard.servers) == addresses(cluster)
    assert {h.role for h in dashboard.servers} == {"primary"}
    per_node = {h.node: h.keys for h in dashboard.servers}
    for node in cr.get_primaries():
        assert per_node[node.name] == cr.dbsize(target_nodes=node)
    assert sum(per_node.values()) == cr.dbsize(target_nodes=RedisCluster.PRIMARIES) > 0
    assert "a cluster: 3 nodes" in html
    assert all(f"<h3>{address} " in html for address in addresses(cluster))


def test_a_cluster_that_cannot_be_reached_gives_the_friendly_503(settings, client):
    point_site_at(settings, f"redis://127.0.0.1:{free_port()}/0")

    page = client.get("/timeline/")
    health = client.get("/healthz")

    assert page.status_code == 503 and b"right back" in page.content
    assert health.status_code == 503
    assert json.loads(health.content) == {"redis": "unavailable"}


def test_health_says_unavailable_when_one_primary_is_down(settings, client):
    small = RedisClusterServer().start()  # one of our own: a node of it is stopped
    try:
        point_site_at(settings, small.url)
        assert client.get("/healthz").status_code == 200

        small.nodes[2].stop()  # not the node REDIS_URL names
        response = client.get("/healthz")

        assert response.status_code == 503
        assert json.loads(response.content) == {"redis": "unavailable"}
    finally:
        small.stop()
