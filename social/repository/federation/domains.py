"""Servers staff block (keys.blocked_domains), and where remote accounts are.

Nothing is accepted from a blocked domain or from any of its subdomains (blocking
`example.com` blocks `social.example.com`, as Mastodon's domain blocks do), whatever port
it serves on, and nothing is delivered there (deliveries.py reads the same rule). The
inbox's accept path screens with the list as its process read it within SCREEN_REFRESH
seconds (screened_out, kept in the process cache: cache.py); the worker checks Redis
(is_blocked) before it applies anything.

Blocking and unblocking are staff actions, audited (audit.py: `block_domain`,
`unblock_domain`, the domain as the target's name; one entry whatever the number of
accounts), each one pipeline with its entry. Besides the entry, a block:

- suspends every account known on the domain or under it (the index below), at once and
  in batches: a suspension hides an account's posts and the account itself through the
  read path's existing rule (visibility.py), so pages read nothing new. It is the
  moderation store's suspension without the secret rotation (a remote account never logs
  in here), marked `domain_block` = "<blocked domain> <suspended_at>", so unblocking lifts
  the suspensions the block made and no other (a staff suspension of its own, before or
  after, rewrites `suspended_at` and so keeps its account suspended);
- cuts the follows both ways between those accounts and ours (cut_follows, through the
  graph's unfollow steps, a batch of accounts at a time): the worker tier's job, since a
  server followed by many here rewrites many home feeds (social/work_handlers/
  domain_blocks.py). Unblocking does not bring follows back (Mastodon does not either).

settle(domain) makes the accounts agree with the list, whichever way it went since: the
job runs it, so a block and an unblock racing, or a sweep cut short, end as the list says.

Where remote accounts are: actors.py's upsert files each account under the domain of its
address and that of its actor id (queue_domain_index): a set of ids per domain
(keys.remote_domain_accounts) and the known domains in one sorted set read by lex range
(keys.remote_domains: labels reversed, so a domain and its subdomains are one range).
Accounts stored before this index existed are not in it (none were in service).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Unpack, cast

from social import keys
from social.federation.names import InvalidAddress, normalise_domain, url_domain

from ..base import (
    HIDDEN_STATUSES,
    STATUS_SUSPENDED,
    Client,
    Fields,
    Hash,
    Pipe,
    RepositoryBase,
    StoreSettings,
    as_int,
    decode_hash,
    queue_hiding,
    s,
)
from ..models import User, as_datetime
from ..moderation.audit import REASON_MAX, AuditDraft, AuditStore
from ..relations.graph import GraphStore

LIST_MAX = 10_000  # blocked domains a staff page lists; Mastodon's instances block a few hundred
# Seconds a process screens incoming activities with the list it read last (screened_out):
# a new block holds at the inbox's door within this, and at once in its worker.
SCREEN_REFRESH = 5.0
BATCH = 500  # accounts read, suspended or lifted per round trip
DOMAINS_READ = 500  # known domains read per round trip (a block of a domain with many under it)
FOLLOWS_READ = 1000  # of each account's followers and followings, read per round trip
KNOWN_PAGE = 50  # known domains a staff page lists
# What an account's hash is read for: whose it is, where, and whether a block suspended it.
ACCOUNT_FIELDS = ("username", "domain", "uri", "status", "domain_block", "suspended_at")
LIFTED = ("status", "suspended_reason", "suspended_at", "suspended_by", "domain_block")


@dataclass(frozen=True)
class BlockedDomain:
    """A blocked domain, when (unix s) it was blocked, by whom and why."""

    domain: str
    since: int
    by_id: int | None = None
    by_name: str = ""
    reason: str = ""

    @property
    def since_at(self) -> datetime | None:
        return as_datetime(self.since or None)


@dataclass(frozen=True)
class KnownDomain:
    """A domain remote accounts are known on: how many, and whether it is blocked (itself
    or a domain it is under)."""

    domain: str
    accounts: int
    blocked: bool


@dataclass(frozen=True)
class DomainAccount:
    """A remote account as a domain block reads it."""

    id: int
    username: str
    domains: tuple[str, ...]  # of its address, and of its actor id when another
    status: str
    marked_by: str  # the blocked domain whose block suspended it ("" for none)
    suspended_at: str = ""

    def is_under(self, blocked: str) -> bool:
        """Whether a block of `blocked` covers this account (domain_and_parents' rule)."""
        return any(blocked in domain_and_parents(domain) for domain in self.domains)


def domain_and_parents(domain: str) -> list[str]:
    """Return the spellings a block of domain may be filed under: itself (with its port,
    if any), its host without the port, and each parent domain of that host; [] for text
    that is no domain (normalise_domain's rule)."""
    try:
        domain = normalise_domain(domain)
    except InvalidAddress:
        return []
    host = domain.partition(":")[0]
    labels = host.split(".")
    parents = [".".join(labels[i:]) for i in range(len(labels))]
    return list(dict.fromkeys([domain, *parents]))


def domain_member(domain: str) -> str:
    """Return keys.remote_domains' member for a normalised domain: its labels reversed, a
    dot after them, then its port ("social.example.com:8443" -> "com.example.social.:8443")."""
    host, colon, port = domain.partition(":")
    return ".".join(reversed(host.split("."))) + "." + (f":{port}" if colon else "")


def member_domain(member: str) -> str:
    """Return the domain a keys.remote_domains member spells (domain_member's inverse)."""
    labels, colon, port = member.partition(":")
    return ".".join(reversed(labels.removesuffix(".").split("."))) + (f":{port}" if colon else "")


def queue_domain_index(pipe: Pipe, user_id: int, domains: Iterable[str | None]) -> None:
    """Queue filing remote account user_id under each of domains (its address's, its actor
    id's; text that is no domain is skipped): what a domain block finds it by."""
    for domain in dict.fromkeys(domains):
        try:
            named = normalise_domain(domain or "")
        except InvalidAddress:
            continue
        pipe.sadd(keys.remote_domain_accounts(named), user_id)
        pipe.zadd(keys.remote_domains(), {domain_member(named): 0})


def account_from(user_id: int, values: Iterable[bytes | None]) -> DomainAccount | None:
    """Read an account's ACCOUNT_FIELDS, or None when it is no remote account (any more)."""
    h = dict(zip(ACCOUNT_FIELDS, map(s, values)))
    username, domain, uri = h.get("username"), h.get("domain"), h.get("uri")
    if not (username and domain and uri):
        return None
    marker, _, marked_at = (h.get("domain_block") or "").partition(" ")
    marked_by = marker if marker and marked_at == (h.get("suspended_at") or "") else ""
    return DomainAccount(
        id=user_id,
        username=username,
        domains=tuple(dict.fromkeys(d for d in (domain, url_domain(uri)) if d)),
        status=h.get("status") or "",
        marked_by=marked_by if h.get("status") == STATUS_SUSPENDED else "",
        suspended_at=h.get("suspended_at") or "",
    )


class DomainBlockStore(RepositoryBase):
    """Blocking and unblocking servers, asking whether one is blocked, and the accounts a
    block suspends and the follows it cuts."""

    def __init__(
        self,
        client: Client,
        *,
        audit: AuditStore,
        graph: GraphStore,
        **config: Unpack[StoreSettings],
    ):
        super().__init__(client, **config)
        self.audit = audit
        self.graph = graph

    # --- Blocking -------------------------------------------------------------------------

    def block(self, domain: str, actor: User, reason: str = "", *, at: int | None = None) -> bool:
        """Block domain (normalised: raise InvalidAddress for no domain), audited as
        actor's, and suspend its accounts (suspend_accounts); False when it was blocked
        already (no entry written; its accounts are suspended again all the same, which
        repairs a sweep cut short). Cutting its follows is cut_follows' (the worker's)."""
        domain = normalise_domain(domain)
        added = False
        if not self.r.hexists(keys.blocked_domains(), domain):
            draft = AuditDraft(actor, "block_domain", target_name=domain, reason=reason)
            details = {"by": actor.id, "by_name": actor.username, "reason": reason[:REASON_MAX]}

            def queue(pipe: Pipe, ts: int) -> None:
                pipe.hsetnx(keys.blocked_domains(), domain, ts)
                pipe.hset(keys.blocked_domain_details(), domain, json.dumps(details))

            added = bool(self.audit.run_audited([draft], queue, at=at)[0])
            self.cache.blocked_domains = None  # this process screens with the new list at once
        self.suspend_accounts(domain, actor, reason, at=at)
        return added

    def unblock(self, domain: str, actor: User, reason: str = "", *, at: int | None = None) -> bool:
        """Unblock domain, audited as actor's, and lift the suspensions its block made
        (lift_suspensions); False when it was not blocked (nothing written; a subdomain of
        a blocked domain is unblocked by unblocking that domain)."""
        try:
            domain = normalise_domain(domain)
        except InvalidAddress:
            return False
        if not self.r.hexists(keys.blocked_domains(), domain):
            return False
        draft = AuditDraft(actor=actor, action="unblock_domain", target_name=domain, reason=reason)

        def queue(pipe: Pipe, ts: int) -> None:
            pipe.hdel(keys.blocked_domains(), domain)
            pipe.hdel(keys.blocked_domain_details(), domain)

        removed = self.audit.run_audited([draft], queue, at=at)
        self.cache.blocked_domains = None
        self.lift_suspensions(domain)
        return bool(removed[0])

    def settle(self, domain: str) -> tuple[int, int]:
        """Make domain's accounts agree with the list: blocked, its accounts suspended and
        their follows with ours cut; not blocked, the suspensions its block made lifted.
        Return (accounts suspended or lifted, follows cut). Idempotent: the worker's job."""
        domain = normalise_domain(domain)
        pipe = self._pipe()
        pipe.hexists(keys.blocked_domains(), domain)
        pipe.hget(keys.blocked_domain_details(), domain)
        is_blocked, raw = pipe.execute()
        if not is_blocked:
            return self.lift_suspensions(domain), 0
        details = json.loads(s(cast(bytes | None, raw)) or "{}")
        by = User(id=int(details.get("by") or 0), username=str(details.get("by_name") or ""))
        suspended = self.suspend_accounts(domain, by, str(details.get("reason") or ""))
        return suspended, self.cut_follows(domain)

    def suspend_accounts(
        self, domain: str, actor: User, reason: str = "", *, at: int | None = None
    ) -> int:
        """Suspend the accounts known on domain or under it that are not hidden already,
        marked as the block's (the module docstring); return how many. Two round trips per
        BATCH accounts (their hashes, then the writes), plus the domains' lookups."""
        done = 0
        for batch in self._accounts_under(domain):
            ts = int(time.time()) if at is None else at
            why = f"{domain}: {reason}"[:REASON_MAX] if reason else domain
            pipe = self._pipe()
            for account in batch:
                if account.status in HIDDEN_STATUSES:
                    continue
                pipe.hset(
                    keys.user(account.id),
                    mapping={
                        "status": STATUS_SUSPENDED,
                        "suspended_reason": why,
                        "suspended_at": ts,
                        "suspended_by": actor.id,
                        "domain_block": f"{domain} {ts}",
                    },
                )
                pipe.zadd(keys.suspended_users(), {account.username: ts})
                done += 1
            if len(pipe):
                queue_hiding(pipe)  # their posts leave every page
                self.send(pipe)
        return done

    def lift_suspensions(self, domain: str) -> int:
        """Lift the suspensions domain's block made, but of accounts another blocked
        domain still covers (their mark moves to that block); return how many were
        lifted. Two round trips per BATCH accounts, plus the domains' and the list's."""
        blocked = {s(d) for d in cast(list[bytes], self.r.hkeys(keys.blocked_domains()))}
        lifted = 0
        for batch in self._accounts_under(domain):
            pipe = self._pipe()
            for account in batch:
                if account.marked_by != domain:
                    continue
                still = [b for b in blocked if account.is_under(b)]
                if still:  # social.example.com unblocked, example.com still blocked
                    mark = f"{min(still)} {account.suspended_at}"
                    pipe.hset(keys.user(account.id), "domain_block", mark)
                    continue
                pipe.hdel(keys.user(account.id), *LIFTED)
                pipe.zrem(keys.suspended_users(), account.username)
                lifted += 1
            if len(pipe):
                queue_hiding(pipe)  # their posts come back
                self.send(pipe)
        return lifted

    def cut_follows(self, domain: str) -> int:
        """Remove the follows both ways between the accounts known on domain (or under it)
        and any account here, through the graph's unfollow steps: each follower's follows
        of a batch's accounts in one unfollow_many (one home-feed rewrite). Return how
        many follows went. A batch's sets are read FOLLOWS_READ at a time until empty."""
        cut = 0
        for batch in self._accounts_under(domain):
            ids = [account.id for account in batch if account.is_under(domain)]
            # Each round removes every pair it read (both sides), so the sets shrink to
            # nothing; a half-linked pair goes too, uncounted.
            while ids and (pairs := self._follows_of(ids)):
                cut += sum(
                    self.graph.unfollow_many(follower, followees)
                    for follower, followees in pairs.items()
                )
        return cut

    def _follows_of(self, ids: list[int]) -> dict[int, list[int]]:
        """Return {follower: [followees]} for the first FOLLOWS_READ followers and
        followings of each of ids (one round trip)."""
        pipe = self._pipe()
        for user_id in ids:
            pipe.zrange(keys.followers(user_id), 0, FOLLOWS_READ - 1)
            pipe.zrange(keys.following(user_id), 0, FOLLOWS_READ - 1)
        replies = pipe.execute()
        pairs: dict[int, list[int]] = {}
        for user_id, followers, following in zip(ids, replies[0::2], replies[1::2]):
            for follower in followers:
                pairs.setdefault(int(follower), []).append(user_id)
            if following:
                pairs.setdefault(user_id, []).extend(int(i) for i in following)
        return pairs

    # --- Where accounts are ---------------------------------------------------------------

    def _domains_under(self, domain: str) -> Iterator[str]:
        """Yield the known domains a block of domain covers: itself when it has a port,
        else itself, its ports and its subdomains (one lex range, DOMAINS_READ a trip)."""
        member = domain_member(domain)
        if ":" in domain:
            if self.r.zscore(keys.remote_domains(), member) is not None:
                yield domain
            return
        low, high = f"[{member}", f"({member.removesuffix('.')}/"  # "/" sorts after "."
        offset = 0
        while True:
            found = self.r.zrangebylex(keys.remote_domains(), low, high, offset, DOMAINS_READ)
            yield from (member_domain(s(cast(bytes, m)) or "") for m in found)
            if len(found) < DOMAINS_READ:
                return
            offset += DOMAINS_READ

    def _accounts_under(self, domain: str) -> Iterator[list[DomainAccount]]:
        """Yield the remote accounts a block of domain covers, BATCH or fewer at a time (an
        index entry whose account is gone, or no longer under domain, is skipped)."""
        batch: list[int] = []
        for known in self._domains_under(domain):
            cursor = 0
            while True:
                cursor, members = self.r.sscan(
                    keys.remote_domain_accounts(known), cursor, count=BATCH
                )
                batch.extend(int(m) for m in members)
                while len(batch) >= BATCH:
                    yield self._accounts(batch[:BATCH], domain)
                    batch = batch[BATCH:]
                if not cursor:
                    break
        if batch:
            yield self._accounts(batch, domain)

    def _accounts(self, ids: list[int], domain: str) -> list[DomainAccount]:
        """The accounts among ids that a block of domain covers (one round trip)."""
        pipe = self._pipe()
        unique = list(dict.fromkeys(ids))
        for user_id in unique:
            pipe.hmget(keys.user(user_id), ACCOUNT_FIELDS)
        found = (account_from(i, values) for i, values in zip(unique, pipe.execute()))
        return [account for account in found if account is not None and account.is_under(domain)]

    def known(self, after: str = "", count: int = KNOWN_PAGE) -> tuple[list[KnownDomain], bool]:
        """Return a page of the known domains, a domain's subdomains after it (the
        order of their reversed labels), starting after the domain `after` ("" for the
        first page), with how many accounts each has and whether it is blocked; and
        whether more follow. Two round trips."""
        low = f"({domain_member(after)}" if after else "-"
        members = self.r.zrangebylex(keys.remote_domains(), low, "+", 0, count + 1)
        names = [member_domain(s(cast(bytes, m)) or "") for m in members[:count]]
        spellings = {name: domain_and_parents(name) for name in names}
        candidates = list(dict.fromkeys(c for found in spellings.values() for c in found))
        pipe = self._pipe()
        for name in names:
            pipe.scard(keys.remote_domain_accounts(name))
        if candidates:
            pipe.hmget(keys.blocked_domains(), candidates)
        replies = pipe.execute() if names else []
        counts, blocked_at = replies[: len(names)], (replies[len(names) :] or [[]])[0]
        blocked = {c for c, since in zip(candidates, blocked_at) if since is not None}
        page = [
            KnownDomain(name, int(n), bool(blocked & set(spellings[name])))
            for name, n in zip(names, counts)
        ]
        return page, len(members) > count

    # --- Asking ---------------------------------------------------------------------------

    def is_blocked(self, *domains: str) -> bool:
        """Whether any of domains, or a domain one of them is under, is blocked (one
        HMGET). Text that is no domain is blocked: nothing can be accepted from it."""
        candidates: dict[str, None] = {}
        for domain in domains:
            found = domain_and_parents(domain)
            if not found:
                return True
            candidates.update(dict.fromkeys(found))
        if not candidates:
            return False
        found_at = cast(Fields, self.r.hmget(keys.blocked_domains(), list(candidates)))
        return any(value is not None for value in found_at)

    def screened_out(self, *domains: str, at: float | None = None) -> bool:
        """is_blocked from the list this process read within SCREEN_REFRESH seconds (one
        HKEYS when older, none else): the accept path's cheap screen. Not authoritative:
        what it lets through the worker checks again with is_blocked."""
        clock = time.monotonic() if at is None else at
        remembered = self.cache.blocked_domains
        if remembered is None or clock - remembered[0] > SCREEN_REFRESH:
            names = cast(list[bytes], self.r.hkeys(keys.blocked_domains()))
            remembered = (clock, frozenset(s(name) for name in names))
            self.cache.blocked_domains = remembered
        for domain in domains:
            candidates = domain_and_parents(domain)
            if not candidates or not remembered[1].isdisjoint(candidates):
                return True
        return False

    def blocked(self) -> list[BlockedDomain]:
        """Every blocked domain (up to LIST_MAX), newest block first, with who blocked it
        and why (one round trip)."""
        pipe = self._pipe()
        pipe.hgetall(keys.blocked_domains())
        pipe.hgetall(keys.blocked_domain_details())
        raw, raw_details = cast(tuple[Hash, Hash], pipe.execute())
        details = decode_hash(raw_details)
        found = []
        for domain_bytes, since in raw.items():
            domain = s(domain_bytes) or ""
            try:
                about = json.loads(details.get(domain) or "{}")
            except ValueError:
                about = {}
            found.append(
                BlockedDomain(
                    domain,
                    as_int(since) or 0,
                    as_int(about.get("by")),
                    str(about.get("by_name") or ""),
                    str(about.get("reason") or ""),
                )
            )
        found.sort(key=lambda item: (-item.since, item.domain))
        return found[:LIST_MAX]
