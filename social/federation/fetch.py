"""The one HTTP client for every outgoing federation request, safe to point at strangers' URLs.

A URL from another server is hostile input. Before a byte is sent the client checks the URL
and EVERY address its name resolves to (social/federation/destinations.py), then connects to
the address it checked, never resolving the name again (DNS rebinding), with TLS's SNI and
certificate check against the name. Redirects, at most three, are checked the same way.
Each exchange has a connect timeout, a read timeout and a total deadline that a server
trickling bytes cannot stretch (every read waits only for what is left of it), and a body
counted while it is read (`max_bytes`). Connections are kept alive per (scheme, name,
address, port) in a bounded set of pools that threads share.

FEDERATION_HOSTS, FEDERATION_ALLOW_HTTP and FEDERATION_ALLOW_ADDRESSES (retwis_site/settings.py)
let tests and two local instances reach each other; they are read at every request.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from urllib.parse import urljoin

import urllib3
from django.conf import settings
from urllib3.connectionpool import HTTPConnectionPool
from urllib3.exceptions import (
    ConnectTimeoutError,
    DecodeError,
    HTTPError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    SSLError,
)

from .connections import Pools, exchange_deadline, tls_context
from .destinations import (
    FetchError,
    IPAddress,
    Refused,
    Target,
    address_refusal,
    check_address,
    parse_url,
)

__all__ = [
    "Client",
    "FetchError",
    "Refused",
    "Response",
    "Timeout",
    "TooLarge",
    "UnexpectedType",
    "address_refusal",
    "check_address",
    "client",
    "get",
    "parse_url",
    "post",
]

MAX_BYTES = 1024 * 1024  # a response body's default limit (callers may pass another)
TIMEOUT = 15.0  # seconds for a whole exchange, resolving and redirects included
CONNECT_TIMEOUT = 5.0  # a TCP connection and its TLS handshake (CPython bounds it in total)
READ_TIMEOUT = 10.0  # silence between two reads (the deadline caps it)
DNS_TIMEOUT = 5.0
DNS_CACHE_SECONDS = 30.0  # getaddrinfo gives no TTL: a short one of ours, checked every use
DNS_CACHE_SIZE = 1024
MAX_REDIRECTS = 3
REDIRECT_BODY = 16 * 1024  # a redirect's body read for its connection's reuse, at most
MAX_POOLS = 256  # (scheme, name, address, port) kept alive, the least recently used closed
PER_POOL = 4  # idle connections kept per pool (more may be open at once: block=False)
CHUNK = 64 * 1024
VERSION = "0.1.0"  # social/api/nodeinfo.py's SOFTWARE_VERSION
_REDIRECTS = {301, 302, 303, 307, 308}
# Request headers the client owns: a caller's (or signer's) copy would be a second one.
_OWN_HEADERS = {"host", "accept-encoding", "content-length", "transfer-encoding", "connection"}

# sign(method, url, headers, body) -> headers to add (Date, Digest, Signature).
Signer = Callable[[str, str, dict[str, str], bytes], Mapping[str, str]]
Lookup = Callable[[str], list[str]]


class TooLarge(FetchError):
    """The response's body is over the limit (said by Content-Length, or counted)."""


class Timeout(FetchError):
    """A time limit passed: resolving, connecting, a read, or the whole exchange's."""


class UnexpectedType(FetchError):
    """A successful response of another content type than the caller accepts."""


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # names lowercased; a repeated header's values joined by ", "
    body: bytes
    url: str  # the final URL, after redirects

    @property
    def media_type(self) -> str:
        """Return the content type without its parameters, lowercased."""
        return _media_type(self.headers)


def _media_type(headers: Mapping[str, str]) -> str:
    return headers.get("content-type", "").partition(";")[0].strip().lower()


def user_agent() -> str:
    """Return the User-Agent naming this site: "Retwis/0.1.0 (+https://example.org/)"."""
    return f"Retwis/{VERSION} (+{settings.SITE_URL}/)"


class _Resolver:
    """Names to addresses through getaddrinfo with a time limit (in a small thread pool: it
    has none of its own), remembered briefly; never judged here (see check_address)."""

    def __init__(self, lookup: Lookup | None) -> None:
        self._lookup = lookup or _getaddrinfo
        self._cache: OrderedDict[str, tuple[float, tuple[IPAddress, ...]]] = OrderedDict()
        self._lock = threading.Lock()
        self._threads = ThreadPoolExecutor(max_workers=8, thread_name_prefix="fetch-dns")

    def addresses(self, name: str, deadline: float) -> tuple[IPAddress, ...]:
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(name)
            if hit is not None and hit[0] > now:
                return hit[1]
        future = self._threads.submit(self._lookup, name)
        try:
            found = future.result(timeout=max(0.0, min(DNS_TIMEOUT, deadline - now)))
        except FutureTimeout:
            future.cancel()  # a lookup under way runs out in its thread, unwaited for
            raise Timeout(f"resolving {name} took too long") from None
        except OSError as error:
            raise FetchError(f"{name} does not resolve ({error})") from None
        addresses = tuple(dict.fromkeys(ipaddress.ip_address(item) for item in found))
        if not addresses:
            raise FetchError(f"{name} has no address")
        with self._lock:
            self._cache[name] = (now + DNS_CACHE_SECONDS, addresses)
            self._cache.move_to_end(name)
            while len(self._cache) > DNS_CACHE_SIZE:
                self._cache.popitem(last=False)
        return addresses

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            self._cache.clear()


