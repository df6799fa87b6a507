"""Two instances of the site that federate with each other on one machine: `alpha.test` and
`beta.test`, each served for real (tests/served_site.py: Granian, the worker tier) on its own
port with its own redis-server, told by the three federation settings how to reach the other
(docs/federation.md): FEDERATION_HOSTS maps each name to 127.0.0.1 and its port (the client
connects there and sends the name as Host), FEDERATION_ALLOW_HTTP lets them speak plain http,
FEDERATION_ALLOW_ADDRESSES lets the client connect to 127.0.0.0/8. SITE_URL names each
(`http://alpha.test:<port>`), so every ActivityPub URL carries that domain."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import redis
import requests
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from social.repository import Repository, User
from tests.conftest import PASSWORD, make_staff
from tests.redis_server import RedisServer, free_port
from tests.served_site import served_site

NAMES = ("alpha.test", "beta.test")


@dataclass(frozen=True)
class Instance:
    name: str  # alpha.test
    port: int
    url: str  # http://127.0.0.1:<port>: where a test's own HTTP client reaches it
    site_url: str  # http://alpha.test:<port>: its SITE_URL, the ids of its documents
    redis_url: str

    @property
    def domain(self) -> str:
        """The domain in its accounts' addresses (alice@alpha.test:18001)."""
        return f"{self.name}:{self.port}"

    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.redis_url, decode_responses=True)

    def repo(self) -> Repository:
        """A repository on this instance's Redis (the test process's own stores)."""
        return Repository(self.redis())

    def person(self, name: str) -> User:
        """An account on this instance that logs in with PASSWORD (a cheap PBKDF2 hash)."""
        hashed = PBKDF2PasswordHasher().encode(PASSWORD, "federationsalt", 1000)
        return self.repo().users.create_user(name, hashed)

    def staff(self, name: str) -> User:
        """A staff account on this instance (made staff as `manage.py createstaff` does)."""
        return make_staff(self.repo(), self.person(name))

    def browser(self, user: User) -> requests.Session:
        """A browser logged in as user on this instance (its `auth` cookie)."""
        session = requests.Session()
        session.cookies.set("auth", self.repo().users.record_login(user.id, "127.0.0.1"))
        return session

    def submit(self, browser: requests.Session, page: str, action: str, **fields: str):
        """POST fields to action as a form on page does: the page's CSRF token with them,
        no redirect followed. Return the response."""
        shown = browser.get(self.url + page, timeout=10)
        assert shown.status_code == 200, shown.text
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', shown.text)
        assert token is not None, "no CSRF token on the page"
        data = {"csrfmiddlewaretoken": token[1], **fields}
        return browser.post(
            self.url + action, data=data, headers={"Referer": self.url + page},
            allow_redirects=False, timeout=10,
        )  # fmt: skip


def federation_settings(ports: dict[str, int]) -> dict[str, str]:
    return {
        "FEDERATION_HOSTS": ",".join(f"{name}=127.0.0.1:{port}" for name, port in ports.items()),
        "FEDERATION_ALLOW_HTTP": "true",
        "FEDERATION_ALLOW_ADDRESSES": "127.0.0.0/8",
    }


def instance_settings(name: str, port: int, redis_url: str, media: Path) -> dict[str, str]:
    return {
        "REDIS_URL": redis_url,
        "REDIS_CLUSTER": "false",
        "SECRET_KEY": f"federation-tests-only-{name}-" + "x" * 40,
        "SITE_URL": f"http://{name}:{port}",
        "ALLOWED_HOSTS": f"{name},127.0.0.1",
        "WEB_WORKERS": "1",
        "WEB_THREADS": "2",
        "RETWIS_LIMIT_POSTS": "500/10m",
        "MEDIA_ROOT": str(media),
    }


def start_pair(stack: ExitStack, tmp: Path) -> dict[str, Instance]:
    """Start both instances (entered on stack, which stops them) and return them by name."""
    ports = {name: free_port() for name in NAMES}
    shared = federation_settings(ports)
    instances = {}
    for name in NAMES:
        server = RedisServer().start()
        stack.callback(server.stop)
        settings = {
            **instance_settings(name, ports[name], server.url, tmp / name / "media"),
            **shared,
        }
        (tmp / name).mkdir(parents=True, exist_ok=True)
        url = stack.enter_context(
            served_site(tmp / name, settings, start_within=120, port=ports[name])
        )
        instances[name] = Instance(name, ports[name], url, settings["SITE_URL"], server.url)
    return instances


def pair(tmp: Path) -> Iterator[dict[str, Instance]]:
    """A module fixture's body: both instances for the module, stopped after it."""
    with ExitStack() as stack:
        yield start_pair(stack, tmp)
