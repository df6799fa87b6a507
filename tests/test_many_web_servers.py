"""Many web servers on one Redis: the web tier keeps no state of its own.

Two production servers (Granian with scripts/launch.py's command line, DEBUG off, static
files collected for WhiteNoise) run on two free ports against the suite's redis-server, as
two machines behind a load balancer would. Plain HTTP with cookies and the CSRF token taken
from each form, as a browser sends them: a login made on one server holds on the other,
posts made on one show on the other, and a staff action taken on one is enforced by the other
at once, although each process remembers posts, secrets and pages between requests.
"""

from __future__ import annotations

import contextlib
import http.client
import importlib.util
import itertools
import os
import re
import signal
import subprocess
import sys
import time
from http.cookies import SimpleCookie
from pathlib import Path
from unittest import mock
from urllib.parse import urlencode

import pytest

from tests.conftest import CLUSTER, make_staff
from tests.redis_server import free_port

ROOT = Path(__file__).resolve().parent.parent
NEW_PASSWORD = "walking-on-air-77"
CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')

spec = importlib.util.spec_from_file_location("launch", ROOT / "scripts" / "launch.py")
launch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(launch)


def site_env(redis_url: str) -> dict[str, str]:
    """The environment of a production server (launch.site_env's, with our Redis)."""
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "DEBUG": "false",
        "SECRET_KEY": "many-servers-tests-only-" + "x" * 50,  # shared, as in a deployment
        "ALLOWED_HOSTS": "127.0.0.1",
        "PYTHONUNBUFFERED": "1",
        "REDIS_CLUSTER": "true" if CLUSTER else "false",  # the suite's server, either kind
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)  # pytest's (tests.settings): the site's own instead
    return env


def stop_group(process: subprocess.Popen) -> None:
    """SIGTERM the server's process group (Granian and its workers); SIGKILL if it hangs."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def start_server(env: dict[str, str], log_path: Path, stack: contextlib.ExitStack) -> int:
    """Start Granian as scripts/launch.py does (one worker) on a free port; return the port
    once /healthz answers. The stack stops it, whatever happens after."""
    port = free_port()
    with mock.patch.dict(os.environ, {"WEB_WORKERS": "1", "WEB_THREADS": "1"}):
        argv = launch.server_argv(port)
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    stack.callback(stop_group, process)
    deadline = time.monotonic() + 60
    while True:
        try:
            if fetch(port, "GET", "/healthz")[0] == 200:
                return port
        except OSError:
            pass
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError(f"a site server did not start:\n{log_path.read_text()}")
        time.sleep(0.1)


def fetch(port: int, method: str, path: str, body: str = "", headers: dict | None = None):
    """One HTTP request to 127.0.0.1:port; return (status, headers, text). No redirects."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, body=body or None, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.headers, response.read().decode()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def servers(redis_server, tmp_path_factory):
    """Two production servers on the suite's Redis: (port A, port B). Always stopped."""
    env = site_env(redis_server.url)
    logs = tmp_path_factory.mktemp("many-servers")
    # What scripts/launch.py runs before Granian: hashed static files for WhiteNoise.
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT, env=env, check=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    with contextlib.ExitStack() as stack:
        yield tuple(start_server(env, logs / f"site-{name}.log", stack) for name in "AB")


_id_bases = itertools.count(1000, 1000)


@pytest.fixture(autouse=True)
def ids_unseen_by_the_servers(servers, r):
    """Start this test's user and post ids where no earlier test's went.

    The suite empties Redis before each test, but these servers live for the module, and a
    process remembers posts and names by id (as it may: in a real database an id is never
    reused). Without this, post 1 of one test could be served as post 1 of the last.
    """
    base = next(_id_bases)
    r.set("next_user_id", base)
    r.set("next_post_id", base)  # two commands: a cluster keeps the keys on two nodes


class Visitor:
    """A browser's part that matters here: one cookie jar for the site, whichever server
    answers (both are 127.0.0.1, as behind one load balancer), forms posted with their token.
    """

    def __init__(self) -> None:
        self.cookies: dict[str, str] = {}

    def request(self, port: int, method: str, path: str, data: dict | None = None):
        headers = {}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = ""
        if data is not None:
            body = urlencode(data)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        status, response_headers, text = fetch(port, method, path, body, headers)
        for line in response_headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(line).items():
                if morsel["max-age"] == "0" or not morsel.value:
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value
        return status, response_headers, text

    def get(self, port: int, path: str):
        return self.request(port, "GET", path)

    def submit(self, port: int, page: str, action: str, data: dict):
        """GET page on port (for the CSRF token of its form), then POST data to action."""
        status, _, html = self.get(port, page)
        assert status == 200, html[:500]
        token = CSRF_RE.search(html)[1]
        return self.request(port, "POST", action, {"csrfmiddlewaretoken": token, **data})


