"""The streaming API as an ASGI app (served by Granian beside the page workers; docs/api.md,
docs/deploy.md): Mastodon's server-sent-events endpoints under /api/v1/streaming/, its
WebSocket endpoint /api/v1/streaming, and /api/v1/streaming/health.

Each request names its token by `Authorization: Bearer`, the `access_token` query parameter
or (WebSocket) `Sec-WebSocket-Protocol` (the site's own pages: its `auth` cookie, cookies.py),
and is refused with Mastodon's JSON error before
anything streams. Repository calls run in a thread (deliver.py); this module only moves
bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from django.conf import settings
from django.http.request import validate_host

from social.auth import address_subject
from social.redis_client import UNAVAILABLE
from social.repository import get_repository

from .cookies import authenticate_cookie, check_origin, cookie_secret, cors_headers
from .deliver import Listener, authenticate
from .errors import BadRequest, Refused
from .hub import Connection, Hub, keep_collections_short
from .streams import PATHS, Stream, stream_from

log = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

PREFIX = "/api/v1/streaming"
TOO_MANY = "Too many connections from this address"
TOO_MANY_FOR_ACCOUNT = "Too many connections for this account"
MALFORMED = "Error parsing message"
UNAVAILABLE_NOW = "Service Unavailable"  # Redis is away: the client is to connect again
MESSAGE_MAX = 4096  # characters of one client message read; longer (past 16 KiB of UTF-8) is
# refused by the server before the app holds it (scripts/launch.py streaming_argv)
SUBSCRIPTIONS_MAX = 32  # streams one WebSocket may hold
LEAVE_WAIT = 1  # seconds a closing connection's tasks are given to end


def headers_of(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (the last of repeated ones)."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def query_of(scope: Scope) -> dict[str, str]:
    """The query string's parameters (the first of repeated ones), bounded."""
    raw = scope.get("query_string", b"")[:4096].decode("latin-1")
    return {k: v[0] for k, v in parse_qs(raw, max_num_fields=20).items()}


def token_of(headers: dict[str, str], query: dict[str, str]) -> tuple[str, bool]:
    """The token the request names, and whether it came as the WebSocket protocol."""
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip(), False
    if query.get("access_token"):
        return query["access_token"].strip(), False
    protocol = headers.get("sec-websocket-protocol", "").split(",")[0].strip()
    return protocol, bool(protocol)


def address_of(scope: Scope, headers: dict[str, str]) -> str:
    """What the client's address is counted under (auth.address_subject, as the pages
    count it: an IPv6 /64 as one, a mapped IPv4 address as itself): the peer, or the last
    entry of TRUSTED_PROXY_HEADER when set (as social.auth.client_ip reads it)."""
    header = settings.TRUSTED_PROXY_HEADER
    if header:
        name = header.removeprefix("HTTP_").lower().replace("_", "-")
        forwarded = headers.get(name, "").rsplit(",", 1)[-1].strip()
        with contextlib.suppress(ValueError):
            return address_subject(str(ipaddress.ip_address(forwarded)))
    client = scope.get("client") or ("", 0)
    return address_subject(str(client[0])[:64])


def base_of(scope: Scope, headers: dict[str, str]) -> str:
    """The site's origin for the entities' URLs, from an allowed Host; BadRequest else."""
    host = headers.get("host", "")
    if not validate_host(
        host.rsplit(":", 1)[0] if "]" not in host else host, settings.ALLOWED_HOSTS
    ):
        raise BadRequest("Invalid host")
    secure = settings.SECURE_COOKIES or scope.get("scheme") in ("https", "wss")
    return f"{'https' if secure else 'http'}://{host}"


def sse_message(stream: Stream, event: str, payload: str) -> str:
    return f"event: {event}\ndata: {payload}\n\n"


def ws_message(stream: Stream, event: str, payload: str) -> str:
    message: dict[str, Any] = {"stream": stream.label, "event": event}
    if payload != "undefined":  # filters_changed has none
        message["payload"] = payload
    return json.dumps(message, ensure_ascii=False)


