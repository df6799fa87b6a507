"""Job handlers for the worker tier's tests (queue "mail", kinds named test_*): each
records its runs in a file named by the payload, never in Redis, so the queue's keys are the
only Redis state a test asserts."""

from __future__ import annotations

import os
import time
from pathlib import Path

from social import work


def record(payload: dict[str, str], line: str) -> None:
    with open(payload["log"], "a") as log:
        log.write(line + "\n")


@work.handler("mail", "test_record")
def run_record(payload: dict[str, str]) -> None:
    record(payload, "ran")
    # The effect, once however often the job runs (the idempotence handlers owe).
    try:
        fd = os.open(payload["log"] + ".effect", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)


@work.handler("mail", "test_fail")
def run_fail(payload: dict[str, str]) -> None:
    record(payload, "failed")
    raise work.Retry("the server said 503")


@work.handler("mail", "test_crash")
def run_crash(payload: dict[str, str]) -> None:
    record(payload, "crashed")
    raise RuntimeError("a bug")


@work.handler("mail", "test_permanent")
def run_permanent(payload: dict[str, str]) -> None:
    record(payload, "refused")
    raise work.Permanent("the address does not exist")


@work.handler("mail", "test_slow")
def run_slow(payload: dict[str, str]) -> None:
    """Say it started, then wait (for the test to kill the worker) unless told not to."""
    record(payload, "started")
    if not Path(payload["log"] + ".quick").exists():
        time.sleep(60)
    run_record(payload)


def tell(payload: dict[str, str], error: str) -> None:
    record(payload, "told:" + error.replace(" ", "_"))


@work.handler("mail", "test_told", on_dead=tell)
def run_told(payload: dict[str, str]) -> None:
    record(payload, "refused")
    raise work.Permanent("no such address")