def sign_up(visitor: Visitor, port: int, name: str) -> None:
    data = {"username": name, "password": NEW_PASSWORD, "password2": NEW_PASSWORD}
    status, headers, _ = visitor.submit(port, "/register/", "/register/", data)
    assert (status, headers["Location"]) == (302, "/")


def logged_in_as(visitor: Visitor, port: int) -> str | None:
    """Return the username the site shows in its top bar for this visitor, or None."""
    status, _, html = visitor.get(port, "/")
    assert status == 200
    found = re.search(r'<a href="/u/(\w+)/">@\1</a>', html)
    return found[1] if found else None


def test_a_login_made_on_one_server_holds_on_the_other(servers, r):
    a, b = servers
    walker = Visitor()

    sign_up(walker, a, "walker")

    user_id = r.hget("users", "walker")
    assert walker.cookies["auth"] == r.hget(f"user:{user_id}", "auth")
    assert logged_in_as(walker, b) == "walker"
    assert logged_in_as(walker, a) == "walker"
    # Logging out on B rotates the secret in Redis: A no longer knows the old cookie.
    old_cookie = walker.cookies["auth"]
    assert walker.submit(b, "/", "/logout/", {})[0] == 302
    assert r.hget(f"user:{user_id}", "auth") != old_cookie
    walker.cookies["auth"] = old_cookie  # a copy of the cookie kept elsewhere
    assert logged_in_as(walker, a) is None
    # Logging in again on B: A knows the new cookie at once.
    data = {"username": "walker", "password": NEW_PASSWORD}
    assert walker.submit(b, "/login/", "/login/", data)[0] == 302
    assert walker.cookies["auth"] == r.hget(f"user:{user_id}", "auth")
    assert logged_in_as(walker, a) == "walker"


def test_a_post_made_on_one_server_shows_on_the_other(servers, r):
    a, b = servers
    walker = Visitor()
    sign_up(walker, a, "walker")
    before = [fetch(port, "GET", "/timeline/")[2] for port in (a, b)]  # pages remembered

    status, headers, _ = walker.submit(a, "/", "/post/", {"status": "hello from server A"})

    assert (status, headers["Location"]) == (302, "/")
    post_id = r.lindex("timeline", 0)
    assert r.hget(f"post:{post_id}", "body") == "hello from server A"
    assert all("hello from server A" not in html for html in before)
    for path in ("/timeline/", f"/p/{post_id}/", "/u/walker/"):
        status, _, html = fetch(b, "GET", path)
        assert status == 200 and "hello from server A" in html, path
    assert "hello from server A" in walker.get(b, "/")[2]  # B's home feed for walker too


def test_a_suspension_on_one_server_is_enforced_on_the_other_at_once(servers, repo, r):
    a, b = servers
    walker = Visitor()
    sign_up(walker, a, "walker")
    walker.submit(a, "/", "/post/", {"status": "soon to be hidden"})
    post_id = r.lindex("timeline", 0)
    user_id = r.hget("users", "walker")
    # A has seen all of it: the secret, the post, the timeline page, the profile's name.
    for path in ("/", "/timeline/", f"/p/{post_id}/", "/u/walker/"):
        status, _, html = walker.get(a, path)
        assert status == 200 and "soon to be hidden" in html, path
    sam = make_staff(repo, "sam")
    staff = Visitor()
    staff.cookies["auth"] = repo.users.record_login(sam.id, "127.0.0.1")

    status, _, _ = staff.submit(
        b, "/staff/users/walker/", "/staff/users/walker/suspend/", {"suspend-reason": "spam run"}
    )

    assert status == 302
    assert r.hget(f"user:{user_id}", "status") == "suspended"
    assert r.zscore("suspended_users", "walker") is not None
    assert r.hget(f"user:{user_id}", "auth") != walker.cookies["auth"]
    # A enforces it on the very next requests: logged out, profile and post gone.
    assert logged_in_as(walker, a) is None
    assert fetch(a, "GET", "/u/walker/")[0] == 404
    assert fetch(a, "GET", f"/p/{post_id}/")[0] == 404
    assert "soon to be hidden" not in fetch(a, "GET", "/timeline/")[2]
    status, headers, _ = walker.submit(a, "/", "/post/", {"status": "still here?"})
    assert (status, headers["Location"]) == (302, "/login/?next=/")
    assert r.lrange("timeline", 0, -1) == [post_id]  # nothing new was posted
    data = {"username": "walker", "password": NEW_PASSWORD}
    status, _, html = walker.submit(a, "/login/", "/login/", data)
    assert status == 400 and "This account is suspended." in html
    assert walker.cookies["auth"] != r.hget(f"user:{user_id}", "auth")  # no new secret
