"""Time a login on the served site, and the home page while logins run beside it.

Usage (from the repository root):  .venv/bin/python bench/login_bench.py [--logins 30]
    [--rate 20] [--seconds 20]

1. Starts a redis-server of its own on a free port (never the machine's Redis; no
   persistence) and seeds a small data set (`manage.py seed --users 200`): every seeded
   user's password is hashed once, with the first of PASSWORD_HASHERS.
2. Serves the site as `scripts/run-site --no-seed` does (scripts/launch.py: DEBUG off,
   Granian, one worker per core) on a free port.
3. Login alone: `--logins` sequential `POST /login/` as `demo` (the CSRF cookie and token
   fetched once beforehand), each timed from sending to the 302; the server's time is all
   of it but a loopback round trip. The first login is reported apart: it upgrades a hash
   made by an older hasher (PBKDF2, or the reference's plain text) to the first one.
4. Under load: `--rate` logins a second, each on a thread of its own, for `--seconds`,
   while one client fetches the logged-in home page back to back; reports the home page's
   p50/p99 and the logins' p50/p99, and how many logins finished.
Prints a markdown table; progress on stderr. Stops the site and Redis at the end.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from social import keys  # noqa: E402  (key names only: no Django needed)
from tests.redis_server import RedisServer, free_port  # noqa: E402

DEMO_USERNAME, DEMO_PASSWORD = "demo", "hello-retwis-42"  # social/demo.py's persona
TOKEN_RE = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')


def say(message: str) -> None:
    """Print progress on stderr."""
    print(f"[login_bench] {message}", file=sys.stderr, flush=True)


class Client:
    """One browser: its own connection and CSRF cookie and token."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        status, headers, body = self.request("GET", "/login/")
        cookie = next(v for k, v in headers if k.lower() == "set-cookie" and "csrftoken" in v)
        self.csrf_cookie = cookie.split(";", 1)[0]
        found = TOKEN_RE.search(body)
        assert status == 200 and found, f"GET /login/ answered {status}"
        self.token = found.group(1).decode()

    def request(
        self, method: str, path: str, body: str = "", headers: dict[str, str] | None = None
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """Send one request on this client's connection; return status, headers, body."""
        self.conn.request(method, path, body=body or None, headers=headers or {})
        response = self.conn.getresponse()
        return response.status, response.getheaders(), response.read()

    def login(self) -> tuple[float, str]:
        """POST /login/ as demo; return the seconds it took and the new auth cookie."""
        form = urllib.parse.urlencode(
            {
                "username": DEMO_USERNAME,
                "password": DEMO_PASSWORD,
                "csrfmiddlewaretoken": self.token,
            }
        )
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": self.csrf_cookie,
            "Referer": f"http://127.0.0.1:{self.port}/login/",
        }
        started = time.perf_counter()
        status, answer, _ = self.request("POST", "/login/", form, headers)
        took = time.perf_counter() - started
        assert status == 302, f"POST /login/ answered {status}"
        auth = next(v for k, v in answer if k.lower() == "set-cookie" and v.startswith("auth="))
        return took, auth.split(";", 1)[0]


def percentile(values: list[float], p: float) -> float:
    """Return the p-th percentile (nearest rank) of values, in milliseconds."""
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def seed_small(redis_url: str) -> None:
    """Seed the Redis at redis_url with the small demo data set (200 users, fixed seed)."""
    say("seeding 200 users")
    subprocess.run(
        [sys.executable, "manage.py", "seed", "--users", "200", "--follows", "2000",
         "--posts", "3000", "--seed", "1"],
        cwd=ROOT, env={**os.environ, "REDIS_URL": redis_url, "DEBUG": "true"}, check=True,
        capture_output=True,
    )  # fmt: skip


