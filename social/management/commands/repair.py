"""Free username claims that point at no account.

Why it exists: sign-up claims the name (HSETNX on users_lower) before it writes the account,
so two simultaneous sign-ups cannot both get one name. A process that dies between the two
leaves a claim whose id has no user:<id> hash, and that name could never be registered again.
This finds such claims (HSCAN, never KEYS), looks again after a short grace period so a
sign-up in flight is left alone, and frees the rest. --dry-run only lists them.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from social.repository import get_repository


class Command(BaseCommand):
    help = "Free username claims (users_lower) whose account does not exist (--dry-run lists)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="list, change nothing")
        parser.add_argument(
            "--grace",
            type=float,
            default=2.0,
            help="seconds to wait before the second look (default 2)",
        )

    def handle(self, *args, **options) -> None:
        repo = get_repository()
        orphans = repo.orphan_username_claims()
        if options["verbosity"] >= 2 or (orphans and options["verbosity"] >= 1):
            for name, user_id in orphans:
                self.stdout.write(f"  {name!r} claimed by missing user {user_id}")
        if options["dry_run"]:
            message = f"Dry run: {len(orphans)} orphan username claim(s); none freed."
        else:
            freed = repo.free_username_claims(orphans, grace=options["grace"])
            message = self.style.SUCCESS(f"Freed {len(freed)} orphan username claim(s).")
        if options["verbosity"] >= 1:
            self.stdout.write(message)
