"""Load the served site with wrk on the full-size data set: throughput, latency, Redis cost.

Usage (from the repository root):  .venv/bin/python bench/http_bench.py [--duration 10]
    [--connections 50,100] [--warmup 2]
    [--pages home,timeline,profile,welcome,permalink,login,timeline_anon,home_guarded,api_home]
    [--profile-updates-per-minute N]

1. Starts a redis-server of its own on a free port (never 6379, never the machine's Redis)
   with its data in var/bench/ under a dump named after the data set (e.g.
   seed-10000u-500000f-200000p-s1.rdb), without persistence (--save "", no AOF). If the dump
   exists Redis loads it; otherwise `manage.py seed` fills the server and SAVE writes the
   dump for the next run. Nothing is saved after that, so the dump stays as seeded.
2. Reads the personas from the data: the seeded user `demo` (its auth secret is sent as the
   cookie), the newest post (permalink) and a user with the median follower count (profile).
3. Measures Redis memory (INFO, DBSIZE, MEMORY USAGE over sampled keys) and, in a separate
   process, the round trips per page (Django's test client, as bench/pages_bench.py does).
4. Serves the site exactly as `scripts/run-site --no-seed` does, on a free port.
5. Counts Redis commands per page (INFO commandstats over sequential requests), then runs
   wrk on 127.0.0.1 against each page at each connection count, after a short warm-up run.
6. With --profile-updates-per-minute N, bench/profile_updates.py changes display names at
   that rate all through the wrk runs (not while commands are counted), and the report
   says how many it made and how far the visibility version moved meanwhile.
7. Prints markdown tables, then stops the site and Redis (also on Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from social import keys  # noqa: E402  (key names only: no Django needed)
from tests.redis_server import free_port, server_binary  # noqa: E402

VAR = ROOT / "var" / "bench"
PAGE_NAMES = (
    "home",
    "timeline",
    "profile",
    "welcome",
    "permalink",
    "login",
    "timeline_anon",
    "home_guarded",
    "api_home",
)
GUARDED_BLOCKS = GUARDED_MUTES = 100  # the persona who blocks and mutes (issue 17)
GUARDED_FILTERS = 20  # ... and filters words: "<id>|<phrase>", never expiring (filters.py)
WRK_THREADS = 2
# Not a page's cost: the bench's own INFO, connection set-up, redis-py's idle health check.
NOT_COUNTED = {"info", "hello", "auth", "select", "ping"}
NOT_COUNTED_PREFIXES = ("client|",)


class Stop(Exception):
    """SIGTERM or SIGHUP asked the bench to stop."""


def on_signal(signum: int, frame) -> None:
    """Turn a termination signal into an exception, so `finally` blocks stop everything."""
    raise Stop(signal.Signals(signum).name)


def say(message: str) -> None:
    """Print a progress line on stderr (the report goes to stdout)."""
    print(f"[http_bench] {message}", file=sys.stderr, flush=True)


def tail(path: Path, lines: int = 30) -> str:
    """Return the last lines of a log file, or a note that it is missing."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return f"({path} does not exist)"


# --- The data set and its Redis ----------------------------------------------------------


@dataclass(frozen=True)
class DataSet:
    """The sizes `manage.py seed` is run with."""

    users: int
    follows: int
    posts: int
    seed: int

    @property
    def dump_name(self) -> str:
        """Return the RDB file name that identifies this data set."""
        return f"seed-{self.users}u-{self.follows}f-{self.posts}p-s{self.seed}.rdb"

    def seed_args(self) -> list[str]:
        """Return the `manage.py seed` arguments that make this data set."""
        return [
            "seed",
            *("--users", str(self.users), "--follows", str(self.follows)),
            *("--posts", str(self.posts), "--seed", str(self.seed)),
        ]


