"""Which function runs each kind of job: handlers register with @work.handler(queue, kind)
in the modules listed here, imported when a worker starts (or run_pending runs)."""

from __future__ import annotations

import importlib
from collections.abc import Callable

Handler = Callable[[dict[str, str]], None]
# Run once when a job of its kind becomes a dead letter: (payload, last error). Tells
# whoever waits on the job (a picture's owner) that it will not happen.
DeadHandler = Callable[[dict[str, str], str], None]

# Modules whose import registers handlers.
HANDLER_MODULES: list[str] = [
    "social.work_handlers.deliver",
    "social.work_handlers.domain_blocks",
    "social.work_handlers.fanout",
    "social.work_handlers.inbox",
    "social.work_handlers.mail",
    "social.work_handlers.media",
]

HANDLERS: dict[tuple[str, str], Handler] = {}
DEAD_HANDLERS: dict[tuple[str, str], DeadHandler] = {}
_loaded = False


def register(queue: str, kind: str, function: Handler, on_dead: DeadHandler | None = None) -> None:
    key = (queue, kind)
    if key in HANDLERS and HANDLERS[key] is not function:
        raise ValueError(f"two handlers for {queue}/{kind}")
    HANDLERS[key] = function
    if on_dead is not None:
        DEAD_HANDLERS[key] = on_dead


def load() -> None:
    """Import every handler module (once)."""
    global _loaded
    if _loaded:
        return
    for name in HANDLER_MODULES:
        importlib.import_module(name)
    _loaded = True


def handler_for(queue: str, kind: str) -> Handler | None:
    load()
    return HANDLERS.get((queue, kind))


def dead_handler_for(queue: str, kind: str) -> DeadHandler | None:
    load()
    return DEAD_HANDLERS.get((queue, kind))


def queues_with_handlers() -> list[str]:
    load()
    return sorted({queue for queue, _ in HANDLERS})
