"""The site and the PHP Retwis side by side: one Redis, one data set, alternating rounds.

Usage (from the repository root):
    .venv/bin/python bench/php_side_by_side.py --retwis /path/to/retwis [--rounds 5]
        [--duration 10] [--connections 50] [--php-workers 4]

--retwis is a checkout of antirez/retwis (its code is not ours: it is never committed here,
and the checkout itself is never changed). The bench:

1. Installs Debian's nginx and php-fpm (and php-redis if the checkout uses the phpredis
   extension; antirez/retwis bundles Predis, plain PHP) and wrk with apt-get when missing.
2. Starts the redis-server of bench/http_bench.py (the data set's dump in var/bench/,
   seeded the first time) and reads the same personas: demo's `auth` secret is the cookie
   both sites read (PHP's isLoggedIn checks `auths` and `user:<id>.auth`, as ours does).
3. Copies the checkout into a temporary directory, points the copy's Redis connection at
   the bench's Redis, and serves it with php-fpm (its own pool: --php-workers static
   workers, a Unix socket) behind nginx (its own nginx.conf on a free port); serves ours
   as `scripts/run-site --no-seed` does. Every page must answer 200 (PHP's home must greet
   demo) before anything is measured.
4. Runs rounds, PHP then ours, each page with a --warmup wrk run and then
   `wrk -t2 -c<C> -d<D>s --latency`: req/s, p99, and the whole machine's CPU per request
   (busy jiffies of /proc/stat's `cpu` line over the run / requests; wrk and Redis
   included, as is anything else the machine runs).
5. Prints a markdown table per page: each round's figures, the ratio ours/PHP per round and
   the medians; stops nginx, php-fpm, the site and Redis (also on Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from http_bench import (  # noqa: E402  (bench/ is on the path: this file's directory)
    VAR,
    BenchRedis,
    DataSet,
    Load,
    Page,
    Personas,
    Site,
    Stop,
    alive,
    build_pages,
    descendants,
    ensure_data,
    get,
    lock_bench_dir,
    machine_facts,
    milliseconds,
    on_signal,
    parse_wrk,
    pick_personas,
    tail,
    wrk,
)

from tests.redis_server import free_port  # noqa: E402

SIDES = ("PHP", "ours")
# Where the checkout opens its Redis connection, and how the copy is pointed at ours.
PREDIS_NEW = re.compile(r"new\s+Predis\\Client\(\s*\)")
PHPREDIS_CONNECT = re.compile(r"->p?connect\(\s*(['\"])[^'\"]*\1\s*(,\s*\d+\s*)?\)")


def say(message: str) -> None:
    """Print a progress line on stderr (the report goes to stdout)."""
    print(f"[php_side_by_side] {message}", file=sys.stderr, flush=True)


# --- Debian's packages -------------------------------------------------------------------


def missing_packages(uses_phpredis: bool) -> list[str]:
    """Return the Debian packages the bench needs that are not installed."""
    wanted = {"nginx": "nginx", "php-fpm": "php-fpm*", "wrk": "wrk"}
    if uses_phpredis:
        wanted["php-redis"] = "php*-redis"
    missing = []
    for package, pattern in wanted.items():
        shown = subprocess.run(
            ["dpkg-query", "-W", "-f", "${db:Status-Status} ", pattern],
            capture_output=True, text=True,
        )  # fmt: skip
        if "installed" not in shown.stdout.split():
            missing.append(package)
    return missing


def install(packages: list[str]) -> None:
    """apt-get install the packages (apt-get update first), saying so."""
    if not packages:
        return
    if os.geteuid() != 0:
        raise SystemExit(f"Missing Debian packages: {' '.join(packages)} (run as root to install)")
    say(f"Installing Debian's {', '.join(packages)} with apt-get...")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    wait = ["-o", "DPkg::Lock::Timeout=300"]  # another apt-get may hold the lock a while
    for command in (["update", "-q"], ["install", "-y", "-q", "--no-install-recommends"]):
        args = command + packages if command[0] == "install" else command
        done = subprocess.run(
            ["apt-get", *wait, *args], env=env, stdout=sys.stderr, stdin=subprocess.DEVNULL
        )
        if done.returncode != 0:
            raise SystemExit(f"apt-get {' '.join(args)} failed ({done.returncode})")


def php_fpm_binary() -> str:
    """Return the path of Debian's php-fpm (php-fpm8.2 on bookworm)."""
    found = sorted(glob.glob("/usr/sbin/php-fpm*"))
    if not found:
        raise SystemExit("No /usr/sbin/php-fpm* after installing php-fpm")
    return found[-1]


