"""Run issue 33's attacks beside a page reader: pages' p50/p90/p99 and share over 1 s.

Usage (from the repository root):  .venv/bin/python bench/attack.py [--site PATH]
    [--seconds 20] [--attackers 0,1,2] [--connections 4] [--api] [--bomb | --slow-body N]
    [--keep-alive] [--json]

1. Starts a redis-server of its own on a free port (never 6379; no persistence), seeds the
   small data set (`manage.py seed --users 200 --follows 2000 --posts 3000 --seed 1`) and
   serves the site of the checkout at --site (default: this one; its own .venv) as
   `scripts/run-site --no-seed` does: its scripts/launch.py, DEBUG off, Granian with one
   worker per core, pictures in a temporary MEDIA_ROOT. Limits are the site's defaults.
2. Logs in `demo` as the page reader and one seeded account per attacker (each phase has
   accounts of its own, so one phase's limits do not carry into the next).
3. For each count in --attackers: the attackers start, --warmup seconds later the reader
   fetches home, a profile and the timeline in turn on --connections connections for
   --seconds, each request on a new connection (a new visitor; --keep-alive: connections
   opened before the attack and kept, so each stays with the worker that accepted it);
   then the attackers stop (a request in flight is waited for).
   An attacker posts the composer with four 308 KB PNGs of 6,300 x 6,300 16-bit pixels and
   a status too long, back to back (--api: and one picture to POST /api/v1/media each
   time; --bomb: a 693-byte truncated JPEG whose header says 6,300 x 6,300 instead). With
   --slow-body N the phases are 0 and N anonymous connections sending a POST /login/ body
   at one byte a second.
4. Prints a markdown table (--json: one JSON object): per phase the page requests, p50,
   p90, p99, the share over 1 s, failed page requests, and the attackers' requests and
   answers. Progress on stderr. Stops the site and Redis at the end (also on Ctrl-C).

Only 127.0.0.1 is contacted. Every loop ends by itself (deadline, stop, most requests).
The pictures are made once into var/bench/ (about 2 s).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import redis
from PIL import Image

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT))

from attack_clients import (  # noqa: E402
    LOOPBACK,
    SIDE,
    Hit,
    PictureAttacker,
    Session,
    SlowBodyAttacker,
    api_tokens,
    cached,
    jpeg_bomb,
    png16,
    read_pages,
)
from login_bench import percentile  # noqa: E402
from pictures import quiet_port  # noqa: E402

from social import keys  # noqa: E402  (key names only: no Django needed)
from tests.redis_server import RedisServer  # noqa: E402

VAR = ROOT / "var" / "bench"
SEED = ["seed", "--users", "200", "--follows", "2000", "--posts", "3000", "--seed", "1"]
PAGE_MOST = 100_000  # page requests one connection sends in a phase, at most
ATTACK_MOST = 2_000  # requests (or slow connections) one attacker sends in a phase, at most
TIMEOUT_SLACK = 60  # seconds a request may wait past its phase before it counts as failed


def say(message: str) -> None:
    """Print progress on stderr (the report goes to stdout)."""
    print(f"[attack] {message}", file=sys.stderr, flush=True)


class Stop(Exception):
    """SIGTERM or SIGHUP asked the bench to stop."""


def on_signal(signum: int, frame) -> None:
    raise Stop(signal.Signals(signum).name)


# --- The site ------------------------------------------------------------------------------


class Site:
    """The checkout at path served on a free port against redis_url, as run-site does."""

    def __init__(self, path: Path, redis_url: str) -> None:
        self.path = path
        self.python = path / ".venv" / "bin" / "python"
        if not self.python.exists():
            raise SystemExit(f"{self.python} is missing: run scripts/run-tests --co -q there")
        self.media_root = tempfile.mkdtemp(prefix="retwis-attack-bench-")
        self.port = quiet_port()
        self.env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "PORT": str(self.port),
            "STREAMING_PORT": str(self.port + 1),
            "ALLOWED_HOSTS": LOOPBACK,
            "SITE_URL": f"http://{LOOPBACK}:{self.port}",
            "MEDIA_ROOT": self.media_root,
        }
        for name in ("DEBUG", "DJANGO_SETTINGS_MODULE", "PYTHONPATH", "VIRTUAL_ENV"):
            self.env.pop(name, None)
        self.process: subprocess.Popen | None = None
        self.log = VAR / "attack-site.log"

    def commit(self) -> str:
        """Return the checkout's short commit, saying so when its files have changes."""
        done = subprocess.run(
            ["git", "-C", str(self.path), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        dirty = subprocess.run(
            ["git", "-C", str(self.path), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        return done.stdout.strip() + (" (with changes)" if dirty.stdout.strip() else "")

    def seed(self) -> None:
        say(f"seeding {' '.join(SEED[1:])}")
        subprocess.run(
            [str(self.python), "manage.py", *SEED], cwd=self.path,
            env={**self.env, "DEBUG": "true"}, check=True, capture_output=True,
        )  # fmt: skip

    def start(self) -> None:
        """Start scripts/launch.py --no-seed (its own session) and wait for /healthz."""
        say(f"serving {self.path} on port {self.port}")
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                [str(self.python), "scripts/launch.py", "--no-seed"], cwd=self.path,
                env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            if self.healthy(2):
                return
            time.sleep(0.2)
        raise SystemExit(f"the site did not start:\n{self.log.read_text()[-3000:]}")

    def healthy(self, timeout: float) -> bool:
        """Return whether GET /healthz answered 200 within timeout seconds."""
        try:
            conn = http.client.HTTPConnection(LOOPBACK, self.port, timeout=timeout)
            conn.request("GET", "/healthz")
            ok = conn.getresponse().status == 200
            conn.close()
            return ok
        except OSError:
            return False

    def settle(self, most: float = 60) -> None:
        """Wait (at most `most` seconds) until /healthz answers within 0.2 s three times
        running: the last phase's work has left the workers."""
        deadline, running = time.monotonic() + most, 0
        while running < 3 and time.monotonic() < deadline:
            started = time.monotonic()
            running = running + 1 if self.healthy(5) and time.monotonic() - started < 0.2 else 0
            time.sleep(0.3)

    def check(self) -> None:
        """Exit with the log's end if the site has stopped (launch.py ends it when one of
        its servers ends)."""
        if self.process is None or self.process.poll() is not None:
            raise SystemExit(f"the site stopped:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        """SIGTERM launch.py (it stops its servers); SIGKILL its group if it hangs."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.media_root, ignore_errors=True)


# --- The people ----------------------------------------------------------------------------


@dataclass(frozen=True)
class People:
    """Who reads (demo), whose profile is read, and the accounts that attack, in order."""

    reader: str
    profile: str
    attackers: list[str]


def people(redis_url: str, wanted: int) -> People:
    """Pick them from the seeded data: demo, the first account demo follows, and the
    wanted next accounts by id."""
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    ids = {str(name): int(uid) for name, uid in r.hgetall(keys.users()).items()}
    demo = ids["demo"]
    followed = int(str(r.zrange(keys.following(demo), 0, 0)[0]))
    by_id = {uid: name for name, uid in ids.items()}
    others = [by_id[uid] for uid in sorted(by_id) if uid not in (demo, followed)]
    r.close()
    return People("demo", by_id[followed], others[:wanted])


def pictures(bomb: bool) -> tuple[bytes, str]:
    """Return the attack's picture and its file name, made once into var/bench/ and
    checked: Pillow reads 6,300 x 6,300 (16-bit RGB PNG, or a JPEG under 1 KB)."""
    if bomb:
        data = cached(VAR / f"attack-bomb-{SIDE}.jpg", jpeg_bomb)
        name = "bomb.jpg"
    else:
        path = VAR / f"attack-{SIDE}-16bit.png"
        if not path.exists():
            say("making the 16-bit PNG (once)")
        data = cached(path, png16)
        name = "huge.png"
        if data[24:26] != b"\x10\x02":  # IHDR's bit depth and colour type
            raise SystemExit("the cached PNG is not 16-bit RGB: delete it")
    with Image.open(io.BytesIO(data)) as image:
        if image.size != (SIDE, SIDE):
            raise SystemExit(f"the picture says {image.size}, not {SIDE} x {SIDE}")
    return data, name


# --- A phase -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Phase:
    """One phase's figures (milliseconds; over_1s a share)."""

    attackers: int
    page_requests: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    over_1s: float
    page_failures: int
    per_page_p50_ms: dict[str, float]
    attack_requests: int
    attack_answers: dict[str, int]
    attack_p50_ms: float
    load_average: float


def page_paths(profile: str) -> dict[str, str]:
    """Return the pages the reader fetches in turn: name -> path."""
    return {"home": "/", "profile": f"/u/{profile}/", "timeline": "/timeline/"}


def run_phase(site: Site, attackers: list, readers: list[Session], args) -> Phase:
    """Run attackers and the page readers together; return the phase's figures."""
    pages = page_paths(args.profile)
    stop = threading.Event()
    for reader in readers if args.keep_alive else ():  # connected before the attack
        reader.request("GET", "/healthz")
    attack_deadline = time.monotonic() + args.warmup + args.seconds + TIMEOUT_SLACK
    attack_threads = [
        threading.Thread(target=a.run, args=(stop, attack_deadline, ATTACK_MOST), daemon=True)
        for a in attackers
    ]
    for thread in attack_threads:
        thread.start()
    if attackers:
        time.sleep(args.warmup)  # the attack under way before the pages are timed
    hits: list[list[Hit]] = [[] for _ in readers]
    page_deadline = time.monotonic() + args.seconds

    def read(n: int) -> None:
        hits[n] = read_pages(readers[n], pages, page_deadline, PAGE_MOST, args.keep_alive, n)

    page_threads = [
        threading.Thread(target=read, args=(n,), daemon=True) for n in range(len(readers))
    ]
    for thread in page_threads:
        thread.start()
    time.sleep(max(0.0, page_deadline - time.monotonic()))
    load = os.getloadavg()[0]
    stop.set()  # a slow body lets go now, so the pages waiting behind it are answered
    for thread in page_threads + attack_threads:
        thread.join(timeout=args.seconds + TIMEOUT_SLACK)
    every = [hit for one in hits for hit in one]
    times = [hit.seconds for hit in every]
    answers: Counter = Counter()
    attack_times: list[float] = []
    for attacker in attackers:
        answers.update(attacker.tally.answers)
        attack_times.extend(attacker.tally.seconds)
    return Phase(
        attackers=len(attackers),
        page_requests=len(every),
        p50_ms=round(percentile(times, 50), 1),
        p90_ms=round(percentile(times, 90), 1),
        p99_ms=round(percentile(times, 99), 1),
        over_1s=round(sum(1 for t in times if t > 1) / len(times), 4),
        page_failures=sum(1 for hit in every if hit.status != 200),
        per_page_p50_ms={
            name: round(percentile(seen, 50), 1)
            for name in pages
            if (seen := [h.seconds for h in every if h.page == name])
        },
        attack_requests=len(attack_times),
        attack_answers=dict(sorted(answers.items())),
        attack_p50_ms=round(percentile(attack_times, 50), 1) if attack_times else 0.0,
        load_average=round(load, 2),
    )


def make_attackers(count: int, accounts: list[str], picture: bytes, name: str, args) -> list:
    """Return count attackers of the chosen kind, logged in with accounts (popped)."""
    if args.slow_body:
        return [SlowBodyAttacker(args.port) for _ in range(count)]
    chosen = [accounts.pop(0) for _ in range(count)]
    tokens = api_tokens(args.port, chosen) if args.api and chosen else {}
    made = []
    for username in chosen:
        session = Session(args.port, args.seconds + TIMEOUT_SLACK)
        token = session.login(username)
        made.append(PictureAttacker(session, token, picture, name, tokens.get(username)))
    return made


# --- The report ----------------------------------------------------------------------------


def print_table(report: dict) -> None:
    print(
        f"Site `{report['site']}` at {report['commit']}; attack: {report['attack']}; "
        f"{report['connections']} page connections"
        f"{' (keep-alive)' if report['keep_alive'] else ' (a new one each request)'}, "
        f"{report['seconds']:g} s a phase; {report['cores']} cores."
    )
    print()
    print(
        "| attackers | page requests | p50 ms | p90 ms | p99 ms | > 1 s | failed "
        "| attack requests | their answers | attack p50 ms | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for phase in report["phases"]:
        answers = ", ".join(f"{k}: {v}" for k, v in phase["attack_answers"].items()) or "-"
        print(
            f"| {phase['attackers']} | {phase['page_requests']:,} | {phase['p50_ms']:,.0f} "
            f"| {phase['p90_ms']:,.0f} | {phase['p99_ms']:,.0f} | {phase['over_1s']:.0%} "
            f"| {phase['page_failures']} | {phase['attack_requests']} | {answers} "
            f"| {phase['attack_p50_ms']:,.0f} | {phase['load_average']:.1f} |"
        )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument("--seconds", type=float, default=20, help="pages timed a phase")
    parser.add_argument("--warmup", type=float, default=3, help="attack before timing")
    parser.add_argument("--attackers", default="0,1,2", help="attacking accounts a phase")
    parser.add_argument("--connections", type=int, default=4, help="page connections")
    parser.add_argument(
        "--keep-alive", action="store_true", help="page connections kept, not one a request"
    )
    parser.add_argument("--api", action="store_true", help="also POST /api/v1/media")
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--bomb", action="store_true", help="the 693-byte JPEG, not the PNGs")
    kind.add_argument("--slow-body", type=int, default=0, metavar="N", help="phases 0 and N")
    parser.add_argument("--json", action="store_true", help="print JSON, not markdown")
    args = parser.parse_args()
    args.site = args.site.resolve()
    args.counts = (
        [0, args.slow_body] if args.slow_body else [int(n) for n in args.attackers.split(",")]
    )
    if min(args.counts) < 0 or args.seconds <= 0 or args.connections < 1:
        parser.error("counts, --seconds and --connections must be positive")
    return args


def main() -> None:
    args = parse_args()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    VAR.mkdir(parents=True, exist_ok=True)
    picture, name = (b"", "") if args.slow_body else pictures(args.bomb)
    server = RedisServer().start()
    site: Site | None = None
    try:
        site = Site(args.site, server.url)
        args.port = site.port
        site.seed()
        who = people(server.url, 0 if args.slow_body else sum(args.counts))
        args.profile = who.profile
        site.start()
        reader = Session(site.port, args.seconds + TIMEOUT_SLACK)
        try:
            reader.login(who.reader)
        except OSError:
            site.check()
            raise
        readers = [reader.copy() for _ in range(args.connections)]
        reader.close()
        for warm in readers:  # the site's caches, each worker's (and a keep-alive each)
            read_pages(warm, page_paths(who.profile), time.monotonic() + 1, 100, True)
        phases = []
        accounts = list(who.attackers)
        for count in args.counts:
            site.settle()
            attackers = make_attackers(count, accounts, picture, name, args)
            say(f"{count} attacker(s), {args.seconds:g} s of pages")
            phases.append(asdict(run_phase(site, attackers, readers, args)))
            site.check()
        attack = (
            f"{args.slow_body} slow POST /login/ bodies, 1 byte/s" if args.slow_body
            else f"composer, 4 x {'693-byte JPEG bomb' if args.bomb else '16-bit PNG'} "
            f"({len(picture):,} B, {SIDE} x {SIDE}), status too long"
            + ("; POST /api/v1/media" if args.api else "")
        )  # fmt: skip
        report = {
            "site": str(args.site), "commit": site.commit(), "attack": attack,
            "connections": args.connections, "keep_alive": args.keep_alive,
            "seconds": args.seconds, "cores": os.cpu_count(), "phases": phases,
        }  # fmt: skip
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print_table(report)
    except Stop as why:
        say(f"{why}: stopping")
    finally:
        if site is not None:
            site.stop()
        server.stop()


if __name__ == "__main__":
    main()
