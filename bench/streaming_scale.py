"""The streaming API at scale (issue 28, part 4; figures in docs/benchmarks.md).

    .venv/bin/python bench/streaming_scale.py [--listeners 10000] [--clients 2]
        [--posts 3] [--rounds 3] [--wrk-seconds 5] [--skip e]

1. Starts a redis-server of its own (a free port, never 6379), seeds it with `manage.py seed`
   (--listeners + 10 accounts, a few posts), then with pipelines: author `A` followed by every
   listener, author `B` followed by them and by enough made-up ids to reach --celebrity
   followers (100,000), and a client API token per listener. The fan-out-on-read threshold is
   set to 50,000 for every process here, so A (10,000 followers) is fanned out on write and B
   is an author above the threshold (keys.celebrities), whose followers are never listed.
2. Starts the streaming app as scripts/launch.py does (Granian, one ASGI worker; the
   per-address limit raised, every client being 127.0.0.1), raising the fd limit
   (resource.setrlimit) for itself and its children.
3. (a) --clients processes (asyncio, raw sockets) open --listeners server-sent-event
   connections to /api/v1/streaming/user, one per listener's token; reports the streaming
   process's RSS (its process tree, VmRSS) once all are open.
   (b) A posts --posts times (through the repository, in this process); each listener notes
   when the post's `update` arrives: publish -> receive latency (p50, p99, max) and how many
   of the listeners received it. (c) The same for B.
   (d) Starts a second streaming process and two web servers (launch.py's command lines);
   --small listeners on each streaming process; A posts through each web server's client API
   (POST /api/v1/statuses): every listener on both processes must receive both posts.
   (e) wrk (bench/http_bench.py's) on web server 1's home and timeline pages, in --rounds
   interleaved rounds with the listeners connected and with them gone (A posts every
   --post-every seconds in both): the ratio of requests per second, with / without.
4. Prints a markdown summary; stops everything it started (also on Ctrl-C).

The machine is shared: figures are this run's, the ratio in (e) from interleaved rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import multiprocessing as mp
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from multiprocessing.connection import Connection as Pipe
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from http_bench import VAR, Page, parse_wrk, wrk  # noqa: E402  (bench/ is on the path)

sys.path.insert(0, str(ROOT / "scripts"))
from launch import server_argv, streaming_argv  # noqa: E402  (scripts/launch.py)

from tests.redis_server import RedisServer, free_port  # noqa: E402

THRESHOLD = "50000"  # RETWIS_FANOUT_READ_THRESHOLD for every process of the bench
ENV = {
    "DJANGO_SETTINGS_MODULE": "retwis_site.settings",
    "SECRET_KEY": "streaming-scale-bench",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "SITE_URL": "http://127.0.0.1",
    "DEBUG": "false",
    "RETWIS_FANOUT_READ_THRESHOLD": THRESHOLD,
    "RETWIS_STREAMING_PER_ADDRESS": "1000000",  # every client here is 127.0.0.1
    "RETWIS_STREAMING_BUFFER": "200",
    "WEB_CONCURRENCY": "1",
    "PYTHONUNBUFFERED": "1",
}
CLIENT_ID = "streaming-scale-bench"
UPDATE = re.compile(rb'event: update\ndata: \{"id": ?"(\d+)"')


def say(message: str) -> None:
    print(f"[streaming_scale] {message}", file=sys.stderr, flush=True)


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


# --- The data ------------------------------------------------------------------------------


def token_of(user_id: int) -> str:
    return f"bench-stream-token-{user_id:08d}"


def seed(url: str, listeners: int, celebrity: int) -> tuple[int, int, list[int]]:
    """Seed the accounts; return A's and B's ids and the listeners' ids."""
    env = {**os.environ, **ENV, "REDIS_URL": url}
    manage = [sys.executable, str(ROOT / "manage.py"), "seed", "--seed", "1"]
    subprocess.run(
        [*manage, "--users", str(listeners + 10), "--follows", "10", "--posts", "20"],
        cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    from social import keys

    r = redis.Redis.from_url(url)
    ids = sorted(int(i) for i in r.hvals(keys.users()))
    a, b, readers = ids[0], ids[1], ids[2 : 2 + listeners]
    now = int(time.time())
    pipe = r.pipeline(transaction=False)
    pipe.hset(
        keys.oauth_app(CLIENT_ID),
        mapping={"name": "bench", "website": "", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
                 "scopes": "read write follow", "secret": "0" * 64, "created": 0},
    )  # fmt: skip
    for n, reader in enumerate([a, *readers]):
        digest = hashlib.sha256(token_of(reader).encode()).hexdigest()
        pipe.hset(
            keys.oauth_token(digest),
            mapping={"client_id": CLIENT_ID, "user_id": reader,
                     "scopes": "read write follow", "created": 0},
        )  # fmt: skip
        pipe.zadd(keys.oauth_user_tokens(reader), {digest: 0})
        pipe.zadd(keys.following(reader), {str(a): now, str(b): now})
        if n % 1000 == 999:
            pipe.execute()
    pipe.zadd(keys.followers(a), {str(i): now for i in readers})
    pipe.zadd(keys.followers(b), {str(i): now for i in readers})
    made_up = celebrity - listeners  # followers that are never listed: ids past every user
    for start in range(0, made_up, 10_000):
        batch = range(10_000_000 + start, 10_000_000 + min(made_up, start + 10_000))
        pipe.zadd(keys.followers(b), {str(i): now for i in batch})
        pipe.execute()
    pipe.execute()
    return a, b, readers


# --- The listeners (client processes) --------------------------------------------------------


async def listen(port: int, token: str, ready: asyncio.Future) -> None:
    """One listener: open the stream, say so through ready, then note each update's
    arrival time (TIMES) until the connection ends."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            f"GET /api/v1/streaming/user HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(head[:80].decode(errors="replace"))
        ready.set_result(True)
        buffer = b""
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                return
            buffer += chunk
            if b"\n\n" not in buffer:
                continue
            at = time.time()
            done, _, buffer = buffer.rpartition(b"\n\n")
            for match in UPDATE.finditer(done):
                TIMES.setdefault(int(match.group(1)), []).append(at)
    finally:
        writer.close()


TIMES: dict[int, list[float]] = {}  # a client process's receive times by post id


def client_main(port: int, tokens: list[str], pipe: Pipe) -> None:
    """One client process: open every token's connection, then answer the parent's
    commands: "times" (the receive times by post id, then forgotten), "close", "open",
    "stop"."""
    raise_fd_limit()

    async def run() -> None:
        tasks: list[asyncio.Task] = []
        gate = asyncio.Semaphore(50)  # connections being opened at once

        async def one(token: str) -> bool:
            async with gate:
                for attempt in range(5):
                    ready = asyncio.get_running_loop().create_future()
                    task = asyncio.ensure_future(listen(port, token, ready))
                    done, _ = await asyncio.wait([ready, task], return_when=asyncio.FIRST_COMPLETED)
                    if ready in done:
                        tasks.append(task)
                        return True
                    with contextlib.suppress(BaseException):
                        task.result()
                    await asyncio.sleep(0.5 * (attempt + 1))
                return False

        async def open_all() -> int:
            tasks.clear()
            return sum(await asyncio.gather(*(one(t) for t in tokens)))

        loop = asyncio.get_running_loop()
        pipe.send(("opened", await open_all()))
        while True:
            command = await loop.run_in_executor(None, pipe.recv)
            if command == "times":
                pipe.send(("times", dict(TIMES)))
                TIMES.clear()
            elif command == "close":
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                pipe.send(("closed", 0))
            elif command == "open":
                pipe.send(("opened", await open_all()))
            elif command == "stop":
                return

    asyncio.run(run())


class Clients:
    """--clients processes holding the listeners' connections to one streaming port."""

    def __init__(self, port: int, tokens: list[str], processes: int) -> None:
        self.pipes: list[Pipe] = []
        self.procs: list[mp.Process] = []
        for i in range(processes):
            mine, theirs = mp.Pipe()
            proc = mp.Process(
                target=client_main, args=(port, tokens[i::processes], theirs), daemon=True
            )
            proc.start()
            self.pipes.append(mine)
            self.procs.append(proc)

    def ask(self, command: str | None) -> list:
        if command is not None:
            for pipe in self.pipes:
                pipe.send(command)
        return [pipe.recv()[1] for pipe in self.pipes]

    def times(self) -> dict[int, list[float]]:
        merged: dict[int, list[float]] = {}
        for found in self.ask("times"):
            for post_id, times in found.items():
                merged.setdefault(post_id, []).extend(times)
        return merged

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.ask("stop")
        for proc in self.procs:
            proc.join(5)
            if proc.is_alive():
                proc.kill()


# --- The servers ---------------------------------------------------------------------------


class Served:
    """A server process started with launch.py's command line, on a free port."""

    def __init__(self, argv_of, url: str, name: str) -> None:
        self.port = free_port()
        self.name = name
        env = {**os.environ, **ENV, "REDIS_URL": url}
        VAR.mkdir(parents=True, exist_ok=True)
        self.log = VAR / f"streaming-scale-{name.replace(' ', '')}.log"
        with open(self.log, "w") as log:  # the streaming process logs slow events there
            self.process = subprocess.Popen(
                argv_of(self.port), cwd=ROOT, env=env, start_new_session=True,
                stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        path = "/api/v1/streaming/health" if argv_of is streaming_argv else "/healthz"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            url = f"http://127.0.0.1:{self.port}{path}"
            with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2):
                return
            time.sleep(0.2)
        raise SystemExit(f"{name} did not start")

    def rss_mib(self) -> float:
        """VmRSS of the process and its descendants."""
        total, todo = 0, [self.process.pid]
        while todo:
            pid = todo.pop()
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                for task in Path(f"/proc/{pid}/task").iterdir():
                    children = (task / "children").read_text().split()
                    todo.extend(int(c) for c in children)
        return total / 1024

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)


