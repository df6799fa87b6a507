"""Fediverse addresses (`@name@domain`, `name@domain`, `acct:name@domain`) and origins.

Pure functions, no Redis. Everything typed or sent by another server passes through here
before it is looked up, stored or compared, so one account has one spelling:

- A domain is lower-cased ASCII: IDNA-encoded (punycode) by Python's `idna` codec (IDNA
  2003 with nameprep, so "ｅｘａｍｐｌｅ。com" is example.com and "Bücher.example" is
  xn--bcher-kva.example), one trailing dot dropped (so a block of "evil.test" also holds
  "evil.test."), letters, digits and hyphens in labels of 1 to 63, at most DOMAIN_MAX in
  all; a name ending in a number must be an IPv4 address written plainly (no "0x7f.1",
  which a resolver reads as 127.0.0.1). A port may follow (`alpha.test:18001`): ASCII
  digits only (social.numbers: "²" and "１２" are refused), 1 to 65535, written without
  leading zeros. IPv6 literals are not addresses here.
- A name follows Mastodon's rule for remote accounts (`Account::USERNAME_ONLY_RE`): ASCII
  letters, digits and "_", with "." and "-" inside (not first or last), at most NAME_MAX.
  Unicode names are refused: Mastodon refuses them too (so no such account federates with
  it), its mention syntax cannot write one, and letters that look alike ("ａlice",
  Cyrillic "а") would give two accounts one look. Local names are narrower still
  (is_local_name: the sign-up rule) and always pass the remote rule, so one parser serves
  both; the case a name was sent in is kept (look-ups ignore case).
- Origins (same_origin) compare scheme, host and port after the same normalisation; a URL
  with user information, a backslash, spaces or control characters has no origin (parsers
  disagree about where its host is).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlsplit

from social.numbers import whole_number

NAME_MAX = 64  # Mastodon allows 2,048 for remote names; real servers use 30 or fewer
DOMAIN_MAX = 253  # a DNS name, dots included, port excluded
PORT_MAX = 65535
# Counted before any work: "acct:" + name + "@" + a Unicode domain (shorter than its
# punycode) + ":" + port, with room to spare.
ADDRESS_INPUT_MAX = 5 + NAME_MAX + 1 + DOMAIN_MAX + 6 + 64
URL_MAX = 4096  # an ActivityPub id or profile URL

# Mastodon's remote username rule, in ASCII (no re.IGNORECASE: with it "[a-z]" also takes
# the Kelvin sign and the long s).
REMOTE_NAME_RE = re.compile(r"[A-Za-z0-9_]+(?:[.-]+[A-Za-z0-9_]+)*")
# The sign-up rule (social.account_forms.UsernameField: 3 to 20 of these; a test pins that
# both agree). Mastodon's local rule is the same characters, up to 30.
LOCAL_NAME_RE = re.compile(r"[A-Za-z0-9_]{3,20}")
_LABEL_RE = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class InvalidAddress(ValueError):
    """Raised for text that is no valid fediverse address, name or domain."""


@dataclass(frozen=True)
class Address:
    """A remote account's address: a valid name and a normalised domain."""

    name: str
    domain: str

    def __str__(self) -> str:
        return f"{self.name}@{self.domain}"

    @property
    def resource(self) -> str:
        """The WebFinger resource naming this account."""
        return f"acct:{self}"


class Origin(NamedTuple):
    """A URL's scheme, normalised host and port (the default one when none is written)."""

    scheme: str
    host: str
    port: int


def is_remote_name(name: str) -> bool:
    """Return whether name is a valid account name on any server (Mastodon's rule)."""
    return len(name) <= NAME_MAX and REMOTE_NAME_RE.fullmatch(name) is not None


def is_local_name(name: str) -> bool:
    """Return whether name may be given to a new account here (the sign-up rule)."""
    return LOCAL_NAME_RE.fullmatch(name) is not None


def normalise_domain(text: str) -> str:
    """Return domain text (a host, perhaps with ":port") in its one spelling; raise
    InvalidAddress if it is none (see the module docstring)."""
    if not text or len(text) > ADDRESS_INPUT_MAX:
        raise InvalidAddress("empty or too long")
    host, colon, port_text = text.rpartition(":") if ":" in text else (text, "", "")
    port = whole_number(port_text) if colon else None
    if colon and (port is None or not 0 < port <= PORT_MAX):
        raise InvalidAddress("port")
    host = _ascii_host(host)
    return f"{host}:{port}" if port is not None else host