def first_line(command: list[str]) -> str:
    """Return the first line a command prints (on stdout or stderr), or "?"."""
    done = subprocess.run(command, capture_output=True, text=True)
    return (done.stdout or done.stderr or "?").splitlines()[0].strip()


# --- The PHP Retwis ----------------------------------------------------------------------


def connection_file(checkout: Path) -> tuple[Path, bool]:
    """Return the checkout's PHP file that opens the Redis connection, and whether it uses
    the phpredis extension (else Predis, bundled in the checkout)."""
    for path in sorted(checkout.glob("*.php")):
        source = path.read_text(errors="replace")
        if PREDIS_NEW.search(source):
            return path.relative_to(checkout), False
        if re.search(r"new\s+\\?Redis\s*\(", source) and PHPREDIS_CONNECT.search(source):
            return path.relative_to(checkout), True
    raise SystemExit(
        f"{checkout}: no `new Predis\\Client()` nor phpredis `->connect(...)` in its *.php: "
        "is it a checkout of antirez/retwis?"
    )


def point_at(source: str, port: int, phpredis: bool) -> str:
    """Return the PHP source with its Redis connection pointed at 127.0.0.1:port."""
    if phpredis:
        patched, n = PHPREDIS_CONNECT.subn(f"->connect('127.0.0.1', {port})", source, count=1)
    else:
        replacement = f"new Predis\\\\Client(array('host' => '127.0.0.1', 'port' => {port}))"
        patched, n = PREDIS_NEW.subn(replacement, source, count=1)
    assert n == 1, "connection_file() found the connection in this source"
    return patched


NGINX_CONF = """\
{user}worker_processes {workers};
pid {tmp}/nginx.pid;
daemon off;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    fastcgi_temp_path {tmp}/fastcgi;
    proxy_temp_path {tmp}/proxy;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    include /etc/nginx/mime.types;
    server {{
        listen 127.0.0.1:{port};
        root {tmp}/retwis;
        index index.php;
        location ~ \\.php$ {{
            include /etc/nginx/fastcgi_params;
            fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
            fastcgi_pass unix:{tmp}/php-fpm.sock;
        }}
    }}
}}
"""

PHP_FPM_CONF = """\
[global]
pid = {tmp}/php-fpm.pid
error_log = {log}
daemonize = no

[retwis]
{user}listen = {tmp}/php-fpm.sock
listen.mode = 0666
pm = static
pm.max_children = {workers}
; The checkout opens PHP with `<?`, off by default since PHP 7.
php_admin_flag[short_open_tag] = on
; PHP's errors reach the log above through the master.
php_admin_flag[log_errors] = on
catch_workers_output = yes
"""


