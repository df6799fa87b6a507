"""scripts/run-site runs the worker tier beside the web and streaming servers, and SIGTERM
(what Ctrl-C sends the launcher too) stops all of them."""

from __future__ import annotations

import json
import os
import time

from social import keys, work
from tests.conftest import CLUSTER
from tests.served_site import served_site

DEADLINE = 60


def worker_processes(marker: str) -> list[int]:
    """The pids of `manage.py work` processes started with marker in their environment."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except OSError:
            continue
        if b"work" in argv and marker.encode() in environ:
            found.append(int(pid))
    return found


def test_the_launched_site_runs_a_worker_and_stops_it(redis_server, r, tmp_path_factory):
    marker = f"RETWIS_TEST_MARK=worker-{os.getpid()}-{time.monotonic_ns()}"
    settings = {
        "REDIS_URL": redis_server.url,
        "REDIS_CLUSTER": "true" if CLUSTER else "false",
        "SECRET_KEY": "worker-tests-only-" + "x" * 50,
        "WEB_WORKERS": "1",
        "MEDIA_ROOT": str(tmp_path_factory.mktemp("media")),
        marker.split("=")[0]: marker.split("=")[1],
    }
    with served_site(tmp_path_factory.mktemp("site"), settings, start_within=90):
        assert len(worker_processes(marker)) == 1
        # A job no handler knows: the served worker takes it and files it as a dead letter.
        job_id = work.enqueue("mail", "nobody_handles_this", {"x": "1"})
        deadline = time.monotonic() + DEADLINE
        while not r.llen(keys.job_dead("mail")) and time.monotonic() < deadline:
            time.sleep(0.1)
        [letter] = [json.loads(item) for item in r.lrange(keys.job_dead("mail"), 0, -1)]
        assert letter["id"] == job_id
        assert letter["error"] == "no handler for mail/nobody_handles_this"
    assert worker_processes(marker) == []
