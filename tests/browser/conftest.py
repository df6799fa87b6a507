"""Browser tests: Debian's Chromium driven by Playwright against the site on a free port.

The site runs the production way, through the launcher (`scripts/launch.py --no-seed`, what
`scripts/run-site` runs): DEBUG off, collectstatic, Granian's WSGI workers and WhiteNoise, on
the suite's own redis-server. So the browser sees exactly what a person would: real HTTP,
cookies, CSRF, the hashed stylesheet. Never `playwright install` (it downloads a browser): the
tests launch /usr/bin/chromium.
"""

from __future__ import annotations

import os
import shutil
import signal
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
def live_url(redis_server, tmp_path_factory):
    """Run the site (the launcher, as `scripts/run-site --no-seed`) on the suite's Redis; yield
    its base URL. At the end SIGTERM must stop it cleanly: exit code 0.
    """
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "REDIS_URL": redis_server.url,
        "SECRET_KEY": "browser-tests-only-" + "x" * 50,
        "ALLOWED_HOSTS": "127.0.0.1",
        "WEB_WORKERS": "2",
        # Two blocking threads per worker, not production's one (scripts/launch.py says why):
        # Chromium's parallel requests (a page, its stylesheet, a second user's page) get a
        # thread each instead of queueing behind one another, and the site's per-process
        # caches are exercised by more than one thread at a time, as with a remote Redis.
        "WEB_THREADS": "2",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)  # manage.py's: retwis_site.settings
    env.pop("DEBUG", None)
    log_path = tmp_path_factory.mktemp("site") / "site.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [sys.executable, "scripts/launch.py", "--no-seed"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1)
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.terminate()
                server.wait(timeout=40)
                raise RuntimeError(
                    f"the site did not start for the browser tests:\n{log_path.read_text()}"
                ) from None
            time.sleep(0.1)
    yield url
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=40) == 0, f"launcher exit code on SIGTERM:\n{log_path.read_text()}"


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


@pytest.fixture
def person(repo):
    """Return a function creating a user (by name) the live site can log in with PASSWORD.

    The live site accepts PBKDF2 only, not the tests' MD5; few iterations keep it fast (the
    site upgrades the hash at the first login).
    """
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    from tests.conftest import PASSWORD

    def make(name: str):
        hashed = PBKDF2PasswordHasher().encode(PASSWORD, "browsersalt", 1000)
        return repo.users.create_user(name, hashed)

    return make


@pytest.fixture
def page_as(new_page, repo, live_url):
    """Return a function making a fresh page logged in as a user: it holds the `auth` cookie
    a login through the form would have set (repo.users.record_login's secret)."""

    def make(user, width: int = 1280):
        page = new_page(width)
        secret = repo.users.record_login(user.id, "127.0.0.1")
        cookie = {"name": "auth", "value": secret, "url": live_url, "httpOnly": True}
        page.context.add_cookies([{**cookie, "sameSite": "Lax"}])
        return page

    return make
