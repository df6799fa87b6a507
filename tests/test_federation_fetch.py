"""The federation client (social/federation/fetch.py, destinations.py) against servers of our
own: small HTTP servers in threads on 127.0.0.1 that count the connections they accept and
record every request, so a refusal "before connecting" is seen as no connection at all.

The peers are reached as alpha.test (and beta.test) through FEDERATION_HOSTS, with
FEDERATION_ALLOW_HTTP and FEDERATION_ALLOW_ADDRESSES=127.0.0.0/8, as two local instances
would be; tests that prove a refusal take one of those away.
"""

from __future__ import annotations

import datetime
import gzip
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import IPv4Address, IPv6Address, ip_address
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.core.exceptions import ImproperlyConfigured

from retwis_site.settings import _federation_hosts, _federation_ranges
from social.federation import fetch
from social.federation.destinations import address_refusal, check_address, parse_url
from social.federation.fetch import FetchError, Refused, Timeout, TooLarge, UnexpectedType

ACTIVITY = "application/activity+json"
ENDLESS = 64 * 1024 * 1024  # what /endless would send if nobody stopped reading


# --- Peers -------------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as peers serve
    server: PeerServer

    def do_GET(self) -> None:
        self.serve()

    def do_POST(self) -> None:
        self.serve()

    def serve(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        peer = self.server.peer
        with peer.lock:
            peer.requests.append((self.command, self.path, dict(self.headers), body))
        ROUTES[self.path.partition("?")[0]](self, peer)

    def answer(self, status: int, body: bytes = b"", **headers: str) -> None:
        self.send_response(status)
        named = {"Content-Type": "text/plain"}
        named.update({name.replace("_", "-"): value for name, value in headers.items()})
        for name, value in {**named, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class PeerServer(ThreadingHTTPServer):
    daemon_threads = True
    peer: Peer

    def get_request(self) -> tuple[socket.socket, object]:
        accepted = super().get_request()
        with self.peer.lock:
            self.peer.connections += 1
        return accepted


class Peer:
    """A server on 127.0.0.1 (TLS with `tls`), its accepted connections and requests counted."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.lock = threading.Lock()
        self.connections = 0
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self.stop = threading.Event()  # set at the end: handlers holding a connection let go
        self.sent: dict[str, int] = {}
        self.done = threading.Event()
        self.sni: list[str | None] = []
        self.server = PeerServer(("127.0.0.1", 0), Handler)
        self.server.peer = self
        if tls is not None:
            tls.sni_callback = lambda _sock, name, _ctx: self.sni.append(name)  # type: ignore[assignment,misc,return-value]
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def hop(handler: Handler, peer: Peer) -> None:
    left = int(handler.path.rsplit("/", 1)[1])
    if left:
        handler.answer(302, b"moved", Location=f"/hop/{left - 1}")
    else:
        handler.answer(200, b"arrived")


def declared_huge(handler: Handler, peer: Peer) -> None:
    """Say 2 MiB, send 10 bytes, then hold: a client that reads waits for the rest."""
    handler.send_response(200)
    handler.send_header("Content-Length", str(2 * 1024 * 1024))
    handler.end_headers()
    handler.wfile.write(b"0123456789")
    handler.wfile.flush()
    peer.stop.wait(10)
    handler.close_connection = True


def endless(handler: Handler, peer: Peer) -> None:
    """Send chunks of 64 KiB until ENDLESS bytes or the client stops reading."""
    handler.send_response(200)
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    sent, chunk = 0, b"x" * 65536
    try:
        while sent < ENDLESS and not peer.stop.is_set():
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sent += len(chunk)
    except OSError:
        pass
    handler.close_connection = True
    peer.sent["endless"] = sent
    peer.done.set()


def trickle(handler: Handler, peer: Peer, *, headers_too: bool = False) -> None:
    """Send a byte every 0.2 s, of the body (or of a header line first)."""
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    if not headers_too:
        handler.wfile.write(b"Content-Length: 100\r\n\r\n")
    else:
        handler.wfile.write(b"X-Slow: ")
    try:
        for _ in range(100):
            handler.wfile.write(b"a")
            handler.wfile.flush()
            if peer.stop.wait(0.2):
                break
    except OSError:
        pass
    handler.close_connection = True


def bomb(handler: Handler, peer: Peer) -> None:
    body = gzip.compress(b"\0" * (8 * 1024 * 1024))
    handler.answer(200, body, Content_Encoding="gzip")


ROUTES: dict[str, Callable[[Handler, Peer], None]] = {
    "/note": lambda h, p: h.answer(200, b'{"id": "note"}', Content_Type=ACTIVITY),
    "/html": lambda h, p: h.answer(200, b"<p>hello</p>", Content_Type="text/html"),
    "/host": lambda h, p: h.answer(200, h.headers["Host"].encode()),
    "/close": lambda h, p: h.answer(200, b"bye", Connection="close"),
    "/inbox": lambda h, p: h.answer(202, b"accepted"),
    "/moved-inbox": lambda h, p: h.answer(307, Location="/inbox"),
    "/found-inbox": lambda h, p: h.answer(302, Location="/inbox"),
    "/loop/a": lambda h, p: h.answer(302, Location="/loop/b"),
    "/loop/b": lambda h, p: h.answer(302, Location="http://alpha.test/loop/a"),
    "/to-metadata": lambda h, p: h.answer(302, Location="http://169.254.169.254/latest/"),
    "/to-loopback6": lambda h, p: h.answer(302, Location=f"http://[::1]:{p.port}/note"),
    "/to-http": lambda h, p: h.answer(302, Location="http://alpha.test/note"),
    **{f"/hop/{n}": hop for n in range(5)},
    "/declared-huge": declared_huge,
    "/endless": endless,
    "/trickle": trickle,
    "/trickle-headers": lambda h, p: trickle(h, p, headers_too=True),
    "/bomb": bomb,
}


@pytest.fixture
def peer(settings) -> Iterator[Peer]:
    """A plain-http peer reached as alpha.test, with the settings two local instances use."""
    server = Peer()
    settings.FEDERATION_HOSTS = {"alpha.test": ("127.0.0.1", server.port)}
    settings.FEDERATION_ALLOW_HTTP = True
    settings.FEDERATION_ALLOW_ADDRESSES = ["127.0.0.0/8"]
    yield server
    server.close()


@pytest.fixture
def fetcher() -> Iterator[fetch.Client]:
    """A client of the test's own: no connection or resolved name from another test."""
    client = fetch.Client()
    yield client
    client.close()


def get(client: fetch.Client, url: str, **kwargs) -> fetch.Response:
    return client.request("GET", url, headers={"Accept": ACTIVITY}, **kwargs)


# --- Fetching ----------------------------------------------------------------------------


def test_it_fetches_a_peer_and_says_who_asks(peer, settings):
    settings.SITE_URL = "http://alpha.example"
    response = fetch.get("http://alpha.test/note", accept=ACTIVITY)
    assert response == fetch.Response(
        200,
        {
            "content-type": ACTIVITY,
            "content-length": "14",
            "server": response.headers["server"],
            "date": response.headers["date"],
        },
        b'{"id": "note"}',
        "http://alpha.test/note",
    )
    assert response.media_type == ACTIVITY
    [(method, path, headers, _)] = peer.requests
    assert (method, path) == ("GET", "/note")
    assert headers["Host"] == "alpha.test"
    assert headers["Accept"] == ACTIVITY
    assert headers["Accept-Encoding"] == "identity"
    assert headers["User-Agent"] == "Retwis/0.1.0 (+http://alpha.example/)"


def test_federation_hosts_routes_a_name_and_sends_it_as_host(peer, fetcher, settings):
    settings.FEDERATION_HOSTS["beta.test"] = ("127.0.0.1", peer.port)
    assert get(fetcher, "http://alpha.test/host").body == b"alpha.test"
    # A URL's port other than the scheme's is the Host's too; the connection goes to the
    # routed address and port all the same.
    assert get(fetcher, "http://beta.test:18002/host").body == b"beta.test:18002"
    assert peer.connections == 2


def test_a_kept_connection_serves_the_next_requests(peer, fetcher):
    assert get(fetcher, "http://alpha.test/note").status == 200
    assert get(fetcher, "http://alpha.test/html").status == 200
    assert len(peer.requests) == 2
    assert peer.connections == 1


def test_a_connection_the_peer_closes_is_read_to_the_end_then_replaced(peer, fetcher):
    assert get(fetcher, "http://alpha.test/close").body == b"bye"
    assert get(fetcher, "http://alpha.test/note").status == 200
    assert peer.connections == 2


def test_a_post_is_signed_and_followed_through_a_307_signed_again(peer, fetcher):
    signed: list[tuple[str, str, str, bytes]] = []

    def sign(method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        signed.append((method, url, headers["Host"], body))
        return {"Signature": f"for {url}"}

    response = fetcher.request(
        "POST",
        "http://alpha.test/moved-inbox",
        headers={"Content-Type": ACTIVITY},
        body=b'{"type": "Follow"}',
        sign=sign,
    )
    assert (response.status, response.body, response.url) == (
        202,
        b"accepted",
        "http://alpha.test/inbox",
    )
    assert signed == [
        ("POST", "http://alpha.test/moved-inbox", "alpha.test", b'{"type": "Follow"}'),
        ("POST", "http://alpha.test/inbox", "alpha.test", b'{"type": "Follow"}'),
    ]
    sent = [(m, p, h["Signature"], h["Content-Type"], b) for m, p, h, b in peer.requests]
    assert sent == [
        (
            "POST",
            "/moved-inbox",
            "for http://alpha.test/moved-inbox",
            ACTIVITY,
            b'{"type": "Follow"}',
        ),
        ("POST", "/inbox", "for http://alpha.test/inbox", ACTIVITY, b'{"type": "Follow"}'),
    ]


def test_a_post_is_not_turned_into_a_get_by_a_302(peer):
    response = fetch.post(
        "http://alpha.test/found-inbox", b"{}", headers={"Content-Type": ACTIVITY}
    )
    assert (response.status, response.headers["location"]) == (302, "/inbox")
    assert [path for _, path, _, _ in peer.requests] == ["/found-inbox"]


def test_a_response_of_another_type_than_asked_is_refused(peer, fetcher):
    with pytest.raises(UnexpectedType, match="text/html"):
        get(fetcher, "http://alpha.test/html", content_types={ACTIVITY})
    assert get(fetcher, "http://alpha.test/note", content_types={ACTIVITY}).status == 200


def test_a_peer_that_is_not_listening_is_a_fetch_error(peer, fetcher, settings):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    settings.FEDERATION_HOSTS = {"gone.test": ("127.0.0.1", port)}
    with pytest.raises(FetchError, match="cannot connect to gone.test") as raised:
        get(fetcher, "http://gone.test/note")
    assert not isinstance(raised.value, Timeout | Refused)


# --- Refusals before connecting ----------------------------------------------------------


def test_plain_http_is_refused_without_the_setting(peer, fetcher, settings):
    settings.FEDERATION_ALLOW_HTTP = False
    with pytest.raises(Refused, match="only https"):
        get(fetcher, "http://alpha.test/note")
    assert peer.connections == 0


def test_a_name_resolving_to_loopback_is_refused_before_connecting(peer, settings):
    settings.FEDERATION_ALLOW_ADDRESSES = []
    client = fetch.Client(lookup=lambda name: ["127.0.0.1"])
    try:
        with pytest.raises(Refused, match=r"peer\.example is at 127\.0\.0\.1, a loopback"):
            get(client, f"http://peer.example:{peer.port}/note")
        assert peer.connections == 0
        settings.FEDERATION_ALLOW_ADDRESSES = ["127.0.0.0/8"]
        assert get(client, f"http://peer.example:{peer.port}/note").status == 200
        assert peer.connections == 1
    finally:
        client.close()


def test_localhost_through_the_system_resolver_is_refused(peer, fetcher, settings):
    settings.FEDERATION_ALLOW_ADDRESSES = []
    with pytest.raises(Refused, match="loopback"):
        get(fetcher, f"http://localhost:{peer.port}/note")
    with pytest.raises(Refused, match="loopback"):
        get(fetcher, f"http://127.0.0.1:{peer.port}/note")
    assert peer.connections == 0


def test_a_routed_name_is_still_checked_against_the_allowed_ranges(peer, fetcher, settings):
    settings.FEDERATION_ALLOW_ADDRESSES = ["10.0.0.0/8"]
    with pytest.raises(Refused, match="alpha.test is at 127.0.0.1"):
        get(fetcher, "http://alpha.test/note")
    assert peer.connections == 0


def test_one_private_address_among_public_ones_condemns_the_name(peer, settings):
    client = fetch.Client(lookup=lambda name: ["93.184.216.34", "10.1.2.3"])
    try:
        with pytest.raises(Refused, match=r"10\.1\.2\.3, a private address"):
            get(client, "https://mixed.example/note")
    finally:
        client.close()


def test_a_name_that_does_not_resolve_in_time_is_a_timeout(settings):
    release = threading.Event()

    def stuck(name: str) -> list[str]:
        release.wait(10)
        return ["93.184.216.34"]

    client = fetch.Client(lookup=stuck)
    try:
        with pytest.raises(Timeout, match="resolving slow.example"):
            get(client, "https://slow.example/note", timeout=1.0)
    finally:
        release.set()
        client.close()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://alpha.test/note", "only https"),
        ("https://user:secret@alpha.test/note", "user name or password"),
        ("https://alpha.test:0/note", "port 0"),
        ("https://alpha.test:99999/note", "malformed"),
        ("https:///note", "not a host name"),
        ("https://alpha test/note", "spaces or control"),
        ("https://alpha.test/\r\nX-Injected: 1", "spaces or control"),
        ("https://-alpha.test/note", "not a host name"),
        ("https://alpha_beta.test/note", "not a host name"),
        ("https://1.2.3/note", "not a host name"),
        ("https://" + "a" * 300 + ".test/", "not a host name"),
        ("https://alpha.test/" + "a" * 5000, "over 4096"),
    ],
)
def test_urls_other_than_https_to_a_host_name_are_refused(url, why):
    with pytest.raises(Refused, match=why):
        parse_url(url)


def test_urls_are_normalised_for_the_request_line_and_host():
    target = parse_url("HTTPS://B\u00fccher.Example:443/caf\u00e9?q=\u00e9#frag")
    assert (target.scheme, target.name, target.port, target.host) == (
        "https",
        "xn--bcher-kva.example",
        443,
        "xn--bcher-kva.example",
    )
    assert target.url == "https://xn--bcher-kva.example/caf%C3%A9?q=%C3%A9"
    literal = parse_url("https://[2606:4700:0::1111]:8443")
    assert (literal.name, literal.host, literal.path) == (
        "2606:4700::1111",
        "[2606:4700::1111]:8443",
        "/",
    )
    assert literal.literal == ip_address("2606:4700::1111")


# --- The address rules (pure) ------------------------------------------------------------


def teredo(server: str, client: str) -> str:
    """Return the Teredo address of a client behind `client` served by `server`."""
    value = (0x2001_0000 << 96) | (int(IPv4Address(server)) << 64)
    return str(IPv6Address(value | (0xFFFF_FFFF ^ int(IPv4Address(client)))))


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("0.0.0.0", "unspecified"),
        ("10.0.0.1", "private"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("100.127.255.254", "carrier-grade NAT"),
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("169.254.169.254", "link-local"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.0.0.8", "IETF protocol assignment"),
        ("192.0.2.1", "documentation"),
        ("192.88.99.1", "6to4 relay"),
        ("192.168.1.1", "private"),
        ("198.18.0.1", "benchmarking"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.7", "documentation"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("::127.0.0.1", "reserved"),  # IPv4-compatible, deprecated
        ("::ffff:127.0.0.1", "IPv4-mapped loopback"),
        ("::ffff:10.0.0.1", "IPv4-mapped private"),
        ("::ffff:169.254.169.254", "IPv4-mapped link-local"),
        ("64:ff9b::7f00:1", "NAT64 loopback"),
        ("64:ff9b::a00:1", "NAT64 private"),
        ("64:ff9b:1::1", "local-use NAT64"),
        ("2002:7f00:1::1", "6to4 loopback"),
        ("2002:c0a8:101::1", "6to4 private"),
        (teredo("8.8.8.8", "192.168.1.1"), "Teredo private"),
        (teredo("10.0.0.1", "8.8.4.4"), "Teredo private"),
        ("100::1", "discard-only"),
        ("2001:db8::1", "documentation"),
        ("3fff::1", "documentation"),
        ("2001:10::1", "IETF protocol assignment"),
        ("2001:2::1", "IETF protocol assignment"),
        ("fc00::1", "unique local"),
        ("fd12:3456::1", "unique local"),
        ("fe80::1", "link-local"),
        ("fe80::1%2", "link-local"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("4000::1", "reserved"),
    ],
)
def test_addresses_that_are_not_public_are_refused(address, why):
    assert why in (address_refusal(ip_address(address)) or "none")


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "93.184.216.34",
        "100.63.255.255",
        "172.32.0.1",
        "2606:4700::1111",
        "2a00:1450:4001:80b::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
        teredo("8.8.8.8", "1.1.1.1"),
    ],
)
def test_public_addresses_are_allowed(address):
    assert address_refusal(ip_address(address)) is None


def test_allowed_ranges_let_their_addresses_through_and_no_other(settings):
    settings.FEDERATION_ALLOW_ADDRESSES = ["127.0.0.0/8", "fd00::/8"]
    for allowed in ("127.0.0.1", "127.8.9.10", "::ffff:127.0.0.1", "fd00::5"):
        check_address("peer.test", ip_address(allowed))
    for refused in ("::1", "10.0.0.1", "fc00::1", "169.254.1.1"):
        with pytest.raises(Refused):
            check_address("peer.test", ip_address(refused))


# --- Redirects ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/to-metadata", r"169\.254\.169\.254, a link-local address"),
        ("/to-loopback6", r"::1, a loopback address"),
    ],
)
def test_a_redirect_to_a_private_address_is_refused(peer, fetcher, path, why):
    with pytest.raises(Refused, match=why):
        get(fetcher, f"http://alpha.test{path}")
    assert [p for _, p, _, _ in peer.requests] == [path]


