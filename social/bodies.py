"""Bounds on a request's body, kept before Django reads a byte of it (retwis_site/wsgi.py).

Granian hands a request to a page worker as soon as its headers arrive, and its
`wsgi.input` blocks until the bytes asked for have come: without bounds, one client
sending a body a byte a second holds a worker for as long as it likes, and a 300 MiB form
is read to the end (CsrfViewMiddleware reads request.POST) and written to /tmp before
anything refuses it. So BoundedBodies, the outermost WSGI layer, reads every body itself
before Django sees the request:

- a `Content-Length` over RETWIS_MAX_BODY is refused at once, nothing read (413);
- a chunked body is read up to RETWIS_MAX_BODY and refused past it (413); one within it
  reaches Django with its `Content-Length` (Django reads no body without one);
- a body not all come RETWIS_BODY_TIMEOUT seconds after the request's headers is given up
  (408); one that ends short of its `Content-Length` is a 400.

Granian's read cannot be given a timeout, nor left waiting in another thread (measured:
once the request is answered, a read still waiting there stalls the whole process until
the client sends more), so the deadline is checked between reads, and a read asks only for
what has probably come: one byte after a read that had to wait, twice the last after one
that did not (up to CHUNK). A client that trickles its body is so given up at the deadline
(within one of its bytes); one that sends part of it and then nothing at all still holds
its worker until it goes: only a proxy that buffers bodies (nginx, docs/deploy.md) or an
asynchronous server in front ends that. An address whose bodies timed out twice in ten
minutes has its next bodies refused at once (SlowSenders), so one address cannot keep the
workers busy by starting a new slow body as each one times out. The body is kept in
memory up to IN_MEMORY bytes, on disk past it, and Django reads it from there.

A refusal reaches Django with an empty body and its reason (REFUSED in the environ):
BodyRefusedMiddleware answers it in the site's look and language (JSON on the API's
paths), before any view or check, and the connection is closed after the answer. A
request without a body (every page's GET) passes through untouched.
"""

from __future__ import annotations

import io
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

CHUNK = 64 * 1024  # the most bytes asked of the server at a time
WAITED = 0.005  # seconds: a read that took longer had to wait for the client
IN_MEMORY = 1024 * 1024  # a body up to this size is kept in memory, a longer one on disk
REFUSED = "retwis.body_refused"  # the environ key of a refused body's Refusal


@dataclass(frozen=True)
class Refusal:
    """Why a body was refused: its HTTP status."""

    status: int


TOO_LARGE = Refusal(413)
TOO_SLOW = Refusal(408)
INCOMPLETE = Refusal(400)


