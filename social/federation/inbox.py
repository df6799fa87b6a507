"""The inboxes' accept path: `POST /ap/users/<id>/inbox` and `POST /ap/inbox` (shared).

Another server's POST is checked here only as far as is cheap, then queued on the worker
tier's `inbox` queue with what the worker needs to verify it (the raw body, the headers
the signature covers, the request target, the time it arrived) and answered `202
Accepted`; the worker (social/work_handlers/inbox.py) fetches the key, verifies and
applies it. Checked here, cheapest first, each refusal a clear 4xx with a JSON `error`:

- the body's size, from Content-Length before a byte of it is read (413; bodies.py has
  read it already, bounded by RETWIS_MAX_BODY and its timeout);
- its Content-Type: `application/activity+json` or `application/ld+json` (415);
- a `Signature` (draft-cavage) or `Signature-Input` + `Signature` (RFC 9421) header that
  parses (401);
- the body: JSON within MAX_DEPTH levels, an object with a `type`, an `id` and an
  `actor` (400);
- the signature's rules without its key (signatures.check_signature: what it covers, the
  Digest or Content-Digest against the body, its time window): 401;
- the actor's and the key's servers not blocked (403), by the list of blocked domains
  this process read within a few seconds (domains.screened_out: no round trip most of
  the time); the worker asks Redis again before it applies anything;
- a `Delete` from an actor we do not know is dropped without fetching it (202, as
  Mastodon does: an account we never saw deleting itself concerns nothing here).

A full queue answers 503 with Retry-After (the sender retries). A personal inbox whose
account does not exist is accepted all the same: its activity is checked by the worker
like any other (Mastodon answers 404; the shared inbox would take it anyway).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import View

from social import work
from social.http import SiteHttpRequest
from social.mixins import RepositoryMixin

from .names import URL_MAX, url_domain
from .signatures import (
    DRAFT,
    ParsedSignature,
    RequestParts,
    SignatureError,
    check_signature,
    parse_signature,
)

QUEUE = "inbox"
KIND = "activity"
MAX_BODY = 256 * 1024  # bytes of an activity (Mastodon's own are a few KiB; media are links)
MAX_DEPTH = 32  # levels of JSON nesting: activity, object, tag, icon... rarely past 6
MEDIA_TYPES = ("application/activity+json", "application/ld+json")
RETRY_AFTER = 60  # seconds a sender waits when the queue is full
ID_MAX = 2**63 - 1
# Headers a job keeps beyond those the signature covers: the signature's own and digests.
KEPT_HEADERS = ("signature", "signature-input", "digest", "content-digest", "host", "date")


class Refusal(Exception):
    """An incoming activity refused before queueing: its status and why."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def refused(status: int, reason: str) -> HttpResponse:
    response = JsonResponse({"error": reason}, status=status)
    response["Cache-Control"] = "no-store"
    return response


def checked_length(request: HttpRequest) -> None:
    """Raise Refusal(413) when the body is said to be, or is, over MAX_BODY (bodies.py
    gives every body a Content-Length); looked at before the body is."""
    raw = request.META.get("CONTENT_LENGTH") or "0"
    if not raw.isdigit() or int(raw) > MAX_BODY:
        raise Refusal(413, f"the body is over {MAX_BODY} bytes")


def checked_type(request: HttpRequest) -> None:
    """Raise Refusal(415) unless the body is ActivityStreams JSON."""
    media_type = request.META.get("CONTENT_TYPE", "").partition(";")[0].strip().lower()
    if media_type not in MEDIA_TYPES:
        raise Refusal(415, "the body must be application/activity+json or application/ld+json")


