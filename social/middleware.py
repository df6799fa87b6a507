"""Middleware: who is asking (the `auth` cookie), what to say when Redis is down or when a
rate limit refuses an action."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.middleware.locale import LocaleMiddleware as DjangoLocaleMiddleware
from django.template.loader import render_to_string
from django.utils.cache import patch_cache_control
from django.utils.functional import SimpleLazyObject
from django.utils.translation import gettext, gettext_lazy

from social import auth, images
from social.answers import refused_json, wants_json
from social.api.base import error_response, is_api_path
from social.bodies import REFUSED, Refusal
from social.redis_client import UNAVAILABLE
from social.repository import AnonymousUser, User, get_repository
from social.repository.moderation.limits import RateLimited, wait_phrase

log = logging.getLogger(__name__)
# A Content-Security-Policy's form-action directive (group 2), after the start or a `;`.
FORM_ACTION_RE = re.compile(r"(^|;)(\s*form-action(?:\s[^;]*)?)", re.IGNORECASE)


def user_for_request(request: HttpRequest) -> User | AnonymousUser:
    """Return the user whose secret is in the `auth` cookie, or an AnonymousUser."""
    secret = request.COOKIES.get(settings.AUTH_COOKIE_NAME, "")
    if not secret:
        return AnonymousUser()
    return get_repository().users.user_for_secret(secret) or AnonymousUser()


class RedisAuthMiddleware:
    """Set a lazy request.user: pages that never look at it cost no Redis call.

    A response to a request with an `auth` cookie is marked `Cache-Control: private`: it
    may show that person's feed or name, and no shared cache (a proxy, a CDN) may keep it
    for someone else. The cookie decides, not the user, so marking costs no Redis call.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # The repository's user or visitor, read when first used: what SiteHttpRequest
        # (social.http) says request.user is. django-stubs type request.user as
        # contrib.auth's user, and the lazy proxy as neither.
        known = getattr(request, UPLOADER, None)  # UploadLimitMiddleware's, already read
        lazy = SimpleLazyObject(lambda: user_for_request(request))
        request.user = known if known is not None else lazy  # type: ignore[assignment]
        response = self.get_response(request)
        if request.COOKIES.get(settings.AUTH_COOKIE_NAME):
            patch_cache_control(response, private=True)
        return response


def unavailable_response(request: HttpRequest) -> HttpResponse:
    """Return the friendly 503 page; it never touches Redis (user shown as anonymous). A
    page's script hears it in words (JSON)."""
    if wants_json(request):
        said = gettext(
            "Retwis cannot reach its database right now. Everything saved before is safe."
        )
        return refused_json(f"{said} {gettext('That did not go through.')}", 503, 10)
    html = render_to_string("503.html", {"user": AnonymousUser(), "request": request})
    response = HttpResponse(html, status=503)
    response["Retry-After"] = "10"
    response["Cache-Control"] = "no-store"
    return response


class RedisUnavailableMiddleware:
    """Turn "Redis is unreachable" from any view or template into a 503 page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, UNAVAILABLE):
            log.warning("Redis unavailable on %s: %s", request.path, exception)
            return unavailable_response(request)
        return None


def rate_limited_response(request: HttpRequest, error: RateLimited) -> HttpResponse:
    """Return the 429 page: what was refused and when to try again (also as Retry-After);
    to a page's script, the same in JSON."""
    if wants_json(request):
        wait = gettext("Try again in %(wait)s.") % {"wait": wait_phrase(error.retry_after)}
        return refused_json(f"{error.message} {wait}", 429, error.retry_after)
    context = {"message": error.message, "wait": wait_phrase(error.retry_after)}
    try:
        html = render_to_string("429.html", context, request=request)
    except UNAVAILABLE:
        return unavailable_response(request)
    response = HttpResponse(html, status=429)
    response["Retry-After"] = str(error.retry_after)
    response["Cache-Control"] = "no-store"
    return response


# Forms that take pictures, and what a submission counts against (auth.py).
UPLOAD_FORMS = (
    (
        re.compile(r"/(?:post/|p/[0-9]{1,19}/)?"),
        auth.post_limits,
        gettext_lazy("You have posted a lot in a short time."),
    ),
    (
        re.compile(r"/settings/profile/"),
        auth.profile_limits,
        gettext_lazy("You have changed your profile many times in a short time."),
    ),
)
UPLOADER = "retwis_uploader"  # the request attribute holding the user read here
# A form's body past this many bytes carries pictures: it is worth a look at the limit
# before parsing. A smaller one (text alone) goes to its view, which keeps what was typed.
UPLOAD_PEEK_BYTES = 256 * 1024