def test_a_redirect_loop_is_refused(peer, fetcher):
    with pytest.raises(FetchError, match="redirect loop"):
        get(fetcher, "http://alpha.test/loop/a")
    assert [p for _, p, _, _ in peer.requests] == ["/loop/a", "/loop/b"]


def test_three_redirects_are_followed_and_a_fourth_refused(peer, fetcher):
    response = get(fetcher, "http://alpha.test/hop/3")
    assert (response.body, response.url) == (b"arrived", "http://alpha.test/hop/0")
    with pytest.raises(FetchError, match="more than 3 redirects"):
        get(fetcher, "http://alpha.test/hop/4")
    assert peer.connections == 1  # the redirects' short bodies read: one kept connection


# --- Limits ------------------------------------------------------------------------------


def test_a_declared_length_over_the_limit_is_refused_without_reading(peer, fetcher):
    # The peer sends 10 bytes of the 2 MiB it declares and holds: reading would time out.
    with pytest.raises(TooLarge, match="2097152 bytes, over 1048576"):
        get(fetcher, "http://alpha.test/declared-huge", timeout=5.0)


def test_a_chunked_body_growing_past_the_limit_is_cut_off(peer, fetcher):
    with pytest.raises(TooLarge, match="over 100000 bytes"):
        get(fetcher, "http://alpha.test/endless", max_bytes=100_000)
    assert peer.done.wait(10)
    assert peer.sent["endless"] < ENDLESS  # the client stopped reading and hung up


