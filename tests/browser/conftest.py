"""Browser tests: Debian's Chromium driven by Playwright against the site on a free port.

The site runs in a subprocess (`manage.py runserver`) on the suite's own redis-server, so the
browser sees exactly what a person would: real HTTP, cookies, CSRF, the stylesheet. Never
`playwright install` (it downloads a browser): the tests launch /usr/bin/chromium.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip

if CHROMIUM is None:
    pytest.skip(
        "browser tests need Chromium: apt-get install chromium (CI installs it)",
        allow_module_level=True,
    )


@pytest.fixture(scope="session")
def live_url(redis_server):
    """Run the site against the suite's Redis; yield its base URL."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "retwis_site.settings",
        "REDIS_URL": redis_server.url,
        "SECRET_KEY": "browser-tests-only",
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", "--insecure", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1)
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise RuntimeError("the site did not start for the browser tests") from None
            time.sleep(0.1)
    yield url
    server.terminate()
    server.wait(timeout=10)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def new_page(browser):
    """Return a function making a fresh page (own cookies) at the given width."""
    contexts = []

    def make(width: int = 1280):
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()