class UploadLimitMiddleware:
    """A form with pictures (multipart, over UPLOAD_PEEK_BYTES) sent by someone already at
    the limit it counts against is answered 429 before its body is parsed
    (CsrfViewMiddleware, next, would parse it: a loop of four 10 MB pictures costs the
    parsing, not the limit). It only looks (LimitStore.waiting): the view counts the
    attempt. One round trip more for such a form; the user read here is request.user's
    (RedisAuthMiddleware). The page's script hears the refusal in JSON and keeps the text;
    without it the 429 page says when to try again (the pictures were never kept)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            request.method == "POST"
            and request.content_type == "multipart/form-data"
            and request.COOKIES.get(settings.AUTH_COOKIE_NAME)
            and int(request.META.get("CONTENT_LENGTH") or 0) > UPLOAD_PEEK_BYTES
        ):
            path = request.path_info
            found = next((f for f in UPLOAD_FORMS if f[0].fullmatch(path)), None)
            if found is not None:
                _, checks, said = found
                user = user_for_request(request)
                setattr(request, UPLOADER, user)
                if isinstance(user, User):
                    wait = get_repository().limits.waiting(checks(user.id))
                    if wait:
                        request.user = user  # type: ignore[assignment]  # the 429 page's
                        return rate_limited_response(request, RateLimited(str(said), wait))
        return self.get_response(request)


class RateLimitMiddleware:
    """Turn a RateLimited from any view (too many posts, follows, reports) into a 429 page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, RateLimited):
            return rate_limited_response(request, exception)
        return None


def body_refused_response(request: HttpRequest, refusal: Refusal) -> HttpResponse:
    """Return the answer to a request whose body social.bodies refused: Mastodon's JSON
    error on the API's paths, the message in JSON to a page's script, else a page."""
    title, heading, message, api_error = _body_refusals()[refusal.status]
    if is_api_path(request.path):
        response: HttpResponse = error_response(refusal.status, api_error)
    elif wants_json(request):
        response = refused_json(f"{message} {gettext('That did not go through.')}", refusal.status)
    else:
        context = {"title": title, "heading": heading, "message": message, "user": AnonymousUser()}
        try:
            html = render_to_string("body_refused.html", context, request=request)
        except UNAVAILABLE:
            return unavailable_response(request)
        response = HttpResponse(html, status=refusal.status)
    response["Cache-Control"] = "no-store"
    return response


def _body_refusals() -> dict[int, tuple[str, str, str, str]]:
    """Each refusal's title, heading and message (in the request's language), and its
    words on the API."""
    total, picture = settings.RETWIS_MAX_BODY / 2**20, images.MAX_BYTES / 2**20
    sizes = {"total": f"{total:.3g}", "picture": f"{picture:.3g}"}
    seconds = {"seconds": f"{settings.RETWIS_BODY_TIMEOUT:g}"}
    return {
        413: (
            gettext("Too large"),
            gettext("That was more than the site takes at once"),
            gettext("A post may send %(total)s MB in all, each picture at most %(picture)s MB.")
            % sizes,
            "Request entity too large",
        ),
        408: (
            gettext("Too slow"),
            gettext("That took too long to arrive"),
            gettext("The site waits %(seconds)s seconds for what a form sends. Try again.")
            % seconds,
            "Request timeout",
        ),
        400: (
            gettext("Not received"),
            gettext("That did not arrive whole"),
            gettext("The connection broke while it was being sent. Try again."),
            "Bad request",
        ),
    }


class BodyRefusedMiddleware:
    """Answer a request whose body social.bodies refused (too large, too slow, cut short)
    before any check or view looks for it: after LocaleMiddleware, so
    the page is in the reader's language, and before CsrfViewMiddleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refusal = request.META.get(REFUSED)
        if refusal is None:
            return self.get_response(request)
        return body_refused_response(request, refusal)


class ContentSecurityPolicyMiddleware:
    """Send settings.CONTENT_SECURITY_POLICY on every response that has none (the OAuth
    consent page sends its own: form_action_allowing).

    The site has no inline scripts or styles and loads nothing from other origins but the
    pictures of other servers' posts (https images), so the policy can be strict: if
    escaping ever failed, injected script would still not run.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.policy = settings.CONTENT_SECURITY_POLICY

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self.policy:
            response.headers.setdefault("Content-Security-Policy", self.policy)
        return response


def form_action_allowing(policy: str, source: str) -> str:
    """policy with source added to its form-action directive, all else as it was: for a
    page whose form's answer redirects elsewhere (the OAuth consent, to the app). A policy
    without form-action (forms may go anywhere) or with 'none' is returned as it is."""

    def add(found: re.Match) -> str:
        directive = found.group(2).rstrip()
        return found.group(1) + (directive if "'none'" in directive else f"{directive} {source}")

    return FORM_ACTION_RE.sub(add, policy, count=1)


class LocaleMiddleware(DjangoLocaleMiddleware):
    """Django's LocaleMiddleware (the language from the cookie, else Accept-Language),
    except for a response marked `same_in_every_language` (the Atom feeds, written in
    LANGUAGE_CODE for everyone): it gets no `Vary: Accept-Language`, so a shared cache
    keeps one copy for every reader."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if getattr(response, "same_in_every_language", False):
            return response
        return super().process_response(request, response)
