"""Run the worker tier: take jobs from the named queues (every queue with handlers by
default) and run them until SIGTERM or Ctrl-C, which let running jobs finish.

Any number may run, on any number of machines, against the same Redis: each job goes to one
of them, and a job whose worker died is taken over by another after its queue's lease
(docs/workers.md). `--once` runs what is due now and exits (cron, tests).
"""

from __future__ import annotations

import signal
import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from social import work
from social.work.queues import DEFAULT_QUEUES


def concurrency_option(text: str) -> dict[str, int]:
    """Parse `media=1,mail=4` into {"media": 1, "mail": 4}."""
    result: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, count = part.partition("=")
        if name not in work.QUEUES or not count.isascii() or not count.isdigit():
            raise CommandError(f"--concurrency: expected queue=count, got {part!r}")
        if not 1 <= int(count) <= 64:
            raise CommandError(f"--concurrency: {name} must be 1 to 64")
        result[name] = int(count)
    return result


class Command(BaseCommand):
    help = (
        "Run background jobs (pictures, mail, deliveries, the inbox) until stopped; "
        "--once runs what is due."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--queues", default="", help="comma-separated queues (default: every queue)"
        )
        parser.add_argument(
            "--concurrency", default="", help="jobs at once per queue, e.g. media=1,mail=4"
        )
        parser.add_argument("--once", action="store_true", help="run what is due, then exit")
        parser.add_argument(
            "--stop-timeout", type=float, default=60.0,
            help="seconds to let running jobs finish when stopped",
        )  # fmt: skip

    def handle(self, *args, **options) -> None:
        names = [n.strip() for n in options["queues"].split(",") if n.strip()]
        names = names or list(DEFAULT_QUEUES)
        for name in names:
            if name not in work.QUEUES:
                raise CommandError(f"unknown queue {name!r} (queues: {', '.join(work.QUEUES)})")
        verbosity = options["verbosity"]
        if options["once"]:
            ran = sum(work.run_pending(name) for name in names)
            if verbosity >= 1:
                self.stdout.write(f"Ran {ran:,} jobs.")
            return
        wanted = concurrency_option(options["concurrency"])
        concurrency = {name: wanted.get(name, work.QUEUES[name].concurrency) for name in names}
        worker = work.Worker(concurrency)

        def stop(signum, frame) -> None:
            worker.stop()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        worker.start()
        if verbosity >= 1:
            shown = ", ".join(f"{name} x{count}" for name, count in concurrency.items())
            self.stdout.write(f"Working on {shown}.", ending="\n")
            self.stdout.flush()
        while worker.alive() and not worker.stopping.is_set():
            time.sleep(0.5)
        worker.join(options["stop_timeout"])
        if verbosity >= 1:
            done = ", ".join(f"{k} {v:,}" for k, v in sorted(worker.counts.items())) or "none"
            self.stdout.write(f"Stopped. Jobs: {done}.")
