"""Servers staff block (keys.blocked_domains): nothing is accepted from a blocked domain
or from any of its subdomains (blocking `example.com` blocks `social.example.com`, as
Mastodon's domain blocks do), whatever port it serves on.

Blocking and unblocking are staff actions, audited (audit.py: `block_domain`,
`unblock_domain`, the domain as the target's name), each one pipeline with its entry.
The inbox's accept path screens with the list as its process read it within
SCREEN_REFRESH seconds (screened_out, kept in the process cache: cache.py); the worker
checks Redis (is_blocked) before it applies anything. What else a block does (its
accounts' posts hidden, follows with it cut, deliveries to it stopped) belongs to those
stores and is not here yet.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Unpack, cast

from social import keys
from social.federation.names import InvalidAddress, normalise_domain

from ..base import Client, Fields, Hash, Pipe, RepositoryBase, StoreSettings, as_int, s
from ..models import User
from ..moderation.audit import AuditDraft, AuditStore

LIST_MAX = 10_000  # blocked domains a staff page lists; Mastodon's instances block a few hundred
# Seconds a process screens incoming activities with the list it read last (screened_out):
# a new block holds at the inbox's door within this, and at once in its worker.
SCREEN_REFRESH = 5.0


@dataclass(frozen=True)
class BlockedDomain:
    """A blocked domain and when (unix s) it was blocked."""

    domain: str
    since: int


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


class DomainBlockStore(RepositoryBase):
    """Blocking and unblocking servers, and asking whether one is blocked."""

    def __init__(self, client: Client, *, audit: AuditStore, **config: Unpack[StoreSettings]):
        super().__init__(client, **config)
        self.audit = audit

    def block(self, domain: str, actor: User, reason: str = "", *, at: int | None = None) -> bool:
        """Block domain (normalised: raise InvalidAddress for no domain), audited as
        actor's; False when it was blocked already (nothing written). One round trip for
        the check, then the audited write."""
        domain = normalise_domain(domain)
        if self.r.hexists(keys.blocked_domains(), domain):
            return False
        draft = AuditDraft(actor=actor, action="block_domain", target_name=domain, reason=reason)

        def queue(pipe: Pipe, ts: int) -> None:
            pipe.hsetnx(keys.blocked_domains(), domain, ts)

        added = self.audit.run_audited([draft], queue, at=at)
        self.cache.blocked_domains = None  # this process screens with the new list at once
        return bool(added[0])

    def unblock(self, domain: str, actor: User, reason: str = "", *, at: int | None = None) -> bool:
        """Unblock domain, audited as actor's; False when it was not blocked (nothing
        written; a subdomain of a blocked domain is unblocked by unblocking that domain)."""
        try:
            domain = normalise_domain(domain)
        except InvalidAddress:
            return False
        if not self.r.hexists(keys.blocked_domains(), domain):
            return False
        draft = AuditDraft(actor=actor, action="unblock_domain", target_name=domain, reason=reason)

        def queue(pipe: Pipe, ts: int) -> None:
            pipe.hdel(keys.blocked_domains(), domain)

        removed = self.audit.run_audited([draft], queue, at=at)
        self.cache.blocked_domains = None
        return bool(removed[0])

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
        """Every blocked domain (up to LIST_MAX), newest block first."""
        raw = cast(Hash, self.r.hgetall(keys.blocked_domains()))
        found = [BlockedDomain(s(domain), as_int(since) or 0) for domain, since in raw.items()]
        found.sort(key=lambda item: (-item.since, item.domain))
        return found[:LIST_MAX]