# --- The measurements ------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def post_and_time(repo, clients: Clients, author: int, n: int, expected: int) -> dict:
    """Post n times as author; per post: receivers and publish -> receive latencies."""
    latencies: list[float] = []
    reached: list[int] = []
    for i in range(n):
        clients.times()  # forget what came before
        sent = time.time()
        post_id = repo.posts.create_post(author, f"scale test {i} {sent}")
        posted = time.time() - sent
        deadline = time.monotonic() + 30
        times: list[float] = []
        while len(times) < expected and time.monotonic() < deadline:
            time.sleep(0.5)
            times += clients.times().get(post_id, [])
        reached.append(len(times))
        latencies += [t - sent for t in times]
        say(f"  post {post_id}: {len(times)}/{expected} received (posting took {posted:.2f} s)")
        time.sleep(1)
    return {
        "reached": reached,
        "p50": percentile(latencies, 50) if latencies else float("nan"),
        "p99": percentile(latencies, 99) if latencies else float("nan"),
        "max": max(latencies) if latencies else float("nan"),
    }


def api_post(port: int, token: str, text: str) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/v1/statuses",
        data=json.dumps({"status": text}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return int(json.load(answer)["id"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--listeners", type=int, default=10_000)
    add("--celebrity", type=int, default=100_000, help="B's followers (100000)")
    add("--clients", type=int, default=2, help="client processes (2)")
    add("--posts", type=int, default=3, help="posts timed in (b) and (c) (3)")
    add("--small", type=int, default=50, help="listeners per streaming process in (d)")
    add("--rounds", type=int, default=3, help="interleaved rounds in (e) (3)")
    add("--wrk-seconds", type=float, default=5)
    add("--post-every", type=float, default=5, help="seconds between A's posts in (e) (5)")
    add("--skip", default="", help="parts to skip, e.g. de")
    args = parser.parse_args()
    for sig in (signal.SIGTERM, signal.SIGHUP):  # stop what was started, as on Ctrl-C
        signal.signal(sig, signal.default_int_handler)
    hard = raise_fd_limit()
    say(f"fd limit {hard}")
    for name, value in ENV.items():
        os.environ.setdefault(name, value)
    server = RedisServer().start()
    os.environ["REDIS_URL"] = server.url
    started: list[Served] = []
    clients = small = None
    report: list[str] = []
    try:
        say(f"seeding {args.listeners:,} listeners on {server.url}...")
        begun = time.monotonic()
        a, b, readers = seed(server.url, args.listeners, args.celebrity)
        say(f"seeded in {time.monotonic() - begun:.0f} s")
        import django

        django.setup()
        from social import keys
        from social.repository import get_repository

        repo = get_repository()
        streaming = Served(streaming_argv, server.url, "streaming 1")
        started.append(streaming)
        idle_rss = streaming.rss_mib()
        say(f"opening {args.listeners:,} connections from {args.clients} processes...")
        begun = time.monotonic()
        clients = Clients(streaming.port, [token_of(i) for i in readers], args.clients)
        opened = sum(clients.ask(None))
        took = time.monotonic() - begun
        time.sleep(2)
        rss = streaming.rss_mib()
        report.append(
            f"| (a) connections held by one streaming process | {opened:,} of "
            f"{args.listeners:,} (opened in {took:.0f} s) | RSS {rss:.0f} MiB "
            f"(idle {idle_rss:.0f} MiB) |"
        )
        say(report[-1])
        for label, author in (("(b) A, fan-out on write", a), ("(c) B, fan-out on read", b)):
            if label[1] in args.skip:
                continue
            found = repo.posts.create_post(author, "warm up")  # the process learns the author
            time.sleep(3)
            clients.times()
            say(f"{label}: posting {args.posts} times (warm-up post {found})...")
            got = post_and_time(repo, clients, author, args.posts, opened)
            followers = redis.Redis.from_url(server.url).zcard(keys.followers(author))
            report.append(
                f"| {label}: {followers:,} followers | reached {got['reached']} of {opened:,} "
                f"| p50 {got['p50']:.2f} s, "
                f"p99 {got['p99']:.2f} s, max {got['max']:.2f} s |"
            )
            say(report[-1])
        report.append(f"| RSS after (b), (c) | | {streaming.rss_mib():.0f} MiB |")
        web1 = Served(server_argv, server.url, "web 1")
        started.append(web1)
        if "d" not in args.skip:
            streaming2 = Served(streaming_argv, server.url, "streaming 2")
            web2 = Served(server_argv, server.url, "web 2")
            started += [streaming2, web2]
            small = Clients(streaming2.port, [token_of(i) for i in readers[: args.small]], 1)
            small.ask(None)
            clients.times()
            posted = [api_post(w.port, token_of(a), f"through {w.name}") for w in (web1, web2)]
            on1: dict[int, list[float]] = {}
            on2: dict[int, list[float]] = {}
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                time.sleep(0.5)
                for into, listening in ((on1, clients), (on2, small)):
                    for post_id, times in listening.times().items():
                        into.setdefault(post_id, []).extend(times)
                if all(len(on1.get(p, [])) >= opened for p in posted) and all(
                    len(on2.get(p, [])) >= args.small for p in posted
                ):
                    break
            report.append(
                "| (d) A posts through web 1 and web 2 | "
                + ", ".join(
                    f"post {p}: {len(on1.get(p, []))}/{opened} on streaming 1, "
                    f"{len(on2.get(p, []))}/{args.small} on streaming 2"
                    for p in posted
                )
                + " | |"
            )
            say(report[-1])
        if "e" not in args.skip:
            report += throughput(repo, a, web1, clients, opened, args)
            report.append(f"| RSS after (e) | | {streaming.rss_mib():.0f} MiB |")
    finally:
        for group in (clients, small):
            if group is not None:
                group.stop()
        for process in reversed(started):
            process.stop()
        server.stop()
    print("\n| what | result | figures |\n|---|---|---|")
    print("\n".join(report))


def throughput(repo, author: int, web: Served, clients: Clients, opened: int, args) -> list[str]:
    """(e): wrk on web's pages, interleaved rounds with and without the listeners."""
    from social import keys

    r = redis.Redis.from_url(os.environ["REDIS_URL"])
    demo = int(r.hget(keys.users(), "demo") or 0)
    secret = str(
        redis.Redis.from_url(os.environ["REDIS_URL"], decode_responses=True).hget(
            keys.user(demo), "auth"
        )
        or ""
    )
    pages = [Page("home", "home", "/", secret), Page("timeline", "timeline", "/timeline/", secret)]
    stop = threading.Event()

    def posting() -> None:  # the same writes in both arms: A posts every --post-every s
        while not stop.wait(args.post_every):
            with contextlib.suppress(Exception):
                repo.posts.create_post(author, "while the pages are loaded")

    VAR.mkdir(parents=True, exist_ok=True)  # wrk's log
    base = f"http://127.0.0.1:{web.port}"
    rps: dict[tuple[str, bool], list[float]] = {}
    writer = threading.Thread(target=posting, daemon=True)
    writer.start()
    try:
        connected = True
        for round_ in range(args.rounds * 2):
            for page in pages:
                wrk(base, page, 20, 1, 2)
                load = parse_wrk(wrk(base, page, 20, args.wrk_seconds, 2))
                rps.setdefault((page.name, connected), []).append(load.requests_per_s)
                rate = load.requests_per_s
                say(f"round {round_}: {page.name}, listeners {connected}: {rate:.0f}/s")
            if round_ == args.rounds * 2 - 1:
                break
            if connected:
                clients.ask("close")
            else:
                clients.ask("open")
            connected = not connected
    finally:
        stop.set()
        writer.join(5)
    rows = []
    for page in pages:
        with_ = statistics.median(rps[page.name, True])
        without = statistics.median(rps[page.name, False])
        rows.append(
            f"| (e) {page.name} page, wrk -c20, {args.rounds} rounds each way | with "
            f"{opened:,} listeners {with_:.0f} req/s, without {without:.0f} req/s | "
            f"ratio {with_ / without:.3f} |"
        )
        say(rows[-1])
    return rows


if __name__ == "__main__":
    main()
