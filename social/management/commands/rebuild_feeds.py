"""Rebuild every home feed (posts:<id>) from the follow graph and the own-posts lists.

Why it exists: home feeds are derived data, written by fan-out on each post and rewritten on
each follow/unfollow. A fan-out that raced an unfollow, a crash mid fan-out, or a change of
RETWIS_HOME_FEED_CAP leaves feeds that no longer match the graph; this recomputes each one as
the newest posts of the user and the people they follow. Feeds are rewritten one by one (not
atomically): run it on a quiet site. Posts written by the reference PHP Retwis are in no
own-posts list until `manage.py repair` adds them: on such a database, run repair first.
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandParser

from social.repository import get_repository


class Command(BaseCommand):
    help = "Recompute every user's home feed from the follow graph (--dry-run to count only)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="count the feeds, rewrite nothing"
        )

    def handle(self, *args, **options) -> None:
        repo = get_repository()
        verbosity = options["verbosity"]
        started = last = time.monotonic()
        user_ids = list(repo.repair.iter_user_ids())  # ints only: 10,000 users is 10,000 ints
        if options["dry_run"]:
            if verbosity >= 1:
                self.stdout.write(f"Dry run: would rebuild {len(user_ids):,} home feeds.")
            return

        def progress(done: int) -> None:
            nonlocal last
            if verbosity >= 2 or (verbosity >= 1 and time.monotonic() - last >= 2):
                last = time.monotonic()
                self.stdout.write(f"  {done:,}/{len(user_ids):,} feeds")

        written = repo.fanouts.rebuild_home_feeds(user_ids, progress=progress)
        if verbosity >= 1:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Rebuilt {len(user_ids):,} home feeds ({written:,} entries) "
                    f"in {time.monotonic() - started:.1f}s."
                )
            )
