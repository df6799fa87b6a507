"""What every client API view shares: who is calling (a Bearer token, or the site's own
`auth` cookie with its CSRF check), the scope an endpoint needs, JSON in and out, and
Mastodon's error shape `{"error": "..."}` with the status Mastodon gives.

A view names the scope each method needs (`scopes = {"get": "read:statuses"}`) and which
methods a visitor may call (`public`); `handle()`-style methods return data and raise
ApiError (or the repository's errors, mapped in `error_for`). Nothing here renders HTML:
an API path never answers with a page, not even when Redis is down (503 JSON).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from typing import Any, ClassVar, TypeVar

from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.http.multipartparser import MultiPartParserError
from django.http.response import HttpResponseBase
from django.middleware.csrf import CsrfViewMiddleware
from django.utils.decorators import classonlymethod
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from social.http import SiteHttpRequest
from social.numbers import whole_number
from social.redis_client import UNAVAILABLE
from social.repository import (
    AnonymousUser,
    NotAllowed,
    PostNotFound,
    Repository,
    User,
    UserNotFound,
    get_repository,
)
from social.repository.clients.oauth import AccessToken, RememberedToken, StaleToken
from social.repository.moderation.limits import Check, RateLimited, Verdict

from . import scopes as scope_rules

log = logging.getLogger(__name__)
R = TypeVar("R", bound=HttpResponseBase)

BODY_MAX = 64 * 1024  # bytes of a request body (a status is 280 characters)
# Arrays and objects in a JSON body nest at most this deep (Mastodon's deepest is 3: a
# filter's keywords). Python's parser recurses: past ~1,000 levels, a RecursionError.
JSON_DEPTH_MAX = 32
# Paths that answer JSON, whatever goes wrong (errors.py's handlers ask is_api_path).
API_PATHS = ("/api/", "/oauth/token", "/oauth/revoke", "/.well-known/", "/nodeinfo/")
TOKEN_MAX = 256
CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, Idempotency-Key",
    "Access-Control-Expose-Headers": "Link, X-RateLimit-Limit, X-RateLimit-Remaining, "
    "X-RateLimit-Reset, X-Request-Id",
    "Access-Control-Max-Age": "600",
}

INVALID_JSON = "Invalid JSON in the request body"
INVALID_TOKEN = "The access token is invalid"
OUT_OF_SCOPE = "This action is outside the authorized scopes"
NEEDS_USER = "This method requires an authenticated user"


class ApiError(Exception):
    """An answer other than success: status and Mastodon's error text."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


def with_cors(response: R) -> R:
    """Add the CORS headers a browser client needs (the API and /oauth/token only)."""
    for name, value in CORS_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def json_response(data: Any, status: int = 200, headers: Mapping[str, str] | None = None):
    """Return data as JSON (lists too), with CORS and no caching by any shared cache."""
    response = JsonResponse(
        data, status=status, safe=False, json_dumps_params={"ensure_ascii": False}
    )
    response["Cache-Control"] = "no-store"
    for name, value in (headers or {}).items():
        response[name] = value
    return with_cors(response)


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None):
    """Return Mastodon's error JSON."""
    return json_response({"error": message}, status, headers)


def rate_headers(limit: int, remaining: int, reset_after: int) -> dict[str, str]:
    """The X-RateLimit-* headers, the reset as an ISO 8601 time as Mastodon sends it."""
    reset = datetime.now(UTC) + timedelta(seconds=max(0, reset_after))
    return {
        "X-RateLimit-Limit": str(limit),
        "X-RateLimit-Remaining": str(max(0, remaining)),
        "X-RateLimit-Reset": reset.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }


def is_api_path(path: str) -> bool:
    """Whether path answers JSON (the API, OAuth's token endpoints, .well-known)."""
    return path.startswith(API_PATHS)


