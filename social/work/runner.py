"""Running jobs: `manage.py work`'s loop (Worker) and run_pending (tests, `--once`)."""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterable

from social.repository import get_repository
from social.repository.work.jobs import Job, JobStore, now_ms

from .queues import DEFAULT_QUEUES, SECOND, queue
from .registry import dead_handler_for, handler_for, queues_with_handlers

log = logging.getLogger("social.work")

PROMOTE_EVERY = 1.0  # seconds between moves of due delayed jobs into ready
BUSY_DESTINATION_MS = 2 * SECOND  # a job whose destination is at its limit waits this long


class Retry(Exception):
    """A failure worth trying again; `after`: seconds to wait at least (a 429's
    Retry-After), else the queue's schedule."""

    def __init__(self, message: str = "", *, after: float | None = None) -> None:
        super().__init__(message)
        self.after = after


class Permanent(Exception):
    """A failure that will not go away: the job becomes a dead letter at once."""


def consumer_name(queue_name: str, slot: int) -> str:
    """The consumer-group name of one thread of this process: host, pid, queue, slot."""
    return f"{socket.gethostname()}:{os.getpid()}:{queue_name}:{slot}"


def describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def run_job(jobs: JobStore, job: Job, consumer: str, *, now: int | None = None) -> str:
    """Run one job taken from a queue and settle it; return what became of it: "done",
    "retry", "dead" or "deferred"."""
    shape = queue(job.queue)
    at = now_ms() if now is None else now
    if job.delivered > shape.attempts:
        # Taken over from workers that died or froze in it, time after time.
        return bury(jobs, job, f"its worker stopped {job.delivered - 1} times while running it", at)
    function = handler_for(job.queue, job.kind)
    if function is None:
        jobs.bury(job, f"no handler for {job.queue}/{job.kind}", now=at)
        return "dead"
    lease = ""
    if job.destination:
        until = jobs.backoff_until(job.queue, job.destination)
        if until > at:
            jobs.defer(job, until=until)
            return "deferred"
        lease = secrets.token_hex(8)
        if not jobs.lease(
            job.queue, job.destination, lease, most=shape.per_destination,
            lease_ms=shape.lease_ms, now=at,
        ):  # fmt: skip
            jobs.defer(job, until=at + BUSY_DESTINATION_MS)
            return "deferred"
    alive = threading.Event()
    keeper = threading.Thread(
        target=keep_alive, args=(jobs, job, consumer, shape.lease_ms / 3000, alive), daemon=True
    )
    keeper.start()
    try:
        function(dict(job.payload))
    except Permanent as error:
        log.warning("job %s %s/%s failed for good: %s", job.id, job.queue, job.kind, error)
        return bury(jobs, job, describe(error), at)
    except Exception as error:  # a handler's failure is the job's, never the worker's
        if job.destination and isinstance(error, Retry):
            jobs.destination_failed(
                job.queue, job.destination, base_ms=shape.destination_base_ms,
                max_ms=shape.destination_most_ms, keep_ms=shape.destination_keep_ms, now=at,
            )  # fmt: skip
        if job.attempt + 1 >= shape.attempts:
            log.warning("job %s %s/%s dead after %d attempts: %s", job.id, job.queue,
                        job.kind, job.attempt + 1, describe(error))  # fmt: skip
            return bury(jobs, job, describe(error), at)
        delay = shape.backoff(job.attempt)
        if isinstance(error, Retry) and error.after is not None:
            delay = max(delay, int(error.after * 1000))
        jobs.retry(job, describe(error), delay_ms=delay)
        log.info("job %s %s/%s retried in %d ms: %s", job.id, job.queue, job.kind, delay,
                 describe(error))  # fmt: skip
        return "retry"
    finally:
        alive.set()
        keeper.join()
        if lease:
            jobs.release(job.queue, job.destination, lease)
    jobs.done(job)
    return "done"


def bury(jobs: JobStore, job: Job, error: str, at: int) -> str:
    """Make the job a dead letter, then run its kind's on_dead (once, best effort: a worker
    that dies in between leaves the letter, which staff can retry); return "dead"."""
    jobs.bury(job, error, now=at)
    told = dead_handler_for(job.queue, job.kind)
    if told is not None:
        try:
            told(dict(job.payload), error)
        except Exception:
            log.exception("on_dead of job %s %s/%s failed", job.id, job.queue, job.kind)
    return "dead"


