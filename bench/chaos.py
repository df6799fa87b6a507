"""Load and faults: does the site lose or double anything it acknowledged?

    .venv/bin/python bench/chaos.py                  # 100 clients, 60 s, three faults
    .venv/bin/python bench/chaos.py --clients 20 --duration 20

On 127.0.0.1 only, with a redis-server of its own (AOF on, `appendfsync everysec`; a free
port, never 6379) and the site as `scripts/run-site` serves it (Granian, DEBUG off):

1. makes one user per client (a known auth secret each) and a random follow graph;
2. runs the clients for --duration seconds: each browses (home, timeline, profiles), posts
   (through the composer, with its submission token) and follows or unfollows, with a short
   think time. A post that gets a 503 or a broken connection is sent again, with the same
   token, as a person reloading would (up to --retries times). A post is acknowledged when
   the site answers it with its redirect;
3. meanwhile: pauses Redis (SIGSTOP) for 3 s at 20 % of the run, restarts it (SHUTDOWN,
   start again on its AOF) at 45 %, and kills one Granian worker with SIGKILL at 70 %;
4. afterwards runs `manage.py repair` (as the operator's periodic job would; it finishes
   fan-outs that a fault interrupted) and checks every acknowledged post: in its author's
   list, in the timeline (if among the newest 1,000), in every follower's home feed (unless
   that feed's cap has pushed it out), and no post stored twice, no id listed twice.

It prints requests by status, p50/p99 latency, 503s outside the fault windows, 500s, and
lost and duplicated posts, and exits non-zero if the targets are missed (zero 500s, zero
lost or duplicated acknowledged posts, 503s only while Redis is down). Figures go in
docs/reliability.md.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from social import keys  # noqa: E402  (key names only)
from tests.redis_server import free_port, server_binary  # noqa: E402

CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
TOKEN_INPUT = re.compile(r'name="token" value="([A-Za-z0-9_-]+)"')
SLACK = 3.0  # seconds after a Redis fault ends during which a 503 still counts as "down"


def say(message: str) -> None:
    print(f"[chaos] {message}", flush=True)


# --- Redis of our own -------------------------------------------------------------------


class OwnRedis:
    """A redis-server with AOF on, which we can pause and restart on its data."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.dir = directory
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [server_binary(), "--port", str(self.port), "--bind", "127.0.0.1",
             "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
             "--dir", str(self.dir), "--logfile", str(self.dir / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        client = redis.Redis(port=self.port)
        for _ in range(400):
            try:
                if client.ping():
                    return
            except (redis.ConnectionError, redis.exceptions.BusyLoadingError):
                time.sleep(0.025)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.terminate()  # SHUTDOWN: the AOF is flushed
            self.process.wait(timeout=30)

    def pause(self, seconds: float) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)
        time.sleep(seconds)
        self.process.send_signal(signal.SIGCONT)

    def restart(self) -> None:
        self.stop()
        self.start()


# --- The site ---------------------------------------------------------------------------


def prepare(url: str, clients: int, follows: int) -> list[tuple[int, str, str]]:
    """Make the users (one per client) and the follow graph; return (id, name, secret)."""
    os.environ.update(
        DJANGO_SETTINGS_MODULE="retwis_site.settings", REDIS_URL=url,
        SECRET_KEY="chaos-setup", ALLOWED_HOSTS="127.0.0.1", SITE_URL="http://127.0.0.1",
    )  # fmt: skip
    import django

    django.setup()
    from django.contrib.auth.hashers import make_password

    from social.repository import get_repository

    repo = get_repository()
    password = make_password("chaos password 1")  # one hash for all: PBKDF2 is slow
    people = []
    for i in range(clients):
        user = repo.users.create_user(f"chaos{i}", password)
        people.append((user.id, user.username, repo.users.record_login(user.id, "127.0.0.1")))
    rng = random.Random(7)
    for uid, _, _ in people:
        for other, _, _ in rng.sample(people, min(follows, clients - 1)):
            if other != uid:
                repo.graph.follow(uid, other)
    return people


def start_site(url: str, port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "REDIS_URL": url, "PORT": str(port), "DEBUG": "false"}
    # The per-user limits would refuse most of a bot's posts and follows (429): the test
    # is about faults, so they are raised out of the way.
    env.update(RETWIS_LIMIT_POSTS="10000/1m", RETWIS_LIMIT_FOLLOWS="10000/1m")
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env["SECRET_KEY"] = "chaos-" + "k" * 50
    out = log.open("w")
    site = subprocess.Popen(
        [str(ROOT / "scripts" / "run-site"), "--no-seed"],
        cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return site
        except OSError:
            pass
        if site.poll() is not None:
            raise RuntimeError(f"the site exited: see {log}")
        time.sleep(0.2)
    raise RuntimeError(f"the site did not answer: see {log}")


def stop_site(site: subprocess.Popen) -> None:
    if site.poll() is None:
        site.send_signal(signal.SIGTERM)
        try:
            site.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(site.pid, signal.SIGKILL)


def granian_workers(site: subprocess.Popen) -> list[int]:
    """Return the pids of Granian's worker processes (the grandchildren of run-site)."""
    found = subprocess.run(["ps", "-eo", "pid,ppid,args"], capture_output=True, text=True)
    rows = [line.split(None, 2) for line in found.stdout.splitlines()[1:]]
    children: dict[int, list[int]] = {}
    for pid, ppid, *_ in rows:
        children.setdefault(int(ppid), []).append(int(pid))
    descendants, todo = [], [site.pid]
    while todo:
        for child in children.get(todo.pop(), []):
            descendants.append(child)
            todo.append(child)
    args = {int(r[0]): r[2] if len(r) > 2 else "" for r in rows}
    granian = [p for p in descendants if "granian" in args.get(p, "")]
    # Workers are Granian processes whose parent is a Granian process.
    return [p for p in granian if any(p in children.get(g, []) for g in granian)]


# --- Clients ------------------------------------------------------------------------------


@dataclass
class Results:
    lock: threading.Lock = field(default_factory=threading.Lock)
    statuses: Counter = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    broken: list[float] = field(default_factory=list)  # times of broken connections
    late_503: list[tuple[float, str]] = field(default_factory=list)
    errors_500: list[tuple[float, str]] = field(default_factory=list)
    acked: list[tuple[int, str]] = field(default_factory=list)  # (author id, body)
    unacked: list[tuple[int, str]] = field(default_factory=list)
    status_times: list[tuple[float, int, str]] = field(default_factory=list)


class Client:
    def __init__(self, port: int, person: tuple[int, str, str], names: list[str], res: Results):
        self.port, self.res, self.names = port, res, names
        self.user_id, self.name, secret = person
        self.cookies = {"auth": secret}
        self.conn: http.client.HTTPConnection | None = None
        self.rng = random.Random(self.user_id)
        self.posted = 0

    def request(self, method: str, path: str, form: dict | None = None):
        """Send one request; return (status, body) or (None, "") on a broken connection."""
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["Origin"] = headers["Referer"] = f"http://127.0.0.1:{self.port}"
        started = time.monotonic()
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
            text = response.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            with self.res.lock:
                self.res.broken.append(time.monotonic())
                self.res.statuses["broken"] += 1
            return None, ""
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
        now = time.monotonic()
        with self.res.lock:
            self.res.statuses[response.status] += 1
            self.res.latencies.append(now - started)
            self.res.status_times.append((now, response.status, f"{method} {path}"))
        return response.status, text

    def page_tokens(self) -> tuple[str, str] | None:
        status, text = self.request("GET", "/")
        if status != 200:
            return None
        csrf, token = CSRF_INPUT.search(text), TOKEN_INPUT.search(text)
        if not csrf or not token:
            return None
        return csrf.group(1), token.group(1)

    def post(self, retries: int) -> None:
        tokens = self.page_tokens()
        if tokens is None:
            return
        csrf, token = tokens
        self.posted += 1
        body = f"chaos post {self.name} #{self.posted}"
        form = {"csrfmiddlewaretoken": csrf, "token": token, "status": body}
        for _ in range(retries + 1):
            status, _ = self.request("POST", "/post/", form)
            if status == 302:
                with self.res.lock:
                    self.res.acked.append((self.user_id, body))
                return
            if status not in (None, 503, 409):
                break  # an answer that is not "try again": not acknowledged
            time.sleep(0.5)
        with self.res.lock:
            self.res.unacked.append((self.user_id, body))

    def follow(self) -> None:
        tokens = self.page_tokens()
        if tokens is None:
            return
        other = self.rng.choice(self.names)
        if other == self.name:
            return
        action = self.rng.choice(["follow", "unfollow"])
        self.request("POST", f"/u/{other}/{action}/", {"csrfmiddlewaretoken": tokens[0]})

    def run(self, until: float, retries: int) -> None:
        while time.monotonic() < until:
            roll = self.rng.random()
            if roll < 0.25:
                self.request("GET", "/")
            elif roll < 0.45:
                self.request("GET", "/timeline/")
            elif roll < 0.6:
                self.request("GET", f"/u/{self.rng.choice(self.names)}/")
            elif roll < 0.85:
                self.post(retries)
            else:
                self.follow()
            time.sleep(self.rng.uniform(0.1, 0.5))


# --- Checks -------------------------------------------------------------------------------


def check(r: redis.Redis, res: Results) -> dict:
    """Return counts of lost and duplicated posts and of ids listed twice."""
    timeline = [int(i) for i in r.lrange(keys.timeline(), 0, -1)]
    oldest_listed = min(timeline) if len(timeline) >= 1000 else 0
    found: dict[tuple[int, str], list[int]] = {}
    authors = {a for a, _ in res.acked + res.unacked}
    for author in authors:
        ids = [int(i) for i in r.lrange(keys.own_posts(author), 0, -1)]
        pipe = r.pipeline(transaction=False)
        for post_id in ids:
            pipe.hget(keys.post(post_id), "body")
        for post_id, body in zip(ids, pipe.execute()):
            found.setdefault((author, body.decode()), []).append(post_id)
    lost = missing_timeline = missing_feeds = 0
    for author, body in res.acked:
        ids = found.get((author, body), [])
        if not ids:
            lost += 1
            continue
        post_id = ids[0]
        if post_id >= oldest_listed and post_id not in timeline:
            missing_timeline += 1
        for follower in r.zrange(keys.followers(author), 0, -1):
            assert isinstance(follower, bytes)  # no scores asked for: members only
            feed = [int(i) for i in r.lrange(keys.home_feed(int(follower)), 0, -1)]
            if post_id not in feed and not (len(feed) >= 1000 and post_id < min(feed)):
                missing_feeds += 1
    doubled = sum(1 for ids in found.values() if len(ids) > 1)
    lists = [keys.timeline(), *(keys.own_posts(a) for a in authors)]
    lists += [keys.home_feed(a) for a in authors]
    listed_twice = 0
    for key in lists:
        listed = r.lrange(key, 0, -1)
        listed_twice += len(listed) - len(set(listed))
    return {
        "acknowledged": len(res.acked),
        "not acknowledged": len(res.unacked),
        "lost": lost,
        "missing from timeline": missing_timeline,
        "missing from a follower's feed": missing_feeds,
        "stored twice": doubled,
        "listed twice": listed_twice,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--follows", type=int, default=15, help="follows per user at start")
    parser.add_argument("--retries", type=int, default=5)
    parser.add_argument("--no-faults", action="store_true", help="load only")
    args = parser.parse_args()
    if not shutil.which("ps"):
        sys.exit("needs ps (procps)")

    workdir = Path(tempfile.mkdtemp(prefix="retwis-chaos-"))
    own = OwnRedis(workdir)
    site = None
    try:
        own.start()
        say(f"Redis on port {own.port} (AOF on), data in {workdir}")
        people = prepare(own.url, args.clients, args.follows)
        say(f"{len(people)} users, {args.follows} follows each")
        port = free_port()
        site = start_site(own.url, port, workdir / "site.log")
        say(f"site on http://127.0.0.1:{port}/ (scripts/run-site), workers {granian_workers(site)}")

        res = Results()
        names = [name for _, name, _ in people]
        start = time.monotonic()
        until = start + args.duration
        threads = [
            threading.Thread(
                target=Client(port, person, names, res).run, args=(until, args.retries)
            )
            for person in people
        ]
        for thread in threads:
            thread.start()

        windows: list[tuple[float, float, str]] = []
        if not args.no_faults:

            def at(fraction: float) -> None:
                time.sleep(max(0.0, start + args.duration * fraction - time.monotonic()))

            at(0.2)
            t = time.monotonic()
            own.pause(3)
            windows.append((t, time.monotonic(), "Redis paused 3 s (SIGSTOP)"))
            at(0.45)
            t = time.monotonic()
            own.restart()
            windows.append((t, time.monotonic(), "Redis restarted (SHUTDOWN, AOF reload)"))
            at(0.7)
            workers = granian_workers(site)
            if workers:
                os.kill(workers[0], signal.SIGKILL)
                t = time.monotonic()
                windows.append((t, t, f"Granian worker {workers[0]} killed (SIGKILL)"))
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - start

        for when, status, what in res.status_times:
            down = any(a <= when <= b + SLACK for a, b, _ in windows if "Redis" in _)
            if status == 503 and not down:
                res.late_503.append((when - start, what))
            if status >= 500 and status != 503:
                res.errors_500.append((when - start, what))

        repair = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "repair", "--fanout-grace", "0"],
            cwd=ROOT, capture_output=True, text=True,
            env={**os.environ, "REDIS_URL": own.url, "SECRET_KEY": "chaos-setup"},
        )  # fmt: skip
        fanouts = repair.stdout.count("fan-out interrupted")
        checked = check(redis.Redis(port=own.port), res)

        total = sum(res.statuses.values())
        lat = sorted(res.latencies)
        say(f"{args.clients} clients, {elapsed:.0f} s: {total:,} requests "
            f"({total / elapsed:,.0f}/s)")  # fmt: skip
        for a, b, what in windows:
            say(f"  fault at {a - start:5.1f} s for {b - a:4.1f} s: {what}")
        say("  statuses: " + ", ".join(f"{k}: {v:,}" for k, v in sorted(res.statuses.items(),
                                                                       key=str)))  # fmt: skip
        if lat:
            p50 = statistics.median(lat) * 1000
            p99 = lat[int(len(lat) * 0.99) - 1] * 1000
            say(f"  latency p50 {p50:.0f} ms, p99 {p99:.0f} ms")
        say(f"  503 outside the Redis faults (+{SLACK:.0f} s): {len(res.late_503)}")
        say(f"  500s and other 5xx: {len(res.errors_500)}")
        say(f"  repair finished {fanouts} interrupted fan-out(s)")
        for name, value in checked.items():
            say(f"  posts {name}: {value:,}")
        for when, what in (res.late_503 + res.errors_500)[:10]:
            say(f"    {when:6.1f} s {what}")
        failed = (
            res.late_503
            or res.errors_500
            or checked["lost"]
            or checked["missing from timeline"]
            or checked["missing from a follower's feed"]
            or checked["stored twice"]
            or checked["listed twice"]
        )
        say("FAILED: see above" if failed else "OK: nothing acknowledged was lost or doubled")
        return 1 if failed else 0
    finally:
        if site is not None:
            stop_site(site)
        own.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