class PhpRetwis:
    """A copy of a Retwis checkout served by php-fpm behind nginx, both from Debian's
    packages, on a free port, configured in a temporary directory."""

    def __init__(self, checkout: Path, redis_port: int, workers: int) -> None:
        self.checkout = checkout
        self.redis_port = redis_port
        self.workers = workers
        self.port = free_port()
        self.tmp = Path(tempfile.mkdtemp(prefix="retwis-php-bench-"))
        self.tmp.chmod(0o755)  # nginx's and php-fpm's workers run as nobody when we are root
        self.processes: list[subprocess.Popen] = []
        self.below: dict[int, dict[int, str]] = {}
        self.fpm_log = VAR / "php-fpm.log"
        self.nginx_log = VAR / "nginx-error.log"
        self.client = ""

    @property
    def base(self) -> str:
        """Return the PHP site's base URL, without a trailing slash."""
        return f"http://127.0.0.1:{self.port}"

    def configure(self) -> None:
        """Copy the checkout, point the copy at our Redis, write both servers' configs."""
        copy = self.tmp / "retwis"
        shutil.copytree(self.checkout, copy, ignore=shutil.ignore_patterns(".git"))
        name, phpredis = connection_file(copy)
        target = copy / name
        target.write_text(point_at(target.read_text(), self.redis_port, phpredis))
        self.client = "phpredis" if phpredis else "Predis (bundled in the checkout)"
        root = os.geteuid() == 0
        (self.tmp / "nginx.conf").write_text(
            NGINX_CONF.format(
                user="user nobody nogroup;\n" if root else "",
                workers=os.cpu_count() or 1,
                tmp=self.tmp,
                port=self.port,
            )
        )
        (self.tmp / "php-fpm.conf").write_text(
            PHP_FPM_CONF.format(
                user="user = nobody\ngroup = nogroup\n" if root else "",
                tmp=self.tmp,
                log=self.fpm_log,
                workers=self.workers,
            )
        )

    def start(self, timeout: float = 30) -> None:
        """Start php-fpm and nginx; return once GET / answers 200, else fail with the logs."""
        self.configure()
        for log in (self.fpm_log, self.nginx_log):
            log.unlink(missing_ok=True)
        commands = [
            [php_fpm_binary(), "--nodaemonize", "--fpm-config", str(self.tmp / "php-fpm.conf")],
            ["nginx", "-p", str(self.tmp), "-c", str(self.tmp / "nginx.conf")]
            + ["-e", str(self.nginx_log)],
        ]
        for command in commands:
            with open(VAR / f"{Path(command[0]).name}.out", "w") as out:
                # Own session: a Ctrl-C reaches only us, and we stop each server's group.
                self.processes.append(
                    subprocess.Popen(
                        command,
                        cwd=self.tmp,
                        stdin=subprocess.DEVNULL,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )  # fmt: skip
                )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    raise SystemExit(
                        f"{self.name(process)} exited ({process.returncode}):\n{self.logs()}"
                    )
            with contextlib.suppress(OSError):
                if get(self.base + "/", {})[0] == 200:
                    self.below = {p.pid: descendants(p.pid) for p in self.processes}
                    return
            time.sleep(0.2)
        raise SystemExit(f"The PHP Retwis did not answer 200 in {timeout:.0f} s:\n{self.logs()}")

    @staticmethod
    def name(process: subprocess.Popen) -> str:
        """Return the name of a server's program (php-fpm8.2, nginx)."""
        args = process.args
        return Path(str(args[0] if isinstance(args, list) else args)).name

    def logs(self) -> str:
        """Return the end of php-fpm's and nginx's logs."""
        return "\n".join(
            f"--- {path}:\n{tail(path, 15)}"
            for path in (self.fpm_log, self.nginx_log, VAR / "nginx.out", VAR / "php-fpm.out")
        )

    def stop(self) -> None:
        """SIGTERM nginx and php-fpm (each leads its own group), wait for every process of
        theirs, SIGKILL after 10 s; then remove the temporary directory."""
        for process in reversed(self.processes):
            group = process.pid
            below = self.below.get(group) or descendants(group)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                process.poll()
                if not alive(group, below):
                    break
                time.sleep(0.1)
            else:
                say(f"{self.name(process)} did not stop in 10 s: killing it")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, signal.SIGKILL)
                for pid in alive(group, below):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                process.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


# --- Pages -------------------------------------------------------------------------------


def page_pairs(who: Personas) -> dict[str, tuple[Page, Page]]:
    """Return each page as (PHP's, ours): the same cookie, the same persona."""
    home, profile, timeline, welcome = build_pages(who, ["home", "profile", "timeline", "welcome"])
    name = urllib.parse.quote_plus(who.profile)
    return {
        "home": (Page("home", "home.php", "/home.php", who.secret), home),
        "profile": (
            Page("profile", "profile.php", f"/profile.php?u={name}", who.secret),
            profile,
        ),
        "timeline": (Page("timeline", "timeline.php", "/timeline.php", who.secret), timeline),
        "front": (Page("front", "index.php, anonymous", "/", None), welcome),
    }


def check(base: str, page: Page, greets: str = "") -> None:
    """GET page; fail unless it answers 200 (and its body holds greets, if given)."""
    status, headers, body = get(base + page.path, page.headers)
    if status != 200:
        where = headers.get("Location", "")
        raise SystemExit(f"GET {base}{page.path} ({page.label}) answered {status} {where}")
    if greets and greets.encode() not in body:
        raise SystemExit(f"GET {base}{page.path} ({page.label}) does not show {greets!r}")


# --- Measuring ---------------------------------------------------------------------------


