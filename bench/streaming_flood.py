"""Memory of the streaming process while WebSockets each send one huge message (issue 33).

    .venv/bin/python bench/streaming_flood.py [--sockets 50] [--mib 15] [--server uvicorn]

Starts a redis-server of its own (a free port, never 6379), one account with a token, and
the streaming process as scripts/launch.py starts it (--server granian: the command line
it had before, for comparison), with the per-address and per-account limits raised so
every socket is admitted. Then --sockets WebSockets each send one --mib MiB text message
at once; prints the process's RSS (VmRSS) before, its peak while they send (sampled every
50 ms until every socket is closed or answered, 60 s at most) and after. Stops everything.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from launch import streaming_argv  # noqa: E402

from tests.redis_server import RedisServer, free_port  # noqa: E402


def granian_argv(port: int) -> list[str]:
    """The streaming command line before issue 33 (Granian, no message limit)."""
    return [
        sys.executable, "-m", "granian", "--interface", "asgi", "--working-dir", str(ROOT),
        "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
        "--runtime-threads", "1", "--runtime-mode", "st", "--log-level", "warning",
        "social.streaming.asgi:application",
    ]  # fmt: skip


def rss_mib(pid: int) -> float:
    """VmRSS of pid and its children (Granian runs its worker as a child), in MiB."""
    total = 0
    pids = [pid, *map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split())]
    for each in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


async def flood(url: str, token: str, sockets: int, mib: int, pid: int) -> tuple[float, int]:
    import websockets

    opened = [
        await websockets.connect(
            url, additional_headers={"Authorization": f"Bearer {token}"}, max_size=None
        )
        for _ in range(sockets)
    ]
    message = "x" * (mib * 1024 * 1024)

    async def send(ws) -> None:
        with contextlib.suppress(Exception):
            await ws.send(message)
            await asyncio.wait_for(ws.recv(), 60)

    sending = asyncio.gather(*(send(ws) for ws in opened))
    peak, deadline = 0.0, time.monotonic() + 60
    while not sending.done() and time.monotonic() < deadline:
        peak = max(peak, rss_mib(pid))
        await asyncio.sleep(0.05)
    sending.cancel()
    closed = sum(ws.close_code is not None for ws in opened)
    for ws in opened:
        with contextlib.suppress(Exception):
            await ws.close()
    return peak, closed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sockets", type=int, default=50)
    parser.add_argument("--mib", type=int, default=15)
    parser.add_argument("--server", choices=("uvicorn", "granian"), default="uvicorn")
    args = parser.parse_args()
    redis_server = RedisServer().start()
    env = {
        **os.environ, "REDIS_URL": redis_server.url, "DEBUG": "false",
        "SECRET_KEY": "flood-" + "x" * 50, "ALLOWED_HOSTS": "127.0.0.1",
        "SITE_URL": "http://127.0.0.1", "RETWIS_STREAMING_PER_ADDRESS": "1000",
        "RETWIS_STREAMING_PER_ACCOUNT": "1000", "DJANGO_SETTINGS_MODULE": "retwis_site.settings",
    }  # fmt: skip
    os.environ.update(env)
    import django

    django.setup()
    from social.repository import get_repository
    from tests.api import token_for
    from tests.conftest import make_user

    repo = get_repository()
    token = token_for(repo, make_user(repo, "flood"), "read")
    port = free_port()
    argv = streaming_argv(port) if args.server == "uvicorn" else granian_argv(port)
    server = subprocess.Popen(argv, cwd=ROOT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                import urllib.request

                urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/v1/streaming/health", timeout=1
                )
                break
            time.sleep(0.1)
        before = rss_mib(server.pid)
        url = f"ws://127.0.0.1:{port}/api/v1/streaming"
        peak, closed = asyncio.run(flood(url, token, args.sockets, args.mib, server.pid))
        time.sleep(1)
        after = rss_mib(server.pid)
        print(
            f"{args.server}: {args.sockets} sockets x {args.mib} MiB: RSS {before:.0f} MiB "
            f"before, peak {peak:.0f} MiB, {after:.0f} MiB after; {closed} closed by the server"
        )
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
        redis_server.stop()


if __name__ == "__main__":
    main()
