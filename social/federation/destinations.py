"""Where the federation client may send a request: the rules on URLs and on addresses.

Pure functions of a URL or an address and three settings, so that every rule has a test of
its own: `parse_url` (https only, or http under FEDERATION_ALLOW_HTTP; no user or password;
a DNS name or an IP literal of bounded length), `address_refusal` (private, loopback,
link-local, multicast, reserved, documentation and shared ranges, IPv4 and IPv6, and the IPv6
forms that carry an IPv4 address judged by it) and `check_address` (FEDERATION_ALLOW_ADDRESSES
lets tests through). social/federation/fetch.py applies them before every connection.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urlsplit

from django.conf import settings

MAX_URL = 4096
_DEFAULT_PORTS = {"http": 80, "https": 443}

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class FetchError(Exception):
    """An outgoing request failed or was refused; `reason` says why (for logs and staff)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Refused(FetchError):
    """Refused before connecting: the URL, its scheme, its name or an address."""


# --- Addresses ---------------------------------------------------------------------------


def _networks(*pairs: tuple[str, str]) -> tuple[tuple[Any, str], ...]:
    return tuple((ipaddress.ip_network(network), why) for network, why in pairs)


_V4_REFUSED = _networks(
    ("0.0.0.0/8", "unspecified ('this network')"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared (carrier-grade NAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignment"),
    ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "6to4 relay"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),  # 255.255.255.255 (broadcast) included
)
# Checked after the forms that embed an IPv4 address (mapped, NAT64, 6to4, Teredo) are
# judged by the address they reach; then anything outside 2000::/3 is reserved.
_V6_REFUSED = _networks(
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("64:ff9b:1::/48", "local-use NAT64"),
    ("100::/64", "discard-only"),
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation"),
    ("2001::/23", "IETF protocol assignment"),
    ("fc00::/7", "unique local (private)"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local"),
    ("ff00::/8", "multicast"),
)
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[str, list[ipaddress.IPv4Address]]:
    """Return how an IPv6 address carries IPv4 ones and which ("", [] for none): packets to
    it reach those (mapped, NAT64, 6to4, Teredo's server and client)."""
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", [address.ipv4_mapped]
    if address in _NAT64:
        return "NAT64", [ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)]
    if address.sixtofour is not None:
        return "6to4", [address.sixtofour]
    if address.teredo is not None:
        return "Teredo", list(address.teredo)
    return "", []


def address_refusal(address: IPAddress) -> str | None:
    """Return why the client may not connect to `address` ("loopback", "private"...), or
    None for a public unicast one. FEDERATION_ALLOW_ADDRESSES is not consulted here."""
    if isinstance(address, ipaddress.IPv4Address):
        return next((why for network, why in _V4_REFUSED if address in network), None)
    how, inner = embedded_ipv4(address)
    if how:
        whys = [why for why in map(address_refusal, inner) if why]
        return f"{how} {whys[0]}" if whys else None
    for network, why in _V6_REFUSED:
        if address in network:
            return why
    if address not in _GLOBAL_UNICAST:
        return "reserved"
    # Belt and braces: whatever else this Python knows is not globally reachable.
    return None if address.is_global else "not globally reachable"


@lru_cache(maxsize=16)
def _allowed_networks(ranges: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in ranges)


def check_address(name: str, address: IPAddress) -> None:
    """Raise Refused unless `address` (for `name`) is public or in FEDERATION_ALLOW_ADDRESSES."""
    why = address_refusal(address)
    if why is None:
        return
    allowed = _allowed_networks(tuple(settings.FEDERATION_ALLOW_ADDRESSES))
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    # `in` across versions compares bare integers: only a network of the same version counts.
    for candidate in (address, mapped):
        if candidate and any(candidate in n for n in allowed if n.version == candidate.version):
            return
    raise Refused(f"{name} is at {address}, a {why} address")


# --- URLs --------------------------------------------------------------------------------

_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_NAME = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_PRINTABLE = "".join(chr(code) for code in range(0x21, 0x7F))


@dataclass(frozen=True)
class Target:
    """A checked URL's parts: where a request goes and what it says."""

    scheme: str
    name: str  # a lowercased DNS name (A-labels) or a normalised IP literal
    port: int
    path: str  # the request target: path and query, ASCII
    literal: IPAddress | None  # the name as an address, for an IP literal URL

    @property
    def host(self) -> str:
        """Return the Host header: the name, with the port when not the scheme's default."""
        host = f"[{self.name}]" if ":" in self.name else self.name
        return host if self.port == _DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}{self.path}"


def parse_url(url: str) -> Target:
    """Return the parts of `url` to request, or raise Refused: https (http only under
    FEDERATION_ALLOW_HTTP), no user or password, a DNS name or IP literal, bounded length."""
    if len(url) > MAX_URL:
        raise Refused(f"a URL of over {MAX_URL} characters")
    if any(ch <= " " or ch == "\x7f" for ch in url):
        raise Refused(f"a URL with spaces or control characters: {url[:200]!r}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise Refused(f"a malformed URL ({error}): {url[:200]!r}") from None
    scheme = parts.scheme.lower()
    if scheme != "https" and not (scheme == "http" and settings.FEDERATION_ALLOW_HTTP):
        raise Refused(f"only https URLs are fetched, not {url[:200]!r}")
    if "@" in parts.netloc:
        raise Refused("a URL with a user name or password")
    if port == 0:
        raise Refused(f"port 0 in {url[:200]!r}")
    name, literal = _host_name(parts.hostname or "")
    # Any other byte is sent percent-encoded: the request line is ASCII.
    path = quote(parts.path or "/", safe=_PRINTABLE)
    if parts.query:
        path += "?" + quote(parts.query, safe=_PRINTABLE)
    return Target(scheme, name, port or _DEFAULT_PORTS[scheme], path, literal)


def _host_name(host: str) -> tuple[str, IPAddress | None]:
    try:
        literal = ipaddress.ip_address(host)
        return str(literal), literal
    except ValueError:
        pass
    try:
        ascii_name = host.encode("idna").decode("ascii") if not host.isascii() else host.lower()
    except UnicodeError:
        raise Refused(f"{host!r} is not a host name") from None
    # A last label of digits is an IPv4 address to browsers (and to inet_aton): not a name.
    if len(ascii_name) > 253 or not _NAME.fullmatch(ascii_name) or ascii_name[-1].isdigit():
        raise Refused(f"{host[:300]!r} is not a host name")
    return ascii_name, None