def busy_jiffies() -> int:
    """Return the whole machine's busy time so far in clock ticks (/proc/stat's `cpu` line:
    user, nice, system, irq, softirq, steal; guest time is inside user)."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return user + nice + system + irq + softirq + steal


@dataclass(frozen=True)
class Run:
    """One measured wrk run and the machine's CPU over it."""

    load: Load
    requests: int
    cpu_ms: float  # the whole machine's busy CPU time per request

    @property
    def p99(self) -> float | None:
        """Return the 99th percentile latency in ms, None if wrk printed none."""
        return self.load.latency_ms.get("99%")

    @property
    def errors(self) -> int:
        """Return non-2xx/3xx answers plus socket errors."""
        return self.load.non_2xx_3xx + sum(self.load.socket_errors.values())


TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def measure(base: str, page: Page, args: argparse.Namespace) -> Run:
    """Warm up, then run wrk on page, reading /proc/stat just before and after."""
    if args.warmup > 0:
        wrk(base, page, args.connections, args.warmup, args.timeout)
    before = busy_jiffies()
    output = wrk(base, page, args.connections, args.duration, args.timeout)
    busy = busy_jiffies() - before
    found = re.search(r"^\s*(\d+) requests in", output, re.M)
    requests = int(found.group(1)) if found else 0
    return Run(parse_wrk(output), requests, busy * TICK_MS / max(1, requests))


# --- The report --------------------------------------------------------------------------


def ratio(ours: float | None, php: float | None) -> str:
    """Return ours / PHP as "1.23x", or "n/a"."""
    return f"{ours / php:.2f}x" if ours is not None and php else "n/a"


def number(value: float | None, digits: int = 0) -> str:
    """Return a figure for the table (thousands separated when whole), "n/a" for None."""
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if digits == 0 else f"{value:.{digits}f}"


def median(values: list[float | None]) -> float | None:
    """Return the median of the known values, None if there are none."""
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def page_table(runs: list[tuple[Run, Run]]) -> Iterator[str]:
    """Yield one page's markdown table: each round (PHP, ours, ours/PHP), then the medians."""
    yield (
        "| round | req/s PHP | req/s ours | ours/PHP | p99 ms PHP | p99 ms ours "
        "| CPU ms/req PHP | CPU ms/req ours | ours/PHP | errors PHP / ours |"
    )
    yield "|---|---|---|---|---|---|---|---|---|---|"
    for number_, (php, ours) in enumerate(runs, 1):
        yield (
            f"| {number_} | {php.load.requests_per_s:,.0f} | {ours.load.requests_per_s:,.0f} "
            f"| {ratio(ours.load.requests_per_s, php.load.requests_per_s)} "
            f"| {milliseconds(php.load, '99%')} | {milliseconds(ours.load, '99%')} "
            f"| {php.cpu_ms:.2f} | {ours.cpu_ms:.2f} | {ratio(ours.cpu_ms, php.cpu_ms)} "
            f"| {php.errors} / {ours.errors} |"
        )
    rate = [median([r.load.requests_per_s for r in side]) for side in zip(*runs)]
    p99 = [median([r.p99 for r in side]) for side in zip(*runs)]
    cpu = [median([r.cpu_ms for r in side]) for side in zip(*runs)]
    rate_ratio = median([o.load.requests_per_s / p.load.requests_per_s for p, o in runs])
    cpu_ratio = median([o.cpu_ms / p.cpu_ms if p.cpu_ms else None for p, o in runs])
    yield (
        f"| **median** | {number(rate[0])} | {number(rate[1])} | {number(rate_ratio, 2)}x "
        f"| {number(p99[0], 1)} | {number(p99[1], 1)} | {number(cpu[0], 2)} "
        f"| {number(cpu[1], 2)} | {number(cpu_ratio, 2)}x | |"
    )