def _getaddrinfo(name: str) -> list[str]:
    infos = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


# --- The client --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ask:
    """One request to one URL, as sent (headers signed), with the exchange's limits."""

    method: str
    target: Target
    headers: dict[str, str]
    body: bytes | None
    deadline: float
    max_bytes: int
    content_types: Collection[str] | None

    def follows(self, status: int) -> bool:
        """Say whether a redirect of this status is followed (a POST's only 307 and 308:
        the others would turn it into a GET)."""
        return status in (307, 308) or (self.method == "GET" and status in _REDIRECTS)


class Client:
    """The outgoing HTTP client: pools, a resolver and a TLS context, shared by threads.
    `ca_certs` (a PEM file) replaces the system's CAs, `lookup` getaddrinfo (tests)."""

    def __init__(
        self,
        *,
        ca_certs: str | None = None,
        lookup: Lookup | None = None,
        max_pools: int = MAX_POOLS,
        per_pool: int = PER_POOL,
    ) -> None:
        self._pools = Pools(max_pools, per_pool, tls_context(ca_certs))
        self._resolver = _Resolver(lookup)

    def close(self) -> None:
        """Close every kept connection and forget resolved names."""
        self._pools.close()
        self._resolver.close()

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        body: bytes | None = None,
        max_bytes: int = MAX_BYTES,
        timeout: float = TIMEOUT,
        content_types: Collection[str] | None = None,
        sign: Signer | None = None,
    ) -> Response:
        """Send a request to `url`, following up to MAX_REDIRECTS checked redirects (each
        signed anew), and return the final response; raise FetchError. `content_types`:
        the media types a 2xx response may have (UnexpectedType before its body is read)."""
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while len(seen) <= MAX_REDIRECTS:
            target = parse_url(url)
            if target.url in seen:
                raise FetchError(f"a redirect loop back to {target.url}")
            seen.append(target.url)
            sent = _headers(method, target, headers, body, sign)
            ask = _Ask(method, target, sent, body, deadline, max_bytes, content_types)
            response, location = self._exchange(ask)
            if location is None:
                return response
            url = urljoin(target.url, location)
        raise FetchError(f"more than {MAX_REDIRECTS} redirects from {seen[0]}")

    def _exchange(self, ask: _Ask) -> tuple[Response, str | None]:
        """Return one exchange's response and the redirect to follow (or None), trying the
        name's next address when one cannot be connected to."""
        failure = FetchError(f"{ask.target.host} has no address")
        for address, port in self._addresses(ask.target, ask.deadline):
            pool = self._pools.get(ask.target, address, port)
            try:
                raw = _send(pool, ask)
            except (NewConnectionError, ConnectTimeoutError) as error:
                failure = _failure(error, ask.target)
                continue
            except (HTTPError, OSError) as error:
                raise _failure(error, ask.target) from None
            return _read(raw, ask)
        raise failure

    def _addresses(self, target: Target, deadline: float) -> list[tuple[IPAddress, int]]:
        """Return the checked (address, port) pairs to try for `target`; Refused if any of
        the name's addresses is not allowed (one bad answer condemns the name)."""
        routed = settings.FEDERATION_HOSTS.get(target.name)
        if routed is not None:
            addresses: tuple[IPAddress, ...] = (ipaddress.ip_address(routed[0]),)
            port = routed[1] or target.port
        elif target.literal is not None:
            addresses, port = (target.literal,), target.port
        else:
            addresses, port = self._resolver.addresses(target.name, deadline), target.port
        for address in addresses:
            check_address(target.name, address)
        return [(address, port) for address in addresses]


def _without(headers: Mapping[str, str], *names: str) -> dict[str, str]:
    """Return `headers` without any spelling of `names` (lowercase)."""
    return {name: value for name, value in headers.items() if name.lower() not in names}


def _headers(
    method: str, target: Target, extra: Mapping[str, str], body: bytes | None, sign: Signer | None
) -> dict[str, str]:
    headers = _without(extra, *_OWN_HEADERS)
    headers.setdefault("User-Agent", user_agent())
    # Asked uncompressed; a server compressing anyway is decoded within the same limit.
    headers.update({"Host": target.host, "Accept-Encoding": "identity"})
    if sign is not None:
        added = sign(method, target.url, dict(headers), body or b"")
        headers.update(_without(added, *_OWN_HEADERS))
    return headers


