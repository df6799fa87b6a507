"""Redis commands a page costs while profile changes come in: what wrk on a busy machine
cannot tell apart, counted (issue 34, part 3).

Usage (from the repository root):
    .venv/bin/python bench/profile_update_costs.py [--checkout DIR] [--every 0,5,50]
        [--requests 300]

Starts a redis-server with bench/http_bench.py's data set (its dump in var/bench/), then,
for each K of --every, serves the home page and the timeline through Django's test client
as `demo`, --requests times each, with a display-name change of a random account every K
requests (0: none) written by another repository with a cache of its own, as another web
process would write it (with a client of its own). Prints the Redis commands (and round
trips) a request sends, counted on the page's client (not those a script runs, which INFO
commandstats counts too: the counts' script reads each post). Deterministic: the same code
gives the same counts whatever else the machine is doing.
--checkout measures another checkout's code (a worktree of the commit before a change);
each run is a process of its own, so each reads its checkout's settings afresh. At 1,000
changes a minute a web process serving 830 requests a second sees one every 50 requests.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WARMUP = 5


def child(root: str, redis_url: str, every: int, requests: int) -> dict:
    """In a process of its own, with root's code: the commands a request of each page sends
    (counted on its client: the writer has a client of its own)."""
    sys.path[:0] = [root, f"{root}/bench"]
    from http_round_trips import setup_django

    setup_django(redis_url, "testserver")
    import redis
    from django.test import Client

    from social import keys
    from social.repository import Repository, get_repository
    from social.repository.cache import ProcessCache

    r = get_repository().r
    assert isinstance(r, redis.Redis), "one server: the site's data set"
    pool, sent = r.connection_pool, [0, 0]  # commands, round trips
    queued, direct = redis.client.Pipeline.execute, redis.Redis.execute_command

    def execute(pipe, *args, **kwargs):
        if pipe.connection_pool is pool and pipe.command_stack:
            sent[0] += len(pipe.command_stack)
            sent[1] += 1
        return queued(pipe, *args, **kwargs)

    def execute_command(client, *args, **kwargs):
        if client.connection_pool is pool:
            sent[0] += 1
            sent[1] += 1
        return direct(client, *args, **kwargs)

    redis.client.Pipeline.execute = execute  # type: ignore[method-assign,assignment]
    redis.Redis.execute_command = execute_command  # type: ignore[method-assign,assignment]
    demo = int(r.hget(keys.users(), "demo") or 0)
    secret = r.hget(keys.user(demo), "auth") or b""
    writer = Repository(redis.Redis.from_url(redis_url), cache=ProcessCache())  # another process
    ids = sorted(int(i) for i in r.hvals(keys.users()))
    rng = random.Random(1)
    client = Client()
    client.cookies["auth"] = secret.decode() if isinstance(secret, bytes) else str(secret)
    found: dict[str, str] = {}
    for url in ("/", "/timeline/"):
        for _ in range(WARMUP):
            client.get(url)
        sent[:] = [0, 0]
        for i in range(requests):
            if every and i % every == 0:
                writer.profiles.update(rng.choice(ids), display_name=f"Renamed {i}")
            if client.get(url).status_code != 200:
                raise SystemExit(f"GET {url} did not answer 200")
        found[url] = f"{sent[0] / requests:.2f} ({sent[1] / requests:.2f})"
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", default=str(ROOT), help="whose code (default: this one)")
    parser.add_argument("--every", default="0,5,50", help="a change every K requests (0: none)")
    parser.add_argument("--requests", type=int, default=300, help="requests a page (300)")
    parser.add_argument(
        "--child", nargs=3, metavar=("ROOT", "URL", "EVERY"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        root, url, every = args.child
        print(json.dumps(child(root, url, int(every), args.requests)))
        return
    # The parent only: the child must import the measured checkout's code, not this one's.
    sys.path.insert(0, str(ROOT))
    from http_bench import BenchRedis, DataSet, ensure_data, say

    everies = [int(k) for k in args.every.split(",")]
    data = DataSet(10_000, 500_000, 200_000, 1)
    server = BenchRedis(data.dump_name)
    # Counts, not times: no need of http_bench's lock, so its log is not this one's.
    server.log = Path(tempfile.mkdtemp()) / "redis.log"
    try:
        server.start()
        ensure_data(server, data)
        print(f"commands a request, {args.requests} requests a page, checkout {args.checkout}\n")
        print("| a change every | home: commands (round trips) | timeline |\n|---|---|---|")
        for every in everies:
            say(f"a change every {every or 'never'}...")
            command = [sys.executable, __file__, "--requests", str(args.requests), "--child"]
            command += [args.checkout, server.url, str(every)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            got = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"| {every or 'never'} | {got['/']} | {got['/timeline/']} |")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
