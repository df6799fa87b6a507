"""What a search costs on a seeded data set (docs/benchmarks.md, "Search").

    .venv/bin/python bench/search_bench.py --url redis://127.0.0.1:PORT/0 [--runs 20]
        [--full-reader]

The data set is `manage.py seed`'s (the benches' is `seed --users 10000 --follows 500000
--posts 200000 --seed 1`) on a redis-server of your own (never 6379): the bench only reads
it, unless --full-reader, which first adds an account `fullreader` whose four lists a post
search reads are each longer than post_search.LIST_SCAN (300 likes, reposts, replies to
others' posts and posts mentioning it). For each query, as the seeded `demo` and as the
account with the most posts: round trips with nothing remembered (cold) and after (warm),
and the median time of --runs runs, cold. Then the display-name index's memory (MEMORY
USAGE) per account it holds.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import cast

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "retwis_site.settings")
os.environ.setdefault("SECRET_KEY", "search-bench")
os.environ.setdefault("ALLOWED_HOSTS", "localhost")
os.environ.setdefault("SITE_URL", "http://localhost")
os.environ["REDIS_URL"] = "redis://127.0.0.1:9/0"  # never used: the bench builds its own client

import django  # noqa: E402

django.setup()

from social import keys  # noqa: E402
from social.repository import ANONYMOUS, Repository, Viewer  # noqa: E402
from social.repository.cache import ProcessCache  # noqa: E402
from social.repository.read.search import KINDS  # noqa: E402
from tests.counting import CountingConnection, RoundTrips  # noqa: E402

QUERIES = ("aaron", "lauren garcia", "a", "zzzz", "redis", "the")
LISTS = ("own posts", "likes", "reposts", "mentions")


def measure(
    repo: Repository, query: str, viewer: Viewer, runs: int
) -> tuple[int, int, float, int, int]:
    """Return (cold round trips, warm round trips, median cold ms, people, posts found)."""
    times = []
    for _ in range(runs):
        repo.cache.posts.clear()
        repo.cache.shown.clear()
        RoundTrips.reset()
        started = time.perf_counter()
        found = repo.search.search(query, viewer, kinds=KINDS)
        times.append((time.perf_counter() - started) * 1000)
        cold = RoundTrips.count
    RoundTrips.reset()
    repo.search.search(query, viewer, kinds=KINDS)
    people, posts = len(found.people), len(found.posts.items)
    return cold, RoundTrips.count, statistics.median(times), people, posts


def add_full_reader(repo: Repository) -> None:
    """Add `fullreader`, who likes, reposts and answers 300 posts and is mentioned in 300."""
    from django.contrib.auth.hashers import make_password

    rng = random.Random(1)
    last = int(cast(bytes, repo.r.get(keys.next_post_id())))
    others = [int(i) for i in cast(list[bytes], repo.r.hvals(keys.users()))[:2000]]
    reader = repo.users.create_user("fullreader", make_password("full-reader-bench"))
    for i in range(300):
        repo.likes.like(reader.id, rng.randint(1, last))
        repo.reposts.repost(reader.id, rng.randint(1, last))
        repo.posts.create_post(reader.id, f"an answer {i}", reply_to=rng.randint(1, last))
        repo.posts.create_post(rng.choice(others), f"hey @fullreader, look {i}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True, help="a seeded redis-server (never :6379)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--full-reader", action="store_true", help="add `fullreader` first")
    args = parser.parse_args()
    if ":6379" in args.url:
        raise SystemExit("Not the machine's own Redis: give a server of your own.")
    client = redis.Redis.from_url(args.url, connection_class=CountingConnection)
    repo = Repository(client, cache=ProcessCache(posts=20000))
    if args.full_reader and client.hget(keys.users(), "fullreader") is None:
        add_full_reader(repo)
    named = {name: repo.users.user_id_for_name(name) for name in ("demo", "fullreader")}
    ids = [int(i) for i in cast(list[bytes], client.hvals(keys.users()))]
    seeded = [i for i in ids if i != named["fullreader"]]
    pipe = client.pipeline(transaction=False)
    for user_id in seeded:
        pipe.llen(keys.own_posts(user_id))
    prolific = max(zip(pipe.execute(), seeded))[1]
    found = (repo.users.get_user(i) for i in (named["demo"], prolific, named["fullreader"]) if i)
    readers = [user for user in found if user is not None]
    repo.users.claim_legacy_names()  # the name indexes caught up, as `repair` leaves them
    repo.directory.index_new_names(limit=None)
    print(f"{len(ids)} accounts, {int(cast(bytes, client.get(keys.next_post_id())))} posts")
    for user in readers:
        pipe = client.pipeline(transaction=False)
        pipe.llen(keys.own_posts(user.id))
        for key in (keys.user_likes, keys.user_reposts, keys.mentions):
            pipe.zcard(key(user.id))
        sizes = ", ".join(f"{n} {what}" for n, what in zip(pipe.execute(), LISTS))
        print(f"{user.username}: {sizes}")
    print("reader          query           cold rt  warm rt  median ms  people  posts")
    for user in readers:
        for query in QUERIES:
            cold, warm, ms, people, n = measure(repo, query, Viewer.of(user), args.runs)
            print(f"{user.username:15} {query:15} {cold:7} {warm:8} {ms:10.1f} {people:7} {n:6}")
    cold, warm, ms, people, _ = measure(repo, "lauren", ANONYMOUS, args.runs)
    print(f"{'anonymous':15} {'lauren':15} {cold:7} {warm:8} {ms:10.1f} {people:7}")
    words = cast(int, client.memory_usage(keys.name_words(), samples=0))
    held = cast(int, client.memory_usage(keys.name_words_of(), samples=0))
    holders = client.hlen(keys.name_words_of())
    members = client.zcard(keys.name_words())
    print(
        f"display-name index: {members} words of {holders} accounts; {words:,} B + {held:,} B"
        f" = {(words + held) / max(1, holders):.0f} B an account named"
    )


if __name__ == "__main__":
    main()
