"""Count the Redis commands each key gets under a mix of pages and posts, on a Redis Cluster.

Usage (from the repository root):  .venv/bin/python bench/cluster_keys.py [--requests 2000]
    [--users 2000] [--follows 40000] [--posts 20000] [--seed 1]

1. Starts a three-primary Redis Cluster of its own on free ports (tests/redis_server.py:
   never 6379, data in temporary directories, nothing saved) and runs the site's code on it
   in this process (REDIS_CLUSTER=true, REDIS_URL naming the first node).
2. Seeds it with `manage.py seed` and gives every account a login (their auth cookies).
3. Runs MONITOR on every node, then sends the mix below through Django's test client, one
   request at a time, as users picked at random (one web process, its process cache on).
4. Prints markdown: commands per node, the busiest keys, and every global key (one key, so
   one hash slot and one node) with its share of all commands.

Not a throughput benchmark: it counts what each request asks of which key; the counts do
not depend on the machine. docs/scaling.md ("Redis Cluster") quotes its output.
"""

from __future__ import annotations

import argparse
import inspect
import os
import random
import shlex
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import redis
from redis.crc import key_slot

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.redis_server import RedisClusterServer, slot_ranges  # noqa: E402

# What a page view or action is, and how often it comes, per 100 requests.
MIX = {
    "home": 45,  # GET / logged in: the home feed
    "timeline": 10,  # GET /timeline/
    "profile": 18,  # GET /u/<someone they follow>/
    "permalink": 5,  # GET /p/<a recent post>/
    "welcome": 8,  # GET / as a visitor: the latest posts
    "post": 10,  # POST /post/: a new post, fanned out to the author's followers
    "follow": 2,  # POST /u/<someone>/follow/
    "login": 2,  # POST /login/
}


def global_keys() -> tuple[str, ...]:
    """Return the keys that are one key for the whole site (so one slot, one node): every
    function of social/keys/ (every part of `keys.PARTS`) that takes no argument."""
    from social import keys

    found = []
    for part in keys.PARTS:
        for _name, function in inspect.getmembers(part, inspect.isfunction):
            if function.__module__ == part.__name__ and not inspect.signature(function).parameters:
                found.append(function())
    return tuple(found)


NOT_COUNTED = {"PING", "INFO", "HELLO", "CLIENT", "CLUSTER", "COMMAND", "MONITOR", "SELECT"}


def family(key: str) -> str:
    """Return a key's family: its name with every number (an id, a day) as <n>."""
    return ":".join(part if not part.isdigit() else "<n>" for part in key.split(":")[:3])