class BenchRedis:
    """A redis-server on a free port whose only file is the data set's dump in var/bench/."""

    def __init__(self, dump_name: str) -> None:
        self.port = free_port()
        self.dump_name = dump_name
        self.log = VAR / "redis.log"
        self.process: subprocess.Popen | None = None
        self.start_seconds = 0.0
        self.client = redis.Redis(port=self.port, decode_responses=True, socket_timeout=60)

    @property
    def url(self) -> str:
        """Return the redis:// URL of this server."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def dump(self) -> Path:
        """Return the path of the data set's dump."""
        return VAR / self.dump_name

    def start(self, timeout: float = 180) -> None:
        """Start redis-server (loading the dump if there is one); return once it answers PING."""
        command = [
            server_binary(),
            *("--port", str(self.port), "--bind", "127.0.0.1"),
            *("--dir", str(VAR), "--dbfilename", self.dump_name),
            *("--save", "", "--appendonly", "no", "--logfile", str(self.log)),
        ]
        self.log.unlink(missing_ok=True)
        # Own session: a Ctrl-C in the terminal reaches only us, and we stop Redis last.
        self.process = subprocess.Popen(
            command, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
        )
        started = time.monotonic()
        deadline = started + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(
                    f"redis-server exited ({self.process.returncode}):\n{tail(self.log)}"
                )
            try:
                if self.client.ping():
                    self.start_seconds = time.monotonic() - started
                    return
            except redis.ConnectionError:  # includes BusyLoadingError while the dump loads
                time.sleep(0.1)
        raise SystemExit(f"redis-server did not answer PING in {timeout:.0f} s:\n{tail(self.log)}")

    def stop(self) -> None:
        """Stop redis-server without saving (SHUTDOWN NOSAVE, else SIGTERM, else SIGKILL)."""
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(redis.RedisError):
            self.client.shutdown(nosave=True)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            # With --save "" a SIGTERM does not write the dump either.
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.client.close()


def lock_bench_dir() -> IO[str]:
    """Hold var/bench/http_bench.lock: two benches at once would skew each other's figures."""
    VAR.mkdir(parents=True, exist_ok=True)
    lock = open(VAR / "http_bench.lock", "w")  # noqa: SIM115 - held until we exit
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SystemExit(
            f"Another bench/http_bench.py is running (it holds {lock.name})."
        ) from None
    return lock


def ensure_data(server: BenchRedis, data: DataSet) -> str:
    """Seed an empty server and SAVE its dump; return how the data got there."""
    if server.client.dbsize():
        return f"loaded from {server.dump.relative_to(ROOT)} in {server.start_seconds:.1f} s"
    say(f"No dump {server.dump.relative_to(ROOT)}: seeding (about 20 s at the default size)...")
    started = time.monotonic()
    env = {**os.environ, "REDIS_URL": server.url, "DEBUG": "true"}
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *data.seed_args()],
        cwd=ROOT, env=env, stdout=sys.stderr, check=True,
    )  # fmt: skip
    seconds = time.monotonic() - started
    server.client.save()  # writes to a temporary file and renames it: never a partial dump
    say(f"Saved {server.dump.relative_to(ROOT)} for the next run.")
    return f"seeded in {seconds:.0f} s and saved to {server.dump.relative_to(ROOT)}"


# --- Personas and pages ------------------------------------------------------------------


@dataclass(frozen=True)
class Personas:
    """Who reads what: demo's auth secret, the newest post, a typical profile."""

    secret: str
    demo_following: int
    post_id: int
    profile: str
    profile_followers: int
    guarded_secret: str = ""
    guarded_following: int = 0
    api_token: str = ""  # demo's client API token (api_token())


# A well-formed CSRF cookie (32 characters of Django's alphabet), as a browser keeps it.
BENCH_CSRF_COOKIE = "0123456789abcdefABCDEF0123456789"


@dataclass(frozen=True)
class Page:
    """One page to load: its short name, a label for the tables, its path and cookie (or,
    `bearer`, the client API token `secret` is)."""

    name: str
    label: str
    path: str
    secret: str | None
    bearer: bool = False

    @property
    def headers(self) -> dict[str, str]:
        """Return the request headers of a logged-in page: the `auth` cookie, and the
        `csrftoken` cookie the browser of a logged-in user holds since its first form (an
        anonymous page is a first visit: no cookies at all); or a client's Bearer token."""
        if not self.secret:
            return {}
        if self.bearer:
            return {"Authorization": f"Bearer {self.secret}"}
        return {"Cookie": f"auth={self.secret}; csrftoken={BENCH_CSRF_COOKIE}"}


def text(reply: bytes | str | None) -> str:
    """Return a reply as str ("" for none): the bench's client decodes replies already, but
    redis-py's types do not know it."""
    return reply.decode() if isinstance(reply, bytes) else reply or ""