def test_a_compressed_body_is_counted_decompressed(peer, fetcher):
    with pytest.raises(TooLarge, match="over 1048576 bytes"):
        get(fetcher, "http://alpha.test/bomb")


def test_a_trickling_body_is_stopped_by_the_total_deadline(peer, fetcher):
    with pytest.raises(Timeout):
        get(fetcher, "http://alpha.test/trickle", timeout=1.0)


def test_trickling_headers_are_stopped_by_the_total_deadline(peer, fetcher):
    with pytest.raises(Timeout):
        get(fetcher, "http://alpha.test/trickle-headers", timeout=1.0)


# --- TLS ---------------------------------------------------------------------------------


def make_certificates(directory: Path) -> tuple[Path, ssl.SSLContext]:
    """Return a CA's PEM file and a server context with a certificate for alpha.test only."""
    now = datetime.datetime.now(datetime.UTC)

    def certificate(subject: str, key, issuer: str, signer, *, ca: bool) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False
            )
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_cert = certificate("Test CA", ca_key, "Test CA", ca_key, ca=True)
    cert = certificate("alpha.test", key, "Test CA", ca_key, ca=False)
    ca_file, cert_file, key_file = (
        directory / "ca.pem",
        directory / "cert.pem",
        directory / "key.pem",
    )
    ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return ca_file, context


