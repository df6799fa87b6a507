"""What the inbox remembers of incoming activities: each activity id seen (replays dropped)
and its counters.

An activity's id is claimed by the job that applies it (keys.inbox_seen, for
INBOX_SEEN_TTL): a second delivery of the same activity, or a replay of a captured
request, finds the claim and is dropped. The claim holds the job's receipt (a random
token the accept path gives each job), so the same job run again (delivery is at least
once: a worker killed after its claim) is still its owner and goes on; a job whose
activity fails or is refused gives its claim back (release), so that a retry, or a
corrected resend, is not taken for a replay.
"""

from __future__ import annotations

from typing import cast

from social import keys

from ..base import Hash, RepositoryBase, as_int, s

# KEYS[1]: keys.inbox_seen(id). ARGV[1]: the job's receipt, ARGV[2]: the TTL (s).
# Claim the id for the receipt unless another receipt holds it; 1 when the receipt holds
# it now (claimed, or claimed before by the same job), 0 when another does (a replay).
CLAIM_SCRIPT = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end
return 0
"""

# KEYS[1]: keys.inbox_seen(id). ARGV[1]: the job's receipt. Delete the claim if it is
# that receipt's (never another job's); 1 when deleted.
RELEASE_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class InboxStore(RepositoryBase):
    """Incoming activities seen (replays) and the inbox's counters."""

    def claim(self, activity_id: str, receipt: str) -> bool:
        """Claim activity_id for the job with receipt; False when another job claimed it
        within INBOX_SEEN_TTL (a replay, or the same activity delivered twice)."""
        claimed = self.r.execute_command(
            "EVAL", CLAIM_SCRIPT, 1, keys.inbox_seen(activity_id), receipt, keys.INBOX_SEEN_TTL
        )
        return bool(claimed)

    def release(self, activity_id: str, receipt: str) -> bool:
        """Give back receipt's claim of activity_id (its activity failed or was refused);
        False when the claim is not receipt's."""
        return bool(
            self.r.execute_command("EVAL", RELEASE_SCRIPT, 1, keys.inbox_seen(activity_id), receipt)
        )

    def count(self, name: str, by: int = 1) -> None:
        """Add by to the inbox's counter name."""
        self.r.hincrby(keys.inbox_totals(), name, by)

    def totals(self) -> dict[str, int]:
        """The inbox's counters since it began, by name."""
        raw = cast(Hash, self.r.hgetall(keys.inbox_totals()))
        return {s(name): as_int(value) or 0 for name, value in raw.items()}
