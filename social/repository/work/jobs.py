"""The worker tier's queues: durable jobs on Redis Streams with a consumer group.

A queue is four keys of one hash slot (keys.job_*; `{jobs:<queue>}`), so every move of a
job is one script or one MULTI, on one server or a Redis Cluster alike:

- `ready` (a stream, consumer group `workers`): jobs to run. A worker takes one with
  XREADGROUP; it stays in the group's pending list until the worker acknowledges it, and a
  worker that died holding it is found by XAUTOCLAIM once it has been idle for the queue's
  `lease` (a running job's worker renews that, `touch`). Done: XACK and XDEL together, so
  the stream's length is the queue's depth, running jobs included.
- `delayed` (a sorted set by due time): jobs waiting for a retry or for their destination's
  backoff; `promote` moves the due ones into `ready`.
- `dead` (a list, newest first, JOB_DEAD_CAP kept): jobs that used up their attempts, with
  their last error; staff see them and send them back (`retry_dead`).
- `totals` (a hash): done, retried, dead, for the dashboard.

Delivery is at least once: a job whose worker dies after its work but before its XACK runs
again, so every handler is idempotent (social/work/). A queue is bounded: `enqueue` refuses
past `limit` jobs (ready and delayed), and the caller answers "busy" (503, Retry-After).

Destinations (a federation peer's domain) get two more things, both per queue: a backoff
after a failure, doubling with each failure in a row and ended by any success (a circuit
breaker: while it runs, that destination's jobs wait in `delayed` without using an attempt),
and at most `per_destination` jobs running at once, by leases that expire on their own.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Unpack, cast

import redis

from social import keys

from ..base import Client, Entries, RepositoryBase, StoreSettings, s
from ..models import User, as_datetime
from ..moderation.audit import AuditDraft, AuditStore

GROUP = "workers"
PROMOTE_BATCH = 100  # delayed jobs moved into ready per promote call
ERROR_MAX = 500  # characters of an error kept with a job


@dataclass(frozen=True)
class Job:
    """One job: its stable id, what to run (kind) with what (payload), the attempts it has
    already failed, the destination it is for (or ""), when it was first queued (ms), and,
    taken from the stream, its entry id and how many times that entry was delivered."""

    id: str
    queue: str
    kind: str
    payload: Mapping[str, str]
    attempt: int = 0
    destination: str = ""
    enqueued: int = 0
    error: str = ""
    entry: str = ""
    delivered: int = 1
    died: int = 0  # ms: when it became a dead letter

    @property
    def died_at(self) -> datetime | None:
        return as_datetime(self.died // 1000) if self.died else None

    def encoded(self) -> str:
        """The job as it is kept in Redis (one JSON string: stream field, set member)."""
        return json.dumps(
            {
                "id": self.id,
                "kind": self.kind,
                "payload": dict(self.payload),
                "attempt": self.attempt,
                "dest": self.destination,
                "enqueued": self.enqueued,
                "error": self.error,
                "died": self.died,
            },
            separators=(",", ":"),
            sort_keys=True,
        )

    @classmethod
    def decoded(cls, queue: str, raw: bytes | str, *, entry: str = "") -> Job:
        data = json.loads(raw)
        return cls(
            id=str(data["id"]),
            queue=queue,
            kind=str(data["kind"]),
            payload={str(k): str(v) for k, v in data["payload"].items()},
            attempt=int(data.get("attempt", 0)),
            destination=str(data.get("dest", "")),
            enqueued=int(data.get("enqueued", 0)),
            error=str(data.get("error", "")),
            entry=entry,
            died=int(data.get("died", 0)),
        )


@dataclass(frozen=True)
class QueueStats:
    """What the staff dashboard shows of one queue."""

    queue: str
    ready: int  # in the stream: waiting or running
    running: int  # taken by a worker, not yet acknowledged
    delayed: int  # waiting for a retry or a destination
    dead: int
    oldest_ms: int | None  # when the oldest job in the stream was first queued
    done: int = 0
    retried: int = 0
    died: int = 0
    backoff: list[tuple[str, int]] = field(default_factory=list)  # (destination, until ms)

    @property
    def oldest(self) -> datetime | None:
        return as_datetime(self.oldest_ms // 1000) if self.oldest_ms else None

    @property
    def waiting(self) -> int:
        return max(0, self.ready - self.running)


class QueueFull(Exception):
    """The queue holds its limit of jobs: try again later (answered as 503 "busy")."""

    def __init__(self, queue: str) -> None:
        super().__init__(f"the {queue} queue is full")
        self.queue = queue


# KEYS[1]: ready, KEYS[2]: delayed. ARGV: limit, job, due ms (0: now), now ms.
# Refuse past the limit; else queue the job, ready or delayed. One slot: atomic on a cluster.
ENQUEUE = """
if redis.call('XLEN', KEYS[1]) + redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[1]) then
  return 0