class Body:
    """A request's body as read so far: in memory, then on disk past IN_MEMORY."""

    def __init__(self) -> None:
        self.file: IO[bytes] = io.BytesIO()
        self.size = 0

    def keep(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > IN_MEMORY and isinstance(self.file, io.BytesIO):
            on_disk = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the response
            on_disk.write(self.file.getbuffer())
            self.file = on_disk
        self.file.write(data)


def read_body(stream: Any, length: int | None, limit: int, deadline: float) -> Body | Refusal:
    """Read a body of length bytes (None: to its end, chunked) from stream, at most limit
    bytes, by time.monotonic() deadline; return it (its file at its start) or a Refusal."""
    body, want = Body(), 1
    while length is None or body.size < length:
        if time.monotonic() >= deadline:
            return TOO_SLOW
        ask = want if length is None else min(want, length - body.size)
        begun = time.monotonic()
        data = stream.read(ask)
        waited = time.monotonic() - begun > WAITED
        if not data:  # the client's end of the body
            if length is None:
                break
            return INCOMPLETE
        if body.size + len(data) > limit:
            return TOO_LARGE
        body.keep(data)
        want = 1 if waited else min(2 * want, CHUNK)
    body.file.seek(0)
    return body


def declared_length(environ: dict) -> int | None:
    """The body's length as the request declares it: an int, None for a chunked body;
    -1 for a `Content-Length` that is no whole number (hyper refuses those first)."""
    if "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
        return None
    raw = environ.get("CONTENT_LENGTH", "")
    if not raw:
        return 0
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 19 else -1


class SlowSenders:
    """Addresses whose bodies timed out lately, remembered by this process: past STRIKES
    in WINDOW seconds, an address's next bodies are refused (408) before a byte is read,
    so a client that keeps trickling bodies holds a worker for a timeout or two, not for
    as long as it likes. IPv6 by /64, mapped IPv4 as IPv4 (auth.address_subject). Only
    without a trusted proxy in front: behind one every request comes from the proxy, which
    buffers bodies itself (docs/deploy.md). At most SIZE addresses (the oldest forgotten)."""

    STRIKES = 2
    WINDOW = 600.0
    SIZE = 10_000

    def __init__(self) -> None:
        self.seen: dict[str, list[float]] = {}

    def barred(self, address: str, now: float) -> bool:
        times = [t for t in self.seen.get(address, ()) if now - t < self.WINDOW]
        return len(times) >= self.STRIKES

    def strike(self, address: str, now: float) -> None:
        times = [t for t in self.seen.pop(address, ()) if now - t < self.WINDOW]
        self.seen[address] = [*times, now][-self.STRIKES :]
        while len(self.seen) > self.SIZE:
            self.seen.pop(next(iter(self.seen)))


def sender_of(environ: dict) -> str:
    """What a request's body is counted under: its peer's address (its /64 for IPv6)."""
    from social.auth import address_subject

    return address_subject(environ.get("REMOTE_ADDR", ""))


class BoundedBodies:
    """The WSGI application with every request's body bounded in size and time."""

    def __init__(
        self, application: Callable, *, max_bytes: int, timeout: float, proxied: bool = False
    ) -> None:
        self.application = application
        self.max_bytes = max_bytes
        self.timeout = timeout
        # Behind a trusted proxy (TRUSTED_PROXY_HEADER) no address is barred: see SlowSenders.
        self.slow = None if proxied else SlowSenders()

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        begun = time.monotonic()  # the headers have come: the body's time starts
        length = declared_length(environ)
        if length == 0:
            return self.application(environ, start_response)
        if length is not None and length > self.max_bytes:
            return self.refuse(environ, start_response, TOO_LARGE)
        if length == -1:
            return self.refuse(environ, start_response, INCOMPLETE)
        sender = sender_of(environ) if self.slow is not None else ""
        if self.slow is not None and self.slow.barred(sender, begun):
            return self.refuse(environ, start_response, TOO_SLOW)
        try:
            read = read_body(environ["wsgi.input"], length, self.max_bytes, begun + self.timeout)
        except OSError:  # the connection broke: the body never came whole
            read = INCOMPLETE
        if isinstance(read, Refusal):
            if read is TOO_SLOW and self.slow is not None:
                self.slow.strike(sender, time.monotonic())
            return self.refuse(environ, start_response, read)
        environ["wsgi.input"] = read.file
        environ["CONTENT_LENGTH"] = str(read.size)
        environ.pop("HTTP_TRANSFER_ENCODING", None)  # Django reads CONTENT_LENGTH bytes
        return Closing(self.application(environ, start_response), read.file)

    def refuse(self, environ: dict, start_response: Callable, refusal: Refusal) -> Any:
        """Hand Django the request without its body, marked refused; the connection is
        closed after the answer (the rest of the body is never read)."""
        environ[REFUSED] = refusal
        environ["wsgi.input"] = io.BytesIO()
        environ["CONTENT_LENGTH"] = "0"
        environ.pop("HTTP_TRANSFER_ENCODING", None)

        def closing(status: str, headers: list, exc_info: Any = None) -> Callable:
            return start_response(status, [*headers, ("Connection", "close")], exc_info)

        return self.application(environ, closing)


class Closing:
    """A response's iterable that also closes the body's file when the server closes it."""

    def __init__(self, iterable: Iterable[bytes], body: IO[bytes]) -> None:
        self.iterable = iterable
        self.body = body

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.iterable)

    def close(self) -> None:
        try:
            close = getattr(self.iterable, "close", None)
            if close is not None:
                close()
        finally:
            self.body.close()
