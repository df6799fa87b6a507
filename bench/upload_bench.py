"""Time a 10 MB picture upload on the served site, and the home page while ten run.

Usage (from the repository root):  .venv/bin/python bench/upload_bench.py [--uploads 5]
    [--seconds 20] [--concurrent 10]

1. Starts a redis-server of its own on a free port (never the machine's Redis; no
   persistence), seeds a small data set (`manage.py seed --users 200`), and serves the site
   as `scripts/run-site --no-seed` does (scripts/launch.py: DEBUG off, Granian, one worker
   per core) on a free port, its pictures in a temporary MEDIA_ROOT and the profile rate
   limit lifted (RETWIS_LIMIT_PROFILE).
2. Makes two uploads of just under 10 MB with Pillow: a PNG of noise (3.4 megapixels) and
   a JPEG photo-like picture of 36 megapixels (the worst case under the 40 MP limit: every
   pixel decoded, then resized).
3. Alone: `--uploads` sequential `POST /settings/profile/` of each as the avatar, timed
   from sending to the 302 (decode, re-encode to two sizes, store, one Redis pipeline).
4. Load: wrk on the logged-in home page (2 connections, `--seconds`), first alone, then
   while `--concurrent` clients upload the JPEG back to back (one refused as busy, every
   processing slot taken, tries again a second later); the home page's p50/p99.
Prints markdown; progress on stderr. Stops the site and Redis at the end.
"""

from __future__ import annotations

import argparse
import http.client
import io
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import urllib3
from PIL import Image, ImageFilter

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from http_bench import parse_wrk  # noqa: E402
from login_bench import ROOT, Client, RedisServer, seed_small, serve  # noqa: E402

from tests.redis_server import port_is_free  # noqa: E402

MAX_BYTES = 10 * 1024 * 1024
DROPPED: list[float] = []  # uploads whose connection the server closed unanswered
CSRF_RE = b'name="csrfmiddlewaretoken" value="'


def say(message: str) -> None:
    """Print progress on stderr."""
    print(f"[upload_bench] {message}", file=sys.stderr, flush=True)


def quiet_port() -> int:
    """Return a free port below the ephemeral range whose next port is free too: a port
    free_port() picks can be taken as an outgoing connection's own before the site binds
    it (the streaming server on PORT + 1 then fails, and scripts/launch.py stops the
    site: seen on this busy machine)."""
    while True:
        port = random.randrange(20000, 32000)
        if port_is_free(port) and port_is_free(port + 1):
            return port


def noise_png() -> bytes:
    """A PNG of random pixels just under 10 MB (noise does not compress)."""
    width, height = 1900, 1830
    data = Image.frombytes("RGB", (width, height), random.randbytes(width * height * 3))
    out = io.BytesIO()
    data.save(out, "PNG", compress_level=1)
    return out.getvalue()


def big_jpeg() -> bytes:
    """A JPEG of 36 megapixels, photo-like (smooth shapes and grain), just under 10 MB."""
    width, height = 7200, 5000
    small = Image.frombytes("RGB", (180, 125), random.randbytes(180 * 125 * 3))
    image = small.resize((width, height), Image.Resampling.BICUBIC).filter(
        ImageFilter.GaussianBlur(2)
    )
    grain = Image.frombytes("L", (width, height), random.randbytes(width * height))
    image = Image.blend(image, Image.merge("RGB", (grain, grain, grain)), 0.11)
    best = b""
    for quality in (95, 90, 85, 80, 75, 70, 60, 50):
        out = io.BytesIO()
        image.save(out, "JPEG", quality=quality)
        best = out.getvalue()
        if len(best) <= MAX_BYTES - 64 * 1024:
            break
    return best


class Uploader(Client):
    """One logged-in browser that saves its profile with a new avatar."""

    def __init__(self, port: int, auth: str) -> None:
        super().__init__(port)
        self.cookie = f"{auth}; {self.csrf_cookie}"
        status, _, body = self.request("GET", "/settings/profile/", headers=self.headers())
        start = body.index(CSRF_RE) + len(CSRF_RE)
        assert status == 200, f"GET /settings/profile/ answered {status}"
        self.form_token = body[start : body.index(b'"', start)].decode()

    def headers(self) -> dict[str, str]:
        return {"Cookie": self.cookie, "Referer": f"http://127.0.0.1:{self.port}/"}

    def upload(self, data: bytes, name: str) -> tuple[float, bool]:
        """POST the profile form with data as the avatar; return the seconds to the 302
        (or to the refusal when every processing slot was taken) and whether stored."""
        fields = {"csrfmiddlewaretoken": self.form_token, "avatar": (name, data)}
        body, content_type = urllib3.encode_multipart_formdata(fields)
        headers = {**self.headers(), "Content-Type": content_type}
        started = time.perf_counter()
        for _ in range(3):
            try:
                status, _, answer = self.request("POST", "/settings/profile/", body, headers)
                break
            except (http.client.RemoteDisconnected, ConnectionResetError):
                DROPPED.append(time.perf_counter() - started)  # sent again, timed whole
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        took = time.perf_counter() - started
        if status == 400 and b"try again in a moment" in answer:
            return took, False
        assert status == 302, f"upload answered {status}: {answer[:300]!r}"
        return took, True

    def request(self, method, path, body=b"", headers=None):  # bytes bodies too
        self.conn.request(method, path, body=body or None, headers=headers or {})
        response = self.conn.getresponse()
        return response.status, response.getheaders(), response.read()


