"""The hub of one streaming process: its connections and their subscriptions, and the one
task that reads the live bus and hands each event to those who may hear of it.

The bus is read after the last id handed out; when Redis goes away the task waits, connects
again and goes on from that id, so listeners miss nothing the stream still holds
(keys.LIVE_EVENTS_CAP) and see nothing wrong meanwhile (their heartbeats go on).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings

from social.redis_client import UNAVAILABLE, get_async_redis
from social.repository import get_repository
from social.repository.live.bus import FILTERS_CHANGED, NOTIFICATION, UPDATE
from social.repository.live.live import Credential, ListenerFilters, LiveBus, LiveEvent

from .deliver import Audience, Listener, Told, tell
from .streams import Stream

log = logging.getLogger(__name__)

BLOCK_MS = 5000  # the longest one XREAD waits for an event
RECONNECT_WAIT = (0.1, 0.5, 1, 2, 5)  # seconds between attempts while Redis is away
SLOW = 0.5  # seconds: an event that takes longer to hand out is logged
RECHECK_EVERY = 4  # heartbeat periods between checks that the credentials still hold
WRITE_STUCK = 2  # heartbeat periods a write may stay unfinished before the client is dropped
FREEZE_EVERY = 15  # seconds between moves of the surviving objects out of the collector's sight
FULL_GC_EVERY = 40  # of those periods between full collections (10 minutes)
# ...or sooner once this many connections (and at least a quarter of those open) have closed
# since the last: their objects were frozen while open, so only a full collection frees them
# (10,000 clients reconnecting four times took RSS from 662 MiB to 1,172 MiB before).
CHURN_COLLECT = 1000


class Connection:
    """One client's connection: its listener, its subscriptions and a bounded buffer of
    messages to send (its pump takes them all at each wake-up). A client that does not
    read fills the buffer, or leaves a write unfinished for WRITE_STUCK heartbeats, and is
    dropped."""

    def __init__(
        self,
        listener: Listener,
        token: str,
        address: str,
        base: str,
        *,
        buffer: int,
        encode: Callable[[Stream, str, str], str],
        secret: str = "",
        heartbeat: str | None = None,
    ) -> None:
        self.listener = listener
        self.token = token
        self.secret = secret  # the `auth` cookie's, for the site's own pages (cookies.py)
        self.address = address
        self.base = base
        self.encode = encode
        self.heartbeat = heartbeat  # what an idle connection is sent each period (SSE)
        self.buffer = buffer
        self.pending: deque[str] = deque()
        self.wake = asyncio.Event()
        self.quiet = True  # nothing sent since the hub's last heartbeat tick
        self.writing_since: float | None = None  # loop time of the unfinished write
        self.closed = asyncio.Event()
        self.dropped = False
        self.subscriptions: dict[Stream, int] = {}

    @property
    def credential(self) -> Credential:
        return Credential(self.listener.user.id, self.token, self.secret)

    def put(self, stream: Stream, event: str, payload: str) -> None:
        """Buffer a message (encoded for this connection's protocol)."""
        self.put_text(self.encode(stream, event, payload))

    def put_text(self, text: str) -> None:
        """Buffer an encoded message; drop the connection when its buffer is full."""
        if self.closed.is_set():
            return
        if len(self.pending) >= self.buffer:
            self.drop()
            return
        self.pending.append(text)
        self.quiet = False
        self.wake.set()

    def drop(self) -> None:
        self.dropped = True
        self.closed.set()

    async def taken(self) -> list[str]:
        """Wait for messages, and take every one buffered."""
        await self.wake.wait()
        self.wake.clear()
        texts = list(self.pending)
        self.pending.clear()
        return texts


async def keep_collections_short(hub: Hub | None = None) -> None:
    """Keep Python's cyclic collector off the process's long-lived objects (tens of
    thousands a connection): a full collection of 10,000 connections' heap takes 1.5 s
    here, the events it delays as long. Every FREEZE_EVERY seconds young cycles are
    collected and the survivors frozen (gc.freeze); every FULL_GC_EVERY periods, or once
    CHURN_COLLECT connections of hub (and a quarter of those open) have left since the
    last, all are thawed and collected once. Started by the server's lifespan (app.py)."""
    left_at_full = 0
    for n in itertools.count(1):
        await asyncio.sleep(FREEZE_EVERY)
        churn = 0 if hub is None else hub.left - left_at_full
        many = hub is not None and churn >= max(CHURN_COLLECT, len(hub.connections) // 4)
        if n % FULL_GC_EVERY == 0 or many:
            left_at_full = 0 if hub is None else hub.left
            gc.unfreeze()
            gc.collect()
        else:
            gc.collect(1)
        gc.freeze()


def timed_tell(*args: Any) -> Told:
    begun = time.monotonic()
    told = tell(*args)
    told.took = (begun, time.monotonic())
    return told


class Hub:
    """The connections of this process and the bus reader (run)."""

    def __init__(self) -> None:
        self.subs: dict[int, tuple[Connection, Stream]] = {}
        self.connections: set[Connection] = set()
        self.per_address: Counter[str] = Counter()
        self.per_account: Counter[int] = Counter()
        self.left = 0  # connections that have left, ever (keep_collections_short)
        self._keys = itertools.count(1)
        self._task: asyncio.Task | None = None
        self._ticker: asyncio.Task | None = None
        self.connected = asyncio.Event()  # the bus reader reads (tests wait for it)
        self.stopping = False
        self.filters = ListenerFilters()  # the listeners' word filters as last read
        # Its own thread: deciding an event never waits behind the connections' token
        # checks and authentications (asyncio.to_thread's shared pool).
        self._deciding = ThreadPoolExecutor(1, thread_name_prefix="live-deliver")

    def start(self) -> None:
        """Start the bus reader and the heartbeat, once."""
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self.run())
        if self._ticker is None or self._ticker.done():
            self._ticker = loop.create_task(self.tick())

    async def stop(self) -> None:
        self.stopping = True  # a cancelled read may surface as a ConnectionError: run() ends
        if self._ticker is not None:
            self._ticker.cancel()
        if self._task is not None:
            self._task.cancel()  # redis-py ends a blocked XREAD only when it returns: bounded
            await asyncio.wait([self._task], timeout=2)
        for connection in list(self.connections):
            connection.closed.set()
        self._deciding.shutdown(wait=False)

    def admit(self, connection: Connection, per_address: int, per_account: int) -> str | None:
        """Count connection against its address and its account; return which of them
        already holds its limit ("address", "account"; nothing counted then), else None."""
        account = connection.listener.user.id
        if self.per_address[connection.address] >= per_address:
            return "address"
        if self.per_account[account] >= per_account:
            return "account"
        self.per_address[connection.address] += 1
        self.per_account[account] += 1
        self.connections.add(connection)
        return None

    def leave(self, connection: Connection) -> None:
        """Forget connection and its subscriptions."""
        if connection not in self.connections:
            return
        self.connections.discard(connection)
        self.left += 1
        for key in connection.subscriptions.values():
            self.subs.pop(key, None)
        connection.subscriptions.clear()
        self.per_address[connection.address] -= 1
        if self.per_address[connection.address] <= 0:
            del self.per_address[connection.address]
        account = connection.listener.user.id
        self.per_account[account] -= 1
        if self.per_account[account] <= 0:
            del self.per_account[account]

    def subscribe(self, connection: Connection, stream: Stream) -> None:
        if stream not in connection.subscriptions:
            key = next(self._keys)
            connection.subscriptions[stream] = key
            self.subs[key] = (connection, stream)

    def unsubscribe(self, connection: Connection, stream: Stream) -> None:
        key = connection.subscriptions.pop(stream, None)
        if key is not None:
            self.subs.pop(key, None)

    async def tick(self) -> None:
        """Each heartbeat period: a heartbeat to each connection that was sent nothing, a
        client whose write has been stuck for WRITE_STUCK periods dropped; every
        RECHECK_EVERY periods, every connection's credential checked at once (check)."""
        every = settings.RETWIS_STREAMING_HEARTBEAT
        loop = asyncio.get_running_loop()
        for n in itertools.count(1):
            await asyncio.sleep(every)
            now = loop.time()
            for connection in list(self.connections):
                stuck = connection.writing_since
                if stuck is not None and now - stuck > every * WRITE_STUCK:
                    connection.drop()
                elif connection.quiet and connection.heartbeat and not connection.pending:
                    connection.put_text(connection.heartbeat)
                connection.quiet = True
            if n % RECHECK_EVERY == 0:
                await self.check()

    async def check(self) -> None:
        """Close each connection whose token was revoked, whose cookie secret changed or
        whose account was suspended or deleted since it connected: one round trip for all.
        While Redis is away every one is taken to hold (checked again next time)."""
        connections = list(self.connections)
        if not connections:
            return
        credentials = [c.credential for c in connections]
        try:
            holding = await asyncio.to_thread(get_repository().live.holding, credentials)
        except (*UNAVAILABLE, OSError) as error:
            log.warning("credentials not checked, Redis unavailable (%s)", error)
            return
        for connection, holds in zip(connections, holding):
            if not holds:
                connection.closed.set()
        log.info(
            "%d connections (%d subscriptions) checked, %d closed",
            len(connections), len(self.subs), holding.count(False),
        )  # fmt: skip

    async def run(self) -> None:
        """Read the bus for ever, from the newest event on, and deliver each in order."""
        last: str | None = None
        attempt = 0
        while not self.stopping:
            client = get_async_redis(wait=BLOCK_MS / 1000)
            try:
                bus = LiveBus(client)
                if last is None:
                    last = await bus.last_id()
                self.filters.forget()  # a change may have gone untold meanwhile
                self.connected.set()
                attempt = 0
                while True:
                    for event in await bus.read(last, block_ms=BLOCK_MS):
                        await self.deliver(event)  # raises while Redis is away: again
                        last = event.id
            except (*UNAVAILABLE, OSError) as error:
                self.connected.clear()
                if self.stopping:
                    return
                wait = RECONNECT_WAIT[min(attempt, len(RECONNECT_WAIT) - 1)]
                attempt += 1
                log.warning("live bus unavailable (%s): again in %s s", error, wait)
                await asyncio.sleep(wait)
            finally:  # a read cancelled mid-way can leave aclose() waiting: bounded
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.aclose(), 1)

    def audience(self, event: LiveEvent) -> list[Audience]:
        """The subscriptions event may concern (the thread decides for each)."""
        found = []
        for key, (connection, stream) in self.subs.items():
            if event.kind in (NOTIFICATION, FILTERS_CHANGED):
                if event.user_id != connection.listener.user.id:
                    continue
            elif event.kind == UPDATE and stream.tag and stream.tag not in event.tags:
                continue
            found.append(Audience(key, connection.listener, stream, connection.base))
        return found

    async def deliver(self, event: LiveEvent) -> None:
        """Decide for every subscription in a thread, then queue what each is told."""
        if event.kind == FILTERS_CHANGED:  # before any update decided after it
            self.filters.forget(event.user_id)
        begun = time.monotonic()
        audience = self.audience(event)
        if not audience:
            return
        try:
            told = await asyncio.get_running_loop().run_in_executor(
                self._deciding, timed_tell, get_repository(), event, audience, self.filters
            )
        except (*UNAVAILABLE, OSError):
            raise  # run() waits for Redis and delivers this event again
        except Exception:  # one bad event must not stop the bus for everyone
            log.exception("live event %s not delivered", event.id)
            return
        decided = time.monotonic()
        encoded: dict[tuple[object, Stream, str, str], str] = {}  # each distinct message once
        for key, name, payload in told.messages:
            found = self.subs.get(key)
            if found is not None:
                connection, stream = found
                memo = (connection.encode, stream, name, payload)
                text = encoded.get(memo)
                if text is None:
                    text = encoded[memo] = connection.encode(stream, name, payload)
                connection.put_text(text)
        done = time.monotonic()
        if done - begun > SLOW:
            log.warning(
                "live event %s: %d subscriptions decided in %.2f s (%.2f s in tell, begun after "
                "%.2f s), %d messages queued in %.2f s",
                event.id, len(audience), decided - begun, told.took[1] - told.took[0],
                told.took[0] - begun, len(told.messages), done - decided,
            )  # fmt: skip
