"""Start and stop moto's standalone server: an S3-compatible endpoint on a free port of
127.0.0.1, for the tests of the MEDIA_STORAGE=s3 path (tests/test_media_storage.py)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request

from tests.redis_server import free_port


class S3Server:
    """moto's server (`moto[server]`, requirements-dev.txt) as a child process."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> S3Server:
        """Start the server and wait until it answers (it takes a few seconds to import)."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"{self.url}/moto-api/", timeout=2):
                    return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"moto's server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
