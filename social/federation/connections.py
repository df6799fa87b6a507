"""The federation client's connections: keep-alive pools to checked addresses, and reads
bound by the exchange's deadline.

urllib3 gives the pools and TLS; two things are added here. A pool connects to an address
already checked (social/federation/destinations.py) while its TLS names and verifies the
host name, so the name is never resolved a second time. And every read of a response,
headers included, waits no longer than the whole exchange has left (`exchange_deadline`):
a socket timeout alone bounds only the silence between two bytes, which a server trickling
one byte at a time never breaks. (The TLS handshake is bounded in total by the connect
timeout: CPython counts a socket's timeout over the whole handshake.)
"""

from __future__ import annotations

import http.client
import io
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util.ssl_ import create_urllib3_context

from .destinations import IPAddress, Target

_exchange = threading.local()  # .deadline: the current exchange's, in this thread


@contextmanager
def exchange_deadline(deadline: float) -> Iterator[None]:
    """Make every response begun in this block stop reading at `deadline` (monotonic)."""
    previous = getattr(_exchange, "deadline", None)
    _exchange.deadline = deadline
    try:
        yield
    finally:
        _exchange.deadline = previous


class _DeadlineReader(io.RawIOBase):
    """A socket's reads, each waiting no longer than the exchange has left (the socket's own
    timeout applies between reads), so a server sending a byte at a time is cut off."""

    def __init__(self, sock: socket.socket, deadline: float | None) -> None:
        self._sock = sock
        # The socket's own reader: it counts as a reference, so that a connection closed
        # as its response begins (Connection: close) keeps its socket until read.
        self._raw = sock.makefile("rb", buffering=0)
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        if self._deadline is None:
            return self._raw.readinto(buffer)
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the exchange's deadline passed")
        wait = self._sock.gettimeout()
        self._sock.settimeout(left if wait is None else min(wait, left))
        try:
            return self._raw.readinto(buffer)
        finally:
            self._sock.settimeout(wait)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """What http.client's response takes for its socket: only makefile("rb") is asked."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def makefile(self, mode: str) -> io.BufferedReader:
        # Read for each response, whose constructor runs inside the exchange's exchange_deadline().
        deadline = getattr(_exchange, "deadline", None)
        return io.BufferedReader(_DeadlineReader(self._sock, deadline))


class _DeadlineResponse(http.client.HTTPResponse):
    def __init__(self, sock: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(_DeadlineSocket(sock), *args, **kwargs)  # type: ignore[arg-type]


class _Connection(HTTPConnection):
    response_class = _DeadlineResponse


class _TLSConnection(HTTPSConnection):
    response_class = _DeadlineResponse


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _TLSConnection


class Pools:
    """Keep-alive pools per (scheme, name, address, port), the least recently used closed
    past `size`; threads share them (urllib3's pools are thread-safe)."""

    def __init__(self, size: int, per_pool: int, tls: ssl.SSLContext) -> None:
        self._pools: OrderedDict[tuple[str, str, str, int], HTTPConnectionPool] = OrderedDict()
        self._lock = threading.Lock()
        self._size, self._per_pool, self._tls = size, per_pool, tls

    def get(self, target: Target, address: IPAddress, port: int) -> HTTPConnectionPool:
        key = (target.scheme, target.name, str(address), port)
        evicted = None
        with self._lock:
            pool = self._pools.get(key)
            if pool is not None:
                self._pools.move_to_end(key)
                return pool
            pool = self._new(target, str(address), port)
            self._pools[key] = pool
            if len(self._pools) > self._size:
                evicted = self._pools.popitem(last=False)[1]
        if evicted is not None:
            evicted.close()  # idle connections now; those in use when they come back
        return pool

    def _new(self, target: Target, address: str, port: int) -> HTTPConnectionPool:
        common: dict[str, Any] = {"maxsize": self._per_pool, "block": False, "retries": False}
        if target.scheme == "http":
            return _Pool(address, port, **common)
        # Connect to the checked address; SNI and the certificate are the name's.
        return _TLSPool(
            address,
            port,
            cert_reqs="CERT_REQUIRED",
            server_hostname=target.name,
            assert_hostname=target.name,
            ssl_context=self._tls,
            **common,
        )

    def close(self) -> None:
        with self._lock:
            pools, self._pools = list(self._pools.values()), OrderedDict()
        for pool in pools:
            pool.close()


def tls_context(ca_certs: str | None) -> ssl.SSLContext:
    """Return the one TLS context of a client (loading the CA store once, not per connection)."""
    context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED)
    context.check_hostname = False  # urllib3 matches the name itself (assert_hostname)
    context.verify_mode = ssl.CERT_REQUIRED
    if ca_certs:
        context.load_verify_locations(ca_certs)
    else:
        context.load_default_certs()
    return context
