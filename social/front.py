"""The visitor's front page, answered before Django: the same page for every visitor.

`GET /` without an `auth` or `messages` cookie is the welcome page, which shows only the
newest posts (social/remembered.py). This WSGI wrapper remembers that page whole, as the
view rendered it: its bytes with the CSRF slot (remembered.CSRF_SLOT), its status and
headers but the CSRF cookie, keyed by what the request may change it by (scheme, host,
script prefix, the language cookie, Accept-Language), at the version the page was read at
(repository/read/front.py: one MGET a request; a post, a count, a hiding or a change of an
author's name or avatar moves it) and until a card's shown age would change. A
request it holds is answered with one command and no rendering: its own masked token in
the slot (kept, or made with its cookie as Django's CsrfViewMiddleware does). Any other
request, or a missing, older or expired page, goes to Django, which offers the page back.
Not on a cluster (no version there), nor with DEBUG (templates reload).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.conf import settings
from django.http import parse_cookie
from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH
from django.utils.http import http_date

from social.csrf import mask, random_string
from social.redis_client import UNAVAILABLE
from social.remembered import CSRF_SLOT, OFFERED, WANTED
from social.repository.cache import BoundedCache

SIZE = 64
_SLOT = CSRF_SLOT.encode()
_SECRET = re.compile(f"[{re.escape(CSRF_ALLOWED_CHARS)}]{{{CSRF_SECRET_LENGTH}}}")
_EXPIRES = re.compile(r"expires=[^;]*", re.IGNORECASE)


@dataclass(frozen=True)
class FrontPage:
    """A remembered front page: its body with the slot, status, headers (no length, no
    CSRF cookie), the CSRF cookie's header with its secret and expiry left to fill, the
    version it was read at and the time it stops being right."""

    body: bytes
    status: str
    headers: list[tuple[str, str]]
    cookie: str
    version: tuple[object, object]
    until: float


class FrontPageCache:
    """The WSGI application, with the visitor's front page answered from memory."""

    def __init__(self, application: Callable) -> None:
        self.application = application
        self.pages: BoundedCache[tuple, FrontPage] = BoundedCache(SIZE)

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        key, secret = self._key(environ)
        if key is None:
            return self.application(environ, start_response)
        from social.repository import get_repository

        try:
            version = get_repository().front.version()
        except UNAVAILABLE:  # Django answers with its 503 page
            version = None
        if version is None:
            return self.application(environ, start_response)
        page = self.pages.get(key)
        now = time.time()
        if page is not None and page.version == version and now < page.until:
            return self._answer(page, secret, now, start_response)
        environ[WANTED] = True
        answered: list = []

        def capture(status: str, headers: list, exc_info=None) -> Callable:
            answered[:] = [status, headers]
            return start_response(status, headers, exc_info)

        result = self.application(environ, capture)
        offered = environ.get(OFFERED)
        if offered is not None and answered and answered[0].startswith("200 "):
            page = self._page(environ, offered, answered[0], answered[1], version)
            if page is not None:
                self.pages.put(key, page)
        return result

    @staticmethod
    def _key(environ: dict) -> tuple[tuple | None, str | None]:
        """Return (the page's key, the visitor's CSRF secret or None for a new one), or
        (None, None) when Django must answer."""
        if (
            environ.get("REQUEST_METHOD") != "GET"
            or environ.get("PATH_INFO") != "/"
            or environ.get("QUERY_STRING")
            or settings.DEBUG
        ):
            return None, None
        cookies = parse_cookie(environ.get("HTTP_COOKIE", ""))
        if cookies.get(settings.AUTH_COOKIE_NAME) or "messages" in cookies:
            return None, None
        secret = cookies.get(settings.CSRF_COOKIE_NAME)
        if secret is not None and not _SECRET.fullmatch(secret):
            return None, None  # a malformed or old-style cookie: Django replaces it
        key = (
            environ.get("wsgi.url_scheme"),
            environ.get("HTTP_X_FORWARDED_PROTO"),
            environ.get("HTTP_HOST"),
            environ.get("SERVER_NAME"),
            environ.get("SERVER_PORT"),
            environ.get("SCRIPT_NAME"),
            cookies.get(settings.LANGUAGE_COOKIE_NAME),
            environ.get("HTTP_ACCEPT_LANGUAGE"),
        )
        return key, secret

    @staticmethod
    def _page(
        environ: dict, offered: tuple[bytes, float], status: str, headers: list, version: tuple
    ) -> FrontPage | None:
        """The page Django answered, to remember; None when its cookie is not as expected."""
        secret = environ.get("CSRF_COOKIE")  # request.META is the environ
        kept, cookie = [], None
        for name, value in headers:
            lowered = name.lower()
            if lowered == "set-cookie":
                value = value.strip()  # Django's WSGI handler writes it with a space first
                if cookie is not None or not value.startswith(f"{settings.CSRF_COOKIE_NAME}="):
                    return None
                cookie = value
            elif lowered != "content-length":
                kept.append((name, value))
        if cookie is None or not secret or cookie.count(secret) != 1:
            return None
        body, until = offered
        return FrontPage(
            body=body,
            status=status,
            headers=kept,
            cookie=_EXPIRES.sub("expires={expires}", cookie.replace(secret, "{secret}")),
            version=version,
            until=until,
        )

    @staticmethod
    def _answer(
        page: FrontPage, secret: str | None, now: float, start_response: Callable
    ) -> list[bytes]:
        """Answer with page, the visitor's own token in it and their cookie (re)set, as
        CsrfViewMiddleware sets it on every page that holds a token."""
        if secret is None:
            secret = random_string()
        body = page.body.replace(_SLOT, mask(secret).encode())
        cookie = page.cookie.replace("{secret}", secret)
        if settings.CSRF_COOKIE_AGE is not None:
            cookie = cookie.replace("{expires}", http_date(now + settings.CSRF_COOKIE_AGE))
        start_response(
            page.status,
            [*page.headers, ("Content-Length", str(len(body))), ("Set-Cookie", cookie)],
        )
        return [body]
