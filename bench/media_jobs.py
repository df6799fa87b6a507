"""Pictures on the worker tier: a 10 MB upload's time to ready, and jobs a second.

Usage (from the repository root):  .venv/bin/python bench/media_jobs.py [--small 200]
    [--big 3]

1. Starts a redis-server of its own on a free port (never 6379; no persistence) and uses a
   temporary MEDIA_ROOT; the media limit is lifted.
2. Jobs a second: `--small` uploads of a small picture (a 640 x 480 JPEG) through
   `POST /api/v2/media` (Django's test client, in this process: the request counts, reads
   the header, keeps the bytes and queues the job), then `work.run_pending("media")` runs
   them all in this process, one at a time as one `manage.py work` thread does. Prints the
   upload requests' p50 and the jobs a second.
3. Time to ready: starts `manage.py work --queues media` (one thread) beside it, then
   uploads `--big` times each of two pictures just under 10 MB (a 36-megapixel photo-like
   JPEG, and a PNG of noise), each timed from sending the upload to the first
   `GET /api/v1/media/:id` answering 200 (polled every 10 ms), and the upload's answer
   (202) alone. Prints the median and the largest of each.
Progress on stderr, markdown on stdout. Stops the worker and Redis at the end.
"""

from __future__ import annotations

import argparse
import io
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path[:0] = [str(ROOT), str(BENCH)]

from pictures import big_jpeg, noise_png  # noqa: E402

from tests.redis_server import RedisServer  # noqa: E402


def say(message: str) -> None:
    print(f"[media_jobs] {message}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", type=int, default=200, help="small pictures for jobs/s")
    parser.add_argument("--big", type=int, default=3, help="10 MB uploads of each kind")
    args = parser.parse_args()
    redis_server = RedisServer().start()
    try:
        with tempfile.TemporaryDirectory() as media_root:
            env = {
                "DJANGO_SETTINGS_MODULE": "retwis_site.settings",
                "REDIS_URL": redis_server.url,
                "MEDIA_ROOT": media_root,
                "SECRET_KEY": "media-jobs-bench-" + "x" * 40,
                "ALLOWED_HOSTS": "testserver,localhost",
                "SITE_URL": "http://testserver",
                "RETWIS_LIMIT_MEDIA": "100000/10m",
                "DEBUG": "false",
            }
            os.environ.update(env)
            import django

            django.setup()
            run(args, env)
    finally:
        redis_server.stop()


def run(args: argparse.Namespace, env: dict[str, str]) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from PIL import Image

    from social import work
    from social.repository import get_repository
    from tests.api import Api, token_for

    repo = get_repository()
    api = Api(token_for(repo, repo.users.create_user("bench", "x")))

    def upload(data: bytes, kind: str) -> tuple[str, float]:
        started = time.perf_counter()
        file = SimpleUploadedFile(f"p.{kind}", data, content_type=f"image/{kind}")
        answer = api.post("/api/v2/media", {"file": file})
        assert answer.status_code == 202, answer.content
        return answer.json()["id"], time.perf_counter() - started

    out = io.BytesIO()
    Image.effect_mandelbrot((640, 480), (-2, -1.2, 1, 1.2), 60).convert("RGB").save(out, "JPEG")
    small = out.getvalue()
    say(f"{args.small} small uploads ({len(small):,} bytes each)")
    posted = [upload(small, "jpeg")[1] for _ in range(args.small)]
    started = time.perf_counter()
    ran = work.run_pending("media")
    took = time.perf_counter() - started
    print(f"| small picture ({len(small) // 1024} KB JPEG, 640 x 480) | upload answered: p50 "
          f"{statistics.median(posted) * 1000:.1f} ms | {ran} jobs in {took:.2f} s: "
          f"**{ran / took:.1f} jobs/s** (one thread) |")  # fmt: skip

    worker = subprocess.Popen(
        [sys.executable, "manage.py", "work", "--queues", "media"],
        cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for name, data, kind in (("JPEG", big_jpeg(), "jpeg"), ("PNG", noise_png(), "png")):
            answered, ready = [], []
            for _ in range(args.big):
                started = time.perf_counter()
                media_id, took = upload(data, kind)
                while api.get(f"/api/v1/media/{media_id}").status_code != 200:
                    time.sleep(0.01)
                answered.append(took)
                ready.append(time.perf_counter() - started)
            say(f"{name}: ready in {[round(t, 2) for t in ready]} s")
            print(f"| {name} {len(data) / 2**20:.1f} MB | upload answered (202): p50 "
                  f"{statistics.median(answered) * 1000:.0f} ms | time to ready: p50 "
                  f"**{statistics.median(ready):.2f} s**, max {max(ready):.2f} s |")  # fmt: skip
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)


if __name__ == "__main__":
    main()
