"""Instructions per request of each page, counted by valgrind: the steady measure of a change.

    .venv/bin/python bench/instructions.py [--pages home,profile] [--requests 100]

wrk's requests per second on this machine spread 20-60 % between runs of the same code; an
instruction count does not (the same code gives the same count within about 0.1 %, whatever
else the machine is doing). For each page this starts a redis-server on a free port with the
data set of bench/http_bench.py (its dump in var/bench/, seeded there the first time), then
runs the WSGI application in a process under `valgrind --tool=callgrind` twice: 30 requests
to warm it, then 20 requests, and then 20 + --requests. The difference over --requests is the
page's cost per request in the web process: Django, the repository, redis-py and the
templates, without the HTTP server's and Redis's share. Needs `apt-get install valgrind`;
a page takes about a minute (two processes at a time, one per core).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from http_bench import (  # noqa: E402  (bench/ is on the path: this file's directory)
    BenchRedis,
    DataSet,
    Page,
    build_pages,
    ensure_data,
    lock_bench_dir,
    page_list,
    pick_personas,
    say,
)
from http_round_trips import setup_django  # noqa: E402

WARMUP = 30
BASE = 20
PAGES = "login,welcome,home,profile,permalink,timeline"


def serve(redis_url: str, path: str, headers: dict[str, str], requests: int) -> None:
    """In the child: call the WSGI application WARMUP + requests times for path."""
    setup_django(redis_url, "127.0.0.1")
    from retwis_site.wsgi import application

    path, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "HTTP_HOST": "127.0.0.1:8000",
        "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1", "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr, "HTTP_ACCEPT_ENCODING": "gzip",
        **{"HTTP_" + name.upper().replace("-", "_"): value for name, value in headers.items()},
    }  # fmt: skip

    def start_response(status: str, headers: list, exc_info=None) -> Callable[[bytes], object]:
        if not status.startswith("200"):
            raise SystemExit(f"{path}: {status}")
        return lambda data: None  # the application returns its body instead

    for _ in range(WARMUP + requests):
        b"".join(application({**environ, "wsgi.input": io.BytesIO(b"")}, start_response))


def count(redis_url: str, page: Page, requests: int) -> int:
    """Return the instructions callgrind counts for WARMUP + requests requests of page."""
    with tempfile.TemporaryDirectory() as tmp:
        child = json.dumps([redis_url, page.path, page.headers, requests])
        done = subprocess.run(
            [
                "valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
                sys.executable, __file__, "--child", child,
            ],
            cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"},
        )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{page.name} under valgrind failed:\n{done.stderr[-3000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=page_list, default=page_list(PAGES), help=PAGES)
    parser.add_argument("--requests", type=int, default=100, help="requests counted (100)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        serve(*json.loads(args.child))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: apt-get install valgrind")
    lock = lock_bench_dir()  # noqa: F841 - held for the life of the process
    data = DataSet(10_000, 500_000, 200_000, 1)
    server = BenchRedis(data.dump_name)
    try:
        server.start()
        ensure_data(server, data)
        pages = build_pages(pick_personas(server.client), args.pages)
        print("| page | instructions per request |")
        print("|---|---|")
        with ThreadPoolExecutor(2) as pool:
            for page in pages:
                say(f"{page.name}: {BASE} and {BASE + args.requests} requests under valgrind...")
                low, high = pool.map(
                    lambda n, page=page: count(server.url, page, n),
                    (BASE, BASE + args.requests),
                )
                per_request = (high - low) / args.requests
                print(f"| {page.label} | {per_request / 1e6:.2f} M |", flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
