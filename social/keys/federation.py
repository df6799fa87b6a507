"""Federation (ActivityPub, docs/federation.md): the key pairs our actors sign with."""

from __future__ import annotations

import hashlib


def actor_key(user_id: int) -> str:
    """Hash: a local account's RSA key pair: `public`, `private` (PEM), `created` (unix s);
    written once, by a one-key script, when first needed (repository/federation/keys.py)."""
    return f"ap:key:{int(user_id)}"


def instance_actor_key() -> str:
    """Hash: the instance actor's RSA key pair, as actor_key's (it signs our fetches)."""
    return "ap:key:instance"


# The inbox (social/federation/inbox.py, social/work_handlers/inbox.py).

INBOX_SEEN_TTL = 7 * 24 * 3600  # an activity id is remembered a week: replays within it drop


def blocked_domains() -> str:
    """Hash: domain -> unix s staff blocked it (repository/federation/domains.py): nothing
    is accepted from such a server, nor from its subdomains."""
    return "ap:domains:blocked"


def inbox_seen(activity_id: str) -> str:
    """String (TTL INBOX_SEEN_TTL): the receipt of the job that claimed an incoming
    activity's id (repository/federation/inbox.py); named by the id's SHA-256, so any id
    makes one short key."""
    return f"ap:seen:{hashlib.sha256(activity_id.encode('utf-8', 'surrogatepass')).hexdigest()}"


def inbox_totals() -> str:
    """Hash: the inbox's counters since it began (accepted, applied, each reason a
    verified activity was dropped): what staff see of it."""
    return "ap:inbox:totals"
