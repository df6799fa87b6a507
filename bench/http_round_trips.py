"""Count the Redis round trips of a few pages in-process: a helper of bench/http_bench.py.

Usage:  echo '{"redis_url": URL, "pages": [[PATH, AUTH_SECRET_OR_NULL, BEARER], ...]}' |
        .venv/bin/python bench/http_round_trips.py

Requests each page through Django's test client on the Redis at redis_url, counting round
trips on the connection exactly as bench/pages_bench.py does (tests.counting: every command
or pipeline sent is one), and prints a JSON list with one count per page. It runs in its own
process because Django's settings read the environment once, at django.setup().
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def setup_django(redis_url: str, allowed_hosts: str) -> None:
    """Set up Django as the served site runs (DEBUG off) on the Redis at redis_url, with
    plain static URLs: the hashed manifest exists only once run-site has collected static
    files, and which URL a page links to changes neither its round trips nor its cost."""
    os.environ.update(
        DJANGO_SETTINGS_MODULE="retwis_site.settings",
        SECRET_KEY="bench-only-secret-key",
        DEBUG="false",
        ALLOWED_HOSTS=allowed_hosts,
        SITE_URL="http://127.0.0.1",
        REDIS_URL=redis_url,
    )
    import django

    django.setup()
    from django.conf import settings

    settings.STORAGES["staticfiles"]["BACKEND"] = (
        "django.contrib.staticfiles.storage.StaticFilesStorage"
    )


def count(redis_url: str, pages: list[tuple]) -> list[list[int]]:
    """Return [cold, warm] round trips of one GET of each (path, auth secret, bearer): first
    in a process that remembers nothing (social/repository/cache.py), then the same GET
    again. bearer: the secret is a client API token, sent as `Authorization: Bearer`."""
    setup_django(redis_url, "testserver")
    from django.conf import settings
    from django.test import Client

    from tests.counting import CountingConnection, RoundTrips

    settings.CACHES["default"]["OPTIONS"]["CONNECTION_POOL_KWARGS"] = {
        "connection_class": CountingConnection,
        "driver_info": None,
    }
    from social.repository import PROCESS_CACHE

    counts = []
    for path, secret, *bearer in pages:
        client = Client()
        if secret and bearer and bearer[0]:
            client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {secret}"
        elif secret:
            client.cookies["auth"] = secret
        client.get("/healthz")  # open the pooled connection so its set-up is not counted
        pair = []
        for cold in (True, False):  # a process that remembers nothing, then the same again
            if cold:
                PROCESS_CACHE.clear()
            RoundTrips.reset()
            response = client.get(path)
            if response.status_code != 200:
                raise SystemExit(f"GET {path} answered {response.status_code} in-process")
            pair.append(RoundTrips.count)
        counts.append(pair)
    return counts


def main() -> None:
    """Read the request on stdin and print the counts as JSON."""
    request = json.load(sys.stdin)
    print(json.dumps(count(request["redis_url"], [tuple(page) for page in request["pages"]])))


if __name__ == "__main__":
    main()
