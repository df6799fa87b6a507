"""Deliveries: signed activities POSTed to other servers' inboxes, a second per worker core,
and a post to 1,000 remote followers on 100 servers until every server has it.

Usage (from the repository root):  .venv/bin/python bench/deliver_bench.py
    [--deliveries 3000] [--threads 1] [--followers 1000] [--servers 100] [--body 2000]

1. Starts a redis-server of its own on a free port (never 6379; no persistence), and an
   inbox server of its own in a separate process (Python's ThreadingHTTPServer, HTTP/1.1
   keep-alive, 202 to every POST, counting them): a loopback peer, so its CPU is not ours.
   Every peer name (peer0.test, peer1.test...) is routed to it by FEDERATION_HOSTS, as two
   local instances are (plain http and 127.0.0.0/8 allowed).
2. Rate: queues `--deliveries` distinct Likes (about `--body` bytes each, a local account
   signing) to inboxes on 10 servers, then runs a worker (social.work.Worker) of
   `--threads` threads on the deliver queue in this process until all are done. Each is
   what a real one is: the job taken from the stream, the domain's lease, the key, the
   draft-cavage signature (RSA-2048), the POST over a kept connection, the answer read,
   the domain's success recorded, the job acknowledged. Reported: deliveries per second
   of wall time and per CPU-second of this process (time.process_time: every thread), which
   is deliveries a second per worker core, and the connections the peer accepted.
3. Fan-out: `--followers` remote accounts on `--servers` servers (each with a shared inbox)
   follow one local account; it posts (outgoing.posted: one job, as the page queues it) and
   a worker with the deliver queue's usual 8 threads runs the fan-out and its deliveries.
   The author's key pair is made first (its followers fetched its actor to follow it) and
   one Note built (a worker process that has run before): one-off costs left out.
   Reported: the time from the post to the last delivery done, the deliveries (one per
   server), and what the peer received.
Stops the worker, the peer and Redis at the end; prints markdown rows.
"""

from __future__ import annotations

import argparse
import http.client
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

from tests.redis_server import RedisServer, free_port  # noqa: E402

SITE = "https://bench.example"  # never contacted: only our ids are built from it
RATE_SERVERS = 10

PEER = textwrap.dedent(
    """
    import signal, sys, threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    count = 0
    lock = threading.Lock()

    class Inbox(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            global count
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                count += 1
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self):  # POSTs received, connections accepted
            body = f"{count} {Server.accepted}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256
        accepted = 0

        def get_request(self):
            got = super().get_request()
            Server.accepted += 1
            return got

    server = Server(("127.0.0.1", int(sys.argv[1])), Inbox)
    signal.signal(signal.SIGTERM, lambda *a: (print(count, Server.accepted, flush=True),
                                              sys.exit(0)))
    server.serve_forever()
    """
)