@pytest.fixture
def tls_peer(settings, tmp_path) -> Iterator[tuple[Peer, fetch.Client]]:
    """An https peer with a certificate for alpha.test, reached as alpha.test and beta.test."""
    ca_file, context = make_certificates(tmp_path)
    server = Peer(tls=context)
    settings.FEDERATION_HOSTS = {
        "alpha.test": ("127.0.0.1", server.port),
        "beta.test": ("127.0.0.1", server.port),
    }
    settings.FEDERATION_ALLOW_HTTP = False
    settings.FEDERATION_ALLOW_ADDRESSES = ["127.0.0.0/8"]
    client = fetch.Client(ca_certs=str(ca_file))
    yield server, client
    client.close()
    server.close()


def test_tls_names_and_verifies_the_host_not_the_address(tls_peer):
    server, client = tls_peer
    response = get(client, "https://alpha.test/host")
    assert (response.status, response.body) == (200, b"alpha.test")
    assert server.sni == ["alpha.test"]
    # Same address, another name: the certificate is not beta.test's.
    with pytest.raises(FetchError, match="TLS with beta.test failed"):
        get(client, "https://beta.test/host")
    assert [p for _, p, _, _ in server.requests] == ["/host"]


def test_a_redirect_from_https_to_http_is_refused(tls_peer):
    server, client = tls_peer
    with pytest.raises(Refused, match="only https"):
        get(client, "https://alpha.test/to-http")