def serve(redis_url: str, port: int, log: Path) -> subprocess.Popen:
    """Start scripts/launch.py (the production way) and wait for /healthz."""
    env = {**os.environ, "PORT": str(port), "REDIS_URL": redis_url, "ALLOWED_HOSTS": "127.0.0.1"}
    env["RETWIS_LIMIT_LOGIN_ATTEMPTS"] = "1000000/1m"  # every login here is from 127.0.0.1
    env.pop("DEBUG", None)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    with open(log, "wb") as out:
        site = subprocess.Popen(
            [sys.executable, "scripts/launch.py", "--no-seed"], cwd=ROOT, env=env,
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return site
        except OSError:
            time.sleep(0.2)
    site.terminate()
    raise SystemExit(f"the site did not start:\n{log.read_text()}")


def under_load(port: int, rate: float, seconds: float, auth: str) -> dict[str, float]:
    """Run rate logins a second for seconds while fetching the home page back to back."""
    logins: list[float] = []
    clients = [Client(port) for _ in range(int(rate * 3))]  # CSRF fetched before timing
    free = list(clients)
    lock = threading.Lock()

    def one_login() -> None:
        with lock:
            client = free.pop() if free else None
        if client is None:
            client = Client(port)
        took, _ = client.login()
        with lock:
            logins.append(took)
            free.append(client)

    home: list[float] = []
    stop = threading.Event()

    def read_home() -> None:
        conn = Client(port)
        while not stop.is_set():
            started = time.perf_counter()
            status, _, _ = conn.request("GET", "/", headers={"Cookie": auth})
            assert status == 200, f"GET / answered {status}"
            home.append(time.perf_counter() - started)

    reader = threading.Thread(target=read_home)
    reader.start()
    if not rate:  # the home page alone, for comparison
        time.sleep(seconds)
    threads = []
    started = time.perf_counter()
    for n in range(int(rate * seconds)):  # rate 0: none
        time.sleep(max(0.0, started + n / rate - time.perf_counter()))
        thread = threading.Thread(target=one_login)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    stop.set()
    reader.join()
    elapsed = time.perf_counter() - started
    return {
        "home_p50": percentile(home, 50),
        "home_p99": percentile(home, 99),
        "home_n": len(home),
        "login_p50": percentile(logins, 50) if logins else 0,
        "login_p99": percentile(logins, 99) if logins else 0,
        "logins": len(logins),
        "elapsed": elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logins", type=int, default=30, help="sequential logins timed")
    parser.add_argument("--rate", type=float, default=20, help="logins a second under load")
    parser.add_argument("--seconds", type=float, default=10, help="how long the load runs")
    args = parser.parse_args()
    log_dir = ROOT / "var" / "bench"
    log_dir.mkdir(parents=True, exist_ok=True)
    server = RedisServer().start("--save", "", "--appendonly", "no")
    site = None
    try:
        seed_small(server.url)
        r = redis.Redis.from_url(server.url, decode_responses=True)

        def hasher() -> str:
            return str(r.hget(keys.user(user_id), "password") or "").split("$", 1)[0]

        user_id = int(str(r.hget(keys.users(), DEMO_USERNAME) or 0))
        seeded = hasher()
        port = free_port()
        say(f"serving the site on port {port}")
        site = serve(server.url, port, log_dir / "login-site.log")
        client = Client(port)
        first, auth = client.login()
        upgraded = hasher()
        say(f"timing {args.logins} logins")
        times = [client.login()[0] for _ in range(args.logins)]
        say(f"{args.rate:g} logins a second for {args.seconds:g} s beside the home page")
        idle = under_load(port, 0, 10, auth)
        load = under_load(port, args.rate, args.seconds, auth)
        print("| seeded hash | after first login | first login | login p50 | login max |")
        print("|---|---|---|---|---|")
        print(
            f"| {seeded} | {upgraded} | {first * 1000:.0f} ms | "
            f"{statistics.median(times) * 1000:.0f} ms | {max(times) * 1000:.0f} ms |"
        )
        print()
        print(
            f"Home page alone for 10 s: p50 {idle['home_p50']:.0f} ms, "
            f"p99 {idle['home_p99']:.0f} ms ({idle['home_n']:.0f} requests)"
        )
        print()
        print(
            f"Under {args.rate:g} logins/s for {args.seconds:g} s "
            f"({load['logins']:.0f} logins done in {load['elapsed']:.1f} s): "
            f"home page p50 {load['home_p50']:.0f} ms, p99 {load['home_p99']:.0f} ms "
            f"({load['home_n']:.0f} requests); login p50 {load['login_p50']:.0f} ms, "
            f"p99 {load['login_p99']:.0f} ms"
        )
    finally:
        if site is not None:
            site.send_signal(signal.SIGTERM)
            site.wait(timeout=40)
        server.stop()


if __name__ == "__main__":
    main()