def error_for(exception: Exception) -> HttpResponse | None:
    """Return the answer Mastodon gives for an error a view raised, or None to re-raise."""
    if isinstance(exception, ApiError):
        return error_response(exception.status, exception.message, exception.headers)
    if isinstance(exception, Http404 | PostNotFound | UserNotFound):
        return error_response(404, "Record not found")
    if isinstance(exception, NotAllowed):
        return error_response(403, str(exception) or "This action is not allowed")
    if isinstance(exception, PermissionDenied):
        return error_response(403, str(exception) or "This action is not allowed")
    if isinstance(exception, RateLimited):
        headers = rate_headers(exception.limit, 0, exception.retry_after)
        headers["Retry-After"] = str(exception.retry_after)
        return error_response(429, "Too many requests", headers)
    if isinstance(exception, UNAVAILABLE):
        log.warning("Redis unavailable on the API: %s", exception)
        return error_response(503, "Service unavailable", {"Retry-After": "10"})
    refused = refused_request(exception)
    if refused is not None:  # what Django would have logged, had it seen the exception
        log.warning("Refused on the API: %r", exception)
    return refused


def refused_request(exception: Exception) -> HttpResponse | None:
    """Return the JSON answer to a request Django refuses to read (too many fields, a
    broken multipart body, a bad Host...: its own 400s), or None for other errors."""
    if isinstance(exception, RequestDataTooBig):
        return error_response(413, "Request entity too large")
    if isinstance(exception, TooManyFieldsSent | TooManyFilesSent):
        message = "Too many parameters"
    elif isinstance(exception, MultiPartParserError):
        message = "Invalid multipart body"
    elif isinstance(exception, SuspiciousOperation | BadRequest):
        message = "Bad request"
    else:
        return None
    return error_response(400, message)


_STRING = re.compile(rb'"[^"]*"?')  # a string once escapes are gone; an unclosed one too
_BRACKETS = bytes.maketrans(b"{}", b"[]")  # both kinds of nesting count alike
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_RUNS = re.compile(rb"\[+|\]+")
_TOO_DEEP = b"[" * (JSON_DEPTH_MAX + 1)
_LEAF_PASSES = 4
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def too_deep(raw: bytes) -> bool:
    """Whether raw's arrays and objects nest deeper than JSON_DEPTH_MAX: checked before
    parsing, in a few passes of C over raw (the parser recurses). Counting the brackets
    settles almost every body. Else the brackets outside strings are kept (escapes removed
    first: backslashes pair from the left, as JSON reads them); a few passes remove the
    innermost pairs (each pass one level: [[][]] becomes []), so that few runs of brackets
    are left whatever the shape, and the depth is the highest sum of the runs."""
    if raw.count(b"[") + raw.count(b"{") <= JSON_DEPTH_MAX:
        return False
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    nesting = _STRING.sub(b"", unescaped).translate(_BRACKETS, _NOT_BRACKETS)
    if _TOO_DEEP in nesting:
        return True
    for _ in range(_LEAF_PASSES):
        nesting = nesting.replace(b"[]", b"")
    runs = (len(run) if run[0] == ord("[") else -len(run) for run in _RUNS.findall(nesting))
    return max(accumulate(runs), default=0) + _LEAF_PASSES > JSON_DEPTH_MAX


def has_lone_surrogate(value: Any) -> bool:
    """Whether parsed JSON holds a lone surrogate ("\\ud800" with no pair): no Redis write
    or response could encode it as UTF-8."""
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_lone_surrogate(v) for v in value)
    return False


def parse_json(raw: bytes) -> dict[str, Any]:
    """Return a JSON body's object; raise ApiError 400 for JSON that does not parse,
    nests deeper than JSON_DEPTH_MAX, holds a lone surrogate or is not an object."""
    if too_deep(raw):
        raise ApiError(400, f"{INVALID_JSON}: nested deeper than {JSON_DEPTH_MAX} levels")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # and so UnicodeDecodeError; 4,300+ digits
        raise ApiError(400, INVALID_JSON) from None
    if (b"\\ud" in raw or b"\\uD" in raw) and has_lone_surrogate(data):
        raise ApiError(400, INVALID_JSON)
    if not isinstance(data, dict):
        raise ApiError(400, "The request body must be a JSON object")
    return data


