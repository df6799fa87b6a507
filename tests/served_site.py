"""The site served for real, as `scripts/run-site --no-seed` serves it (scripts/launch.py:
DEBUG off, collectstatic, Granian's workers, WhiteNoise), on the suite's own Redis: what the
browser tests and the client API's end-to-end tests talk to over real HTTP."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.redis_server import free_port

ROOT = Path(__file__).resolve().parent.parent


def need_npm(ready: bool, what: str) -> None:
    """Skip the calling test module unless ready (what `npm ci` installs is there: what
    names it); in CI fail instead, where .ci/run must have installed it."""
    if ready:
        return
    message = (
        f"{what} in node_modules/: run `npm ci` "
        "(scripts/run-tests does when npm is installed; sudo apt-get install npm)"
    )
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"CI: {message}")
    pytest.skip(message, allow_module_level=True)


@contextmanager
def served_site(
    log_dir: Path, settings: dict[str, str], *, start_within: float = 60, port: int = 0
) -> Iterator[str]:
    """Run the launcher with the environment's settings (PORT and STREAMING_PORT chosen
    here; DEBUG and the tests' DJANGO_SETTINGS_MODULE left out) and yield its base URL once
    /healthz and the streaming API's health answer (the instance names the streaming URL);
    port when the caller chose it (a federation test names it in SITE_URL first). At the end
    SIGTERM must stop it cleanly: exit code 0."""
    port, streaming_port = port or free_port(), free_port()
    env = {
        **os.environ, "PORT": str(port), "STREAMING_PORT": str(streaming_port),
        "ALLOWED_HOSTS": "127.0.0.1", "SITE_URL": f"http://127.0.0.1:{port}", **settings,
    }  # fmt: skip
    env.pop("DJANGO_SETTINGS_MODULE", None)  # manage.py's: retwis_site.settings
    env.pop("DEBUG", None)
    log_path = log_dir / "site.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [sys.executable, "scripts/launch.py", "--no-seed"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + start_within
    while True:
        try:  # the site, and the streaming API beside it
            urllib.request.urlopen(url + "/healthz", timeout=1)
            health = f"http://127.0.0.1:{streaming_port}/api/v1/streaming/health"
            urllib.request.urlopen(health, timeout=1)
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.terminate()
                server.wait(timeout=40)
                raise RuntimeError(f"the site did not start:\n{log_path.read_text()}") from None
            time.sleep(0.1)
    yield url
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=40) == 0, f"launcher exit code on SIGTERM:\n{log_path.read_text()}"
