"""What a staff page does after blocking or unblocking a server: one job queued on the
worker tier (the inbox queue's `domain_block`, social/work_handlers/domain_blocks.py),
which settles the server's accounts with the list (repository/federation/domains.py's
settle): the follows between them and ours cut after a block, which rewrites the home
feeds of everyone here who followed them, too slow for a page.
"""

from __future__ import annotations

from typing import Final

from social import work

QUEUE: Final = "inbox"  # federation's work from other servers; two threads a worker
SETTLE: Final = "domain_block"


def queue_settle(domain: str) -> None:
    """Queue settling domain's accounts with the list of blocked domains; raise
    work.QueueFull when the queue is full (the block stands; blocking again queues it
    again)."""
    work.enqueue(QUEUE, SETTLE, {"domain": domain})