class StreamingApp:
    """The ASGI app: one Hub per process."""

    def __init__(self) -> None:
        self.hub: Hub | None = None
        self._collector: asyncio.Future | None = None

    def _hub(self) -> Hub:
        if self.hub is None:
            self.hub = Hub()
        self.hub.start()
        return self.hub

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
        elif scope["type"] == "http":
            await self.http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self.websocket(scope, receive, send)

    async def lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._collector = asyncio.ensure_future(keep_collections_short(self._hub()))
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._collector is not None:
                    self._collector.cancel()
                if self.hub is not None:
                    await self.hub.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # --- Server-sent events ---------------------------------------------------------------

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"].rstrip("/")
        if path == PREFIX + "/health":
            await respond(send, 200, b"OK", "text/plain; charset=utf-8")
            return
        if scope["method"] == "OPTIONS":
            await respond(send, 204, b"", "text/plain")
            return
        if not path.startswith(PREFIX + "/") or scope["method"] not in ("GET", "HEAD"):
            await respond_error(send, 404, "Not found")
            return
        headers, query = headers_of(scope), query_of(scope)
        hub = self._hub()
        try:
            name = PATHS.get(path.removeprefix(PREFIX + "/"))
            if path == PREFIX + "/public" and query.get("local") in ("true", "1"):
                name = "public:local"
            stream = stream_from(name, query)
            connection = await self.connect(scope, headers, query, sse_message, ":thump\n\n")
        except Refused as refused:
            await respond_error(send, refused.status, refused.message)
            return
        hub.subscribe(connection, stream)
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream"),
                        (b"cache-control", b"no-store"),
                        (b"x-accel-buffering", b"no"),  # nginx passes each event at once
                        *cors_headers(headers, connection),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b":)\n\n", "more_body": True})

            async def write(texts: list[str]) -> None:
                body = "".join(texts).encode()
                await send({"type": "http.response.body", "body": body, "more_body": True})

            await self.pump(connection, write, receive, "http.disconnect")
            end = {"type": "http.response.body", "body": b"", "more_body": False}
            with contextlib.suppress(Exception):  # a client that is gone may never take it
                await asyncio.wait_for(send(end), LEAVE_WAIT)
        finally:
            hub.leave(connection)

    async def connect(
        self,
        scope: Scope,
        headers: dict[str, str],
        query: dict[str, str],
        encode: Callable[[Stream, str, str], str],
        heartbeat: str | None = None,
    ) -> Connection:
        """Authenticate the request and admit its connection; raise Refused."""
        base = base_of(scope, headers)
        token, _ = token_of(headers, query)
        secret = "" if token else cookie_secret(headers)
        listener: Listener
        try:
            if secret:  # a page of the site's own, from one of its origins
                check_origin(headers, base)
                listener = await asyncio.to_thread(authenticate_cookie, get_repository(), secret)
            else:
                listener = await asyncio.to_thread(authenticate, get_repository(), token)
        except (*UNAVAILABLE, OSError) as error:
            log.warning("streaming connection refused, Redis unavailable (%s)", error)
            raise Refused(503, UNAVAILABLE_NOW) from error
        connection = Connection(
            listener,
            token,
            address_of(scope, headers),
            base,
            buffer=settings.RETWIS_STREAMING_BUFFER,
            encode=encode,
            secret=secret,
            heartbeat=heartbeat,
        )
        refused = self._hub().admit(
            connection, settings.RETWIS_STREAMING_PER_ADDRESS, settings.RETWIS_STREAMING_PER_ACCOUNT
        )
        if refused is not None:
            raise Refused(429, TOO_MANY if refused == "address" else TOO_MANY_FOR_ACCOUNT)
        return connection

    async def pump(
        self,
        connection: Connection,
        write: Callable[[list[str]], Awaitable[None]],
        receive: Receive,
        gone: str,
        on_message: Callable[[dict], Awaitable[None]] | None = None,
    ) -> None:
        """Send connection's messages (the hub also buffers its heartbeats) until the client
        goes, the hub closes it (buffer full, a write stuck, the credential no longer
        holds) or a write fails."""
        loop = asyncio.get_running_loop()

        async def sending() -> None:
            while True:
                texts = await connection.taken()
                connection.writing_since = loop.time()
                await write(texts)
                connection.writing_since = None

        async def receiving() -> None:
            while True:
                message = await receive()
                if message["type"] == gone:
                    return
                if on_message is not None:
                    await on_message(message)

        tasks = [
            asyncio.ensure_future(sending()),
            asyncio.ensure_future(receiving()),
            asyncio.ensure_future(connection.closed.wait()),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            connection.closed.set()  # nothing more is buffered for it
            for task in tasks:
                task.cancel()
            # A write to a client that is gone may not end when cancelled: bounded.
            await asyncio.wait(tasks, timeout=LEAVE_WAIT)

    # --- WebSocket ------------------------------------------------------------------------

    async def websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        headers, query = headers_of(scope), query_of(scope)
        if scope["path"].rstrip("/") != PREFIX:
            await deny(scope, send, 404, "Not found")
            return
        try:
            connection = await self.connect(scope, headers, query, ws_message)
        except Refused as refused:
            await deny(scope, send, refused.status, refused.message)
            return
        hub = self._hub()
        try:
            _, as_protocol = token_of(headers, query)
            accept: dict[str, Any] = {"type": "websocket.accept"}
            if as_protocol:
                accept["subprotocol"] = connection.token
            await send(accept)
            if query.get("stream"):
                await self.subscribe(connection, send, query.get("stream"), query)

            async def write(texts: list[str]) -> None:
                for text in texts:
                    await send({"type": "websocket.send", "text": text})

            async def on_message(message: dict) -> None:
                await self.on_ws_message(connection, send, message)

            await self.pump(connection, write, receive, "websocket.disconnect", on_message)
            with contextlib.suppress(Exception):
                code = 1008 if connection.dropped else 1000
                await asyncio.wait_for(send({"type": "websocket.close", "code": code}), LEAVE_WAIT)
        finally:
            hub.leave(connection)

    async def on_ws_message(self, connection: Connection, send: Send, message: dict) -> None:
        """A client's subscribe or unsubscribe; anything else is answered with an error."""
        text = message.get("text")
        if text is None:  # binary: Mastodon closes with 1003
            connection.closed.set()
            return
        try:
            data = json.loads(text[:MESSAGE_MAX]) if len(text) <= MESSAGE_MAX else None
        except ValueError:  # also too deep
            data = None
        except RecursionError:
            data = None
        if not isinstance(data, dict) or data.get("type") not in ("subscribe", "unsubscribe"):
            await send_error(send, 400, MALFORMED)
            return
        name = data.get("stream")
        if isinstance(name, list):  # Mastodon takes the first of an array
            name = name[0] if name else None
        if data["type"] == "subscribe":
            await self.subscribe(connection, send, name, data)
            return
        try:
            self._hub().unsubscribe(connection, stream_from(name, data))
        except Refused:
            await send_error(send, 400, "Error unsubscribing from channel")

    async def subscribe(
        self, connection: Connection, send: Send, name: object, params: dict
    ) -> None:
        try:
            stream = stream_from(name, params)
            if len(connection.subscriptions) >= SUBSCRIPTIONS_MAX:
                raise BadRequest("Too many subscriptions")
        except Refused as refused:
            await send_error(send, refused.status, refused.message)
            return
        self._hub().subscribe(connection, stream)


async def respond(send: Send, status: int, body: bytes, content_type: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type.encode()),
                (b"access-control-allow-origin", b"*"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def respond_error(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await respond(send, status, body, "application/json; charset=utf-8")


async def send_error(send: Send, status: int, message: str) -> None:
    await send({"type": "websocket.send", "text": json.dumps({"error": message, "status": status})})


async def deny(scope: Scope, send: Send, status: int, message: str) -> None:
    """Refuse a WebSocket before it opens: Mastodon's HTTP error (X-Error-Message) where the
    server lets an app answer the handshake, else a close with a 4000 + status code."""
    if "websocket.http.response" in scope.get("extensions", {}):
        body = json.dumps({"error": message}).encode()
        await send(
            {
                "type": "websocket.http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json; charset=utf-8"),
                    (b"x-error-message", message.encode()),
                ],
            }
        )
        await send({"type": "websocket.http.response.body", "body": body})
        return
    await send({"type": "websocket.close", "code": 4000 + status, "reason": message})
