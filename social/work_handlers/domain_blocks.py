"""The inbox queue's `domain_block` handler: a server was blocked or unblocked on a staff
page (social/federation/moderation.py); its accounts are settled with the list here
(DomainBlockStore.settle: suspended and their follows with ours cut, or the block's
suspensions lifted). Idempotent: a job run twice, or a block and an unblock whose jobs
run in either order, end as the list says when the job runs.
"""

from __future__ import annotations

import logging

from social import work
from social.federation.moderation import QUEUE, SETTLE
from social.federation.names import InvalidAddress, normalise_domain
from social.repository import get_repository

log = logging.getLogger(__name__)


@work.handler(QUEUE, SETTLE)
def settle(payload: dict[str, str]) -> None:
    """Settle payload's domain's accounts with the list of blocked domains."""
    try:
        domain = normalise_domain(payload.get("domain", ""))
    except InvalidAddress:
        raise work.Permanent(f"not a domain: {payload!r}"[:300]) from None
    changed, cut = get_repository().federation_domains.settle(domain)
    log.info("domain %s settled: %d accounts changed, %d follows cut", domain, changed, cut)
