"""The inbox queue's handler: an incoming activity, accepted by social/federation/inbox.py,
verified and applied.

One job an activity: `{"body", "headers", "method", "target", "received", "receipt",
"user"}` (the accept path's payload). In order, each step's refusal dropping the activity
(counted in keys.inbox_totals under its reason, logged, the job done: retrying would
refuse it again) before anything is written:

1. The signature (signatures.py), checked at the time the request ARRIVED (`received`):
   Mastodon's window is an hour, and a job may wait. Its key is the stored account's
   whose key id it is (repo.remote_actors); an unknown key id is resolved (its actor
   fetched, resolve.py); a signature that does not verify with a stored key has its actor
   fetched again, once, then verified again (a key that changed). A fetch that fails on
   the network is a work.Retry (the queue's backoff; the actor's domain is the job's
   destination, so its other jobs wait too).
2. The activity's actor is the key's owner; its id is on the actor's server; the actor's
   server is not blocked and the account is not suspended.
3. Its id is seen for the first time (repo.federation_inbox.claim, a week): a replay, or
   the same activity delivered to two inboxes, is dropped.
4. It is applied (activities.py). An activity refused there, or failing, gives its claim
   back, so a retry is not taken for a replay.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from social import work
from social.federation import activities as ap
from social.federation.names import url_domain
from social.federation.resolve import ResolveError, resolve_key
from social.federation.signatures import (
    ParsedSignature,
    RequestParts,
    SignatureError,
    SignatureMismatch,
    load_public_key,
    parse_signature,
    verify_signature,
)
from social.repository import Repository, get_repository
from social.repository.federation.actors import RemoteActor

from .activities import Dropped, apply

log = logging.getLogger(__name__)

QUEUE, KIND = "inbox", "activity"
# A resolution failure worth a retry: the other server did not answer, or not in time (an
# address the client refuses, private or not https, is no fetch failure: dropped at once).
TRANSIENT = ("fetching ", "no time was left", " answered 5", " answered 429")


@dataclass(frozen=True)
class Incoming:
    """An activity as the accept path queued it."""

    method: str
    target: str
    headers: Mapping[str, str]
    body: bytes
    received: float
    receipt: str

    @classmethod
    def of(cls, payload: Mapping[str, str]) -> Incoming:
        """Read a job's payload; raise work.Permanent for one the accept path never wrote."""
        try:
            headers = json.loads(payload["headers"])
            return cls(
                method=payload["method"],
                target=payload["target"],
                headers={str(k): str(v) for k, v in headers.items()},
                body=payload["body"].encode("utf-8"),
                received=float(payload["received"]),
                receipt=payload["receipt"],
            )
        except (KeyError, ValueError, AttributeError) as error:
            raise work.Permanent(f"an inbox job without its parts: {error}") from None

    def parts(self) -> RequestParts:
        scheme = settings.SITE_URL.partition(":")[0]
        return RequestParts.of(self.method, self.target, self.headers, self.body, scheme)


@work.handler(QUEUE, KIND)
def receive(payload: dict[str, str]) -> None:
    """Verify the activity payload holds and apply it (the module docstring)."""
    repo = get_repository()
    incoming = Incoming.of(payload)
    inbox = repo.federation_inbox
    try:
        activity = parsed(incoming.body)
        actor = verified_actor(repo, incoming)
        # It speaks: deliveries to its server are tried again (Mastodon resets the
        # signer's inbox's failures as it takes an activity).
        repo.federation_deliveries.succeeded(url_domain(actor.inbox) or actor.domain)
        checked(repo, actor, activity)
    except Dropped as dropped:
        return drop(repo, dropped)
    activity_id = str(activity["id"])
    if not inbox.claim(activity_id, incoming.receipt):
        return drop(repo, Dropped("replayed", f"{activity_id[:200]} was seen before"))
    try:
        done = apply(repo, actor, activity)
    except Dropped as dropped:
        inbox.release(activity_id, incoming.receipt)
        return drop(repo, dropped)
    except BaseException:
        inbox.release(activity_id, incoming.receipt)
        raise
    inbox.count(done)


def parsed(body: bytes) -> Any:
    """The activity the accept path checked (parsed again; Dropped if it is not JSON)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise Dropped("invalid", "the body is not JSON") from None


def drop(repo: Repository, dropped: Dropped) -> None:
    """Count and log an activity not applied."""
    log.info("inbox: dropped (%s)", dropped)
    repo.federation_inbox.count(f"dropped:{dropped.reason}")


def verified_actor(repo: Repository, incoming: Incoming) -> RemoteActor:
    """The account whose key signed incoming (step 1), or Dropped; work.Retry when its
    key could not be fetched for now."""
    parts = incoming.parts()
    try:
        parsed = parse_signature(parts)
    except SignatureError as error:
        raise Dropped("signature", error.reason) from None
    actor = repo.remote_actors.by_key_id(parsed.key_id)
    if actor is None:
        actor = actor_for_key(repo, parsed.key_id, refresh=False)
    elif not verifies(parts, parsed, actor, incoming.received):
        actor = actor_for_key(repo, parsed.key_id, refresh=True)  # the key changed?
    else:
        return actor
    if not verifies(parts, parsed, actor, incoming.received):
        raise Dropped("signature", f"the signature does not verify with {parsed.key_id[:200]}")
    return actor


def verifies(parts: RequestParts, parsed: ParsedSignature, actor: RemoteActor, at: float) -> bool:
    """Whether the signature verifies with actor's key (False: only the bytes fail, which
    a fresher key may cure); Dropped for any other refusal."""
    try:
        verify_signature(parts, parsed, load_public_key(actor.public_key), now=at)
    except SignatureMismatch:
        return False
    except SignatureError as error:
        raise Dropped("signature", error.reason) from None
    return True


def actor_for_key(repo: Repository, key_id: str, *, refresh: bool) -> RemoteActor:
    """The account whose key key_id is, fetched now (resolve_key), or Dropped; work.Retry
    when the fetch failed for a reason that may pass."""
    try:
        return resolve_key(repo, key_id, refresh=refresh)
    except ResolveError as error:
        if any(mark in error.reason for mark in TRANSIENT):
            message = f"the key {key_id[:200]} could not be fetched: {error.reason}"
            raise work.Retry(message) from None
        raise Dropped("key_unknown", error.reason) from None


def checked(repo: Repository, actor: RemoteActor, activity: Any) -> None:
    """Raise Dropped unless the activity is the key owner's own, from a server and an
    account we take activities from (step 2)."""
    if not isinstance(activity, dict) or not isinstance(activity.get("id"), str):
        raise Dropped("invalid", "not an activity")
    if ap.actor_of(activity) != actor.uri:
        raise Dropped("not_signer", "the activity's actor is not the key's owner")
    if not ap.same_host(activity["id"], actor.uri):
        raise Dropped("foreign_id", "the activity's id is not on its actor's server")
    # The server first: a block suspends its accounts too, and says more.
    if repo.federation_domains.is_blocked(actor.domain, url_domain(actor.uri) or actor.domain):
        raise Dropped("blocked", f"{actor.domain} is blocked")
    if actor.is_suspended:
        raise Dropped("suspended", f"{actor.username} is suspended here")
