"""The worker tier: slow work (pictures, mail, federation's deliveries) runs here, never in
a page request.

    @work.handler("media", "post_picture")
    def process(payload: dict[str, str]) -> None: ...

    work.enqueue("media", "post_picture", {"token": token})  # from a view or a store

`manage.py work` runs the handlers (runner.py); jobs are durable in Redis
(repository/work/jobs.py), delivered at least once, so every handler is idempotent: a job run
twice has the effect of running once. A handler raises Retry for a failure worth trying
again (with the queue's backoff; for a job with a destination, the destination's too),
Permanent for one that never succeeds (a dead letter at once); any other exception is
retried as a bug might be transient. docs/workers.md has the whole story.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from social.repository import get_repository
from social.repository.work.jobs import QueueFull

from .queues import QUEUES, Queue, queue
from .registry import DeadHandler, Handler, register
from .runner import Permanent, Retry, Worker, run_pending

__all__ = [
    "QUEUES",
    "Permanent",
    "Queue",
    "QueueFull",
    "Retry",
    "Worker",
    "enqueue",
    "enqueue_many",
    "handler",
    "run_pending",
]


def handler(
    queue_name: str, kind: str, *, on_dead: DeadHandler | None = None
) -> Callable[[Handler], Handler]:
    """Register the decorated function as what runs jobs of kind on queue_name; on_dead,
    if given, runs once (best effort) when such a job becomes a dead letter."""
    queue(queue_name)  # an unknown queue fails at import, not when a job comes

    def register_it(function: Handler) -> Handler:
        register(queue_name, kind, function, on_dead)
        return function

    return register_it


def enqueue(
    queue_name: str,
    kind: str,
    payload: Mapping[str, str],
    *,
    destination: str = "",
    delay_ms: int = 0,
) -> str:
    """Queue a job; return its id. Raise QueueFull when the queue is at its limit (the
    caller answers "busy": 503 with Retry-After)."""
    shape = queue(queue_name)
    return get_repository().jobs.enqueue(
        queue_name, kind, payload, limit=shape.limit, destination=destination,
        delay_ms=delay_ms,
    )  # fmt: skip


def enqueue_many(queue_name: str, kind: str, jobs: Sequence[tuple[Mapping[str, str], str]]) -> int:
    """Queue jobs of kind, each (payload, destination), in one round trip; return how many
    were queued. Raise QueueFull when the queue refused any."""
    return get_repository().jobs.enqueue_many(queue_name, kind, jobs, limit=queue(queue_name).limit)