def parse_body(request: HttpRequest, limit: int = BODY_MAX) -> QueryDict | dict[str, Any]:
    """Return the request's parameters: a JSON object or a form (urlencoded or multipart),
    as Mastodon takes either; a multipart form's files are request.FILES, or for another
    method than POST (update_credentials' PATCH) request.upload_files. Raise ApiError 413
    past `limit` bytes, 400 for JSON parse_json refuses (Django's own refusals, such as
    too many fields, are refused_request's)."""
    length = whole_number(request.META.get("CONTENT_LENGTH") or "0")
    if length is None or length > limit:
        raise ApiError(413, "Request entity too large")
    content_type = request.content_type or ""
    if content_type == "multipart/form-data" and request.method not in ("GET", "POST"):
        try:
            data, files = request.parse_file_upload(request.META, request)
        except MultiPartParserError:
            raise ApiError(400, "The multipart body does not parse") from None
        request.upload_files = files  # type: ignore[attr-defined]
        return data
    if content_type == "application/json":
        raw = request.body
        return parse_json(raw) if raw.strip() else {}
    if request.method == "POST":
        return request.POST
    if content_type == "application/x-www-form-urlencoded" and request.body:
        return QueryDict(request.body)
    return request.GET


class ApiRequest(SiteHttpRequest):
    """A request as an API view sees it (annotations only)."""

    token: AccessToken | None
    token_check: RememberedToken | None
    params: QueryDict | dict[str, Any]


