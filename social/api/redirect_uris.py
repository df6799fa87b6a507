"""Where an app may have the browser sent after the consent page: the rules for a redirect
URI, at registration and at each authorisation, and the Content-Security-Policy source
that lets the consent page's form reach it.

Accepted, as for Mastodon's apps: the out-of-band URN (the code is shown on the page), an
app's own scheme (`myapp://oauth`, `com.example.app:/cb`: phone apps, RFC 8252 §7.1),
`https://` (web apps), and plain `http://` only to the loopback interface
(`127.0.0.1`, `[::1]`, `localhost`: a desktop app listening, RFC 8252 §7.3). Refused:
schemes that would run or show something in the browser (`javascript:`, `data:`...), a
fragment, a host a Content-Security-Policy cannot name. An authorisation uses a
registered URI exactly, except that the port of a loopback IP address is free (the app
listens on whatever port it got); `localhost` is a name and matches exactly, as in
Mastodon.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

OOB = "urn:ietf:wg:oauth:2.0:oob"
SCHEME_RE = re.compile(r"^[a-z][a-z0-9+.-]{0,31}$")
# A host as a Content-Security-Policy source may name it (letters, digits, hyphens), so
# the source added to the consent page's policy is exactly the redirect's host.
HOST_RE = re.compile(r"^[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})*$")
# Schemes a redirect may never use: they would run or show something in the browser.
FORBIDDEN_SCHEMES = frozenset(
    ("javascript", "data", "vbscript", "file", "blob", "about", "filesystem", "view-source")
)
LOOPBACK_NAMES = frozenset(("localhost",))


def _split(uri: str) -> SplitResult | None:
    """uri split into its parts, its port checked; None when it cannot be."""
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        return None
    return parts


def _loopback_ip(host: str) -> bool:
    """Whether host is an IP address of the loopback interface (127.0.0.0/8, ::1)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _web_host_ok(parts: SplitResult) -> bool:
    """Whether an http(s) URI names a host a policy source can name (an IPv6 address
    only for the loopback one)."""
    host = parts.hostname or ""  # lower case, an IPv6 address without its brackets
    if parts.netloc.endswith(":") or "@" in parts.netloc:
        return False
    if ":" in host:
        return "%" not in host and _loopback_ip(host)  # no zone index (`%eth0`)
    return bool(HOST_RE.match(host))


def problem(uri: str) -> str | None:
    """What is wrong with uri as a redirect URI, in Mastodon's words ("must be an absolute
    URI."), or None when an app may register and use it."""
    if uri == OOB:
        return None
    parts = _split(uri)
    if parts is None or any(c.isspace() or ord(c) < 32 for c in uri):
        return "must be an absolute URI."
    scheme = parts.scheme.lower()
    if scheme in FORBIDDEN_SCHEMES:
        return "is forbidden by the server."
    if not SCHEME_RE.match(scheme) or not (parts.netloc or parts.path):
        return "must be an absolute URI."
    if parts.fragment or uri.endswith("#"):
        return "cannot contain a fragment."
    if scheme not in ("http", "https"):
        return None
    if not _web_host_ok(parts):
        return "must be an absolute URI."
    host = parts.hostname or ""
    if scheme == "http" and not (_loopback_ip(host) or host in LOOPBACK_NAMES):
        return "must be an HTTPS/SSL URI."
    return None


def matches(registered: str, given: str) -> bool:
    """Whether an authorisation may use `given` for the registered URI: the same text, or
    for a loopback IP address over http the same but for the port (RFC 8252 §7.3)."""
    if given == registered:
        return True
    mine, theirs = _split(registered), _split(given)
    if mine is None or theirs is None or mine.scheme != "http" or theirs.scheme != "http":
        return False
    if not _loopback_ip(mine.hostname or "") or "@" in theirs.netloc:
        return False
    mine_rest = (mine.hostname, mine.path, mine.query, mine.fragment)
    return (theirs.hostname, theirs.path, theirs.query, theirs.fragment) == mine_rest


def allowed(registered: tuple[str, ...], given: str) -> bool:
    """Whether an authorisation may send the browser to `given`: a URI the rules accept
    today (an app registered before them may hold one they refuse) matching one the app
    registered."""
    return problem(given) is None and any(matches(uri, given) for uri in registered)


def form_action_source(uri: str) -> str | None:
    """The Content-Security-Policy source that lets a form's redirect reach uri: its
    origin for http(s), its scheme for an app's own; None for the out-of-band URN (no
    redirect). uri has passed `problem`.

    A policy cannot name an IPv6 address (Chromium ignores `http://[::1]:5000`), so for
    `[::1]` the source is any host on that port over http: `http://*:5000`."""
    if uri == OOB:
        return None
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        return f"{scheme}:"
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port else ""
    return f"{scheme}://{'*' if ':' in host else host}{port}"
