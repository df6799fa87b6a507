"""Sending our activities to other servers: the one way anything leaves for an inbox.

    deliver(activity, signer=user_id, inboxes=[...])   # an Accept, say, from the inbox

queues one job per distinct inbox on the worker tier's `deliver` queue (kind `activity`,
payload {inbox, activity (JSON text), signer: a local account's id or "instance"}), each
with the inbox's domain as its destination: the queue's per-domain backoff and
concurrency limit apply to it (repository/work/jobs.py). The handler
(social/work_handlers/deliver.py) signs the POST as the signer and sends it through the one
HTTP client (fetch.py). Nothing here waits on another server.

An inbox that is not an http(s) URL (plain http only under FEDERATION_ALLOW_HTTP), that is
on this site's own domain, or whose domain staff block (or a domain it is under) or is
marked unavailable (days of failed deliveries, docs/federation.md) is skipped: no job is
queued for it. The handler checks both again when the job runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

from django.conf import settings

from social import work
from social.repository import get_repository

from .names import URL_MAX, url_domain

QUEUE: Final = "deliver"
ACTIVITY: Final = "activity"  # one signed POST of one activity to one inbox
FANOUT: Final = "fanout"  # one of our actions: the worker works out its inboxes (outgoing.py)
INSTANCE: Final = "instance"  # the signer of the instance actor's activities
MAX_ACTIVITY = 64 * 1024  # bytes of one activity's JSON (ours are a few KiB)
BATCH = 500  # jobs queued per round trip

Signer = int | Literal["instance"]


class ActivityTooLarge(ValueError):
    """An activity whose JSON is over MAX_ACTIVITY: a bug of ours, never sent."""


def encoded(activity: Mapping[str, Any]) -> str:
    """Return activity as the JSON text sent (compact, UTF-8 kept); raise ActivityTooLarge."""
    text = json.dumps(activity, ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8")) > MAX_ACTIVITY:
        raise ActivityTooLarge(f"an activity of over {MAX_ACTIVITY} bytes")
    return text


def signer_text(signer: Signer) -> str:
    """Return the payload's spelling of signer: a local account's id, or "instance"."""
    if signer == INSTANCE:
        return INSTANCE
    if isinstance(signer, bool) or not isinstance(signer, int) or signer <= 0:
        raise ValueError(f"not a signer: {signer!r}")
    return str(signer)


def inbox_domain(inbox: str) -> str | None:
    """Return the domain (host, with its port when not the default) an inbox URL is on,
    or None when it is no inbox we deliver to: not http(s) (http only under
    FEDERATION_ALLOW_HTTP), too long, or on this site's own domain."""
    if not inbox or len(inbox) > URL_MAX:
        return None
    if not inbox.startswith("https://") and not (
        settings.FEDERATION_ALLOW_HTTP and inbox.startswith("http://")
    ):
        return None
    domain = url_domain(inbox)
    if domain is None or domain == url_domain(settings.SITE_URL):
        return None
    return domain


def deliver(activity: Mapping[str, Any], *, signer: Signer, inboxes: Iterable[str]) -> int:
    """Queue one signed delivery of activity to each distinct inbox among inboxes (those
    skipped: the module docstring); return how many were queued. The jobs are queued in
    one round trip per batch (plus one to ask which domains to skip). Raise QueueFull when
    the deliver queue is full (the jobs queued before it stay queued)."""
    text = encoded(activity)
    who = signer_text(signer)
    wanted: dict[str, str] = {}  # inbox -> its domain, in order
    for inbox in inboxes:
        if inbox not in wanted and (domain := inbox_domain(inbox)) is not None:
            wanted[inbox] = domain
    if not wanted:
        return 0
    repo = get_repository()
    skipped = repo.federation_deliveries.undeliverable(set(wanted.values()))
    jobs = [
        ({"inbox": inbox, "activity": text, "signer": who}, domain)
        for inbox, domain in wanted.items()
        if domain not in skipped
    ]
    return sum(
        work.enqueue_many(QUEUE, ACTIVITY, jobs[start : start + BATCH])
        for start in range(0, len(jobs), BATCH)
    )


__all__ = [
    "ACTIVITY",
    "FANOUT",
    "INSTANCE",
    "MAX_ACTIVITY",
    "QUEUE",
    "ActivityTooLarge",
    "Signer",
    "deliver",
    "encoded",
    "inbox_domain",
]