class ApiView(View):
    """Base of every client API endpoint (see the module docstring)."""

    request: ApiRequest
    # The scope each method needs ("get": "read:statuses"); a method not named needs none
    # beyond being called by someone (or by anyone, when it is in `public`).
    scopes: ClassVar[dict[str, str]] = {}
    public: ClassVar[frozenset[str]] = frozenset()  # methods a visitor may call
    body_max: ClassVar[int] = BODY_MAX  # bytes a request body may have (413 past it)
    app_may_call: ClassVar[bool] = False  # an app's own token (no user) is enough
    # The view reads a page of posts and checks a remembered token on its first pipeline
    # (authenticate(deferred=True)): read-only views whose every answer comes after it.
    checks_token_on_page: ClassVar[bool] = False

    @classonlymethod
    def as_view(cls, **initkwargs) -> Callable[..., HttpResponseBase]:
        # Token-authenticated calls carry no cookie to forge; a cookie-authenticated one
        # is checked for its CSRF token in dispatch(), as the site's own forms are.
        return csrf_exempt(super().as_view(**initkwargs))

    @property
    def repo(self) -> Repository:
        return get_repository()

    @property
    def user(self) -> User | None:
        """The calling user (None: a visitor, or an app's own token)."""
        user = self.request.user
        return user if isinstance(user, User) else None

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponseBase:
        if request.method == "OPTIONS":
            return with_cors(HttpResponse(status=204))
        try:
            request.params = parse_body(request, self.body_max)  # type: ignore[attr-defined]
            try:
                self.authenticate(request, deferred=self.checks_token_on_page)
                response = super().dispatch(request, *args, **kwargs)
            except StaleToken:  # the remembered token no longer holds: check it first
                self.authenticate(request, deferred=False)
                response = super().dispatch(request, *args, **kwargs)
        except Exception as exception:  # mapped to Mastodon's answers, else a 500
            mapped = error_for(exception)
            if mapped is None:
                raise
            return mapped
        return with_cors(response)

    def http_method_not_allowed(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        return error_response(405, "Method not allowed")

    def authenticate(self, request: HttpRequest, *, deferred: bool = False) -> None:
        """Set request.user and request.token from the Bearer token, or from the `auth`
        cookie (CSRF-checked for writes); check the method's scope.

        deferred: a token this process remembers is taken as remembered, unchecked, and
        set as request.token_check: the view's page read checks it on its own first
        pipeline (oauth.token_holds) and raises StaleToken, before answering anything, if
        it no longer holds; dispatch() then calls this again, not deferred."""
        method = (request.method or "GET").lower()
        header = request.headers.get("Authorization", "")
        request.token = None  # type: ignore[attr-defined]
        request.token_check = None  # type: ignore[attr-defined]
        remembered = self.repo.oauth.remembered(header[7:].strip()) if deferred else None
        if header[:7].lower() == "bearer " and remembered is not None:
            request.token = remembered.token  # type: ignore[attr-defined]
            request.token_check = remembered  # type: ignore[attr-defined]
            request.user = remembered.user  # type: ignore[assignment]
        elif header[:7].lower() == "bearer ":
            token, user = self.repo_token(header[7:].strip())
            request.token = token  # type: ignore[attr-defined]
            request.user = user  # type: ignore[assignment]
        elif header:
            raise ApiError(401, INVALID_TOKEN)
        elif request.COOKIES.get(settings.AUTH_COOKIE_NAME) and request.user.is_authenticated:
            self.check_csrf(request)  # the site's own pages' session: every scope
            return
        else:
            request.user = AnonymousUser()  # type: ignore[assignment]
        self.check_scope(request, method)

    def repo_token(self, text: str) -> tuple[AccessToken, User | None]:
        """Return the token and its user; raise ApiError 401 (unknown, revoked, a deleted
        account) or 403 (a suspended account)."""
        if not text or len(text) > TOKEN_MAX:
            raise ApiError(401, INVALID_TOKEN)
        stored, user = self.repo.oauth.authenticate(text)
        if stored is None:
            raise ApiError(401, INVALID_TOKEN)
        if stored.user_id is None:
            return stored, None
        if user is None or user.is_deleted:
            raise ApiError(401, INVALID_TOKEN)
        if user.is_suspended:
            raise ApiError(403, "Your login is currently disabled")
        return stored, user

    def check_scope(self, request: HttpRequest, method: str) -> None:
        token: AccessToken | None = getattr(request, "token", None)
        if token is None:
            if method in self.public or method == "head" and "get" in self.public:
                return
            raise ApiError(401, INVALID_TOKEN)
        needed = self.scope_for(method if method != "head" else "get")
        if needed is not None and not scope_rules.covers(token.scopes, needed):
            raise ApiError(403, OUT_OF_SCOPE)
        if token.user_id is None and not (self.app_may_call or method in self.public):
            raise ApiError(422, NEEDS_USER)

    def scope_for(self, method: str) -> str | None:
        """The scope a method of this endpoint needs (None: none beyond a token)."""
        return self.scopes.get(method)

    @staticmethod
    def check_csrf(request: HttpRequest) -> None:
        """A cookie-authenticated write must carry the CSRF token, as a form would."""
        if request.method in ("GET", "HEAD", "OPTIONS", "TRACE"):
            return
        refused = CsrfViewMiddleware(lambda r: HttpResponse()).process_view(
            request, lambda r: HttpResponse(), (), {}
        )
        if refused is not None:
            raise ApiError(403, "CSRF verification failed: send the token, or use a Bearer token")

    def enforce(self, checks: list[Check], message: str) -> dict[str, str]:
        """Count an attempt against the site's limits; return the X-RateLimit-* headers
        for the answer (RateLimited becomes a 429 with them)."""
        verdict: Verdict = self.repo.limits.enforce(checks, message)
        return rate_headers(verdict.limit, verdict.remaining, verdict.reset_after)


def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Any other /api/ path: Mastodon's 404, as JSON."""
    if request.method == "OPTIONS":
        return with_cors(HttpResponse(status=204))
    return error_response(404, "Record not found")
