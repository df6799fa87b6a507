"""The worker tier (social/repository/work/jobs.py, social/work/). Every key of one queue
carries the hash tag {jobs:<queue>}: on a Redis Cluster they share a slot, so a job moves
between them in one script or MULTI."""

from __future__ import annotations

import re

QUEUE_RE = r"[a-z][a-z0-9_]{0,31}"


def _queue_tag(queue: str) -> str:
    if not re.fullmatch(QUEUE_RE, queue):
        raise ValueError(f"not a queue name: {queue!r}")
    return f"jobs:{{{queue}}}"


def job_stream(queue: str) -> str:
    """Stream (consumer group "workers"): jobs ready to run; an entry is deleted when done."""
    return f"{_queue_tag(queue)}:ready"


def job_delayed(queue: str) -> str:
    """Sorted set: jobs (JSON) waiting for a retry or their destination, by due time (ms)."""
    return f"{_queue_tag(queue)}:delayed"


def job_dead(queue: str) -> str:
    """List: jobs (JSON, with their last error) that used up their attempts, newest first."""
    return f"{_queue_tag(queue)}:dead"


def job_totals(queue: str) -> str:
    """Hash: done, retried, dead: counters since the queue began (the staff dashboard)."""
    return f"{_queue_tag(queue)}:totals"


def job_destination(queue: str, destination: str) -> str:
    """Hash: failures, until (ms): one destination's backoff (a federation peer's domain)."""
    return f"{_queue_tag(queue)}:dest:{_checked_destination(destination)}"


def job_leases(queue: str, destination: str) -> str:
    """Sorted set: leases (tokens) of jobs running for one destination, by expiry (ms)."""
    return f"{_queue_tag(queue)}:leases:{_checked_destination(destination)}"


def job_destinations(queue: str) -> str:
    """Sorted set: destinations in backoff, by the time (ms) their backoff ends."""
    return f"{_queue_tag(queue)}:backoff"


def _checked_destination(destination: str) -> str:
    if not re.fullmatch(r"[a-z0-9.:\[\]_-]{1,255}", destination):
        raise ValueError(f"not a destination: {destination!r}")
    return destination


JOB_DEAD_CAP = 1000  # dead letters kept per queue
