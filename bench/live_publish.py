"""What publishing on the live bus costs the posting path (docs/architecture.md, "The live bus").

    .venv/bin/python bench/live_publish.py [--posts 2000] [--followers 10]

Starts a redis-server of its own (a free port, never 6379), makes an author with N followers
and posts --posts times through the repository: once as the site does (each post XADDs one
event on its posting pipeline) and once with the publish left out, alternating rounds of 200
posts so both see the same machine. Prints the median time per post of each, their
difference, and the bus's length and memory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.redis_server import free_port, server_binary  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "retwis_site.settings")
os.environ.setdefault("SECRET_KEY", "live-publish-bench")
os.environ.setdefault("ALLOWED_HOSTS", "localhost")
os.environ.setdefault("SITE_URL", "http://localhost")
os.environ["REDIS_URL"] = "redis://127.0.0.1:9/0"  # never used: the bench builds its own client

import django  # noqa: E402

django.setup()

from social import keys  # noqa: E402
from social.repository import Repository  # noqa: E402
from social.repository.cache import ProcessCache  # noqa: E402
from social.repository.posts import posting as posts  # noqa: E402

ROUND = 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--posts", type=int, default=2000)
    parser.add_argument("--followers", type=int, default=10)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        server = subprocess.Popen(
            [server_binary(), "--port", str(port), "--save", "", "--dir", data],
            stdout=subprocess.DEVNULL,
        )
        try:
            run(port, args.posts, args.followers)
        finally:
            server.terminate()
            server.wait()


def run(port: int, count: int, followers: int) -> None:
    client = redis.Redis(port=port)
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    repo = Repository(client, cache=ProcessCache())
    author = repo.users.create_user("author", "x").id
    for i in range(followers):
        repo.graph.follow(repo.users.create_user(f"fan{i}", "x").id, author)
    timings: dict[str, list[float]] = {"with the event": [], "without": []}
    for n in range(count // ROUND):
        for label in ("with the event", "without") if n % 2 else ("without", "with the event"):
            patch = mock.patch.object(posts, "queue_event") if label == "without" else None
            if patch:
                patch.start()
            started = time.perf_counter()
            for i in range(ROUND):
                repo.posts.create_post(author, f"post {n} {i} #bench")
            timings[label].append((time.perf_counter() - started) / ROUND)
            if patch:
                patch.stop()
    with_event, without = (statistics.median(timings[k]) * 1e6 for k in timings)
    print(f"posts: {count} each way, {followers} followers (one fan-out batch)")
    print(f"with the event: {with_event:.0f} µs a post; without: {without:.0f} µs")
    print(f"difference: {with_event - without:+.0f} µs ({(with_event / without - 1) * 100:+.1f} %)")
    used = client.memory_usage(keys.live_events()) or 0
    print(f"the bus: {client.xlen(keys.live_events())} entries, {used / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
