"""Measure `manage.py seed` at full size and the Redis memory the data set takes.

Usage (from the repository root):  .venv/bin/python bench/seed_bench.py [--runs 3]

Starts a redis-server of its own on a free port (never the machine's Redis; no persistence),
runs `manage.py seed --users 10000 --follows 500000 --posts 200000 --seed 1` against it as a
separate process (wall-clock time includes Django's start-up), then `manage.py rebuild_feeds`,
and prints the figures recorded in docs/benchmarks.md: times, memory, and how many replies,
mentions, tags and likes the seed wrote. Each run starts from an empty server.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.redis_server import RedisServer, server_binary  # noqa: E402


def run(command: list[str], url: str) -> tuple[float, str]:
    """Run a manage.py command against url; return its wall-clock seconds and output."""
    env = {**os.environ, "REDIS_URL": url, "DEBUG": "true"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *command],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, done.stdout


def one_run(server: RedisServer, sizes: list[str]) -> dict[str, float]:
    """Seed an emptied server, rebuild its feeds, and return the figures."""
    client = redis.Redis.from_url(server.url)
    client.flushall()
    seconds, output = run(["seed", *sizes, "--seed", "1"], server.url)
    print(output.rstrip())
    stages = dict(re.findall(r"^ +([a-z ]+?) +[\d,]+ in +([\d.]+)s$", output, re.M))
    written = re.search(
        r"([\d,]+) replies, ([\d,]+) mentions, ([\d,]+) posts with ([\d,]+) tags, ([\d,]+) likes",
        output,
    )
    memory = client.info("memory")
    rebuild, _ = run(["rebuild_feeds", "--verbosity", "0"], server.url)
    figures = {
        "seed wall-clock s": seconds,
        **{f"  {stage} s": float(value) for stage, value in stages.items()},
        "rebuild_feeds wall-clock s": rebuild,
        "keys": client.dbsize(),
        "used_memory MiB": memory["used_memory"] / 2**20,
        "used_memory_rss MiB": memory["used_memory_rss"] / 2**20,
    }
    names = ("replies", "mentions", "posts with tags", "tags", "likes")
    for name, count in zip(names, written.groups() if written else ()):
        figures[name] = int(count.replace(",", ""))
    client.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--follows", type=int, default=500_000)
    parser.add_argument("--posts", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    sizes = ["--users", str(args.users), "--follows", str(args.follows)]
    sizes += ["--posts", str(args.posts)]
    server = RedisServer().start()
    try:
        version = redis.Redis.from_url(server.url).info("server")["redis_version"]
        results = [one_run(server, sizes) for _ in range(args.runs)]
    finally:
        server.stop()
    print(
        f"\n{' '.join(sizes)}; Redis {version} ({server_binary()}); Python "
        f"{platform.python_version()}; {os.cpu_count()} CPUs; {args.runs} run(s), median:"
    )
    for name in results[0]:
        value = statistics.median(r[name] for r in results)
        whole = isinstance(results[0][name], int)
        print(f"  {name:<28} {value:>12,}" if whole else f"  {name:<28} {value:>12,.1f}")


if __name__ == "__main__":
    main()
