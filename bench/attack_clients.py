"""The clients of bench/attack.py: the pictures it sends, a logged-in browser, the attackers
(composer posts of huge pictures, slow bodies) and the page reader.

Everything here talks to 127.0.0.1 only, and every loop ends by itself: at its deadline, at
its stop event, or after its most requests, whichever comes first.
"""

from __future__ import annotations

import http.client
import io
import json
import random
import re
import select
import socket
import struct
import threading
import time
import urllib.parse
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import urllib3
from PIL import Image

LOOPBACK = "127.0.0.1"  # the only address any client here connects to
PASSWORD = "hello-retwis-42"  # every seeded user's (social/demo.py)
TOKEN_RE = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')
SIDE = 6300  # 6,300 x 6,300 = 39.7 megapixels: inside the 40-megapixel limit
PICTURES_PER_POST = 4  # the composer's slots (keys.MEDIA_PER_POST)
TOO_LONG = "x" * 300  # over the 280 characters: refused after the pictures are decoded
SLOW_BODY_BYTES = 100_000  # a slow body's Content-Length: never reached at 1 byte a second


# --- The pictures --------------------------------------------------------------------------


def _chunk(kind: bytes, data: bytes) -> bytes:
    """Return one PNG chunk: length, type, data, CRC."""
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def png16(side: int = SIDE) -> bytes:
    """Return a side x side PNG of 16-bit RGB pixels (six bytes a pixel: 238 MB raw at
    6,300) that compresses to 308 KB (the issue's: 309 KB): black, 8 random bytes a row.

    Written with zlib because Pillow cannot save 16-bit RGB; Pillow reads it back in
    attack.py (pictures()) to check what it says it is."""
    rng = random.Random(33)
    compressor = zlib.compressobj(9)
    parts = []
    for _ in range(side):
        row = bytearray(1 + side * 6)  # filter byte 0 (None), then the pixels
        at = 1 + rng.randrange(side * 6 - 8)
        row[at : at + 8] = rng.randbytes(8)
        parts.append(compressor.compress(bytes(row)))
    parts.append(compressor.flush())
    header = struct.pack(">IIBBBBB", side, side, 16, 2, 0, 0, 0)  # 16-bit, RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", b"".join(parts))
        + _chunk(b"IEND", b"")
    )


def jpeg_bomb(side: int = SIDE, size: int = 693) -> bytes:
    """Return a JPEG of size bytes whose header says side x side: a real 64 x 64
    progressive JPEG (4:2:2; a decoder holds the whole image's coefficients, about
    150 MiB at 6,300) with its frame's dimensions patched, cut short in its first scan."""
    rng = random.Random(33)
    small = Image.frombytes("RGB", (64, 64), rng.randbytes(64 * 64 * 3))
    out = io.BytesIO()
    small.save(out, "JPEG", quality=90, progressive=True, subsampling=1)
    data = bytearray(out.getvalue())
    at = 2  # after SOI: markers, each FF xx and a two-byte length, until the first scan
    while data[at + 1] != 0xDA:
        if data[at + 1] in (0xC0, 0xC1, 0xC2):  # a frame header: precision, height, width
            struct.pack_into(">HH", data, at + 5, side, side)
        at += 2 + struct.unpack(">H", data[at + 2 : at + 4])[0]
    if not at < size < len(data):
        raise ValueError(f"the headers take {at} bytes and the JPEG {len(data)}: not {size}")
    return bytes(data[:size])


