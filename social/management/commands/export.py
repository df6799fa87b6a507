"""Write every key of the database to a file as JSON lines: a backup any Redis can load.

Why it exists: Redis's own backups (RDB snapshots, the AOF) are the fast way back for the
same server, but they are binary, tied to a Redis version, and all or nothing. An export is
readable, checkable line by line (`manage.py import --dry-run`), loads into any Redis 6.2+ or
Valkey, and can move the site between servers or into a cluster. docs/reliability.md says
when to use which, and that an export is not a point-in-time snapshot.

Keys are read with SCAN, `--batch-size` at a time, and written out as they are read, so
memory stays bounded whatever the size of the database. Progress goes to stderr, so the
export itself can go to stdout (`-`). A file is written under a temporary name and renamed
when complete, with mode 0600: it holds password hashes and login secrets.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser

from social.management.progress import Reporter
from social.redis_client import UNAVAILABLE
from social.repository import get_repository
from social.repository.operations.backup import BATCH
from social.repository.posts.media_files import copy_out


def _text_writer(path: str, *, gz: bool) -> TextIO:
    """Return path opened for writing ASCII text, gzipped (level 6) when gz."""
    if gz:
        return gzip.open(path, "wt", encoding="ascii", compresslevel=6)
    return open(path, "w", encoding="ascii")


class Command(BaseCommand):
    help = (
        "Write every key of the database (with its TTL) to a file as JSON lines, or to "
        "stdout with `-`; a path ending in .gz is gzip-compressed. `manage.py import` "
        "loads it into an empty Redis."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("output", help="file to write (.gz: compressed), or - for stdout")
        parser.add_argument(
            "--batch-size",
            type=int,
            default=BATCH,
            help=f"keys read per SCAN and pipeline; memory grows with it (default {BATCH})",
        )
        parser.add_argument(
            "--progress-every",
            type=int,
            default=10_000,
            help="report progress on stderr every N keys (default 10000)",
        )
        parser.add_argument(
            "--with-files",
            metavar="DIR",
            help="also copy every picture file from the storage (local or bucket) into DIR",
        )

    def handle(self, *args, **options) -> None:
        if options["batch_size"] < 1 or options["progress_every"] < 1:
            raise CommandError("--batch-size and --progress-every must be at least 1.")
        # On stderr: stdout may be the export.
        report = Reporter(self.stderr, options["verbosity"])
        backup = get_repository().backup
        output = options["output"]
        try:
            total = backup.key_count()
            report.say(f"Exporting about {total:,} keys to {output}.")
            progress = report.progress(
                lambda done: f"  {done:,}/~{total:,} keys, {report.elapsed():.1f}s",
                every=options["progress_every"],
            )
            lines = backup.export_lines(batch=options["batch_size"], progress=progress)
            if output == "-":
                counts = self._write(lines, lambda line: self.stdout.write(line, ending=""))
                size = ""
            else:
                counts = self._write_file(Path(output), lines)
                size = f" ({os.path.getsize(output) / 1e6:,.1f} MB)"
        except UNAVAILABLE as exc:
            raise CommandError(f"Redis is unreachable ({exc}); check REDIS_URL.") from exc
        keys, records = counts
        if options["with_files"]:
            folder = Path(options["with_files"])
            folder.mkdir(parents=True, exist_ok=True)
            report.say(f"Copied {copy_out(folder):,} picture file(s) to {folder}.")
        report.say(
            f"Exported {keys:,} keys in {records:,} records to {output}{size} "
            f"in {report.elapsed():.1f}s."
        )

    def _write_file(self, path: Path, lines: Iterable[str]) -> tuple[int, int]:
        """Write lines to path through a temporary file renamed when complete."""
        if not path.parent.is_dir():
            raise CommandError(f"No such directory: {path.parent}")
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
        os.close(fd)
        try:
            with _text_writer(tmp, gz=path.suffix == ".gz") as out:
                counts = self._write(lines, out.write)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        return counts

    def _write(self, lines: Iterable[str], write: Callable[[str], object]) -> tuple[int, int]:
        """Write every line; return (keys, records) from the closing line."""
        last = ""
        for line in lines:
            write(line + "\n")
            last = line
        end = json.loads(last)  # the closing line: the export's own count
        return end["keys"], end["records"]
