"""The site's own pages as listeners (static/js/site.js, docs/api.md "Streaming"): a request
with no token is authenticated by the `auth` cookie, the user's secret, found as
social.middleware finds it; only from the site's own origins (its Origin header, when a
browser sends one: always for a WebSocket and a cross-origin EventSource), and its answer
names that origin for CORS with credentials. A token's request is answered to any origin
(`*`, no credentials), as before.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http.cookie import parse_cookie

from social.repository import Repository

from .deliver import INVALID_TOKEN, Listener
from .errors import Refused
from .hub import Connection

FOREIGN_ORIGIN = "Origin not allowed"
# A cookie's listener reads as a browser session does: everything the pages show.
COOKIE_SCOPES = ("read",)


def cookie_secret(headers: dict[str, str]) -> str:
    """The `auth` cookie's value in the request's Cookie header, or ""."""
    return parse_cookie(headers.get("cookie", "")[:8192]).get(settings.AUTH_COOKIE_NAME, "")


def origin_of(url: str) -> str:
    """scheme://host[:port] of a URL, lower-case, or "" when it has none."""
    parts = urlsplit(url.strip())
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


def site_origins(own: str) -> set[str]:
    """The origins whose pages may listen by cookie: this request's own (the proxy joining
    site and stream), SITE_URL's and CSRF_TRUSTED_ORIGINS (scripts/launch.py names the
    site's port there when the stream has its own)."""
    named = [own, settings.SITE_URL, *settings.CSRF_TRUSTED_ORIGINS]
    return {origin for origin in map(origin_of, named) if origin}


def check_origin(headers: dict[str, str], own: str) -> str:
    """Return the request's Origin ("" when none was sent); raise Refused (403) for one
    that is not the site's."""
    origin = headers.get("origin", "")
    if origin and origin_of(origin) not in site_origins(own):
        raise Refused(403, FOREIGN_ORIGIN)
    return origin


def authenticate_cookie(repo: Repository, secret: str) -> Listener:
    """Return the listener whose auth secret this is; raise Refused (401: unknown, stale,
    a suspended or deleted account: user_for_secret finds none of them), in Mastodon's
    words for a token."""
    user = repo.users.user_for_secret(secret)
    if user is None or user.is_deleted:
        raise Refused(401, INVALID_TOKEN)
    return Listener(user, COOKIE_SCOPES)


def cors_headers(headers: dict[str, str], connection: Connection) -> list[tuple[bytes, bytes]]:
    """CORS for an answer that streams: a cookie's connection is answered to its page's own
    origin, with credentials; a token's to any origin."""
    origin = headers.get("origin", "")
    if connection.secret and origin:
        return [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-credentials", b"true"),
            (b"vary", b"Origin"),
        ]
    return [(b"access-control-allow-origin", b"*")]