def wrk_home(port: int, auth: str, seconds: float) -> tuple[float, float, float, int]:
    """wrk on the home page; return (req/s, p50 ms, p99 ms, requests timed out)."""
    done = subprocess.run(
        ["wrk", "-t2", "-c2", f"-d{seconds:g}s", "--timeout", "30s", "--latency",
         "-H", f"Cookie: {auth}", f"http://127.0.0.1:{port}/"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    load = parse_wrk(done.stdout)
    latency = load.latency_ms
    timeouts = load.socket_errors["timeout"]
    return load.requests_per_s, latency.get("50%", 0), latency.get("99%", 0), timeouts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=5, help="sequential uploads timed")
    parser.add_argument("--seconds", type=float, default=20, help="how long wrk runs")
    parser.add_argument("--concurrent", type=int, default=10, help="uploads running at once")
    parser.add_argument(
        "--threads", type=int, default=0, help="WEB_THREADS for the site (default: its own)"
    )
    args = parser.parse_args()
    log_dir = ROOT / "var" / "bench"
    log_dir.mkdir(parents=True, exist_ok=True)
    media_root = tempfile.mkdtemp(prefix="retwis-upload-bench-")
    os.environ.update(MEDIA_ROOT=media_root, RETWIS_LIMIT_PROFILE="100000/1h")
    if args.threads:
        os.environ["WEB_THREADS"] = str(args.threads)
    server = RedisServer().start("--save", "", "--appendonly", "no")
    site = None
    try:
        seed_small(server.url)
        say("making the pictures")
        pictures = {"PNG 1900x1830 noise": noise_png(), "JPEG 7200x5000": big_jpeg()}
        port = quiet_port()
        say(f"serving the site on port {port}")
        site = serve(server.url, port, log_dir / "upload-site.log")
        _, auth = Client(port).login()
        one = Uploader(port, auth)
        print("| upload | bytes | p50 | max |")
        print("|---|---|---|---|")
        for name, data in pictures.items():
            say(f"timing {args.uploads} uploads of {name}")
            ext = "png" if name.startswith("PNG") else "jpg"
            times = [one.upload(data, f"a.{ext}")[0] for _ in range(args.uploads)]
            print(
                f"| {name} | {len(data):,} | {statistics.median(times) * 1000:.0f} ms | "
                f"{max(times) * 1000:.0f} ms |"
            )
        say(f"home page alone, {args.seconds:g} s")
        alone = wrk_home(port, auth, args.seconds)
        jpeg = pictures["JPEG 7200x5000"]
        uploaders = [Uploader(port, auth) for _ in range(args.concurrent)]
        stop = threading.Event()
        done: list[float] = []
        busy: list[float] = []  # refused at once: every processing slot taken

        def keep_uploading(uploader: Uploader) -> None:
            while not stop.is_set():
                took, stored = uploader.upload(jpeg, "a.jpg")
                (done if stored else busy).append(took)
                if not stored:
                    time.sleep(1)  # as a person would, before trying again

        threads = [threading.Thread(target=keep_uploading, args=(u,)) for u in uploaders]
        for thread in threads:
            thread.start()
        time.sleep(1)  # the uploads under way
        say(f"home page beside {args.concurrent} uploads, {args.seconds:g} s")
        loaded = wrk_home(port, auth, args.seconds)
        stop.set()
        for thread in threads:
            thread.join()
        print()
        print("| home page (wrk, 2 connections, 30 s timeout) | req/s | p50 | p99 | timed out |")
        print("|---|---|---|---|---|")
        for label, (rate, p50, p99, late) in (
            ("alone", alone),
            (f"beside {args.concurrent} JPEG uploads", loaded),
        ):
            print(f"| {label} | {rate:.1f} | {p50:.0f} ms | {p99:.0f} ms | {late} |")
        print()
        web_threads = os.environ.get("WEB_THREADS", "default")
        print(
            f"WEB_THREADS {web_threads}; {len(DROPPED)} upload(s) closed unanswered and sent "
            f"again; {len(busy)} refused as busy; {len(done)} uploads finished beside it, p50 "
            f"{statistics.median(done or [0]) * 1000:.0f} ms; load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
    finally:
        if site is not None:
            site.send_signal(signal.SIGTERM)
            site.wait(timeout=40)
        server.stop()
        subprocess.run(["rm", "-rf", media_root], check=False)


if __name__ == "__main__":
    main()
