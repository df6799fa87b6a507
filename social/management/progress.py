"""What a long command says while it works: its lines at verbosity >= 1, and progress.

export, import and seed share it: each makes one Reporter on the stream it reports on
(export's is stderr, so that its stdout can be the export) and asks it for progress
callbacks, which the repository's long walks call with how many items they have done.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.core.management.base import OutputWrapper


class Reporter:
    """A command's report on one stream, and the time since it started."""

    def __init__(self, out: OutputWrapper, verbosity: int) -> None:
        self.out = out
        self.verbosity = verbosity
        self.started = time.monotonic()

    def elapsed(self) -> float:
        """Return the seconds since the reporter was made."""
        return time.monotonic() - self.started

    def say(self, message: str, style: Callable[[str], str] | None = None) -> None:
        """Write a line, styled by style, at verbosity >= 1 (stderr's error colour is not
        applied: a progress line is no error)."""
        if self.verbosity >= 1:
            self.out.write(style(message) if style else message, style_func=lambda text: text)
            self.out.flush()

    def progress(
        self, line: Callable[[int], str], *, every: int = 0, seconds: float = 0.0
    ) -> Callable[[int], None]:
        """Return a progress callback: called with how many items are done, it says
        line(done) when at least `every` more are done and `seconds` have passed since
        the last line it said (with neither, each time)."""
        reported, last = 0, time.monotonic()

        def progress(done: int) -> None:
            nonlocal reported, last
            now = time.monotonic()
            if done - reported >= every and now - last >= seconds:
                reported, last = done, now
                self.say(line(done))

        return progress
