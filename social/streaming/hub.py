"""The hub of one streaming process: its connections and their subscriptions, and the one
task that reads the live bus and hands each event to those who may hear of it.

The bus is read after the last id handed out; when Redis goes away the task waits, connects
again and goes on from that id, so listeners miss nothing the stream still holds
(keys.LIVE_EVENTS_CAP) and see nothing wrong meanwhile (their heartbeats go on).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from social.redis_client import UNAVAILABLE, get_async_redis
from social.repository import get_repository
from social.repository.bus import FILTERS_CHANGED, NOTIFICATION, UPDATE
from social.repository.live import ListenerFilters, LiveBus, LiveEvent

from .deliver import Audience, Listener, tell
from .streams import Stream

log = logging.getLogger(__name__)

BLOCK_MS = 5000  # the longest one XREAD waits for an event
RECONNECT_WAIT = (0.1, 0.5, 1, 2, 5)  # seconds between attempts while Redis is away
SLOW = 0.5  # seconds: an event that takes longer to hand out is logged


class Connection:
    """One client's connection: its listener, its subscriptions and a bounded queue of
    messages to send. A client that does not read fills the queue and is dropped."""

    def __init__(
        self,
        listener: Listener,
        token: str,
        address: str,
        base: str,
        *,
        buffer: int,
        encode: Callable[[Stream, str, str], str],
    ) -> None:
        self.listener = listener
        self.token = token
        self.address = address
        self.base = base
        self.encode = encode
        self.queue: asyncio.Queue[str] = asyncio.Queue(maxsize=buffer)
        self.closed = asyncio.Event()
        self.dropped = False
        self.subscriptions: dict[Stream, int] = {}

    def put(self, stream: Stream, event: str, payload: str) -> None:
        """Queue a message; drop the connection when its queue is full."""
        if self.closed.is_set():
            return
        try:
            self.queue.put_nowait(self.encode(stream, event, payload))
        except asyncio.QueueFull:
            self.dropped = True
            self.closed.set()


class Hub:
    """The connections of this process and the bus reader (run)."""

    def __init__(self) -> None:
        self.subs: dict[int, tuple[Connection, Stream]] = {}
        self.connections: set[Connection] = set()
        self.per_address: Counter[str] = Counter()
        self._keys = itertools.count(1)
        self._task: asyncio.Task | None = None
        self.connected = asyncio.Event()  # the bus reader reads (tests wait for it)
        self.stopping = False
        self.filters = ListenerFilters()  # the listeners' word filters as last read
        # Its own thread: deciding an event never waits behind the connections' token
        # checks and authentications (asyncio.to_thread's shared pool).
        self._deciding = ThreadPoolExecutor(1, thread_name_prefix="live-deliver")

    def start(self) -> None:
        """Start the bus reader, once."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self.run())

    async def stop(self) -> None:
        self.stopping = True  # a cancelled read may surface as a ConnectionError: run() ends
        if self._task is not None:
            self._task.cancel()  # redis-py ends a blocked XREAD only when it returns: bounded
            await asyncio.wait([self._task], timeout=2)
        for connection in list(self.connections):
            connection.closed.set()
        self._deciding.shutdown(wait=False)

    def admit(self, connection: Connection, limit: int) -> bool:
        """Count connection against its address; False when the address holds limit."""
        if self.per_address[connection.address] >= limit:
            return False
        self.per_address[connection.address] += 1
        self.connections.add(connection)
        return True

    def leave(self, connection: Connection) -> None:
        """Forget connection and its subscriptions."""
        if connection not in self.connections:
            return
        self.connections.discard(connection)
        for key in connection.subscriptions.values():
            self.subs.pop(key, None)
        connection.subscriptions.clear()
        self.per_address[connection.address] -= 1
        if self.per_address[connection.address] <= 0:
            del self.per_address[connection.address]

    def subscribe(self, connection: Connection, stream: Stream) -> None:
        if stream not in connection.subscriptions:
            key = next(self._keys)
            connection.subscriptions[stream] = key
            self.subs[key] = (connection, stream)

    def unsubscribe(self, connection: Connection, stream: Stream) -> None:
        key = connection.subscriptions.pop(stream, None)
        if key is not None:
            self.subs.pop(key, None)

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
                self._deciding, tell, get_repository(), event, audience, self.filters
            )
        except (*UNAVAILABLE, OSError):
            raise  # run() waits for Redis and delivers this event again
        except Exception:  # one bad event must not stop the bus for everyone
            log.exception("live event %s not delivered", event.id)
            return
        decided = time.monotonic()
        for key, name, payload in told.messages:
            found = self.subs.get(key)
            if found is not None:
                connection, stream = found
                connection.put(stream, name, payload)
        done = time.monotonic()
        if done - begun > SLOW:
            log.warning(
                "live event %s: %d subscriptions decided in %.2f s, %d messages queued in %.2f s",
                event.id, len(audience), decided - begun, len(told.messages), done - decided,
            )  # fmt: skip