def depth_within(value: Any, limit: int) -> bool:
    """Whether value (parsed JSON) nests at most limit levels of arrays and objects;
    without recursion, so no input can exhaust the stack."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return False
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True


def parse_activity(body: bytes) -> dict[str, Any]:
    """Return the activity body holds, or raise Refusal(400): JSON within MAX_DEPTH, an
    object with a string `type`, a string `id` and an `actor` (an id, or an object with
    one)."""
    try:
        activity = json.loads(body.decode("utf-8"))  # UTF-8 only: RFC 8259, section 8.1
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise Refusal(400, "the body is not JSON (in UTF-8)") from None
    if not isinstance(activity, dict):
        raise Refusal(400, "the body is not a JSON object")
    if not depth_within(activity, MAX_DEPTH):
        raise Refusal(400, f"the JSON nests deeper than {MAX_DEPTH} levels")
    kind, activity_id = activity.get("type"), activity.get("id")
    if not isinstance(kind, str) or not kind:
        raise Refusal(400, "the activity has no type")
    if not isinstance(activity_id, str) or not activity_id or len(activity_id) > URL_MAX:
        raise Refusal(400, "the activity has no id")
    if actor_of(activity) is None:
        raise Refusal(400, "the activity has no actor")
    return activity


def actor_of(activity: dict[str, Any]) -> str | None:
    """The activity's actor's id (`actor` as a string, or an object's `id`), or None."""
    actor = activity.get("actor")
    if isinstance(actor, dict):
        actor = actor.get("id")
    if isinstance(actor, str) and 0 < len(actor) <= URL_MAX:
        return actor
    return None


def request_parts(request: HttpRequest, body: bytes) -> RequestParts:
    """The request as a signature sees it: method, target as sent, headers, body, and
    the scheme of SITE_URL (the one the sender used to reach us)."""
    scheme = settings.SITE_URL.partition(":")[0]
    return RequestParts.of(
        request.method or "POST", target_of(request), request.headers, body, scheme
    )


def target_of(request: HttpRequest) -> str:
    """The request target: path and query as they came."""
    query = request.META.get("QUERY_STRING", "")
    return request.path + (f"?{query}" if query else "")


def signature_of(parts: RequestParts) -> ParsedSignature:
    """The request's signature as parsed (signatures.parse_signature), or Refusal(401)."""
    if "signature" not in parts.headers and "signature-input" not in parts.headers:
        raise Refusal(401, "the request is not signed (no Signature header)")
    try:
        return parse_signature(parts)
    except SignatureError as error:
        raise Refusal(401, error.reason) from None


def covered_headers(parts: RequestParts, parsed: ParsedSignature) -> dict[str, str]:
    """The headers the worker needs to verify the signature: those it covers, its own,
    and the digests (names lowercased, as RequestParts keeps them)."""
    if parsed.scheme == DRAFT:
        names = list(parsed.components)
    else:
        names = [name for name, _params in parsed.items]
    wanted = dict.fromkeys([*KEPT_HEADERS, *names])
    return {name: parts.headers[name] for name in wanted if name in parts.headers}


class InboxView(RepositoryMixin, View):
    """POST /ap/inbox and /ap/users/<id>/inbox: an activity checked cheaply and queued for
    the worker (the module docstring); 202 Accepted, or the refusal's 4xx."""

    request: SiteHttpRequest

    http_method_names = ["post"]

    def post(self, request: HttpRequest, user_id: int | None = None) -> HttpResponse:
        received = time.time()
        if user_id is not None and user_id > ID_MAX:
            return refused(404, "no such account")
        try:
            checked = self.checked(request, received)
        except Refusal as refusal:
            return refused(refusal.status, refusal.reason)
        if checked is None:
            return HttpResponse(status=202)  # dropped, as if accepted
        payload, domain = checked
        payload["user"] = "" if user_id is None else str(user_id)
        try:
            work.enqueue(QUEUE, KIND, payload, destination=domain)
        except work.QueueFull:
            response = refused(503, "the inbox is busy: try again later")
            response["Retry-After"] = str(RETRY_AFTER)
            return response
        return HttpResponse(status=202)

    def checked(self, request: HttpRequest, received: float) -> tuple[dict[str, str], str] | None:
        """The job's payload for an activity that passes the cheap checks, and its
        actor's domain (the job's destination); None for one dropped unseen (a Delete
        from an actor we do not know); raise Refusal."""
        checked_length(request)
        checked_type(request)
        body = request.body
        if len(body) > MAX_BODY:  # a Content-Length that understated it
            raise Refusal(413, f"the body is over {MAX_BODY} bytes")
        parts = request_parts(request, body)
        parsed = signature_of(parts)
        activity = parse_activity(body)
        try:
            check_signature(parts, parsed, now=received)
        except SignatureError as error:
            raise Refusal(401, error.reason) from None
        actor = actor_of(activity) or ""
        domain, key_domain = url_domain(actor), url_domain(parsed.key_id)
        if domain is None or key_domain is None:
            raise Refusal(400, "the actor or the key is not an http(s) URL")
        if self.repo.federation_domains.screened_out(domain, key_domain):
            raise Refusal(403, "this server does not accept activities from yours")
        if activity["type"] == "Delete" and not self.known_actor(actor):
            return None
        payload = {
            "body": body.decode("utf-8"),
            "headers": json.dumps(covered_headers(parts, parsed), separators=(",", ":")),
            "method": request.method or "POST",
            "target": parts.target,
            "received": repr(received),
            "receipt": secrets.token_hex(8),
        }
        return payload, domain

    def known_actor(self, actor: str) -> bool:
        """Whether actor is a remote account we store (one lookup, no fetch)."""
        return self.repo.remote_actors.by_uri(actor) is not None
