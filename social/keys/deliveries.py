"""Federation's deliveries (repository/federation/deliveries.py, docs/federation.md): which
servers have been failing, which are marked unavailable, and the activities our accounts
sent that they may undo. The domain keys carry the hash tag {deliveries}: a failure or a success
updates all three in one script, on one server or a Redis Cluster alike."""

from __future__ import annotations

import re

DELIVERY_FAILURE_KEEP = 30 * 24 * 3600  # a domain's failure record outlives its last failure

_DOMAIN_RE = re.compile(r"[a-z0-9.:\[\]_-]{1,262}")  # names.url_domain's spelling


def _checked_domain(domain: str) -> str:
    if not _DOMAIN_RE.fullmatch(domain):
        raise ValueError(f"not a domain: {domain!r}")
    return domain


def delivery_failure(domain: str) -> str:
    """Hash (TTL DELIVERY_FAILURE_KEEP after its last failure): one domain's failed
    deliveries since its last success: `first`, `last` (unix s), `days` (how many distinct
    UTC days had a failure) and `d<day number>` for each of them (a few: the domain is
    unavailable after seven). Deleted by any success, in or out."""
    return f"ap:{{deliveries}}:failure:{_checked_domain(domain)}"


def delivery_failing() -> str:
    """Sorted set: domains with a failure record, by their last failure (unix s); entries
    older than DELIVERY_FAILURE_KEEP are dropped as failures are counted. Staff list it."""
    return "ap:{deliveries}:failing"


def unavailable_domains() -> str:
    """Sorted set: domains marked unavailable (failures on 7 days without a success), by
    when (unix s): nothing is queued for them until a success or staff revive them."""
    return "ap:{deliveries}:unavailable"


def activities_sent(user_id: int) -> str:
    """Hash: what a local account sent that it may undo, by what it concerns (`like:<post>`,
    `announce:<post>`, `follow:<account>`, `block:<account>`) -> the activity's id (its Undo
    names it). Written and deleted by the deliver queue's fan-out; a field per live like,
    repost, follow or block that reached another server."""
    return f"ap:sent:{int(user_id)}"