def cached(path: Path, make) -> bytes:
    """Return path's bytes, making them with make() (written whole, then renamed) once."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{threading.get_native_id()}.part")
        part.write_bytes(make())
        part.replace(path)
    return path.read_bytes()


# --- A browser -----------------------------------------------------------------------------


class Session:
    """One browser or app: a keep-alive connection to the site on 127.0.0.1, and its cookies."""

    def __init__(self, port: int, timeout: float) -> None:
        self.port = port
        self.timeout = timeout
        self.cookies: dict[str, str] = {}
        self.conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        """Close the connection (the next request opens another)."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(
        self, method: str, path: str, body: bytes | str | None = None, headers: dict | None = None
    ) -> tuple[int, bytes]:
        """Send one request (with this session's cookies); return its status and body. A
        failed request closes the connection (the next one opens another) and raises."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection(LOOPBACK, self.port, timeout=self.timeout)
        sent = dict(headers or {})
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        try:
            self.conn.request(method, path, body=body, headers=sent)
            response = self.conn.getresponse()
            answer = response.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key.strip()] = rest.split(";", 1)[0]
        if response.will_close:
            self.close()
        return response.status, answer

    def login(self, username: str) -> str:
        """Log in as username (GET then POST /login/); return the form's CSRF token."""
        status, page = self.request("GET", "/login/")
        found = TOKEN_RE.search(page)
        if status != 200 or not found:
            raise SystemExit(f"GET /login/ answered {status}")
        token = found.group(1).decode()
        form = urllib.parse.urlencode(
            {"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token}
        )
        status, _ = self.request("POST", "/login/", form, FORM_HEADERS)
        if status != 302 or "auth" not in self.cookies:
            raise SystemExit(f"logging in {username} answered {status}")
        return token

    def copy(self) -> Session:
        """Return another connection with this session's cookies (the same browser)."""
        other = Session(self.port, self.timeout)
        other.cookies = dict(self.cookies)
        return other


FORM_HEADERS = {"Content-Type": "application/x-www-form-urlencoded"}


def api_tokens(port: int, usernames: list[str]) -> dict[str, str]:
    """Register one app (POST /api/v1/apps) and return a Bearer token for each username
    (the password grant of POST /oauth/token)."""
    app_session = Session(port, 60)
    status, body = app_session.request(
        "POST",
        "/api/v1/apps",
        urllib.parse.urlencode(
            {
                "client_name": "attack bench",
                "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
                "scopes": "read write",
            }
        ),  # fmt: skip
        FORM_HEADERS,
    )
    if status != 200:
        raise SystemExit(f"POST /api/v1/apps answered {status}: {body[:200]!r}")
    app = json.loads(body)
    tokens = {}
    for username in usernames:
        grant = {
            "grant_type": "password", "username": username, "password": PASSWORD,
            "client_id": app["client_id"], "client_secret": app["client_secret"],
            "scope": "read write",
        }  # fmt: skip
        status, body = app_session.request(
            "POST", "/oauth/token", urllib.parse.urlencode(grant), FORM_HEADERS
        )
        if status != 200:
            raise SystemExit(f"the password grant for {username} answered {status}")
        tokens[username] = json.loads(body)["access_token"]
    return tokens


# --- The attackers -------------------------------------------------------------------------


@dataclass
class Tally:
    """What one attacker sent: each answer's label ("post 400", "media 429", "slow held")
    and each request's seconds."""

    answers: Counter = field(default_factory=Counter)
    seconds: list[float] = field(default_factory=list)

    def add(self, label: str, seconds: float) -> None:
        self.answers[label] += 1
        self.seconds.append(seconds)


class PictureAttacker:
    """A logged-in account posting the composer with four huge pictures and a status too
    long (refused only after the pictures are decoded, so never counted by today's post
    limit), and with an API token one picture to POST /api/v1/media, back to back."""

    def __init__(
        self, session: Session, token: str, picture: bytes, name: str, api_token: str | None
    ) -> None:
        self.session = session
        fields: list[tuple] = [("csrfmiddlewaretoken", token), ("status", TOO_LONG)]
        kind = "image/png" if name.endswith(".png") else "image/jpeg"
        for n in range(1, PICTURES_PER_POST + 1):
            fields.append((f"picture_{n}", (name, picture, kind)))
        self.post_body, post_type = urllib3.encode_multipart_formdata(fields)
        self.post_headers = {"Content-Type": post_type}
        self.media: tuple[bytes, dict[str, str]] | None = None
        if api_token:
            media_body, media_type = urllib3.encode_multipart_formdata(
                [("file", (name, picture, kind))]
            )
            headers = {"Content-Type": media_type, "Authorization": f"Bearer {api_token}"}
            self.media = (media_body, headers)
        self.tally = Tally()

    def send(self, label: str, path: str, body: bytes, headers: dict[str, str]) -> None:
        """POST body to path; tally "<label> <status>" (or the failure's name) and time."""
        started = time.monotonic()
        try:
            status, _ = self.session.request("POST", path, body, headers)
            answer = str(status)
        except (OSError, http.client.HTTPException) as failed:
            answer = type(failed).__name__
        self.tally.add(f"{label} {answer}", time.monotonic() - started)

    def run(self, stop: threading.Event, deadline: float, most: int) -> None:
        """Attack until stop is set, deadline (time.monotonic()) passes or most requests."""
        while not stop.is_set() and time.monotonic() < deadline and len(self.tally.seconds) < most:
            self.send("post", "/post/", self.post_body, self.post_headers)
            if self.media is not None and not stop.is_set():
                self.send("media", "/api/v1/media", *self.media)
        self.session.close()


class SlowBodyAttacker:
    """An anonymous connection sending a POST /login/ body at one byte a second (with a CSRF
    cookie, so the CSRF check reads the body); when the server answers or closes, another
    connection takes its place."""

    def __init__(self, port: int) -> None:
        self.port = port
        visitor = Session(port, 60)
        visitor.request("GET", "/login/")
        visitor.close()
        self.cookie = "; ".join(f"{k}={v}" for k, v in visitor.cookies.items())
        self.tally = Tally()

    def one(self, stop: threading.Event, deadline: float) -> None:
        """Hold one connection until stop, deadline or the server's answer; tally how it
        ended: the status the server answered, "closed" unanswered, or "held" by us."""
        started = time.monotonic()
        head = (
            f"POST /login/ HTTP/1.1\r\nHost: {LOOPBACK}:{self.port}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            f"Cookie: {self.cookie}\r\n"
            f"Content-Length: {SLOW_BODY_BYTES}\r\n\r\n"
        )
        outcome = "held"
        try:
            with socket.create_connection((LOOPBACK, self.port), timeout=10) as sock:
                sock.sendall(head.encode())
                for _ in range(SLOW_BODY_BYTES):
                    if stop.is_set() or time.monotonic() >= deadline:
                        break
                    readable, _, _ = select.select([sock], [], [], 1.0)  # one byte a second
                    if readable:
                        first = sock.recv(64)
                        parts = first.split()
                        outcome = parts[1].decode() if first and len(parts) > 1 else "closed"
                        break
                    sock.sendall(b"a")
        except OSError as failed:
            outcome = type(failed).__name__
        self.tally.add(f"slow {outcome}", time.monotonic() - started)

    def run(self, stop: threading.Event, deadline: float, most: int) -> None:
        """Hold slow connections one after another until stop, deadline or most."""
        while not stop.is_set() and time.monotonic() < deadline and len(self.tally.seconds) < most:
            self.one(stop, deadline)


# --- The page reader -----------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """One page request: its page, seconds from sending to the end of the answer, and its
    status (0: no answer, the connection failed or timed out)."""

    page: str
    seconds: float
    status: int


def read_pages(
    reader: Session,
    pages: dict[str, str],
    deadline: float,
    most: int,
    keep_alive: bool,
    first: int = 0,
) -> list[Hit]:
    """Fetch pages (name -> path) in turn, from the first-th, on reader's connection until
    deadline or most requests (a new connection each unless keep_alive); return each's
    Hit (a request sent before deadline is waited for)."""
    hits: list[Hit] = []
    names = list(pages)
    n = first
    while time.monotonic() < deadline and n - first < most:
        name = names[n % len(names)]
        n += 1
        started = time.monotonic()
        try:
            status, _ = reader.request("GET", pages[name])
        except (OSError, http.client.HTTPException):
            status = 0
        hits.append(Hit(name, time.monotonic() - started, status))
        if not keep_alive:
            reader.close()
    reader.close()
    return hits
