"""Request bodies are bounded before anything reads them (social/bodies.py, in front of
Django in retwis_site/wsgi.py): a `Content-Length` or a chunked body over RETWIS_MAX_BODY
is a 413, a body that has not come within RETWIS_BODY_TIMEOUT a 408 that frees the worker,
and each uploaded file is kept to one byte past a picture's limit (social/uploads.py).

The served-site tests talk raw HTTP to the site as scripts/launch.py serves it (Granian,
one worker with one thread here, so a held worker would hold every page).
"""

from __future__ import annotations

import io
import json
import os
import socket
import threading
import urllib.request

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, RequestFactory

from social import images, keys
from social.bodies import INCOMPLETE, REFUSED, TOO_LARGE, TOO_SLOW, BoundedBodies, SlowSenders
from tests.api import token_for
from tests.conftest import CLUSTER, make_user
from tests.served_site import served_site

WAIT = 30  # seconds anything expected may take, however busy the machine
BODY_TIMEOUT = 2  # the served site's RETWIS_BODY_TIMEOUT
MiB = 1024 * 1024


@pytest.fixture(scope="module")
def site(redis_server, tmp_path_factory):
    """The site served for real with one worker of one thread; yields (host, port)."""
    config = {
        "REDIS_URL": redis_server.url,
        "REDIS_CLUSTER": "true" if CLUSTER else "false",
        "SECRET_KEY": "request-bounds-tests-only-" + "x" * 50,
        "WEB_WORKERS": "1",
        "WEB_THREADS": "1",
        "RETWIS_BODY_TIMEOUT": str(BODY_TIMEOUT),
    }
    with served_site(tmp_path_factory.mktemp("bounds"), config, start_within=90) as url:
        host, port = url.removeprefix("http://").split(":")
        yield host, int(port)


def connect(site) -> socket.socket:
    return socket.create_connection(site, timeout=WAIT)