class Monitor(threading.Thread):
    """MONITOR one node; tally (command, key) until stopped."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.client = redis.Redis.from_url(url)
        self.per_key: Counter[str] = Counter()
        self.commands = 0
        self.ready = threading.Event()
        self.stopping = False

    def run(self) -> None:
        with self.client.monitor() as monitor:
            self.ready.set()
            for event in monitor.listen():
                words = shlex.split(event["command"]) if event["command"] else []
                name = words[0].upper() if words else ""
                if name == "ECHO" and self.stopping:
                    return
                if not words or name in NOT_COUNTED or name == "ECHO":
                    continue
                self.commands += 1
                key = words[3] if name in ("EVAL", "EVALSHA") else words[1] if words[1:] else ""
                self.per_key[key] += 1

    def stop(self) -> None:
        self.stopping = True
        self.client.echo("done")  # a last command, so the listener wakes and returns
        self.join(timeout=10)


def setup_django(url: str) -> None:
    os.environ.update(REDIS_CLUSTER="true", REDIS_URL=url, DEBUG="true", LOG_LEVEL="ERROR")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "retwis_site.settings")
    import django

    django.setup()


def prepare() -> dict:
    """Read what the mix needs before anything is counted: every account's name, cookie and
    one account it follows, and the newest posts."""
    from social.repository import PROCESS_CACHE, get_repository

    repo = get_repository()
    user_ids = [int(i) for _, i in repo.r.hscan_iter("users")]
    users = [repo.users.get_user(uid) for uid in user_ids]
    names = {user.id: user.username for user in users if user is not None}
    followed = {uid: repo.r.zrandmember(f"following:{uid}") for uid in user_ids}
    PROCESS_CACHE.clear()  # the web process starts cold
    return {
        "user_ids": user_ids,
        "names": names,
        "cookies": {uid: repo.users.record_login(uid, "127.0.0.1") for uid in user_ids},
        # One member (no count asked for), or None when the account follows no one.
        "followed": {
            uid: names[int(f)] for uid, f in followed.items() if isinstance(f, (bytes, str))
        },
        "recent": [int(i) for i in repo.r.lrange("timeline", 0, 99)],
    }


def run_mix(state: dict, requests: int, rng: random.Random) -> Counter[str]:
    """Send `requests` requests of MIX as random users; return how many of each kind."""
    from django.test import Client

    user_ids, names, cookies = state["user_ids"], state["names"], state["cookies"]
    recent = state["recent"]
    kinds = rng.choices(list(MIX), weights=list(MIX.values()), k=requests)
    counts: Counter[str] = Counter()
    visitor = Client()
    for n, kind in enumerate(kinds):
        uid = rng.choice(user_ids)
        client = Client()
        client.cookies["auth"] = cookies[uid]
        other = names[rng.choice(user_ids)]
        if kind == "home":
            response = client.get("/")
        elif kind == "timeline":
            response = client.get("/timeline/")
        elif kind == "profile":
            response = client.get(f"/u/{state['followed'].get(uid, other)}/")
        elif kind == "permalink":
            response = client.get(f"/p/{rng.choice(recent)}/")
        elif kind == "welcome":
            response = visitor.get("/")
        elif kind == "post":
            response = client.post("/post/", {"status": f"measured post {n}"})
        elif kind == "follow":
            response = client.post(f"/u/{other}/follow/")
        else:
            password = "hello-retwis-42"
            response = Client().post("/login/", {"username": names[uid], "password": password})
        if response.status_code >= 500:
            raise RuntimeError(f"{kind}: {response.status_code}")
        counts[kind] += 1
    return counts


def report(cluster: RedisClusterServer, monitors: list[Monitor], kinds: Counter[str]) -> None:
    total = sum(m.commands for m in monitors)
    per_key: Counter[str] = sum((m.per_key for m in monitors), Counter())
    print(f"{sum(kinds.values())} requests: " + ", ".join(f"{k} {v}" for k, v in kinds.items()))
    print(f"\n{total} commands ({total / max(1, sum(kinds.values())):.1f} a request)\n")
    print("| node | slots | commands | share |\n|---|---|---:|---:|")
    ranges = slot_ranges(len(cluster.nodes))
    for i, (monitor, (first, last)) in enumerate(zip(monitors, ranges)):
        print(f"| {i + 1} | {first}-{last} | {monitor.commands} | "
              f"{100 * monitor.commands / total:.1f}% |")  # fmt: skip

    def row(key: str) -> str:
        slot = key_slot(key.encode())
        node = next(i + 1 for i, (first, last) in enumerate(ranges) if first <= slot <= last)
        return f"| `{key}` | {slot} | {node} | {per_key[key]} | {100 * per_key[key] / total:.2f}% |"

    print("\n| busiest keys | slot | node | commands | share |\n|---|---:|---:|---:|---:|")
    for key, _ in per_key.most_common(12):
        print(row(key))
    print("\n| global key | slot | node | commands | share |\n|---|---:|---:|---:|---:|")
    for key in sorted(global_keys(), key=lambda k: (-per_key[k], k)):
        print(row(key))
    families: Counter[str] = Counter()
    distinct: Counter[str] = Counter()
    for key, n in per_key.items():
        families[family(key)] += n
        distinct[family(key)] += 1
    print("\n| key family | keys touched | commands | share | busiest key's share |")
    print("|---|---:|---:|---:|---:|")
    for name, n in families.most_common(20):
        if distinct[name] == 1:
            continue  # one key: in the tables above
        top = max(c for k, c in per_key.items() if family(k) == name)
        print(f"| `{name}` | {distinct[name]} | {n} | {100 * n / total:.1f}% | "
              f"{100 * top / total:.2f}% |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--follows", type=int, default=40000)
    parser.add_argument("--posts", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    cluster = RedisClusterServer().start()
    try:
        setup_django(cluster.url)
        from django.core.management import call_command

        started = time.monotonic()
        call_command(
            "seed", users=args.users, follows=args.follows, posts=args.posts,
            seed=args.seed, verbosity=0,
        )  # fmt: skip
        print(f"seeded in {time.monotonic() - started:.1f} s", file=sys.stderr)
        state = prepare()
        monitors = [Monitor(url) for url in cluster.urls]
        for monitor in monitors:
            monitor.start()
            monitor.ready.wait(10)
        kinds = run_mix(state, args.requests, random.Random(args.seed))
        for monitor in monitors:
            monitor.stop()
        report(cluster, monitors, kinds)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
