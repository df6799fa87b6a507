"""Deliveries to other servers: whom our accounts' activities go to, what they sent that
they may undo, and which domains have been failing or are unavailable.

Audiences. An account's remote followers are found by reading its followers in batches
(FOLLOWER_BATCH), each batch's accounts read in the pipeline that also reads the next batch
(one round trip a batch, as the home-feed fan-out reads them), and told apart by their
user hash (a remote account's has a `domain`: actors.actor_from_hash). Each yields its
server's shared inbox when it has one (Mastodon's preferred_inbox_url): a thousand
followers on one server are one delivery.

Mastodon's rule (DeliveryFailureTracker): every failed delivery adds its day to the
domain's record; a success, outgoing or incoming, deletes the record; a domain whose
record reaches seven distinct days is unavailable, and nothing is queued for it again
until a success (an activity it sends us) or staff revive it. Here a failure record is
also forgotten DELIVERY_FAILURE_KEEP after its last failure (Mastodon keeps it until a
success: a server that failed on seven days a year apart would end unavailable).

Each change is one script on keys of one slot ({deliveries}): on a cluster too.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Unpack, cast

from social import keys

from ..base import Client, Members, Pipe, RepositoryBase, StoreSettings, as_int, s
from ..models import User, as_datetime
from ..moderation.audit import AuditDraft, AuditStore
from .actors import RemoteActor, RemoteActorStore, actor_from_hash
from .domains import domain_and_parents

UNAVAILABLE_AFTER_DAYS = 7  # Mastodon's FAILURE_DAYS_THRESHOLD
DAY = 24 * 3600
LIST_MAX = 200  # domains a staff page lists
FOLLOWER_BATCH = 500  # followers read per round trip when looking for remote ones
# What a follower's hash is read for: enough to tell a remote account and its inboxes.
AUDIENCE_FIELDS = ("username", "domain", "uri", "inbox", "shared_inbox", "status")

# KEYS[1]: the domain's failure record, KEYS[2]: failing domains, KEYS[3]: unavailable
# domains. ARGV: domain, now (unix s), today (day number), days to be unavailable, keep (s).
# Count a failure; return 1 when it made the domain unavailable, else 0.
FAILED = """
redis.call('HSETNX', KEYS[1], 'first', ARGV[2])
local days = tonumber(redis.call('HGET', KEYS[1], 'days') or '0')
if redis.call('HSETNX', KEYS[1], 'd' .. ARGV[3], 1) == 1 then
  days = redis.call('HINCRBY', KEYS[1], 'days', 1)
end
redis.call('HSET', KEYS[1], 'last', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[5]))
if days >= tonumber(ARGV[4]) then
  return redis.call('ZADD', KEYS[3], 'NX', ARGV[2], ARGV[1])