def pick_personas(r: redis.Redis) -> Personas:
    """Read demo's secret, the newest post and a median-followed user from the data."""
    demo_id = r.hget(keys.users(), "demo")
    if demo_id is None:
        raise SystemExit("No user `demo` in the data set: delete the dump in var/bench/ to reseed.")
    secret = r.hget(keys.user(int(demo_id)), "auth")
    if not secret:
        raise SystemExit(f"{keys.user(int(demo_id))} has no `auth` field: cannot log in as demo.")
    newest = r.lindex(keys.timeline(), 0)
    if newest is None:
        raise SystemExit("The global timeline is empty: no post for the permalink.")
    # A typical profile: the median follower count over a fixed sample of 500 users.
    ids = sorted(int(i) for i in r.hvals(keys.users()) if i != demo_id)
    sample = random.Random(1).sample(ids, min(500, len(ids)))
    pipe = r.pipeline(transaction=False)
    for user_id in sample:
        pipe.zcard(keys.followers(user_id))
    ranked = sorted(zip(pipe.execute(), sample))
    followers, typical = ranked[len(ranked) // 2]
    guarded = ranked[-1][1]  # the most followed of the sample
    return Personas(
        secret=text(secret),
        demo_following=r.zcard(keys.following(int(demo_id))),
        post_id=int(newest),
        profile=text(r.hget(keys.user(typical), "username")),
        profile_followers=followers,
        guarded_secret=guard(r, guarded, ids),
        guarded_following=r.zcard(keys.following(guarded)),
        api_token=api_token(r, int(demo_id)),
    )


# The bench's own client API app and token for demo (the same every run).
BENCH_CLIENT_ID = "http-bench-client-0001"
BENCH_API_TOKEN = "http-bench-api-token-" + "0" * 22


def api_token(r: redis.Redis, user_id: int) -> str:
    """Give user_id a client API token with every scope, written as
    social/repository/clients/oauth.py's save_token writes one (the app, the token's hash by its
    SHA-256, the user's list), on the bench's own Redis; return it."""
    digest = hashlib.sha256(BENCH_API_TOKEN.encode()).hexdigest()
    pipe = r.pipeline(transaction=False)
    pipe.hset(
        keys.oauth_app(BENCH_CLIENT_ID),
        mapping={"name": "http_bench", "website": "", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
                 "scopes": "read write follow", "secret": "0" * 64, "created": 0},
    )  # fmt: skip
    pipe.hset(
        keys.oauth_token(digest),
        mapping={"client_id": BENCH_CLIENT_ID, "user_id": user_id,
                 "scopes": "read write follow", "created": 0},
    )  # fmt: skip
    pipe.zadd(keys.oauth_user_tokens(user_id), {digest: 0})
    pipe.execute()
    return BENCH_API_TOKEN


def guard(r: redis.Redis, user_id: int, ids: list[int]) -> str:
    """Give user_id GUARDED_BLOCKS blocks and GUARDED_MUTES mutes of other accounts and
    GUARDED_FILTERS word filters (the keys relations.py and filters.py write, on the
    bench's own Redis; the same ones every run) and return its auth secret."""
    others = random.Random(2).sample([i for i in ids if i != user_id], GUARDED_BLOCKS * 2)
    blocked, muted = others[:GUARDED_BLOCKS], others[GUARDED_BLOCKS:]
    pipe = r.pipeline(transaction=False)
    pipe.hset(keys.user(user_id), "relations", 1)
    # Members as str: what Redis stores for an int, and what redis-py's types accept.
    pipe.zadd(keys.blocks(user_id), dict.fromkeys(map(str, blocked), 1))
    pipe.zadd(keys.mutes(user_id), dict.fromkeys(map(str, muted), 1))
    for other in blocked:
        pipe.zadd(keys.blocked_by(other), {str(user_id): 1})
        pipe.hset(keys.user(other), "relations", 1)
    for other in muted:
        pipe.zadd(keys.muted_by(other), {str(user_id): 1})
    phrases = [f"{i}|bench-word-{i}" for i in range(1, GUARDED_FILTERS + 1)]
    pipe.zadd(keys.filters(user_id), dict.fromkeys(phrases, float("inf")))
    pipe.execute()
    secret = text(r.hget(keys.user(user_id), "auth"))
    if not secret:  # never logged in: give it a secret as a login would
        secret = f"bench-guarded-{user_id:032d}"
        r.hset(keys.user(user_id), "auth", secret)
        r.hset(keys.auths(), secret, user_id)
    return secret


def build_pages(who: Personas, names: list[str]) -> list[Page]:
    """Return the pages to measure, in the order of names."""
    pages = {
        "home": Page("home", "home, logged in (10 posts)", "/", who.secret),
        "timeline": Page("timeline", "timeline (50 posts), logged in", "/timeline/", who.secret),
        "profile": Page(
            "profile",
            f"profile of @{who.profile} ({who.profile_followers} followers), logged in",
            f"/u/{who.profile}/",
            who.secret,
        ),
        "welcome": Page("welcome", "welcome page, anonymous", "/", None),
        "permalink": Page("permalink", "permalink, logged in", f"/p/{who.post_id}/", who.secret),
        # The floor: a page that reads nothing from Redis.
        "login": Page("login", "/login/, anonymous (no Redis)", "/login/", None),
        "timeline_anon": Page(
            "timeline_anon", "timeline (50 posts), anonymous", "/timeline/", None
        ),
        "api_home": Page(
            "api_home",
            "GET /api/v1/timelines/home?limit=10 (Bearer token)",
            "/api/v1/timelines/home?limit=10",
            who.api_token,
            bearer=True,
        ),
        "home_guarded": Page(
            "home_guarded",
            f"home of a reader with {GUARDED_BLOCKS} blocks, {GUARDED_MUTES} mutes and"
            f" {GUARDED_FILTERS} filters",
            "/",
            who.guarded_secret,
        ),
    }
    return [pages[name] for name in names]


# --- Redis memory ------------------------------------------------------------------------


def usage(r: redis.Redis, names: list[str]) -> list[int]:
    """Return MEMORY USAGE (exact: SAMPLES 0) of each key, 0 for a missing one."""
    pipe = r.pipeline(transaction=False)
    for name in names:
        pipe.memory_usage(name, samples=0)
    return [n or 0 for n in pipe.execute()]


def lengths(r: redis.Redis, command: str, names: list[str]) -> list[int]:
    """Return ZCARD or LLEN of each key (0 for a missing one), in one round trip."""
    pipe = r.pipeline(transaction=False)
    for name in names:
        getattr(pipe, command)(name)
    return pipe.execute()


def measure_memory(r: redis.Redis, sample: int) -> list[tuple[str, str, str]]:
    """Return (figure, value, how) rows: used_memory, keys, and bytes per user, follow, post."""
    memory = r.info("memory")
    users = r.hlen(keys.users())
    posts = int(r.get(keys.next_post_id()) or 0)
    follows = int(r.get(keys.follows_total()) or 0)
    rng = random.Random(1)
    user_ids = rng.sample(sorted(int(i) for i in r.hvals(keys.users())), min(sample, users))
    post_ids = rng.sample(range(1, posts + 1), min(sample, posts))

    user_hash = statistics.mean(usage(r, [keys.user(i) for i in user_ids]))
    indexes = [keys.users(), keys.usernames_lower(), keys.username_index()]
    indexes += [keys.users_by_time(), keys.auths()]
    index_share = sum(usage(r, indexes)) / users

    graph = [keys.followers(i) for i in user_ids] + [keys.following(i) for i in user_ids]
    per_entry = sum(usage(r, graph)) / max(1, sum(lengths(r, "zcard", graph)))

    post_hash = statistics.mean(usage(r, [keys.post(i) for i in post_ids]))
    feeds = [keys.home_feed(i) for i in user_ids]
    feed_entries = lengths(r, "llen", feeds)
    feed_entry = sum(usage(r, feeds)) / max(1, sum(feed_entries))
    fan_out = statistics.mean(feed_entries) * users / max(1, posts)
    own = [keys.own_posts(i) for i in user_ids]
    own_entry = sum(usage(r, own)) / max(1, sum(lengths(r, "llen", own)))
    per_post = post_hash + own_entry + fan_out * feed_entry

    mib = 2**20
    estimate = users * (user_hash + index_share) + follows * 2 * per_entry + posts * per_post
    return [
        ("used_memory", f"{memory['used_memory'] / mib:,.1f} MiB", "INFO memory"),
        ("used_memory_rss", f"{memory['used_memory_rss'] / mib:,.1f} MiB", "INFO memory"),
        ("keys", f"{r.dbsize():,}", "DBSIZE"),
        (
            f"per user ({users:,})",
            f"{user_hash + index_share:,.0f} B",
            f"user:<id> hash {user_hash:,.0f} B (mean of {len(user_ids)}) + its share of the "
            f"5 name/secret indexes (users, users_lower, users_lex, users_by_time, auths) "
            f"{index_share:,.0f} B",
        ),
        (
            f"per follow ({follows:,})",
            f"{2 * per_entry:,.0f} B",
            f"one entry in followers:<id> and one in following:<id>, {per_entry:,.1f} B each "
            f"(both sorted sets of {len(user_ids)} users, bytes / ZCARD)",
        ),
        (
            f"per post ({posts:,})",
            f"{per_post:,.0f} B",
            f"post:<id> hash {post_hash:,.0f} B (mean of {len(post_ids)}) + own-posts entry "
            f"{own_entry:,.1f} B + {fan_out:,.1f} home-feed entries x {feed_entry:,.1f} B "
            f"(fan-out = stored feed entries / posts, mean LLEN of posts:<id> x users / posts; "
            f"feeds are capped, so this is below the follower count)",
        ),
        (
            "sum of the above",
            f"{estimate / mib:,.1f} MiB",
            "users x per user + follows x per follow + posts x per post (vs used_memory)",
        ),
    ]


# --- Round trips and commands ------------------------------------------------------------


def count_round_trips(redis_url: str, pages: list[Page]) -> list[list[int]]:
    """Return each page's [cold, warm] round trips, counted in-process by
    bench/http_round_trips.py."""
    request = {
        "redis_url": redis_url,
        "pages": [[page.path, page.secret, page.bearer] for page in pages],
    }
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "http_round_trips.py")],
        input=json.dumps(request), capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"Counting round trips failed:\n{done.stderr}{done.stdout}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Make urllib return a redirect instead of following it (a 302 means a broken persona)."""

    def redirect_request(self, *args, **kwargs) -> None:
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def get(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """GET url; return the status, the headers and the body (also for 4xx and 5xx)."""
    request = urllib.request.Request(url, headers=headers)
    try:
        with OPENER.open(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def command_calls(r: redis.Redis) -> Counter[str]:
    """Return calls per command from INFO commandstats, without those that are no page's."""
    calls: Counter[str] = Counter()
    for name, stats in r.info("commandstats").items():
        command = name.removeprefix("cmdstat_")
        if command not in NOT_COUNTED and not command.startswith(NOT_COUNTED_PREFIXES):
            calls[command] = stats["calls"]
    return calls


def count_commands(
    r: redis.Redis, base: str, page: Page, requests: int
) -> tuple[float, Counter[str]]:
    """Return the Redis commands one request of page costs, over sequential requests."""
    for _ in range(3):  # warm every worker's connection and template cache we can reach
        check(base, page)
    before = command_calls(r)
    for _ in range(requests):
        check(base, page)
    delta = command_calls(r) - before
    return delta.total() / requests, delta


def check(base: str, page: Page) -> None:
    """GET page and fail unless it answers 200 (a redirect would mean the cookie is refused)."""
    status, headers, _ = get(base + page.path, page.headers)
    if status != 200:
        where = headers.get("Location", "")
        raise SystemExit(f"GET {page.path} ({page.label}) answered {status} {where}")


# --- The site ----------------------------------------------------------------------------


def start_time(pid: int) -> str | None:
    """Return a process's start time (field 22 of /proc/<pid>/stat), or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat.rsplit(")", 1)[1].split()  # the command name may hold spaces
    return None if fields[0] == "Z" else fields[19]


def descendants(root: int) -> dict[int, str]:
    """Return {pid: start time} of every live process under root (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    found, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        started = start_time(pid)
        if started is not None:
            found[pid] = started
        todo += children.get(pid, [])
    return found


def alive(group: int, processes: dict[int, str]) -> list[int]:
    """Return the pids of processes still running (same start time: not a reused pid).

    The group leader counts as running while any member of its group is.
    """
    running = [pid for pid, started in processes.items() if start_time(pid) == started]
    try:
        os.killpg(group, 0)
        running.append(group)
    except ProcessLookupError:
        pass
    return running


class Site:
    """The site as `scripts/run-site --no-seed` serves it, on a free port, on our Redis."""

    def __init__(self, redis_url: str) -> None:
        self.port = free_port()
        self.redis_url = redis_url
        self.log = VAR / "site.log"
        self.process: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        """Return the site's base URL, without a trailing slash."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> None:
        """Start the launcher; return once GET /healthz answers 200, else fail with its log."""
        env = {**os.environ, "PORT": str(self.port), "REDIS_URL": self.redis_url}
        env["PYTHONUNBUFFERED"] = "1"
        with open(self.log, "w") as log:
            # Own session, so the whole server (workers, reloader) can be stopped as a group.
            self.process = subprocess.Popen(
                [str(ROOT / "scripts" / "run-site"), "--no-seed"],
                cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(
                    f"scripts/run-site exited ({self.process.returncode}):\n{tail(self.log)}"
                )
            with contextlib.suppress(OSError):
                if get(self.base + "/healthz", {})[0] == 200:
                    return
            time.sleep(0.2)
        raise SystemExit(f"/healthz did not answer 200 in {timeout:.0f} s:\n{tail(self.log)}")

    def stop(self) -> None:
        """SIGTERM the launcher and wait for it and every process under it; SIGKILL after 30 s.

        The launcher stops its server itself (Granian runs in a session of its own), so
        the processes under it are noted first and waited for too: none is left behind.
        """
        if self.process is None:
            return
        group = self.process.pid  # the launcher leads its own session and process group
        below = descendants(group)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            self.process.poll()  # reap the launcher
            if not alive(group, below):
                return
            time.sleep(0.1)
        say("scripts/run-site did not stop in 30 s: killing what is left of it")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
        for pid in alive(group, below):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait()

    def facts(self) -> str:
        """Return what serves the site: the Server header, DEBUG, and workers if printed."""
        _, headers, _ = get(self.base + "/healthz", {})
        status, _, body = get(self.base + "/no-such-page-http-bench/", {})
        debug = "on" if status == 404 and b"DEBUG = True" in body else "off"
        log = self.log.read_text(errors="replace")
        said = [line for line in log.splitlines() if re.search(r"\bworkers?\b", line, re.I)]
        ours = [line.removeprefix("[run-site]").strip() for line in said if "[run-site]" in line]
        workers = ours[0] if ours else "not printed"
        return f"Server: {headers.get('Server', '?')}, DEBUG {debug}; launcher: {workers}"


# --- wrk ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Load:
    """What one wrk run measured."""

    requests_per_s: float
    latency_ms: dict[str, float]  # "50%", "75%", "90%", "99%"
    non_2xx_3xx: int
    socket_errors: dict[str, int]  # connect, read, write, timeout


UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


def parse_wrk(output: str) -> Load:
    """Parse wrk --latency output: Requests/sec, the 50/75/90/99% latencies, errors."""
    rate = re.search(r"^Requests/sec:\s+([\d.]+)", output, re.M)
    if rate is None:
        raise ValueError(f"no Requests/sec in wrk's output:\n{output}")
    latency = {
        pct + "%": float(value) * UNITS_MS[unit]
        for pct, value, unit in re.findall(
            # wrk pads a value in seconds with a trailing space ("1.02s ").
            r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s|m|h)\s*$",
            output,
            re.M,
        )
    }
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    names = ("connect", "read", "write", "timeout")
    return Load(
        requests_per_s=float(rate.group(1)),
        latency_ms=latency,
        non_2xx_3xx=int(non_2xx.group(1)) if non_2xx else 0,
        socket_errors=dict(zip(names, map(int, errors.groups())))
        if errors
        else dict.fromkeys(names, 0),
    )


def milliseconds(load: Load, percentile: str) -> str:
    """Return a latency percentile for the table, "n/a" if wrk printed none."""
    value = load.latency_ms.get(percentile)
    return "n/a" if value is None else f"{value:.1f}"


def wrk(url: str, page: Page, connections: int, seconds: float, timeout: float) -> str:
    """Run wrk against page and return its output."""
    command = ["wrk", f"-t{min(WRK_THREADS, connections)}", f"-c{connections}"]
    command += [f"-d{seconds:g}s", "--timeout", f"{timeout:g}s", "--latency"]
    for name, value in page.headers.items():
        command += ["-H", f"{name}: {value}"]
    done = subprocess.run([*command, url + page.path], capture_output=True, text=True)
    with open(VAR / "wrk.log", "a") as log:  # wrk's own output, to check the parsed figures
        shown = " ".join(command).replace(page.secret or "\0", "<secret>")
        log.write(f"$ {shown} {url}{page.path}\n{done.stdout}{done.stderr}\n")
    if done.returncode != 0:
        raise SystemExit(f"wrk failed ({done.returncode}):\n{done.stderr}{done.stdout}")
    return done.stdout


class ProfileUpdates:
    """bench/profile_updates.py in a process of its own, changing display names at a set
    rate on the bench's Redis until stopped."""

    def __init__(self, redis_url: str, per_minute: float) -> None:
        self.redis_url = redis_url
        self.per_minute = per_minute
        self.process: subprocess.Popen | None = None
        self.tally: dict = {}

    def start(self) -> None:
        """Start the updater."""
        command = [sys.executable, str(ROOT / "bench" / "profile_updates.py")]
        command += ["--redis-url", self.redis_url, "--per-minute", f"{self.per_minute:g}"]
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
        )

    def stop(self) -> dict:
        """Stop the updater (SIGTERM; SIGKILL after 30 s) and return what it made."""
        if self.process is None:
            return self.tally
        if self.process.poll() is None:
            self.process.terminate()
        try:
            out, _ = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, _ = self.process.communicate()
        if self.process.returncode not in (0, -signal.SIGTERM):
            raise SystemExit(f"bench/profile_updates.py failed ({self.process.returncode})")
        lines = (out or "").strip().splitlines()
        self.tally = json.loads(lines[-1]) if lines else {}
        self.process = None
        return self.tally


# --- The report --------------------------------------------------------------------------


def load_table(rows: list[tuple[Page, int, Load]]) -> Iterator[str]:
    """Yield the markdown table of wrk results."""
    yield "| page | connections | req/s | p50 ms | p90 ms | p99 ms | non-2xx/3xx | socket errors |"
    yield "|---|---|---|---|---|---|---|---|"
    for page, connections, load in rows:
        errors = ", ".join(f"{k} {v}" for k, v in load.socket_errors.items() if v) or "0"
        yield (
            f"| {page.label} | {connections} | {load.requests_per_s:,.1f} "
            f"| {milliseconds(load, '50%')} | {milliseconds(load, '90%')} "
            f"| {milliseconds(load, '99%')} "
            f"| {load.non_2xx_3xx} | {errors} |"
        )


def cost_table(
    pages: list[Page], trips: list[list[int]], commands: list[tuple[float, Counter[str]]], n: int
) -> Iterator[str]:
    """Yield the markdown table of Redis commands and round trips per page."""
    yield (
        f"| page | path | commands / request (over {n}) | round trips / request, cold / warm "
        "| commands |"
    )
    yield "|---|---|---|---|---|"
    for page, trip, (per_request, calls) in zip(pages, trips, commands):
        mix = ", ".join(f"{name.upper()} {count / n:g}" for name, count in calls.most_common())
        cold, warm = trip
        yield f"| {page.label} | `{page.path}` | {per_request:g} | {cold} / {warm} | {mix} |"


def machine_facts(r: redis.Redis, site: str) -> str:
    """Return one line: cores, Python, redis-server, the server and its workers."""
    version = r.info("server")["redis_version"]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs (load average {load} before the load), Python "
        f"{platform.python_version()}, redis-server {version}, {site}"
    )


# --- Main ----------------------------------------------------------------------------------


def connection_list(text: str) -> list[int]:
    """Parse "50,100" into [50, 100]."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of numbers: {text}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("connections must be positive")
    return values


def page_list(text: str) -> list[str]:
    """Parse "home,welcome" into page names, rejecting unknown ones."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = sorted(set(names) - set(PAGE_NAMES))
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"pages are among {', '.join(PAGE_NAMES)}")
    return names


