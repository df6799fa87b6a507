"""Measure what the main pages cost on a full-size database: round trips and time.

Usage (from the repository root):  .venv/bin/python bench/pages_bench.py [--requests 200]

Starts a redis-server of its own on a free port (never the machine's Redis), seeds it with
`manage.py seed --users 10000 --follows 500000 --posts 200000 --seed 1`, then requests each
page in-process through Django's test client (the whole middleware and template stack, no
network or WSGI server) and prints, per page: Redis round trips per request (counted on the
connection: a pipeline is one) and the median and 95th-percentile time. Posting is measured
for the most-followed user (fan-out to thousands of home feeds) and for a median user.
Figures are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

os.environ.update(
    DJANGO_SETTINGS_MODULE="retwis_site.settings",
    SECRET_KEY="bench-only-secret-key",
    DEBUG="false",
    ALLOWED_HOSTS="testserver",
    SITE_URL="http://testserver",
    REDIS_URL="redis://127.0.0.1:9/0",  # replaced below, before any connection is made
)

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from social import keys  # noqa: E402
from social.repository import User, get_repository  # noqa: E402
from social.repository.moderation.actions import SYSTEM_ACTOR  # noqa: E402
from tests.counting import CountingConnection, RoundTrips  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402

SIZES = ["--users", "10000", "--follows", "500000", "--posts", "200000", "--seed", "1"]


def found(user: User | None) -> User:
    """Return user: the seeded data always holds the users the bench reads."""
    if user is None:
        raise SystemExit("A user the bench reads is missing from the seeded data.")
    return user


def measure(client: Client, method: str, path: str, n: int, data=None) -> tuple[int, list]:
    """Request path n times; return round trips of the last request and the timings (ms)."""
    timings, trips = [], 0
    for _ in range(n):
        RoundTrips.reset()
        started = time.perf_counter()
        response = getattr(client, method)(path, data or {})
        timings.append((time.perf_counter() - started) * 1000)
        trips = RoundTrips.count
        if response.status_code not in (200, 302):
            raise SystemExit(f"{method.upper()} {path} answered {response.status_code}")
    return trips, timings


def row(label: str, trips: int, timings: list[float]) -> str:
    p95 = statistics.quantiles(timings, n=20)[18] if len(timings) >= 20 else max(timings)
    return f"| {label} | {trips} | {statistics.median(timings):.1f} | {p95:.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per page")
    args = parser.parse_args()
    server = RedisServer().start()
    try:
        settings.CACHES["default"]["LOCATION"] = server.url
        settings.CACHES["default"]["OPTIONS"]["CONNECTION_POOL_KWARGS"] = {
            "connection_class": CountingConnection,
            "driver_info": None,
        }
        # DEBUG is off, so static URLs come from the hashed manifest, as when served.
        call_command("collectstatic", interactive=False, verbosity=0)
        print("Seeding 10,000 users, 500,000 follows, 200,000 posts...", flush=True)
        call_command("seed", *SIZES, verbosity=0)
        repo = get_repository()
        r = repo.r
        demo = found(repo.users.get_user_by_name("demo"))
        ids = [int(i) for i in r.hvals(keys.users())]
        pipe = r.pipeline(transaction=False)
        for user_id in ids:
            pipe.zcard(keys.followers(user_id))  # to find the most-followed user
        followers = dict(zip(ids, pipe.execute()))
        ranked = sorted(ids, key=followers.__getitem__)
        star, typical = (
            found(repo.users.get_user(ranked[-1])),
            found(repo.users.get_user(ranked[len(ranked) // 2])),
        )
        staff = found(repo.users.get_user(ranked[0]))
        repo.moderation.grant_staff(staff.id, SYSTEM_ACTOR)
        newest = r.lindex(keys.timeline(), 0)
        if newest is None:
            raise SystemExit("The seeded timeline is empty.")
        post_id = int(newest)

        def client_for(user: User) -> Client:
            client = Client()
            client.cookies["auth"] = repo.users.record_login(user.id, "127.0.0.1")
            return client

        visitor, reader, mod = Client(), client_for(demo), client_for(staff)
        n = args.requests
        pages = [
            ("home, logged in (10 posts)", reader, "get", "/"),
            ("home, page 50", reader, "get", "/?page=50"),
            ("welcome page, visitor", visitor, "get", "/"),
            ("timeline (50 posts), logged in", reader, "get", "/timeline/"),
            (f"profile of @{star.username}", reader, "get", f"/u/{star.username}/"),
            (f"followers of @{star.username}", reader, "get", f"/u/{star.username}/followers/"),
            ("permalink", reader, "get", f"/p/{post_id}/"),
            ("staff dashboard", mod, "get", "/staff/"),
            ("staff users, prefix search", mod, "get", "/staff/users/?q=a"),
            ("staff log", mod, "get", "/staff/log/"),
        ]
        print(f"\n{n} requests per page; followers of @{star.username}: {followers[star.id]:,}")
        print("| page | round trips | median ms | p95 ms |\n|---|---|---|---|")
        for label, client, method, path in pages:
            client.get(path)  # warm the connection and template caches
            print(row(label, *measure(client, method, path, n)), flush=True)
        for user, label in ((star, "most-followed"), (typical, "median")):
            client = client_for(user)
            trips, timings = measure(client, "post", "/post/", 20, {"status": "bench post"})
            print(row(f"post by the {label} user ({followers[user.id]:,} followers)", trips,
                      timings))  # fmt: skip
    finally:
        server.stop()


if __name__ == "__main__":
    main()