end
return 0
"""

# KEYS: as FAILED's. ARGV[1]: the domain. Forget its failures; return 1 when it was
# unavailable (it is available again), else 0. (Removing what is not there writes
# nothing: a success to a healthy domain costs its round trip and no replication.)
SUCCEEDED = """
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[3], ARGV[1])
"""


@dataclass(frozen=True)
class FailingDomain:
    """A domain deliveries have failed to since its last success: its first and last
    failure (unix s), on how many days, and since when it is unavailable (None: not)."""

    domain: str
    first: int
    last: int
    days: int
    unavailable_since: int | None = None

    @property
    def first_at(self) -> datetime | None:
        return as_datetime(self.first or None)

    @property
    def last_at(self) -> datetime | None:
        return as_datetime(self.last or None)

    @property
    def unavailable_at(self) -> datetime | None:
        return as_datetime(self.unavailable_since)


class DeliveryStore(RepositoryBase):
    """Failing and unavailable domains (keys.delivery_failure, delivery_failing,
    unavailable_domains)."""

    def __init__(
        self,
        client: Client,
        *,
        audit: AuditStore,
        remote_actors: RemoteActorStore,
        **config: Unpack[StoreSettings],
    ):
        super().__init__(client, **config)
        self.audit = audit
        self.remote_actors = remote_actors

    # --- Audiences ----------------------------------------------------------------------

    def follower_inboxes(self, user_id: int) -> set[str]:
        """Return the inboxes (shared ones preferred) of user_id's remote followers, but
        those suspended and those user_id blocks: from its remote followers' index (its
        local followers are never read). One round trip per FOLLOWER_BATCH remote
        followers, and one for the blocks."""
        blocked = {int(x) for x in cast(Members, self.r.zrange(keys.blocks(user_id), 0, -1))}
        inboxes: set[str] = set()
        batch = [
            int(x)
            for x in cast(
                Members, self.r.zrange(keys.remote_followers(user_id), 0, FOLLOWER_BATCH - 1)
            )
        ]
        start = 0
        while batch:
            start += FOLLOWER_BATCH
            pipe = self._pipe()
            for follower in batch:
                pipe.hmget(keys.user(follower), AUDIENCE_FIELDS)
            pipe.zrange(keys.remote_followers(user_id), start, start + FOLLOWER_BATCH - 1)
            *rows, following = pipe.execute()
            for follower, values in zip(batch, rows):
                actor = actor_from_hash(follower, dict(zip(AUDIENCE_FIELDS, map(s, values))))
                if actor is not None and not actor.is_suspended and follower not in blocked:
                    inboxes.add(actor.delivery_inbox)
            batch = [int(x) for x in following]
        return inboxes

    def remote_accounts(self, ids: Collection[int]) -> dict[int, RemoteActor]:
        """Return {id: RemoteActor} for the remote accounts among ids that are not
        suspended (one round trip)."""
        found = self.remote_actors.get_many(ids)
        return {i: actor for i, actor in found.items() if not actor.is_suspended}

    def object_ids(self, post_ids: Collection[int]) -> dict[int, str]:
        """Return {post id: its id on its own server} for the remote posts among post_ids
        (their hash's `uri`: objects.py), in one round trip; ours are not in it."""
        wanted = list(dict.fromkeys(int(i) for i in post_ids))
        if not wanted:
            return {}
        pipe = self._pipe()
        for post_id in wanted:
            pipe.hget(keys.post(post_id), "uri")
        return {i: s(uri) for i, uri in zip(wanted, pipe.execute()) if uri}

    def relation(self, user_id: int, kind: str, other: int) -> float | None:
        """Return the score of other in user_id's set of `kind` ("following", "blocks",
        "likes": posts liked, "reposts": posts reposted, scored by the repost's id), or None
        when it is not there: whether an action still stands when its fan-out runs."""
        key = {
            "following": keys.following,
            "blocks": keys.blocks,
            "likes": keys.user_likes,
            "reposts": keys.user_reposts,
        }[kind](user_id)
        return self.r.zscore(key, other)

    # --- What our accounts sent -------------------------------------------------------

    def sent(self, user_id: int, about: str) -> str | None:
        """Return the id of the activity user_id sent about `about` (`like:<post>`...), or
        None."""
        return s(cast(bytes | None, self.r.hget(keys.activities_sent(user_id), about)))

    def record_sent(self, user_id: int, about: str, activity_id: str) -> None:
        """Remember the id of the activity user_id sent about `about` (its Undo names it)."""
        self.r.hset(keys.activities_sent(user_id), about, activity_id)

    def forget_sent(self, user_id: int, about: str) -> None:
        self.r.hdel(keys.activities_sent(user_id), about)

    # --- Domains ----------------------------------------------------------------------

    def _keys(self, domain: str) -> tuple[str, str, str]:
        return (
            keys.delivery_failure(domain),
            keys.delivery_failing(),
            keys.unavailable_domains(),
        )

    def failed(self, domain: str, *, now: float | None = None) -> bool:
        """Count a failed delivery to domain; return True when this made it unavailable."""
        at = time.time() if now is None else now
        made = self.r.eval(
            FAILED, 3, *self._keys(domain), domain, int(at), int(at // DAY),
            UNAVAILABLE_AFTER_DAYS, keys.DELIVERY_FAILURE_KEEP,
        )  # fmt: skip
        return bool(made)

    def succeeded(self, domain: str) -> bool:
        """Forget domain's failures (a delivery to it succeeded, or it sent us an activity);
        return True when it was unavailable until now. One round trip."""
        return bool(self.r.eval(SUCCEEDED, 3, *self._keys(domain), domain))

    def unavailable_among(self, domains: Collection[str]) -> set[str]:
        """Return the domains among domains that are marked unavailable (one ZMSCORE)."""
        wanted = list(domains)
        if not wanted:
            return set()
        scores = self.r.zmscore(keys.unavailable_domains(), wanted)
        return {domain for domain, score in zip(wanted, scores) if score is not None}

    def undeliverable(self, domains: Collection[str]) -> set[str]:
        """Return the domains among domains nothing is queued for: those unavailable, and
        those staff block (or under a blocked domain: domains.py's rule). One round trip."""
        return self._standing(domains)[0]

    def standing(self, domain: str) -> tuple[bool, bool]:
        """Return whether nothing may go to domain now (undeliverable) and whether it has
        failures on record (a success should forget them): one round trip, so a delivery
        to a healthy server writes nothing for it."""
        skipped, failing = self._standing([domain])
        return domain in skipped, domain in failing

    def _standing(self, domains: Collection[str]) -> tuple[set[str], set[str]]:
        wanted = list(domains)
        if not wanted:
            return set(), set()
        spellings = {domain: domain_and_parents(domain) for domain in wanted}
        candidates = list(dict.fromkeys(c for found in spellings.values() for c in found))
        pipe = self._pipe()
        pipe.zmscore(keys.unavailable_domains(), wanted)
        pipe.zmscore(keys.delivery_failing(), wanted)
        if candidates:
            pipe.hmget(keys.blocked_domains(), candidates)
        scores, failing_scores, *blocked_at = pipe.execute()
        blocked = {c for c, at in zip(candidates, blocked_at[0] if blocked_at else []) if at}
        skipped = {
            domain
            for domain, score in zip(wanted, scores)
            if score is not None or not spellings[domain] or blocked & set(spellings[domain])
        }
        failing = {d for d, score in zip(wanted, failing_scores) if score is not None}
        return skipped, failing | {d for d, score in zip(wanted, scores) if score is not None}

    def failing(self, *, count: int = LIST_MAX) -> list[FailingDomain]:
        """Return the domains with failures since their last success (newest failure
        first) and those unavailable, at most count of each. Two round trips."""
        pipe = self._pipe()
        pipe.zrevrange(keys.delivery_failing(), 0, count - 1)
        pipe.zrevrange(keys.unavailable_domains(), 0, count - 1, withscores=True)
        failing, unavailable = pipe.execute()
        since = {s(domain): int(score) for domain, score in unavailable}
        names = list(dict.fromkeys([*(s(d) for d in failing), *since]))
        pipe = self._pipe()
        for domain in names:
            pipe.hmget(keys.delivery_failure(domain), ["first", "last", "days"])
        found = []
        for domain, (first, last, days) in zip(names, pipe.execute()):
            found.append(
                FailingDomain(
                    domain,
                    as_int(first) or 0,
                    as_int(last) or 0,
                    as_int(days) or 0,
                    since.get(domain),
                )  # fmt: skip
            )
        return found

    def staff_revive(self, domain: str, actor: User, *, at: int | None = None) -> bool:
        """Mark domain available again and forget its failures, audited as actor's
        (`revive_domain`); False when it had neither (nothing written)."""
        failure, failing, unavailable = self._keys(domain)
        pipe = self._pipe()
        pipe.zscore(failing, domain)
        pipe.zscore(unavailable, domain)
        if not any(x is not None for x in pipe.execute()):
            return False
        draft = AuditDraft(actor=actor, action="revive_domain", target_name=domain)

        def queue(pipe: Pipe, ts: int) -> None:
            pipe.execute_command("EVAL", SUCCEEDED, 3, failure, failing, unavailable, domain)

        self.audit.run_audited([draft], queue, at=at)
        return True

    def days_failing(self, domain: str) -> int:
        """How many distinct days deliveries to domain failed since its last success."""
        return as_int(cast(bytes | None, self.r.hget(keys.delivery_failure(domain), "days"))) or 0
