"""Load a file written by `manage.py export` into an empty Redis.

Why it exists: it is the other half of the export (docs/reliability.md): restoring a backup,
moving the site to another server or Redis version, or into a cluster. It refuses a database
that holds any key, so a restore never mixes with other data by accident; --force writes
over the keys the file names and keeps the rest.

The file is read line by line and written `--batch-size` records to a pipeline, so memory
stays bounded. Every line is checked; a file cut short (no closing line) or a bad line stops
the import with the line number and how many keys were written before it. `--dry-run` reads
and checks the whole file and writes nothing. Web processes remember posts and secrets
(docs/architecture.md): restart them after importing under a running site.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path
from typing import TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser

from social.management.progress import Reporter
from social.redis_client import UNAVAILABLE
from social.repository import get_repository
from social.repository.operations.backup import BATCH, TargetNotEmpty
from social.repository.operations.backup_format import BadBackup
from social.repository.posts.media_files import copy_in

GZIP_MAGIC = b"\x1f\x8b"


class Command(BaseCommand):
    help = (
        "Load a file written by `manage.py export` (plain or gzip; - for stdin) into an "
        "empty Redis. --dry-run checks the file and writes nothing."
    )
    stealth_options = ("stdin",)  # tests pass the text to read, as createsuperuser's do

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("input", help="the export file (plain or .gz), or - for stdin")
        parser.add_argument(
            "--batch-size",
            type=int,
            default=BATCH,
            help=f"records written per pipeline (default {BATCH})",
        )
        parser.add_argument(
            "--progress-every",
            type=int,
            default=10_000,
            help="report progress every N keys (default 10000)",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="write into a database that holds keys: the file's keys replace theirs",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="read and check the whole file, write nothing"
        )
        parser.add_argument(
            "--with-files",
            metavar="DIR",
            help="also store the picture files under DIR (`export --with-files DIR` wrote "
            "them) that the storage lacks",
        )

    def handle(self, *args, **options) -> None:
        if options["batch_size"] < 1 or options["progress_every"] < 1:
            raise CommandError("--batch-size and --progress-every must be at least 1.")
        report = Reporter(self.stdout, options["verbosity"])
        dry_run, source = options["dry_run"], options["input"]
        backup = get_repository().backup
        stream = self._open(source, options.get("stdin") or sys.stdin)
        try:
            summary = backup.import_lines(
                stream,
                batch=options["batch_size"],
                force=options["force"],
                dry_run=dry_run,
                progress=report.progress(
                    lambda done: f"  {done:,} keys, {report.elapsed():.1f}s",
                    every=options["progress_every"],
                ),
            )
        except TargetNotEmpty as exc:
            raise CommandError(
                f"The target Redis already holds {exc.keys:,} key(s); import writes only into an "
                "empty database. Point REDIS_URL at an empty one, or pass --force to write "
                "over the keys the file names and keep the others. Nothing was written."
            ) from exc
        except BadBackup as exc:
            done = "nothing was written" if dry_run else f"{exc.keys_written:,} keys were written"
            raise CommandError(f"{source}: {exc}. {done} before it.") from exc
        except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as exc:
            raise CommandError(
                f"{source} is damaged or cut short ({exc}); the import stopped there, and "
                "what came before it may have been written."
            ) from exc
        except UNAVAILABLE as exc:
            raise CommandError(f"Redis is unreachable ({exc}); check REDIS_URL.") from exc
        finally:
            if stream is not options.get("stdin", sys.stdin):
                stream.close()
        files = options["with_files"]
        if files and not Path(files).is_dir():
            raise CommandError(f"No such directory: {files}")
        if files and not dry_run:
            copied, present = copy_in(Path(files))
            report.say(f"Stored {copied:,} picture file(s) from {files} ({present:,} were there).")
        verb = "Checked" if dry_run else "Imported"
        report.say(
            f"{verb} {summary.keys:,} keys in {summary.records:,} records from {source} "
            f"(exported {summary.created}) in {report.elapsed():.1f}s."
            + (" Nothing was written." if dry_run else ""),
            self.style.SUCCESS,
        )

    def _open(self, source: str, stdin: TextIO) -> TextIO:
        """Return the input as text: stdin for -, else the file, gunzipped if it is gzip."""
        if source == "-":
            return stdin
        path = Path(source)
        try:
            with path.open("rb") as raw:
                compressed = raw.read(2) == GZIP_MAGIC
            opener = gzip.open if compressed else open
            return opener(path, "rt", encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"Cannot read {source}: {exc.strerror or exc}.") from exc