# --- Settings ----------------------------------------------------------------------------


def test_federation_hosts_parses_names_addresses_and_ports():
    assert _federation_hosts(
        "alpha.test=127.0.0.1:18001, Beta.Test=[::1]:18002,gamma.test=10.0.0.2"
    ) == {
        "alpha.test": ("127.0.0.1", 18001),
        "beta.test": ("::1", 18002),
        "gamma.test": ("10.0.0.2", None),
    }


@pytest.mark.parametrize(
    "raw",
    [
        "alpha.test",
        "alpha.test=",
        "alpha.test=localhost:18001",
        "alpha.test=127.0.0.1:0",
        "alpha.test=127.0.0.1:70000",
        "alpha.test=::1:18001",
        "alpha.test=300.1.1.1",
        "=127.0.0.1:18001",
        "alpha_test=127.0.0.1",
    ],
)
def test_malformed_federation_hosts_stop_start_up(raw):
    with pytest.raises(ImproperlyConfigured, match="FEDERATION_HOSTS must look like"):
        _federation_hosts(raw)


def test_federation_allow_addresses_takes_ranges_and_refuses_junk():
    assert _federation_ranges(["127.0.0.1/8", "::1"]) == ["127.0.0.0/8", "::1/128"]
    with pytest.raises(ImproperlyConfigured, match="FEDERATION_ALLOW_ADDRESSES"):
        _federation_ranges(["localhost"])
