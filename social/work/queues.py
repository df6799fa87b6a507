"""The worker tier's queues and their shape: bound, lease, attempts, retry schedule,
concurrency (docs/workers.md). The Redis side is repository/work/jobs.py."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

SECOND = 1000  # ms
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR


def doubling(base_ms: int, most_ms: int) -> Callable[[int], int]:
    """A retry schedule: base_ms after the first failure, doubled each time, at most most_ms,
    with a tenth of jitter so jobs failed together do not come back together."""

    def delay(attempt: int) -> int:
        wait = min(most_ms, base_ms * 2 ** min(attempt, 30))
        return wait + random.randint(0, wait // 10)

    return delay


def sidekiq(attempt: int) -> int:
    """Mastodon's schedule for deliveries (ActivityPub::DeliveryWorker's sidekiq_retry_in on
    Sidekiq's own jitter): attempt**4 + 15 s, plus up to half of attempt**4 and up to
    9 (attempt + 1) s of jitter. Its 16 retries span about 2.6 days (3.1 at most)."""
    jitter = random.uniform(0, 0.5 * attempt**4) + random.randint(0, 9) * (attempt + 1)
    return int((attempt**4 + 15 + jitter) * SECOND)


@dataclass(frozen=True)
class Queue:
    """One named queue.

    limit: jobs it holds (ready and delayed) before enqueue refuses (QueueFull: "busy").
    lease_ms: how long a worker may go silent before its job is taken over (a running job's
      worker renews it every third of that, so only a dead or frozen worker loses it).
    attempts: runs before a failing job becomes a dead letter (a job whose worker died
      during it counts as a run: a picture that kills the worker is not tried for ever).
    backoff: ms to wait before attempt n + 1 (n: failures so far).
    concurrency: jobs one `manage.py work` process runs at once from this queue (threads).
    per_destination: jobs running at once for one destination across every worker.
    destination_base_ms, destination_most_ms, destination_keep_ms: a failing destination's
      backoff (doubling from base to most) and how long its record outlives its last failure.
    """

    name: str
    limit: int
    lease_ms: int
    attempts: int
    backoff: Callable[[int], int]
    concurrency: int = 1
    per_destination: int = 4
    destination_base_ms: int = MINUTE
    destination_most_ms: int = DAY
    destination_keep_ms: int = 7 * DAY


QUEUES: dict[str, Queue] = {
    queue.name: queue
    for queue in (
        # Pictures: decoding is CPU and memory; one at a time per worker process bounds
        # both (a 40-megapixel picture holds ~160 MB while it is decoded).
        Queue(
            "media",
            limit=2000,
            lease_ms=2 * MINUTE,
            attempts=3,
            backoff=doubling(5 * SECOND, MINUTE),
            concurrency=1,
        ),
        # Mail: mostly waiting on the mail server; retried for about a day.
        Queue(
            "mail",
            limit=20_000,
            lease_ms=MINUTE,
            attempts=12,
            backoff=doubling(30 * SECOND, 4 * HOUR),
            concurrency=2,
        ),
        # Federation's deliveries (ActivityPub): Mastodon's schedule (a first try and its 16
        # retries), per-domain backoff, at most 4 at once to one domain.
        Queue(
            "deliver",
            limit=200_000,
            lease_ms=MINUTE,
            attempts=17,
            backoff=sidekiq,
            concurrency=8,
            per_destination=4,
        ),
        # Federation's incoming activities, verified and applied off the request path.
        Queue(
            "inbox",
            limit=100_000,
            lease_ms=MINUTE,
            attempts=5,
            backoff=doubling(30 * SECOND, HOUR),
            concurrency=2,
        ),
    )  # fmt: skip
}


# What `manage.py work` serves when not told: every queue (a site that does not federate
# queues nothing on deliver or inbox, and their idle threads wait without writing).
DEFAULT_QUEUES = ("media", "mail", "deliver", "inbox")


def queue(name: str) -> Queue:
    """Return the queue named name; raise KeyError for an unknown one."""
    return QUEUES[name]