def keep_alive(jobs: JobStore, job: Job, consumer: str, every: float, ended: threading.Event):
    """Renew the job's claim every `every` seconds until ended (so a long job is not taken
    over while its worker lives)."""
    while not ended.wait(every):
        try:
            jobs.touch(job, consumer)
        except Exception:  # Redis away for a moment: the next renewal may pass
            log.warning("could not renew job %s", job.id, exc_info=True)


def run_pending(
    queue_name: str | None = None, *, now: int | None = None, reclaim_idle_ms: int | None = None
) -> int:
    """Run every job that is due now, in this process, until none is left; return how many
    ran (tests, `manage.py work --once`). Jobs of workers silent for their queue's lease (or
    reclaim_idle_ms) are taken over too."""
    jobs = get_repository().jobs
    names = [queue_name] if queue_name else sorted({*DEFAULT_QUEUES, *queues_with_handlers()})
    ran = 0
    for name in names:
        jobs.ensure_group(name)
        consumer = consumer_name(name, 0)
        jobs.promote(name, now=now)
        idle = queue(name).lease_ms if reclaim_idle_ms is None else reclaim_idle_ms
        for taken in jobs.reclaim(name, consumer, idle_ms=idle, count=100):
            run_job(jobs, taken, consumer, now=now)
            ran += 1
        while (job := jobs.take(name, consumer)) is not None:
            run_job(jobs, job, consumer, now=now)
            ran += 1
    return ran


class Worker:
    """One `manage.py work` process: for each queue, `concurrency` threads that take jobs
    and run them, one of which also moves due delayed jobs into ready and takes over jobs
    of workers that died. stop() lets running jobs finish; nothing new is taken."""

    def __init__(self, concurrency: dict[str, int], *, block_ms: int = 1000) -> None:
        self.concurrency = concurrency
        self.block_ms = block_ms
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        jobs = get_repository().jobs
        for name, count in self.concurrency.items():
            jobs.ensure_group(name)
            for slot in range(count):
                thread = threading.Thread(
                    target=self.loop, args=(name, slot), name=f"work-{name}-{slot}", daemon=True
                )
                thread.start()
                self.threads.append(thread)

    def stop(self) -> None:
        self.stopping.set()

    def join(self, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self.threads:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            thread.join(left)

    def alive(self) -> bool:
        return any(thread.is_alive() for thread in self.threads)

    def count(self, outcome: str) -> None:
        with self._lock:
            self.counts[outcome] = self.counts.get(outcome, 0) + 1

    def loop(self, name: str, slot: int) -> None:
        jobs = get_repository().jobs
        consumer = consumer_name(name, slot)
        shape = queue(name)
        housekeeping = slot == 0
        next_promote = next_reclaim = 0.0
        while not self.stopping.is_set():
            try:
                now = time.monotonic()
                taken: Iterable[Job] = ()
                if housekeeping and now >= next_promote:
                    jobs.promote(name)
                    next_promote = now + PROMOTE_EVERY
                if housekeeping and now >= next_reclaim:
                    taken = jobs.reclaim(name, consumer, idle_ms=shape.lease_ms)
                    next_reclaim = now + shape.lease_ms / 2000
                for claimed in taken:
                    self.count(run_job(jobs, claimed, consumer))
                block = min(self.block_ms, int(PROMOTE_EVERY * 1000)) if housekeeping else None
                asked = time.monotonic()
                job = jobs.take(name, consumer, block_ms=block or self.block_ms)
                if job is not None:
                    self.count(run_job(jobs, job, consumer))
                elif time.monotonic() - asked < (block or self.block_ms) / 2000:
                    # Answered at once with nothing: the queue has no stream yet (nothing was
                    # ever queued on it), so XREADGROUP cannot wait. Wait here instead.
                    self.stopping.wait((block or self.block_ms) / 1000)
            except Exception:  # Redis away, say: wait, then carry on
                log.exception("worker %s: error in its loop", consumer)
                self.stopping.wait(1.0)