def _ascii_host(host: str) -> str:
    """Return host IDNA-encoded and lower-cased, or raise InvalidAddress."""
    try:
        ascii_host = host.encode("idna").decode("ascii").lower()
    except UnicodeError as error:
        raise InvalidAddress("not a domain name") from error
    ascii_host = ascii_host.removesuffix(".")
    labels = ascii_host.split(".")
    if len(ascii_host) > DOMAIN_MAX or not all(_LABEL_RE.fullmatch(label) for label in labels):
        raise InvalidAddress("not a domain name")
    for label in labels:
        if label.startswith("xn--"):
            try:
                label.encode("ascii").decode("idna")  # refuses broken punycode
            except UnicodeError as error:
                raise InvalidAddress("not a domain name") from error
    if labels[-1].isdigit():
        try:
            ipaddress.IPv4Address(ascii_host)
        except ValueError as error:
            raise InvalidAddress("not a domain name or IPv4 address") from error
    return ascii_host


def split_acct(text: str, local_domain: str | None = None) -> tuple[str, str | None]:
    """Return (name, domain) from `name`, `@name`, `name@domain`, `@name@domain` or
    `acct:name@domain`; domain is normalised, and None when absent or local_domain's.
    Raise InvalidAddress for anything else."""
    if len(text) > ADDRESS_INPUT_MAX:
        raise InvalidAddress("too long")
    if text[:5].lower() == "acct:":
        text = text[5:]
    elif text.startswith("@"):
        text = text[1:]
    name, at, domain_text = text.partition("@")
    if not is_remote_name(name):
        raise InvalidAddress("name")
    if not at:
        return name, None
    domain = normalise_domain(domain_text)  # a second "@" fails here
    if local_domain is not None and domain == normalise_domain(local_domain):
        return name, None
    return name, domain


def parse_address(text: str) -> Address:
    """Return the account address text names (as split_acct takes it, a domain
    required); raise InvalidAddress if it names none."""
    name, domain = split_acct(text)
    if domain is None:
        raise InvalidAddress("no domain")
    return Address(name, domain)


def format_acct(name: str, domain: str | None, local_domain: str) -> str:
    """Return the `acct` of an account as the Mastodon API writes it: name for a local
    one (domain None or local_domain), `name@domain` for a remote one."""
    if domain is None:
        return name
    domain = normalise_domain(domain)
    return name if domain == normalise_domain(local_domain) else f"{name}@{domain}"


def url_origin(url: str) -> Origin | None:
    """Return the origin of an absolute http(s) URL, or None (see the module docstring)."""
    if len(url) > URL_MAX or "\\" in url or any(ord(c) <= 0x20 or c == "\x7f" for c in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or "@" in parts.netloc or parts.netloc.startswith("["):
        return None
    try:
        domain = normalise_domain(parts.netloc.removesuffix(":"))  # "host:" is the default
    except InvalidAddress:
        return None
    host, _, port = domain.partition(":")
    return Origin(scheme, host, int(port) if port else _DEFAULT_PORTS[scheme])


def same_origin(url_a: str, url_b: str) -> bool:
    """Return whether both URLs have an origin and it is the same one."""
    origin = url_origin(url_a)
    return origin is not None and origin == url_origin(url_b)


def url_domain(url: str) -> str | None:
    """Return the domain (with its port unless the scheme's default) an http(s) URL is
    on, in normalise_domain's spelling, or None. For SITE_URL: the local domain."""
    origin = url_origin(url)
    if origin is None:
        return None
    if origin.port == _DEFAULT_PORTS[origin.scheme]:
        return origin.host
    return f"{origin.host}:{origin.port}"


def url_on_domain(url: str, domain: str) -> bool:
    """Return whether url is on domain (an account's or a blocked domain, with its port
    if it has one): an object's id on its actor's server, for one."""
    try:
        wanted = normalise_domain(domain)
    except InvalidAddress:
        return False
    return url_domain(url) == wanted