def parse_args() -> argparse.Namespace:
    """Return the command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--duration", type=float, default=10, help="seconds of each measured wrk run (10)")
    add("--connections", type=connection_list, default=[50, 100], help="list, default 50,100")
    add("--pages", type=page_list, default=list(PAGE_NAMES), help=",".join(PAGE_NAMES))
    add("--warmup", type=float, default=2, help="seconds of the wrk run before each one (2)")
    add("--timeout", type=float, default=2, help="wrk's request timeout in seconds (2)")
    add("--requests", type=int, default=20, help="sequential requests for command counts (20)")
    add("--memory-sample", type=int, default=300, help="keys of each kind sampled (300)")
    add("--users", type=int, default=10_000, help="data set: seed --users (10000)")
    add("--follows", type=int, default=500_000, help="data set: seed --follows (500000)")
    add("--posts", type=int, default=200_000, help="data set: seed --posts (200000)")
    add("--seed", type=int, default=1, help="data set: seed --seed (1)")
    add("--reseed", action="store_true", help="delete this data set's dump and seed again")
    add(
        "--profile-updates-per-minute", type=float, default=0, metavar="N",
        help="change N display names a minute beside the wrk runs (0: none)",
    )  # fmt: skip
    return parser.parse_args()


def run(
    args: argparse.Namespace,
    data: DataSet,
    server: BenchRedis,
    site: Site,
    updates: ProfileUpdates | None,
) -> None:
    """Do the measurements on a started Redis and print the report."""
    origin = ensure_data(server, data)
    (VAR / "wrk.log").unlink(missing_ok=True)
    r = server.client
    who = pick_personas(r)
    pages = build_pages(who, args.pages)
    say("Measuring memory...")
    memory = measure_memory(r, args.memory_sample)
    say("Counting round trips in-process...")
    trips = count_round_trips(server.url, pages)
    say("Starting scripts/run-site --no-seed...")
    site.start()
    commands = [count_commands(r, site.base, page, args.requests) for page in pages]
    facts = machine_facts(r, site.facts())
    results = []
    version_before = r.get(keys.visibility_version())
    if updates is not None:
        say(f"Changing {updates.per_minute:g} display names a minute beside the wrk runs...")
        updates.start()
    for page in pages:
        for connections in args.connections:
            say(f"wrk {page.label}, {connections} connections, {args.duration:g} s...")
            if args.warmup > 0:
                wrk(site.base, page, connections, args.warmup, args.timeout)
            output = wrk(site.base, page, connections, args.duration, args.timeout)
            results.append((page, connections, parse_wrk(output)))
    tally = updates.stop() if updates is not None else None
    version_after = r.get(keys.visibility_version())

    print(f"\n## http_bench: {data.dump_name.removesuffix('.rdb')} ({origin})\n")
    print(facts)
    warmup = f"after a {args.warmup:g} s warm-up run" if args.warmup > 0 else "no warm-up run"
    print(
        f"demo follows {who.demo_following}; wrk -t{WRK_THREADS} -d{args.duration:g}s "
        f"--timeout {args.timeout:g}s --latency on 127.0.0.1, {warmup}\n"
    )
    if tally is not None:
        moved = int(version_after or 0) - int(version_before or 0)
        print(
            f"Beside the wrk runs: bench/profile_updates.py --per-minute "
            f"{args.profile_updates_per_minute:g}: {tally.get('updates', 0)} display names "
            f"changed in {tally.get('seconds', 0):g} s ({tally.get('per_minute', 0):g} a minute, "
            f"{tally.get('late', 0)} late); the visibility version moved {moved}.\n"
        )
    print("\n".join(load_table(results)))
    print()
    print("\n".join(cost_table(pages, trips, commands, args.requests)))
    print(
        "\nCommands: INFO commandstats over sequential requests to the served site, without "
        "INFO, PING and connection set-up. Round trips: counted in-process (Django test client, "
        "a pipeline is one), as bench/pages_bench.py does.\n"
    )
    print("| memory | value | how |\n|---|---|---|")
    for figure, value, how in memory:
        print(f"| {figure} | {value} | {how} |")


def main() -> None:
    """Run the bench; stop the site and Redis whatever happens."""
    args = parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install wrk")
    lock = lock_bench_dir()  # noqa: F841 - held for the life of the process
    data = DataSet(args.users, args.follows, args.posts, args.seed)
    if args.reseed:
        (VAR / data.dump_name).unlink(missing_ok=True)
    # Ctrl-C raises KeyboardInterrupt even when started as a background job (which ignores it).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    server, site, updates = BenchRedis(data.dump_name), None, None
    try:
        say(f"Starting redis-server on port {server.port} ({data.dump_name})...")
        server.start()
        site = Site(server.url)
        if args.profile_updates_per_minute > 0:
            updates = ProfileUpdates(server.url, args.profile_updates_per_minute)
        run(args, data, server, site, updates)
    except (KeyboardInterrupt, Stop) as why:
        say(f"{type(why).__name__} {why}".strip() + ": stopping")
        sys.exit(130)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda *_: say("still stopping..."))
        if updates is not None:
            updates.stop()
        if site is not None:
            site.stop()
        server.stop()


if __name__ == "__main__":
    main()
