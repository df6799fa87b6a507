"""The inbox's accept path: signed activities accepted (202, queued) a second per web core.

Usage (from the repository root):  .venv/bin/python bench/inbox_bench.py [--requests 5000]
    [--http] [--clients 4] [--body 2000]

1. Starts a redis-server of its own on a free port (never 6379; no persistence).
2. Signs `--requests` distinct Like activities (each about `--body` bytes, as a Mastodon
   activity with its @context is) as Mastodon signs them (draft-cavage rsa-sha256, Digest),
   before any timing: signing is the sender's cost, not ours.
3. In-process (the default): hands each to the site's WSGI application (retwis_site.wsgi:
   the bounded bodies, every middleware, the view, the job's XADD) in this one thread,
   timed by the wall clock and by this process's CPU time; a thread is at most one core,
   so requests per CPU-second is requests a second per web core.
   With `--http`: serves the site with Granian as scripts/run-site does but with ONE web
   worker (WEB_WORKERS=1), and `--clients` threads POST over keep-alive connections; the
   figure per core is requests per CPU-second of the server's processes (their utime +
   stime from /proc), since the clients share the machine's cores.
4. Checks every answer was 202 and the inbox queue holds every job; prints a markdown
   row. Stops the server and Redis at the end.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

from tests.redis_server import RedisServer, free_port  # noqa: E402

ACTOR = "https://remote.test/users/zed"
KEY_ID = f"{ACTOR}#main-key"
READY = "jobs:{inbox}:ready"


def say(message: str) -> None:
    print(f"[inbox_bench] {message}", file=sys.stderr, flush=True)


def activities(count: int, size: int, site: str) -> list[bytes]:
    """count distinct Likes of a local post, padded to about size bytes with a Mastodon-like
    @context (what a real one carries)."""
    context = ["https://www.w3.org/ns/activitystreams", {"toot": "http://joinmastodon.org/ns#"}]
    bodies = []
    for number in range(count):
        like = {
            "@context": context,
            "id": f"{ACTOR}#likes/{number}",
            "type": "Like",
            "actor": ACTOR,
            "object": f"{site}/ap/posts/1",
            "_misskey_reaction": "",
        }
        pad = max(0, size - len(json.dumps(like)))
        like["_misskey_reaction"] = "x" * pad
        bodies.append(json.dumps(like).encode())
    return bodies


def signed(bodies: list[bytes], url: str) -> list[tuple[bytes, dict[str, str]]]:
    from social.federation.signatures import generate_key_pair, sign_request

    pair = generate_key_pair()
    key = pair.private_pem
    return [(body, sign_request("POST", url, {}, body, KEY_ID, key)) for body in bodies]


def environ(body: bytes, headers: dict[str, str]) -> dict:
    """The WSGI environ Granian would hand over for this POST to /ap/inbox."""
    env = {
        "REQUEST_METHOD": "POST", "PATH_INFO": "/ap/inbox", "QUERY_STRING": "",
        "SERVER_NAME": "testserver", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1", "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr, "wsgi.version": (1, 0), "wsgi.multithread": False,
        "wsgi.multiprocess": True, "wsgi.run_once": False,
        "CONTENT_TYPE": "application/activity+json", "CONTENT_LENGTH": str(len(body)),
    }  # fmt: skip
    for name, value in headers.items():
        env["HTTP_" + name.upper().replace("-", "_")] = value
    return env


def in_process(args: argparse.Namespace, redis_url: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="retwis_site.settings", REDIS_URL=redis_url,
        SECRET_KEY="inbox-bench-" + "x" * 40, ALLOWED_HOSTS="testserver",
        SITE_URL="http://testserver", DEBUG="false",
    )  # fmt: skip
    from retwis_site.wsgi import application

    site = "http://testserver"
    requests = signed(activities(args.requests, args.body, site), f"{site}/ap/inbox")
    environs = [environ(body, headers) for body, headers in requests]
    statuses: list[str] = []

    def start_response(status: str, headers: list, exc_info: object = None) -> None:
        statuses.append(status)

    for env in environs[:50]:  # warm up: imports, the first connections (queued twice)
        again = {**env, "wsgi.input": io.BytesIO(env["wsgi.input"].getvalue())}
        b"".join(application(again, start_response))
    statuses.clear()
    wall, cpu = time.perf_counter(), time.process_time()
    for env in environs:
        b"".join(application(env, start_response))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    report(args, statuses, wall, cpu, redis_url, "in-process, one thread")


def server_cpu(root_pid: int) -> float:
    """Seconds of CPU used by root_pid and every process under it (utime + stime)."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        used[int(entry)] = (int(fields[11]) + int(fields[12])) / ticks
    total = 0.0
    for pid, seconds in used.items():
        walk = pid
        while walk > 1 and walk != root_pid:
            walk = parents.get(walk, 0)
        if walk == root_pid:
            total += seconds
    return total


