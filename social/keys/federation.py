"""Federation (ActivityPub, docs/federation.md): the key pairs our actors sign with."""

from __future__ import annotations

import hashlib
import re


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


def blocked_domain_details() -> str:
    """Hash: blocked domain -> JSON {"by": staff id, "by_name", "reason"}: who blocked it
    and why, for the staff page (domains.py writes it with blocked_domains' entry and
    deletes it with the entry; the audit log keeps the history)."""
    return "ap:domains:blocked:details"


# Where remote accounts are (repository/federation/domains.py, written by actors.py's
# upsert): what a domain block suspends, and the known servers staff see.

_DOMAIN_RE = re.compile(r"[a-z0-9.:-]{1,260}")  # names.normalise_domain's spelling


def remote_domain_accounts(domain: str) -> str:
    """Set: ids of the remote accounts known on domain (normalised, its port when not the
    default): the domain of their address, and that of their actor id when another. An
    entry is a pointer checked against the account's hash when read (a domain never
    loses one: a moved or deleted account is skipped)."""
    if not _DOMAIN_RE.fullmatch(domain):
        raise ValueError(f"not a domain: {domain!r}")
    return f"ap:domain:{domain}:accounts"


def remote_followers(user_id: int) -> str:
    """Sorted set: the remote accounts following local account user_id, by when (unix s):
    where the deliveries of its activities go, without reading every follower (bounded as
    its `followers:<id>`, of which it is a part)."""
    return f"ap:followers:{int(user_id)}"


def remote_domains() -> str:
    """Sorted set, every score 0 (read by lex range): the domains remote accounts are
    known on, each spelled with its labels reversed and a dot after (`test.remote.` for
    remote.test, `test.remote.:8443` with a port: domains.domain_member), so a domain and
    everything under it are one range."""
    return "ap:domains:known"


def inbox_seen(activity_id: str) -> str:
    """String (TTL INBOX_SEEN_TTL): the receipt of the job that claimed an incoming
    activity's id (repository/federation/inbox.py); named by the id's SHA-256, so any id
    makes one short key."""
    return f"ap:seen:{hashlib.sha256(activity_id.encode('utf-8', 'surrogatepass')).hexdigest()}"


def inbox_totals() -> str:
    """Hash: the inbox job's counters since it began: activities applied, by type, and
    dropped, by reason (`dropped:not_public`, `dropped:replayed`...): what staff see of it."""
    return "ap:inbox:totals"


def remote_object(uri: str) -> str:
    """String: our post id for a remote object's id (a Note we keep, or the Announce that
    reposted one: repository/federation/objects.py); set once, when absent. Named by the
    id's SHA-256."""
    return f"ap:object:{hashlib.sha256(uri.encode('utf-8', 'surrogatepass')).hexdigest()}"


# Remote accounts (repository/federation/actors.py): each is a `user:<id>` hash with an id
# from next_user_id, found by these three indexes. Each index entry is a string key of its
# own named by the SHA-256 of what it indexes: a short key whatever a stranger's URL holds,
# spread over a cluster's slots. An entry is a pointer, checked against the account's hash
# when read (an address or key id that moved on to another account is then no one's).


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def remote_actor_by_uri(uri: str) -> str:
    """String: the id of the remote account whose actor id (a URL) this is; set once, by a
    one-key script (SET when absent), so two workers upserting one actor end with one
    account. An actor's id never changes: it is its identity."""
    return f"ap:uri:{_digest(uri)}"


def remote_actor_by_acct(acct: str) -> str:
    """String: the id of the remote account whose `name@domain` this is (lower-cased by the
    store); the newest upsert holding that address wins (a rename moves it)."""
    return f"ap:acct:{_digest(acct)}"


def remote_actor_by_key(key_id: str) -> str:
    """String: the id of the remote account whose public key id (a URL) this is: who
    signed a request (signatures.py's keyId)."""
    return f"ap:keyid:{_digest(key_id)}"