def _send(pool: HTTPConnectionPool, ask: _Ask) -> urllib3.BaseHTTPResponse:
    """Send the request; return the response with its headers read and its body not."""
    try:
        return _urlopen(pool, ask)
    except ProtocolError:
        # A kept connection the server closed as we sent: a GET is tried once more.
        if ask.method != "GET":
            raise
    return _urlopen(pool, ask)


def _urlopen(pool: HTTPConnectionPool, ask: _Ask) -> urllib3.BaseHTTPResponse:
    left = ask.deadline - time.monotonic()
    if left <= 0:
        raise Timeout(f"{ask.target.host} did not answer in time")
    limits = urllib3.Timeout(connect=min(CONNECT_TIMEOUT, left), read=min(READ_TIMEOUT, left))
    with exchange_deadline(ask.deadline):
        return pool.urlopen(
            ask.method,
            ask.target.path,
            body=ask.body,
            headers=ask.headers,
            retries=False,
            redirect=False,
            timeout=limits,
            preload_content=False,
            decode_content=True,
            assert_same_host=False,
        )


def _read(raw: urllib3.BaseHTTPResponse, ask: _Ask) -> tuple[Response, str | None]:
    """Read a response's body within the limits; a connection left half-read is closed."""
    target, reusable = ask.target, False
    try:
        headers = {name.lower(): raw.headers[name] for name in raw.headers}
        location = headers.get("location")
        length = headers.get("content-length", "").strip()
        if location and ask.follows(raw.status):
            # Its body is read only when short, to keep the connection; else it is closed.
            if length.isdigit() and int(length) <= REDIRECT_BODY:
                _body(raw, target, REDIRECT_BODY)
                reusable = True
            return Response(raw.status, headers, b"", target.url), location
        if length.isdigit() and int(length) > ask.max_bytes:
            raise TooLarge(f"{target.url} sends {length} bytes, over {ask.max_bytes}")
        kind, wanted = _media_type(headers), ask.content_types
        if wanted is not None and 200 <= raw.status < 300 and kind not in wanted:
            raise UnexpectedType(f"{target.url} is {kind or 'untyped'}")
        body = _body(raw, target, ask.max_bytes)
        reusable = True
        return Response(raw.status, headers, body, target.url), None
    except (HTTPError, OSError) as error:
        raise _failure(error, target) from None
    finally:
        if not reusable:
            raw.close()
        raw.release_conn()


def _body(raw: urllib3.BaseHTTPResponse, target: Target, max_bytes: int) -> bytes:
    chunks, size = [], 0
    while chunk := raw.read(CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise TooLarge(f"{target.url} sends over {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _failure(error: BaseException, target: Target) -> FetchError:
    """Return the FetchError saying what `error` (urllib3's or the socket's) means."""
    where = target.host
    if isinstance(error, NewConnectionError):
        return FetchError(f"cannot connect to {where}: {error}")
    if isinstance(error, ConnectTimeoutError):
        return Timeout(f"connecting to {where} took too long")
    if isinstance(error, ReadTimeoutError | TimeoutError):
        return Timeout(f"{where} did not answer in time")
    if isinstance(error, SSLError):
        return FetchError(f"TLS with {where} failed: {error}")
    if isinstance(error, DecodeError):
        return FetchError(f"{where} sent a body that does not decode: {error}")
    return FetchError(f"{where} broke the exchange: {type(error).__name__}: {error}")


# --- The site's client -------------------------------------------------------------------

_client: Client | None = None
_client_lock = threading.Lock()


def client() -> Client:
    """Return the process's one client (made at first use)."""
    global _client
    if _client is None:
        with _client_lock:
            if _client is None:
                _client = Client()
    return _client


def get(
    url: str,
    *,
    accept: str,
    headers: Mapping[str, str] | None = None,
    max_bytes: int = MAX_BYTES,
    timeout: float = TIMEOUT,
    content_types: Collection[str] | None = None,
    sign: Signer | None = None,
) -> Response:
    """GET `url` asking for `accept`; return the final Response or raise FetchError."""
    return client().request(
        "GET",
        url,
        headers={**_without(headers or {}, "accept"), "Accept": accept},
        max_bytes=max_bytes,
        timeout=timeout,
        content_types=content_types,
        sign=sign,
    )


def post(
    url: str,
    body: bytes,
    *,
    headers: Mapping[str, str],
    max_bytes: int = MAX_BYTES,
    timeout: float = TIMEOUT,
    sign: Signer | None = None,
) -> Response:
    """POST `body` to `url` (headers: its Content-Type at least); return the Response or
    raise FetchError."""
    return client().request(
        "POST", url, headers=headers, body=body, max_bytes=max_bytes, timeout=timeout, sign=sign
    )
