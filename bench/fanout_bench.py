"""Fan-out benchmark: what one post costs its author and its followers, by follower count.

    .venv/bin/python bench/fanout_bench.py                       # 1k, 10k, 100k, 1M
    .venv/bin/python bench/fanout_bench.py --followers 1000 100000 --modes read

For each follower count it starts from an empty Redis of its own (a free port, never the
machine's 6379), makes one author with N synthetic followers (the follow graph both ways,
as `follow` writes it), and posts through the repository twice: once fanned out on write
(a copy into every follower's feed inside the call, the reference layout: what the site
does below RETWIS_FANOUT_READ_THRESHOLD followers) and once fanned out on read (the post
stays in the author's list and followers' home pages merge it in: what the site does at or
above the threshold). Followers' feeds already exist (a warm-up post), as on a live site.
It prints:

- author: wall time until create_post returns (what the author waits for);
- last follower: wall time from the start of the post until the last follower's home page
  shows it (write: the last feed written; read: one home page read after the return);
- home: median time of a follower's home-page read (repository, warm process cache);
- memory: growth of Redis's used_memory per post (the mean over 10 posts), and the size
  of the database before them (the follow graph, and the feeds in write mode).

Figures go in docs/scaling.md.
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

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.redis_server import free_port, server_binary  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "retwis_site.settings")
os.environ.setdefault("SECRET_KEY", "fanout-bench")
os.environ.setdefault("ALLOWED_HOSTS", "localhost")
os.environ.setdefault("SITE_URL", "http://localhost")
os.environ["REDIS_URL"] = "redis://127.0.0.1:9/0"  # never used: the bench builds its own client

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from social import keys  # noqa: E402
from social.repository import Repository  # noqa: E402
from social.repository.cache import ProcessCache  # noqa: E402

T0 = 1_700_000_000
GRAPH_BATCH = 10_000
MEMORY_POSTS = 10


def start_redis(directory: str) -> tuple[subprocess.Popen, redis.Redis]:
    port = free_port()
    proc = subprocess.Popen(
        [server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", directory],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    client = redis.Redis(port=port)
    for _ in range(200):
        try:
            client.ping()
            return proc, client
        except redis.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


def used_memory(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


def make_graph(client: redis.Redis, followers: int) -> tuple[int, list[int]]:
    """One author (id 1) followed by users 2..followers+1, written as follow() writes."""
    repo = Repository(client)
    author = repo.users.create_user("author", "h", at=T0).id
    client.set(keys.next_user_id(), followers + 1)
    ids = list(range(author + 1, author + 1 + followers))
    for i in range(0, followers, GRAPH_BATCH):
        chunk = ids[i : i + GRAPH_BATCH]
        pipe = client.pipeline(transaction=False)
        # Members as str: what Redis stores for an int, and what redis-py's types accept.
        pipe.zadd(keys.followers(author), {str(f): T0 for f in chunk})
        for f in chunk:
            pipe.zadd(keys.following(f), {str(author): T0})
        pipe.execute()
    return author, ids


def home_shows(repo: Repository, user_id: int, post_id: int) -> bool:
    return any(p.id == post_id for p in repo.pages.home(user_id, 1, 10).feed.items)


def run(client: redis.Redis, followers: int, mode: str) -> dict:
    client.flushall()
    author, fans = make_graph(client, followers)
    threshold = followers + 1 if mode == "write" else 1
    shape = {"fanout_batch": settings.RETWIS_FANOUT_BATCH, "fanout_read_threshold": threshold}
    writer = Repository(client, cache=ProcessCache(), **shape)
    reader = Repository(client, cache=ProcessCache(), **shape)
    warm = writer.posts.create_post(author, "warm-up: promotes the author in read mode", at=T0)
    last = fans[-1]
    home_shows(reader, last, warm)  # the reader process knows the current set of authors
    graph_memory = used_memory(client)

    started = time.perf_counter()
    post_id = writer.posts.create_post(author, "hello, followers", at=T0 + 1)
    returned = time.perf_counter()
    seen = home_shows(reader, last, post_id)
    last_seen = time.perf_counter()
    if not seen:
        raise AssertionError(f"the last follower does not see post {post_id}")
    for i in range(MEMORY_POSTS - 1):  # memory: the mean over a few posts (allocations round)
        writer.posts.create_post(author, f"more news {i}", at=T0 + 2 + i)
    grown = (used_memory(client) - graph_memory) / MEMORY_POSTS

    times = []
    for fan in fans[:: max(1, followers // 50)][:50]:
        t = time.perf_counter()
        if not home_shows(reader, fan, post_id):
            raise AssertionError(f"follower {fan} does not see post {post_id}")
        times.append(time.perf_counter() - t)
    return {
        "followers": followers,
        "mode": mode,
        "author_ms": (returned - started) * 1000,
        "last_seen_ms": (last_seen - started) * 1000,
        "home_ms": statistics.median(times) * 1000,
        "post_memory": grown,
        "graph_memory": graph_memory,
    }


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--followers", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000]
    )
    parser.add_argument("--modes", nargs="+", default=["write", "read"], choices=["write", "read"])
    args = parser.parse_args()

    print(
        f"threshold (RETWIS_FANOUT_READ_THRESHOLD) = {settings.RETWIS_FANOUT_READ_THRESHOLD:,}; "
        f"fan-out batch = {settings.RETWIS_FANOUT_BATCH:,}"
    )
    print(
        f"{'followers':>10} {'mode':>5} {'author':>10} {'last sees':>10} {'home read':>10} "
        f"{'post memory':>12} {'graph memory':>13}"
    )
    with tempfile.TemporaryDirectory(prefix="retwis-fanout-") as directory:
        proc, client = start_redis(directory)
        try:
            for followers in args.followers:
                for mode in args.modes:
                    row = run(client, followers, mode)
                    print(
                        f"{row['followers']:>10,} {row['mode']:>5} "
                        f"{row['author_ms']:>8.1f}ms {row['last_seen_ms']:>8.1f}ms "
                        f"{row['home_ms']:>8.2f}ms {human(row['post_memory']):>12} "
                        f"{human(row['graph_memory']):>13}",
                        flush=True,
                    )
        finally:
            client.close()
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