def head(method: str, path: str, headers: dict[str, str]) -> bytes:
    lines = [
        f"{method} {path} HTTP/1.1",
        "Host: 127.0.0.1",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def response_of(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read one response (its Content-Length's worth of body) within WAIT seconds."""
    sock.settimeout(WAIT)
    data = b""
    while b"\r\n\r\n" not in data:
        got = sock.recv(65536)
        assert got, f"closed before an answer: {data!r}"
        data += got
    top, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = top.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}

    def more() -> bytes:
        got = sock.recv(65536)
        assert got, "closed in the answer's body"
        return got

    if headers.get("transfer-encoding") == "chunked":
        whole = b""
        while True:
            while b"\r\n" not in body:
                body += more()
            size, _, body = body.partition(b"\r\n")
            length = int(size, 16)
            while len(body) < length + 2:
                body += more()
            whole, body = whole + body[:length], body[length + 2 :]
            if length == 0:
                return int(status_line.split()[1]), headers, whole
    while len(body) < int(headers.get("content-length", "0")):
        body += more()
    return int(status_line.split()[1]), headers, body


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closes the connection after its answer (within WAIT)."""
    sock.settimeout(WAIT)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def send_quietly(sock: socket.socket, parts) -> None:
    """Send parts until done or the server stops listening (it may answer before the end)."""
    try:
        for part in parts:
            sock.sendall(part)
    except OSError:
        pass


def test_a_content_length_over_the_cap_is_answered_413_without_reading_a_byte(site):
    # 300 MiB declared, not one byte sent: the answer comes at once, no body waited for.
    for path, accept in (("/login/", "text/html"), ("/api/v1/media", "*/*")):
        with connect(site) as sock:
            sock.sendall(
                head(
                    "POST",
                    path,
                    {
                        "Content-Type": "multipart/form-data; boundary=x",
                        "Content-Length": str(300 * MiB),
                        "Accept": accept,
                    },
                )
            )
            status, headers, body = response_of(sock)
            assert status == 413, body[:300]
            assert headers["cache-control"] == "no-store"
            if path.startswith("/api/"):
                assert json.loads(body) == {"error": "Request entity too large"}
            else:
                assert headers["content-type"].startswith("text/html")
                assert b"A post may send 42 MB in all, each picture at most 10 MB." in body
            assert closed_by_server(sock)


def test_a_chunked_body_past_the_cap_is_answered_413(site):
    chunk = b"a" * MiB
    with connect(site) as sock:
        sock.sendall(head("POST", "/login/", {"Transfer-Encoding": "chunked"}))
        parts = (b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(43))
        sender = threading.Thread(target=send_quietly, args=(sock, parts))
        sender.start()
        status, _, body = response_of(sock)
        sender.join(WAIT)
    assert status == 413, body[:300]


def test_a_chunked_body_within_the_cap_reaches_django_whole(site, r):
    form = b"client_name=Chunked+app&redirect_uris=urn:ietf:wg:oauth:2.0:oob"
    with connect(site) as sock:
        sock.sendall(
            head(
                "POST",
                "/api/v1/apps",
                {
                    "Transfer-Encoding": "chunked",
                    "Content-Type": "application/x-www-form-urlencoded",
                },
            )
        )
        for part in (form[:20], form[20:]):
            sock.sendall(b"%x\r\n%s\r\n" % (len(part), part))
        sock.sendall(b"0\r\n\r\n")
        status, _, body = response_of(sock)
    assert status == 200, body[:300]
    app = json.loads(body)
    assert app["name"] == "Chunked app"
    assert r.hget(keys.oauth_app(app["client_id"]), "name") == "Chunked app"


def test_a_body_of_four_10_mb_pictures_is_read_and_one_past_the_cap_is_not(site):
    within = 41 * MiB  # four pictures of 10 MiB and the post's fields
    with connect(site) as sock:
        sock.sendall(
            head(
                "POST",
                "/login/",
                {"Content-Type": "multipart/form-data; boundary=x", "Content-Length": str(within)},
            )
        )
        sender = threading.Thread(target=send_quietly, args=(sock, [b"-" * within]))
        sender.start()
        status, _, body = response_of(sock)
        sender.join(WAIT)
    assert status == 403, body[:300]  # read whole, then refused by the CSRF check
    with connect(site) as sock:
        over = settings.RETWIS_MAX_BODY + 1
        sock.sendall(head("POST", "/login/", {"Content-Length": str(over)}))
        assert response_of(sock)[0] == 413


def test_a_body_sent_a_byte_a_second_is_given_up_and_the_worker_serves_others(site):
    sent = threading.Event()
    stop = threading.Event()
    declared = 1000  # bytes: the trickle would take 1,000 s to finish

    def trickle(sock: socket.socket) -> None:
        try:
            sock.sendall(head("POST", "/login/", {"Content-Length": str(declared)}))
            for _ in range(declared):
                sock.sendall(b"a")
                sent.set()
                if stop.wait(1):  # the trickle's pace, not a wait for anything
                    return
        except OSError:  # the server closed the connection: the trickle ends with it
            return

    with connect(site) as sock:
        trickler = threading.Thread(target=trickle, args=(sock,), daemon=True)
        trickler.start()
        try:
            assert sent.wait(WAIT)
            # The one worker has the request; another request is answered anyway.
            with urllib.request.urlopen(f"http://{site[0]}:{site[1]}/healthz", timeout=WAIT) as ok:
                assert ok.status == 200
            assert trickler.is_alive(), "the trickle was still going when /healthz answered"
            status, headers, body = response_of(sock)
            assert status == 408, body[:300]
            assert b"The site waits 2 seconds for what a form sends." in body
            assert headers["connection"] == "close"
        finally:
            stop.set()
            trickler.join(WAIT)


# --- In process: the WSGI layer and the middleware's answers ----------------------------


class Stream:
    """A wsgi.input that answers each read with its next part, or as much of it as was
    asked, then b"" (the end), noting the sizes asked; each read takes `each` seconds of
    the clock BoundedBodies reads (Clock)."""

    def __init__(self, parts: list[bytes], clock: Clock | None = None, each: float = 0) -> None:
        self.parts = list(parts)
        self.asked: list[int] = []
        self.clock, self.each = clock, each

    def read(self, size: int) -> bytes:
        self.asked.append(size)
        if self.clock is not None:
            self.clock.now += self.each
        if not self.parts:
            return b""
        part = self.parts.pop(0)
        if part[size:]:
            self.parts.insert(0, part[size:])  # kept for the next read, as Granian does
        return part[:size]


class Clock:
    """time.monotonic for social.bodies, moved on by the streams' reads only."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr("social.bodies.time", clock)
    return clock


def through(environ: dict, *, max_bytes: int = 100, timeout: float = 10) -> tuple[dict, list]:
    """Run environ through BoundedBodies in front of an app that keeps what it was given;
    return (what the app saw: its environ and the body it read, the answer's headers)."""
    seen: dict = {}
    answered: list = []

    def app(env: dict, start_response):
        seen.update(env)
        seen["body"] = env["wsgi.input"].read()
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    def start_response(status, headers, exc_info=None):
        answered[:] = headers

    base = {"REQUEST_METHOD": "POST", "PATH_INFO": "/", "wsgi.input": Stream([])}
    bounded = BoundedBodies(app, max_bytes=max_bytes, timeout=timeout)
    result = bounded({**base, **environ}, start_response)
    list(result)
    getattr(result, "close", lambda: None)()
    return seen, answered


def test_a_body_within_the_cap_is_handed_on_whole_and_a_chunked_one_with_its_length(clock):
    seen, _ = through({"CONTENT_LENGTH": "11", "wsgi.input": Stream([b"hello", b" world"])})
    assert seen["body"] == b"hello world" and REFUSED not in seen
    stream = Stream([b"a" * 60, b"b" * 40])
    seen, _ = through({"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input": stream})
    assert seen["CONTENT_LENGTH"] == "100" and "HTTP_TRANSFER_ENCODING" not in seen
    assert seen["body"] == b"a" * 60 + b"b" * 40
    assert stream.asked == [1, 2, 4, 8, 16, 32, 64, 128]  # twice the last while none waits


def test_after_a_read_that_waited_only_a_byte_is_asked_for(clock):
    stream = Stream([b"abcdefgh"], clock, each=0.5)  # every read waits for the client
    seen, _ = through({"CONTENT_LENGTH": "6", "wsgi.input": stream})
    assert seen["body"] == b"abcdef" and stream.asked == [1] * 6


def test_bodies_over_the_cap_short_or_slow_reach_django_empty_and_marked_refused(clock):
    chunked = {"HTTP_TRANSFER_ENCODING": "chunked"}
    cases = [
        ({"CONTENT_LENGTH": "101"}, TOO_LARGE),
        ({**chunked, "wsgi.input": Stream([b"a" * 64] * 4)}, TOO_LARGE),
        ({"CONTENT_LENGTH": "50", "wsgi.input": Stream([b"a" * 20])}, INCOMPLETE),
        ({"CONTENT_LENGTH": "5x"}, INCOMPLETE),
        # A byte a second: given up at the deadline (10 s here), never read to its end.
        ({"CONTENT_LENGTH": "50", "wsgi.input": Stream([b"a"] * 50, clock, each=1)}, TOO_SLOW),
    ]
    for environ, refusal in cases:
        seen, headers = through(environ)
        assert seen[REFUSED] == refusal, environ
        assert seen["body"] == b"" and seen["CONTENT_LENGTH"] == "0"
        assert ("Connection", "close") in headers
    assert len(cases[-1][0]["wsgi.input"].asked) == 10


@pytest.mark.parametrize(
    ("refusal", "status", "words"),
    [
        (TOO_LARGE, 413, "A post may send 42 MB in all, each picture at most 10 MB."),
        (TOO_SLOW, 408, "The site waits 10 seconds for what a form sends."),
        (INCOMPLETE, 400, "The connection broke while it was being sent."),
    ],
)
def test_a_refused_body_is_answered_in_the_sites_words_before_any_check(
    repo, r, refusal, status, words
):
    before = r.dbsize()
    marked = {REFUSED: refusal}
    page = Client(enforce_csrf_checks=True).post("/login/", {"username": "x"}, **marked)
    assert page.status_code == status  # not the CSRF check's 403: nothing was read
    assert words in page.content.decode() and page["Cache-Control"] == "no-store"
    script = Client().post("/login/", HTTP_ACCEPT="application/json", **marked)
    assert script.status_code == status and words in script.json()["message"]
    api = Client().post("/api/v1/statuses", **marked)
    assert api.status_code == status and set(api.json()) == {"error"}
    chinese = Client().post("/login/", HTTP_ACCEPT_LANGUAGE="zh-hans", **marked)
    assert chinese.status_code == status and words not in chinese.content.decode()
    assert r.dbsize() == before


def test_an_uploaded_file_is_kept_to_one_byte_past_the_picture_limit():
    big = SimpleUploadedFile("big.png", b"\x89PNG" + b"\x00" * (12 * MiB), "image/png")
    small = SimpleUploadedFile("small.png", b"\x89PNG" + b"\x01" * 1000, "image/png")
    request = RequestFactory().post("/api/v1/media", {"file": big, "other": small, "x": "y"})
    kept = request.FILES["file"]
    assert kept.size == images.MAX_BYTES + 1
    assert os.path.getsize(kept.temporary_file_path()) == images.MAX_BYTES + 1
    assert request.FILES["other"].read() == b"\x89PNG" + b"\x01" * 1000  # the next file whole
    assert request.POST["x"] == "y"


def test_the_api_refuses_a_picture_past_the_limit_with_its_own_message(repo, r):
    alice = make_user(repo, "alice")
    token = token_for(repo, alice, "write:media")
    big = io.BytesIO(b"\x89PNG" + b"\x00" * (images.MAX_BYTES + 1000))
    big.name = "big.png"
    answer = Client().post("/api/v1/media", {"file": big}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert answer.status_code == 422
    assert answer.json() == {"error": "Validation failed: The picture is over 10 MB."}
    assert r.zcard(keys.user_media(alice.id)) == 0 and r.zcard(keys.media_unattached()) == 0


def test_an_address_whose_bodies_keep_timing_out_is_refused_before_a_byte_is_read(clock):
    """Each slow body frees its worker at the deadline; a sender that starts another as
    each times out is barred after two (SlowSenders), for ten minutes, its address only."""

    def app(env: dict, start_response):
        start_response("200 OK", [])
        return [env.get(REFUSED, "read").__class__.__name__.encode()]

    def send(bounded: BoundedBodies, address: str, stream: Stream) -> object:
        seen: dict = {}

        def keep(env: dict, start_response):
            seen.update(env)
            return app(env, start_response)

        bounded.application = keep
        environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/login/", "REMOTE_ADDR": address,
                   "CONTENT_LENGTH": "50", "wsgi.input": stream}  # fmt: skip
        list(bounded(environ, lambda *args: None))
        return seen.get(REFUSED)

    def slow() -> Stream:
        return Stream([b"a"] * 50, clock, each=1)  # a byte a second

    bounded = BoundedBodies(app, max_bytes=100, timeout=10)
    trickles = [slow() for _ in range(3)]
    assert [send(bounded, "203.0.113.9", s) for s in trickles] == [TOO_SLOW] * 3
    assert [len(s.asked) for s in trickles] == [10, 10, 0]  # the third: not a byte read
    mapped = slow()  # the same address written as IPv4 in IPv6
    assert send(bounded, "::ffff:203.0.113.9", mapped) == TOO_SLOW and mapped.asked == []
    other = Stream([b"a" * 50])
    assert send(bounded, "198.51.100.7", other) is None and other.asked  # others read
    clock.now += SlowSenders.WINDOW
    again = Stream([b"a" * 50])
    assert send(bounded, "203.0.113.9", again) is None  # ten minutes later: read again
    # Behind a trusted proxy every request has the proxy's address: no one is barred.
    proxied = BoundedBodies(app, max_bytes=100, timeout=10, proxied=True)
    for _ in range(3):
        assert send(proxied, "127.0.0.1", slow()) == TOO_SLOW
    fast = Stream([b"a" * 50])
    assert send(proxied, "127.0.0.1", fast) is None and fast.asked
