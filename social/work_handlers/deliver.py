"""The deliver queue's handlers: one signed POST of an activity to an inbox (`activity`),
and one of our actions turned into its activity and its inboxes (`fanout`).

A delivery (Mastodon's ActivityPub::DeliveryWorker) answers:
- 2xx: delivered. The domain's failures are forgotten (and it is available again).
- 4xx other than 401, 408 and 429, or 501: that server will never take it (a gone
  account's inbox, an activity it refuses): given up at once, a dead letter with the
  status. The server answered, so its domain counts as alive, as Mastodon counts it.
- Anything else (5xx, 401, 408, 429, a redirect not followed, a timeout, a connection
  refused or reset, a broken exchange): work.Retry on the queue's schedule (Mastodon's,
  queues.py), and the domain's backoff; the failure counts toward the domain's seven days.
- An address the client refuses (a private address, a name that does not resolve to a
  public one: fetch.Refused): given up at once.
A domain marked unavailable (deliveries.py) or blocked by staff (domains.py) by the time
the job runs: dropped unsent.

Idempotent in effect: a job run twice POSTs twice, and the receiver drops the second by
the activity's id, as Mastodon's deliveries are at least once too.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from email.utils import parsedate_to_datetime

from social import work
from social.federation import deliver, documents, fetch
from social.federation.deliver import INSTANCE, inbox_domain
from social.federation.signatures import sign_request
from social.repository import get_repository

HEADERS = {"Content-Type": documents.ACTIVITY_JSON}  # as Mastodon's deliveries send
TIMEOUT = 15.0  # seconds for the whole POST (Mastodon's Request: about 10 to connect and read)
ANSWER_MAX = 64 * 1024  # bytes of an inbox's answer read (and ignored)
RETRY_AFTER_MAX = 24 * 3600  # a 429's Retry-After obeyed up to a day
UNSALVAGEABLE = 501  # with 4xx but 401, 408, 429: unsalvageable()
KEYS_KEPT = 1024  # signers' key pairs remembered by a worker process


class _Keys:
    """Signers' key ids and private keys, remembered (they never change: key_pairs.py),
    so a delivery costs no round trip for its key after the signer's first."""

    def __init__(self) -> None:
        self._known: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._lock = threading.Lock()
        # One load at a time: the deliver queue's threads all start on one post's
        # deliveries, and a signer without a key pair yet would have each make one.
        self._loading = threading.Lock()

    def of(self, signer: str) -> tuple[str, str]:
        """Return (key id, private PEM) of signer ("instance" or a local account's id);
        raise work.Permanent when it is no local account."""
        if (known := self._remembered(signer)) is not None:
            return known
        with self._loading:
            if (known := self._remembered(signer)) is not None:
                return known
            return self._load(signer)

    def _remembered(self, signer: str) -> tuple[str, str] | None:
        with self._lock:
            if (known := self._known.get(signer)) is not None:
                self._known.move_to_end(signer)
            return known

    def _load(self, signer: str) -> tuple[str, str]:
        repo = get_repository()
        if signer == INSTANCE:
            pair = repo.federation_keys.for_instance()
            actor = documents.instance_actor_id()
        elif signer.isdigit():
            user, _ = repo.federation_keys.account_and_public_key(int(signer))
            if user is None:
                raise work.Permanent(f"no local account {signer} to sign with")
            pair = repo.federation_keys.for_account(user.id)
            actor = documents.actor_id(user.id)
        else:
            raise work.Permanent(f"not a signer: {signer!r}")
        found = (documents.key_id(actor), pair.private_pem)
        with self._lock:
            self._known[signer] = found
            while len(self._known) > KEYS_KEPT:
                self._known.popitem(last=False)
        return found

    def forget(self) -> None:
        with self._lock:
            self._known.clear()


signing_keys = _Keys()


def retry_after(value: str | None) -> float | None:
    """Return a Retry-After header's seconds (a number or an HTTP date), at most a day, or
    None when it says nothing usable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(min(int(value), RETRY_AFTER_MAX))
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, min(moment.timestamp() - time.time(), RETRY_AFTER_MAX))


def unsalvageable(status: int) -> bool:
    """Whether an answer says the server will never take this activity (Mastodon's
    response_error_unsalvageable?: 501, or 4xx but 401, 408 and 429)."""
    return status == UNSALVAGEABLE or (400 <= status < 500 and status not in (401, 408, 429))


@work.handler(deliver.QUEUE, deliver.ACTIVITY)
def send(payload: dict[str, str]) -> None:
    """POST payload's activity to its inbox, signed as its signer (the module docstring
    says what each answer does)."""
    inbox, text = payload.get("inbox", ""), payload.get("activity", "")
    domain = inbox_domain(inbox)
    if domain is None or not text:
        raise work.Permanent(f"not a delivery: inbox {inbox[:200]!r}")
    deliveries = get_repository().federation_deliveries
    skipped, failing = deliveries.standing(domain)
    if skipped:
        return  # blocked or marked unavailable since it was queued: dropped unsent
    key_id, private_pem = signing_keys.of(payload.get("signer", ""))
    body = text.encode("utf-8")

    def sign(method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        return sign_request(method, url, headers, body, key_id, private_pem)

    try:
        answer = fetch.post(
            inbox, body, headers=HEADERS, max_bytes=ANSWER_MAX, timeout=TIMEOUT, sign=sign
        )
    except fetch.Refused as error:
        raise work.Permanent(f"refused: {error}") from None
    except fetch.FetchError as error:
        deliveries.failed(domain)
        raise work.Retry(str(error)) from None
    status = answer.status
    if 200 <= status < 300 or unsalvageable(status):
        # It answered: alive (only this activity will not do, past 2xx). A failure another
        # worker records meanwhile stays until the next success: a day's count at most.
        if failing:
            deliveries.succeeded(domain)
        if status >= 300:
            raise work.Permanent(f"{inbox} answered {status}")
        return
    deliveries.failed(domain)
    after = retry_after(answer.headers.get("retry-after")) if status in (429, 503) else None
    raise work.Retry(f"{inbox} answered {status}", after=after)