# --- Main ----------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    """Return the command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--retwis", type=Path, required=True, help="a checkout of antirez/retwis (read only)")
    add("--rounds", type=int, default=5, help="rounds, each PHP then ours (5)")
    add("--duration", type=float, default=10, help="seconds of each measured wrk run (10)")
    add("--connections", type=int, default=50, help="wrk's connections (50; threads: 2)")
    add("--warmup", type=float, default=2, help="seconds of the wrk run before each one (2)")
    add("--timeout", type=float, default=2, help="wrk's request timeout in seconds (2)")
    add("--php-workers", type=int, default=2 * (os.cpu_count() or 1),
        help="php-fpm's static workers (two per core)")  # fmt: skip
    add("--users", type=int, default=10_000, help="data set: seed --users (10000)")
    add("--follows", type=int, default=500_000, help="data set: seed --follows (500000)")
    add("--posts", type=int, default=200_000, help="data set: seed --posts (200000)")
    add("--seed", type=int, default=1, help="data set: seed --seed (1)")
    args = parser.parse_args()
    if not (args.retwis / "index.php").is_file():
        parser.error(f"--retwis {args.retwis}: no index.php there")
    if min(args.rounds, args.connections, args.php_workers) < 1 or args.duration <= 0:
        parser.error("--rounds, --connections, --php-workers and --duration must be positive")
    args.retwis = args.retwis.resolve()
    return args


def run(args: argparse.Namespace, data: DataSet, server: BenchRedis, php: PhpRetwis) -> None:
    """Serve both sites on the started Redis, run the rounds, print the report."""
    origin = ensure_data(server, data)
    (VAR / "wrk.log").unlink(missing_ok=True)
    who = pick_personas(server.client)
    pairs = page_pairs(who)
    say(f"Serving a copy of {args.retwis} with php-fpm and nginx...")
    php.start()
    site = Site(server.url)
    try:
        say("Starting scripts/run-site --no-seed...")
        site.start()
        for name, (php_page, our_page) in pairs.items():
            check(php.base, php_page, "demo, what you are doing?" if name == "home" else "")
            check(site.base, our_page)
        facts = machine_facts(server.client, site.facts())
        runs: dict[str, list[tuple[Run, Run]]] = {name: [] for name in pairs}
        for round_ in range(1, args.rounds + 1):
            measured: dict[str, list[Run]] = {name: [] for name in pairs}
            for side, base in zip(SIDES, (php.base, site.base)):
                for name, pair in pairs.items():
                    page = pair[SIDES.index(side)]
                    say(f"round {round_}/{args.rounds}: {side} {name} ({page.path})...")
                    measured[name].append(measure(base, page, args))
            for name in pairs:
                runs[name].append((measured[name][0], measured[name][1]))
    finally:
        site.stop()

    php_version = first_line([php_fpm_binary(), "-v"])
    nginx_version = first_line(["nginx", "-v"]).removeprefix("nginx version: ")
    opcache = "on" if "Zend OPcache" in subprocess.getoutput(f"{php_fpm_binary()} -m") else "off"
    print(f"\n## php_side_by_side: {data.dump_name.removesuffix('.rdb')} ({origin})\n")
    print(facts)
    print(
        f"PHP: {args.retwis} (a copy), {php_version}, OPcache {opcache}, php-fpm "
        f"{args.php_workers} static workers, {nginx_version}, {php.client}"
    )
    print(
        f"{args.rounds} rounds (PHP, then ours), wrk -t2 -c{args.connections} "
        f"-d{args.duration:g}s --timeout {args.timeout:g}s --latency after a {args.warmup:g} s "
        "warm-up run; CPU ms/req: the whole machine's busy CPU time over the run / requests "
        "(wrk, Redis and anything else running included); the median row's ours/PHP is the "
        "median of the rounds' ratios\n"
    )
    for name, (php_page, our_page) in pairs.items():
        print(f"### {name}: PHP `{php_page.path}`, ours `{our_page.path}` ({our_page.label})\n")
        print("\n".join(page_table(runs[name])))
        print()


def main() -> None:
    """Run the bench; stop both sites and Redis whatever happens."""
    args = parse_args()
    _, phpredis = connection_file(args.retwis)
    install(missing_packages(phpredis))
    lock = lock_bench_dir()  # noqa: F841 - held for the life of the process
    data = DataSet(args.users, args.follows, args.posts, args.seed)
    # Ctrl-C raises KeyboardInterrupt even when started as a background job (which ignores it).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    server, php = BenchRedis(data.dump_name), None
    try:
        say(f"Starting redis-server on port {server.port} ({data.dump_name})...")
        server.start()
        php = PhpRetwis(args.retwis, server.port, args.php_workers)
        run(args, data, server, php)
    except (KeyboardInterrupt, Stop) as why:
        say(f"{type(why).__name__} {why}".strip() + ": stopping")
        sys.exit(130)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda *_: say("still stopping..."))
        if php is not None:
            php.stop()
        server.stop()


if __name__ == "__main__":
    main()