def peer_counts(port: int) -> tuple[int, int]:
    """Return the POSTs the peer received and the connections it accepted so far."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/")
    posts, accepted = connection.getresponse().read().split()
    connection.close()
    return int(posts), int(accepted) - 1  # this question's own connection left out


def say(message: str) -> None:
    print(f"[deliver_bench] {message}", file=sys.stderr, flush=True)


def setup(redis_url: str, peer_port: int, servers: int) -> None:
    hosts = ",".join(f"peer{i}.test=127.0.0.1:{peer_port}" for i in range(servers))
    os.environ.update(
        DJANGO_SETTINGS_MODULE="retwis_site.settings", REDIS_URL=redis_url,
        SECRET_KEY="deliver-bench-" + "x" * 40, ALLOWED_HOSTS="bench.example",
        SITE_URL=SITE, DEBUG="false", FEDERATION_HOSTS=hosts,
        FEDERATION_ALLOW_HTTP="true", FEDERATION_ALLOW_ADDRESSES="127.0.0.0/8",
    )  # fmt: skip
    import django

    django.setup()


def run_until(expected_done: int, threads: int, timeout: float = 600.0) -> tuple[float, float]:
    """Run a worker of `threads` threads on the deliver queue until `expected_done` jobs
    are done; return (wall seconds, CPU seconds of this process) from its start."""
    from social.repository import get_repository
    from social.work import Worker

    jobs = get_repository().jobs
    worker = Worker({"deliver": threads}, block_ms=200)
    wall, cpu = time.perf_counter(), time.process_time()
    worker.start()
    deadline = time.monotonic() + timeout
    try:
        while jobs.stats(["deliver"])[0].done < expected_done:
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out: {jobs.stats(['deliver'])[0]}")
            time.sleep(0.02)
    finally:
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        worker.stop()
        worker.join(30)
    return wall, cpu


def rate(args: argparse.Namespace) -> None:
    from social.federation import deliver
    from social.repository import get_repository
    from social.work_handlers.deliver import signing_keys

    repo = get_repository()
    author = repo.users.create_user("author", "!")
    signing_keys.of(str(author.id))  # its key made (once in an account's life) and known
    pad = "x" * max(0, args.body - 300)
    for number in range(args.deliveries):
        like = {
            "@context": "https://www.w3.org/ns/activitystreams",
            "id": f"{SITE}/ap/users/{author.id}#likes/{number}",
            "type": "Like",
            "actor": f"{SITE}/ap/users/{author.id}",
            "object": f"http://peer{number % RATE_SERVERS}.test/notes/{number}",
            "content": pad,
        }
        inbox = f"http://peer{number % RATE_SERVERS}.test/inbox"
        deliver.deliver(like, signer=author.id, inboxes=[inbox])
    say(f"{args.deliveries} deliveries queued; running {args.threads} thread(s)")
    before = peer_counts(args.port)
    wall, cpu = run_until(args.deliveries, args.threads)
    after = peer_counts(args.port)
    stats = repo.jobs.stats(["deliver"])[0]
    assert stats.dead == 0 and stats.retried == 0, stats
    assert after[0] - before[0] == args.deliveries, (before, after)
    say(f"{after[0] - before[0]} POSTs over {after[1] - before[1] - 1} new connections")
    print(f"| deliveries ({args.threads} thread{'s' * (args.threads > 1)}, {RATE_SERVERS} "
          f"servers, ~{args.body} B) | {args.deliveries:,} | {wall:.2f} s | "
          f"{args.deliveries / wall:,.0f}/s | {args.deliveries / cpu:,.0f} per CPU-second "
          f"({cpu / args.deliveries * 1e3:.2f} ms each) |")  # fmt: skip


def fan_out(args: argparse.Namespace) -> None:
    from social.federation import outgoing
    from social.federation.actor_documents import ActorDocument
    from social.federation.signatures import generate_key_pair
    from social.repository import get_repository

    repo = get_repository()
    done_before = repo.jobs.stats(["deliver"])[0].done
    star = repo.users.create_user("star", "!")
    public = generate_key_pair().public_pem
    for number in range(args.followers):
        host = f"peer{number % args.servers}.test"
        uri = f"http://{host}/users/fan{number}"
        actor = repo.remote_actors.upsert(
            ActorDocument(
                uri=uri,
                name=f"fan{number}",
                domain=host,
                actor_type="Person",
                inbox=f"{uri}/inbox",
                key_id=f"{uri}#main-key",
                public_key=public,
                shared_inbox=f"http://{host}/inbox",
            )  # fmt: skip
        )
        repo.graph.follow(actor.id, star.id)
    # As on a running site: the account's key pair exists (its followers fetched its actor
    # to follow it), and the worker process has written a Note before (its templates).
    repo.federation_keys.for_account(star.id)
    warm = repo.posts.create_post(star.id, "warming up")
    from social.work_handlers.fanout import Act
    from social.work_handlers.fanout import create as build_create

    build_create(Act(repo, star, warm, 0))
    say(f"{args.followers} remote followers on {args.servers} servers; posting")
    before = peer_counts(args.port)
    started = time.perf_counter()
    post = repo.posts.create_post(star.id, "hello, fediverse")
    outgoing.posted(star.id, post)  # what the page does: one job
    _, cpu = run_until(done_before + 1 + args.servers, threads=8)
    wall = time.perf_counter() - started  # from the post, its writes included
    stats = repo.jobs.stats(["deliver"])[0]
    assert stats.dead == 0, stats
    after = peer_counts(args.port)
    assert after[0] - before[0] == args.servers, (before, after)
    print(f"| a post to {args.followers:,} remote followers on {args.servers} servers "
          f"(8 threads) | {args.servers} deliveries | {wall:.2f} s until all delivered | "
          f"CPU {cpu:.2f} s |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deliveries", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--followers", type=int, default=1000)
    parser.add_argument("--servers", type=int, default=100)
    parser.add_argument("--body", type=int, default=2000, help="bytes of each activity")
    args = parser.parse_args()
    redis_server = RedisServer().start()
    port = args.port = free_port()
    peer = subprocess.Popen(
        [sys.executable, "-c", PEER, str(port)], stdout=subprocess.PIPE, text=True
    )
    try:
        time.sleep(0.5)
        setup(redis_server.url, port, max(args.servers, RATE_SERVERS))
        print("| run | jobs | wall | rate | CPU |\n|---|---|---|---|---|")
        rate(args)
        fan_out(args)
    finally:
        peer.terminate()
        received, connections = (peer.communicate(timeout=10)[0].split() + ["?", "?"])[:2]
        say(f"the peer received {received} POSTs over {connections} connections")
        redis_server.stop()


if __name__ == "__main__":
    main()