end
if tonumber(ARGV[3]) > tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
else
  redis.call('XADD', KEYS[1], '*', 'job', ARGV[2])
end
return 1
"""

# KEYS[1]: ready, KEYS[2]: delayed. ARGV: now ms, at most this many. Move due jobs to ready.
PROMOTE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, job in ipairs(due) do
  redis.call('XADD', KEYS[1], '*', 'job', job)
  redis.call('ZREM', KEYS[2], job)
end
return #due
"""

# KEYS[1]: a destination's leases. ARGV: now ms, lease ms, token, at most this many.
# Take a lease if fewer than the limit are held (expired ones dropped first).
LEASE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""


# KEYS[1]: dead, KEYS[2]: ready. ARGV: the dead letter, the job to queue. Only if it was
# still there: two members of staff retrying the same letter queue it once.
RESURRECT = """
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
redis.call('XADD', KEYS[2], '*', 'job', ARGV[2])
return 1
"""


def now_ms() -> int:
    return int(time.time() * 1000)


class JobStore(RepositoryBase):
    """Queues of jobs (module docstring). `limit`, `lease` and the retry schedule are the
    caller's (social/work/queues.py), given per call."""

    def __init__(self, client: Client, *, audit: AuditStore, **config: Unpack[StoreSettings]):
        super().__init__(client, **config)
        self.audit = audit

    # --- Queuing ------------------------------------------------------------------------

    def enqueue(
        self,
        queue: str,
        kind: str,
        payload: Mapping[str, str],
        *,
        limit: int,
        destination: str = "",
        delay_ms: int = 0,
        now: int | None = None,
    ) -> str:
        """Queue a job; return its id. Raise QueueFull when the queue holds `limit` jobs."""
        at = now_ms() if now is None else now
        job = Job(
            id=secrets.token_hex(8), queue=queue, kind=kind, payload=dict(payload),
            destination=destination, enqueued=at,
        )  # fmt: skip
        due = at + delay_ms if delay_ms > 0 else 0
        queued = self.r.eval(
            ENQUEUE, 2, keys.job_stream(queue), keys.job_delayed(queue),
            limit, job.encoded(), due, at,
        )  # fmt: skip
        if not queued:
            raise QueueFull(queue)
        return job.id

    def enqueue_many(
        self,
        queue: str,
        kind: str,
        jobs: Sequence[tuple[Mapping[str, str], str]],
        *,
        limit: int,
        now: int | None = None,
    ) -> int:
        """Queue jobs of kind, each (payload, destination), in one round trip (the ENQUEUE
        script for each: one slot); return how many were queued. Raise QueueFull when the
        limit refused any (those before it stay queued: at least once, as one by one)."""
        at = now_ms() if now is None else now
        pipe = self._pipe()
        for payload, destination in jobs:
            job = Job(
                id=secrets.token_hex(8), queue=queue, kind=kind, payload=dict(payload),
                destination=destination, enqueued=at,
            )  # fmt: skip
            pipe.execute_command(
                "EVAL", ENQUEUE, 2, keys.job_stream(queue), keys.job_delayed(queue),
                limit, job.encoded(), 0, at,
            )  # fmt: skip
        queued = sum(int(x) for x in pipe.execute()) if jobs else 0
        if queued < len(jobs):
            raise QueueFull(queue)
        return queued

    def clear_destination(self, queue: str, destination: str) -> None:
        """End a destination's backoff now (staff said it is back), as a success does."""
        with self.r.pipeline(transaction=True) as pipe:
            pipe.delete(keys.job_destination(queue, destination))
            pipe.zrem(keys.job_destinations(queue), destination)
            pipe.execute()

    def promote(self, queue: str, *, now: int | None = None) -> int:
        """Move the delayed jobs that are due into ready; return how many moved."""
        at = now_ms() if now is None else now
        moved = self.r.eval(
            PROMOTE, 2, keys.job_stream(queue), keys.job_delayed(queue), at, PROMOTE_BATCH
        )
        return int(cast(int, moved))

    # --- Taking jobs --------------------------------------------------------------------

    def ensure_group(self, queue: str) -> None:
        """Create the queue's consumer group if its stream exists and has none (reading from
        the start, so jobs queued before any worker ran are not skipped). A queue nothing was
        ever queued on has no stream: an idle worker writes nothing."""
        try:
            self.r.xgroup_create(keys.job_stream(queue), GROUP, id="0")
        except redis.ResponseError as error:
            if "BUSYGROUP" not in str(error) and "requires the key to exist" not in str(error):
                raise

    def take(self, queue: str, consumer: str, *, block_ms: int | None = None) -> Job | None:
        """Take the next ready job for consumer (waiting up to block_ms for one, or not at
        all when None); None when there is none."""
        stream = keys.job_stream(queue)
        try:
            got = self.r.xreadgroup(GROUP, consumer, {stream: ">"}, count=1, block=block_ms)
        except redis.ResponseError as error:
            if "NOGROUP" not in str(error):
                raise
            self.ensure_group(queue)
            return None
        for _, entries in cast(list[tuple[bytes, Entries]], got or []):
            for entry, fields in entries:
                if b"job" in fields:
                    return Job.decoded(queue, fields[b"job"], entry=s(entry))
                self._drop(queue, s(entry))  # not ours: never run, never stuck
        return None

    def reclaim(self, queue: str, consumer: str, *, idle_ms: int, count: int = 10) -> list[Job]:
        """Take over jobs whose worker has not touched them for idle_ms (it died, or hangs),
        each with how many times it has been delivered (a job that keeps killing its worker
        is recognised by that and sent to the dead letters by the runner)."""
        stream = keys.job_stream(queue)
        try:
            reply = self.r.xautoclaim(stream, GROUP, consumer, idle_ms, "0-0", count=count)
        except redis.ResponseError as error:
            if "NOGROUP" not in str(error):
                raise
            self.ensure_group(queue)
            return []
        claimed = cast(Entries, reply[1])
        if not claimed:
            return []
        pipe = self._pipe()
        for entry, _ in claimed:
            pipe.xpending_range(stream, GROUP, min=entry, max=entry, count=1)
        pending = pipe.execute()
        jobs = []
        for (entry, fields), info in zip(claimed, pending):
            if not fields or b"job" not in fields:  # deleted meanwhile: nothing to run
                self._drop(queue, s(entry))
                continue
            times = int(info[0]["times_delivered"]) if info else 1
            jobs.append(Job.decoded(queue, fields[b"job"], entry=s(entry)))
            jobs[-1] = replace(jobs[-1], delivered=times)
        return jobs

    def touch(self, job: Job, consumer: str) -> None:
        """Tell the group the job's worker is alive (resets its idle time: not reclaimed)."""
        self.r.xclaim(keys.job_stream(job.queue), GROUP, consumer, 0, [job.entry], justid=True)

    # --- Ending jobs --------------------------------------------------------------------

    def done(self, job: Job) -> None:
        """The job succeeded: acknowledged and deleted; its destination's backoff ended."""
        with self.r.pipeline(transaction=True) as pipe:
            pipe.xack(keys.job_stream(job.queue), GROUP, job.entry)
            pipe.xdel(keys.job_stream(job.queue), job.entry)
            pipe.hincrby(keys.job_totals(job.queue), "done", 1)
            if job.destination:
                pipe.delete(keys.job_destination(job.queue, job.destination))
                pipe.zrem(keys.job_destinations(job.queue), job.destination)
            pipe.execute()

    def retry(self, job: Job, error: str, *, delay_ms: int, now: int | None = None) -> None:
        """The job failed and may run again after delay_ms, one attempt more."""
        at = now_ms() if now is None else now
        again = replace(job, attempt=job.attempt + 1, error=error[:ERROR_MAX], entry="")
        with self.r.pipeline(transaction=True) as pipe:
            pipe.xack(keys.job_stream(job.queue), GROUP, job.entry)
            pipe.xdel(keys.job_stream(job.queue), job.entry)
            pipe.zadd(keys.job_delayed(job.queue), {again.encoded(): at + delay_ms})
            pipe.hincrby(keys.job_totals(job.queue), "retried", 1)
            pipe.execute()

    def defer(self, job: Job, *, until: int) -> None:
        """Put the job back, unattempted, until a time (its destination is backing off or
        busy): no attempt is used."""
        again = replace(job, entry="")
        with self.r.pipeline(transaction=True) as pipe:
            pipe.xack(keys.job_stream(job.queue), GROUP, job.entry)
            pipe.xdel(keys.job_stream(job.queue), job.entry)
            pipe.zadd(keys.job_delayed(job.queue), {again.encoded(): until})
            pipe.execute()

    def bury(self, job: Job, error: str, *, now: int | None = None) -> None:
        """The job will not succeed: acknowledged, deleted, kept among the dead letters."""
        at = now_ms() if now is None else now
        dead = replace(job, error=error[:ERROR_MAX], entry="", died=at)
        with self.r.pipeline(transaction=True) as pipe:
            pipe.xack(keys.job_stream(job.queue), GROUP, job.entry)
            pipe.xdel(keys.job_stream(job.queue), job.entry)
            pipe.lpush(keys.job_dead(job.queue), dead.encoded())
            pipe.ltrim(keys.job_dead(job.queue), 0, keys.JOB_DEAD_CAP - 1)
            pipe.hincrby(keys.job_totals(job.queue), "dead", 1)
            pipe.execute()

    def _drop(self, queue: str, entry: str) -> None:
        with self.r.pipeline(transaction=True) as pipe:
            pipe.xack(keys.job_stream(queue), GROUP, entry)
            pipe.xdel(keys.job_stream(queue), entry)
            pipe.execute()

    # --- Destinations -------------------------------------------------------------------

    def backoff_until(self, queue: str, destination: str) -> int:
        """Return when (ms) the destination's backoff ends, 0 when it has none."""
        until = self.r.hget(keys.job_destination(queue, destination), "until")
        return int(cast(bytes, until)) if until else 0

    def destination_failed(self, queue: str, destination: str, *, base_ms: int, max_ms: int,
                           keep_ms: int, now: int | None = None) -> int:  # fmt: skip
        """Count a failure in a row for destination and start its backoff (base_ms, doubled
        each failure, at most max_ms); return the failures in a row. The record is let go
        keep_ms after the last failure (a destination that fails for ever does not pile up
        keys; a success deletes it at once)."""
        at = now_ms() if now is None else now
        key = keys.job_destination(queue, destination)
        failures = int(self.r.hincrby(key, "failures", 1))
        wait = min(max_ms, base_ms * 2 ** min(failures - 1, 30))
        with self.r.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping={"until": at + wait, "last": at})
            pipe.pexpire(key, keep_ms)
            pipe.zadd(keys.job_destinations(queue), {destination: at + wait})
            pipe.zremrangebyscore(keys.job_destinations(queue), "-inf", at - keep_ms)
            pipe.execute()
        return failures

    def lease(self, queue: str, destination: str, token: str, *, most: int, lease_ms: int,
              now: int | None = None) -> bool:  # fmt: skip
        """Take one of a destination's `most` running slots for lease_ms; False when all are
        taken."""
        at = now_ms() if now is None else now
        got = self.r.eval(LEASE, 1, keys.job_leases(queue, destination), at, lease_ms, token, most)
        return bool(got)

    def release(self, queue: str, destination: str, token: str) -> None:
        """Give a destination's running slot back."""
        self.r.zrem(keys.job_leases(queue, destination), token)

    # --- Staff --------------------------------------------------------------------------

    def stats(self, queues: list[str], *, now: int | None = None) -> list[QueueStats]:
        """Return each queue's depth, running, delayed and dead jobs, its oldest job, its
        totals and its destinations backing off: one round trip for all of them."""
        at = now_ms() if now is None else now
        pipe = self._pipe()
        for queue in queues:
            stream = keys.job_stream(queue)
            pipe.xlen(stream)
            pipe.zcard(keys.job_delayed(queue))
            pipe.llen(keys.job_dead(queue))
            pipe.xrange(stream, count=1)
            pipe.hgetall(keys.job_totals(queue))
            pipe.zrangebyscore(keys.job_destinations(queue), at, "+inf", withscores=True)
            pipe.xpending(stream, GROUP)  # an error until a worker has made the group
        replies = pipe.execute(raise_on_error=False)
        result = []
        for number, queue in enumerate(queues):
            ready, delayed, dead, first, totals, backoff, pending = replies[
                7 * number : 7 * number + 7
            ]
            oldest = None
            for _, fields in cast(Entries, first):
                if b"job" in fields:
                    oldest = Job.decoded(queue, fields[b"job"]).enqueued
            running = int(pending["pending"]) if isinstance(pending, dict) else 0
            t = {s(k): int(v) for k, v in cast(dict[bytes, bytes], totals).items()}
            result.append(
                QueueStats(
                    queue=queue,
                    ready=int(ready),
                    running=running,
                    delayed=int(delayed),
                    dead=int(dead),
                    oldest_ms=oldest,
                    done=t.get("done", 0),
                    retried=t.get("retried", 0),
                    died=t.get("dead", 0),
                    backoff=[(s(d), int(u)) for d, u in backoff],
                )  # fmt: skip
            )
        return result

    def dead_letters(self, queue: str, *, count: int = 50) -> list[Job]:
        """Return the newest dead letters of a queue."""
        raw = cast(list[bytes], self.r.lrange(keys.job_dead(queue), 0, count - 1))
        return [Job.decoded(queue, item) for item in raw]

    def dead_letters_of(self, queues: list[str], *, count: int = 50) -> dict[str, list[Job]]:
        """Return the newest dead letters of each queue: one pipeline whatever the number of
        queues (one round trip per node on a cluster)."""
        pipe = self._pipe()
        for queue in queues:
            pipe.lrange(keys.job_dead(queue), 0, count - 1)
        found = cast(list[list[bytes]], pipe.execute())
        return {q: [Job.decoded(q, item) for item in raw] for q, raw in zip(queues, found)}

    def retry_dead(self, queue: str, job_id: str) -> bool:
        """Send one dead letter back to ready with its attempts reset; False when it is no
        longer among the dead letters (another member of staff was quicker). The queue's
        limit does not refuse it: staff asked."""
        key = keys.job_dead(queue)
        for raw in cast(list[bytes], self.r.lrange(key, 0, keys.JOB_DEAD_CAP - 1)):
            job = Job.decoded(queue, raw)
            if job.id != job_id:
                continue
            again = replace(job, attempt=0, error="", died=0)
            moved = self.r.eval(RESURRECT, 2, key, keys.job_stream(queue), raw, again.encoded())
            return bool(moved)
        return False

    def staff_retry_dead(self, queue: str, job_id: str, actor: User) -> bool:
        """retry_dead, as staff, logged in the audit log; False when it was not there."""
        return self._as_staff(actor, "retry_job", queue, job_id, self.retry_dead)

    def staff_discard_dead(self, queue: str, job_id: str, actor: User) -> bool:
        """discard_dead, as staff, logged in the audit log; False when it was not there."""
        return self._as_staff(actor, "discard_job", queue, job_id, self.discard_dead)

    def _as_staff(
        self, actor: User, action: str, queue: str, job_id: str, act: Callable[[str, str], bool]
    ) -> bool:
        """Do act(queue, job_id) to a dead letter and log it as action, with the job's
        queue, kind, id and last error; False when it was not there."""
        raw = cast(list[bytes], self.r.lrange(keys.job_dead(queue), 0, keys.JOB_DEAD_CAP - 1))
        letters = (Job.decoded(queue, x) for x in raw)
        job = next((letter for letter in letters if letter.id == job_id), None)
        if job is None or not act(queue, job_id):
            return False
        reason = f"{job.queue}/{job.kind} {job.id}: {job.error}"
        self.audit.run_audited([AuditDraft(actor, action, reason=reason)], lambda pipe, ts: None)
        return True

    def discard_dead(self, queue: str, job_id: str) -> bool:
        """Delete one dead letter; False when it is not there."""
        key = keys.job_dead(queue)
        for raw in cast(list[bytes], self.r.lrange(key, 0, keys.JOB_DEAD_CAP - 1)):
            if Job.decoded(queue, raw).id == job_id:
                return bool(self.r.lrem(key, 1, raw))  # type: ignore[arg-type]  # bytes are fine
        return False