def over_http(args: argparse.Namespace, redis_url: str) -> None:
    import launch

    port = free_port()
    site = f"http://127.0.0.1:{port}"
    env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "retwis_site.settings", "REDIS_URL": redis_url,
        "SECRET_KEY": "inbox-bench-" + "x" * 40, "ALLOWED_HOSTS": "127.0.0.1",
        "SITE_URL": site, "DEBUG": "false", "WEB_WORKERS": "1", "WEB_THREADS": "1",
    }  # fmt: skip
    for name in ("DJANGO_SETTINGS_MODULE", "SITE_URL", "SECRET_KEY", "REDIS_URL"):
        os.environ[name] = env[name]  # this process signs and imports settings too
    server = subprocess.Popen(
        launch.server_argv(port), cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        requests = signed(activities(args.requests, args.body, site), f"{site}/ap/inbox")
        wait_for(port)
        statuses: list[str] = []
        lock = threading.Lock()
        chunks = [requests[i :: args.clients] for i in range(args.clients)]

        def client(chunk: list[tuple[bytes, dict[str, str]]]) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for body, headers in chunk:
                sent = {**headers, "Content-Type": "application/activity+json"}
                conn.request("POST", "/ap/inbox", body, sent)
                answer = conn.getresponse()
                answer.read()
                with lock:
                    statuses.append(f"{answer.status} ")

        cpu = server_cpu(server.pid)
        wall = time.perf_counter()
        threads = [threading.Thread(target=client, args=(chunk,)) for chunk in chunks]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - wall
        cpu = server_cpu(server.pid) - cpu
        how = f"HTTP, Granian, 1 worker, {args.clients} clients"
        report(args, statuses, wall, cpu, redis_url, how)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def wait_for(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("the site did not answer /healthz")


def report(
    args: argparse.Namespace, statuses: list[str], wall: float, cpu: float, redis_url: str, how: str
) -> None:
    import redis

    accepted = sum(1 for status in statuses if status.startswith("202"))
    queued = redis.Redis.from_url(redis_url).xlen(READY)
    if accepted != args.requests:
        raise SystemExit(f"only {accepted} of {args.requests} accepted: {set(statuses)}")
    say(f"{accepted} accepted, {queued} jobs queued, {wall:.2f} s wall, {cpu:.2f} s CPU")
    print(f"| inbox accept path ({how}, {args.body} B activities) | {accepted} requests | "
          f"{accepted / wall:,.0f} accepted/s | **{accepted / cpu:,.0f} accepted per CPU-second** "
          f"({cpu / accepted * 1e6:,.0f} µs each) |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--body", type=int, default=2000, help="bytes of each activity")
    parser.add_argument("--http", action="store_true", help="over HTTP to one Granian worker")
    parser.add_argument("--clients", type=int, default=4, help="with --http: client threads")
    args = parser.parse_args()
    redis_server = RedisServer().start()
    try:
        (over_http if args.http else in_process)(args, redis_server.url)
    finally:
        redis_server.stop()


if __name__ == "__main__":
    main()
