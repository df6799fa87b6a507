"""Repair what an interrupted write or the reference Retwis leaves behind.

Why it exists: two kinds of damage have no other way back.

1. Orphan username claims. Sign-up claims the name (HSETNX on users_lower) before it writes
   the account, so two simultaneous sign-ups cannot both get one name. A process that dies in
   between leaves a claim whose id has no user:<id> hash, and that name could never be
   registered again. They are found with HSCAN (never KEYS), looked at again after a grace
   period so a sign-up in flight is left alone, and freed.
2. Posts missing from their author's own-posts list (user_posts:<id>): the reference Retwis
   keeps no such list, so its posts would be missing from profiles and from feeds rebuilt by
   `manage.py rebuild_feeds`. They are merged in, newest first.
3. Accounts the reference Retwis wrote have no users_lower / users_lex entries, so staff
   prefix search cannot find them: they are indexed (a case-twin keeps the first claim).
4. The dashboard's follows total (stats:follows) is recounted from the graph, for databases
   written before it existed or by the reference Retwis.
5. Fan-outs a process began and never ended (killed mid-way, or Redis went away): their
   posts are missing from some followers' feeds. They are on record
   (keys.fanouts_in_progress) from before their first write; once older than
   --fanout-grace seconds (a live fan-out is left alone) each is finished: every feed that
   lacks the post gets it in its place, and the record goes.
6. Usernames the reference Retwis allowed that no URL can hold ("a/b", "", ".."): reported
   only. Pages show them unlinked; staff open those accounts by id (/staff/users/id/<id>/).
7. Tags filed before the search's tag index (tags_lex) existed are indexed.
8. Posts whose reply and like counters (fields of post:<id>) differ from their lists
   (replies:<id>, likes:<id>): written before the counters existed, or a process died
   between a like and its counter. Set from the lists.
9. Accounts their owners deleted more than keys.DELETED_ACCOUNT_GRACE_DAYS ago are purged:
   the posts' text, the account's lists and the name go (docs/data-layout.md).
10. Pictures (social/repository/posts/media_files.py): uploads left out of any post for over a
   day are deleted; files no `image:` hash names (older than --file-grace seconds) and
   hashes whose files are gone are reported and deleted.
11. Display names whose words the people search's index (keys.name_words) does not hold
   as the user hash has them (a database from before the index, a backup restored) are
   indexed; a deleted or purged account's words go.
12. Pictures still processing 15 minutes after their upload (a web process died between
   storing one and queuing its job) are queued again (the job is idempotent).

--dry-run only reports. Safe to run on a live site.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from social import work
from social.repository import get_repository
from social.repository.posts.media_files import ORPHAN_FILE_GRACE


class Command(BaseCommand):
    help = (
        "Free username claims whose account does not exist, add posts missing from their "
        "author's own-posts list, index legacy usernames, recount follows, finish "
        "interrupted fan-outs, mend posts' reply and like counters, delete day-old unattached "
        "uploads and orphan pictures, index display names for search, list usernames no URL "
        "can hold (--dry-run reports only)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="report, change nothing")
        parser.add_argument(
            "--grace",
            type=float,
            default=2.0,
            help="seconds to wait before looking at an orphan claim again (default 2)",
        )
        parser.add_argument(
            "--fanout-grace",
            type=int,
            default=60,
            help="finish only fan-outs begun at least this many seconds ago (default 60)",
        )
        parser.add_argument(
            "--file-grace",
            type=int,
            default=ORPHAN_FILE_GRACE,
            help="delete only orphan picture files at least this many seconds old "
            f"(default {ORPHAN_FILE_GRACE}: an upload may be being named)",
        )

    def handle(self, *args, **options) -> None:
        repo = get_repository()
        dry_run, verbosity = options["dry_run"], options["verbosity"]
        orphans = repo.repair.orphan_username_claims()
        if verbosity >= 1:
            for name, user_id in orphans:
                self.stdout.write(f"  {name!r} claimed by missing user {user_id}")
        freed = [] if dry_run else repo.repair.free_username_claims(orphans, grace=options["grace"])
        missing = repo.repair.missing_own_posts()
        if verbosity >= 1:
            for author_id, post_ids in missing.items():
                self.stdout.write(f"  user {author_id}: {len(post_ids)} post(s) not listed")
        added = 0 if dry_run else repo.repair.backfill_own_posts(missing)
        unindexed = repo.repair.missing_name_indexes()
        indexed = 0 if dry_run else repo.repair.backfill_name_indexes(unindexed)
        follows = None if dry_run else repo.repair.recount_follows()
        grace = options["fanout_grace"]
        if dry_run:
            fanouts = repo.fanouts.interrupted_fanouts(grace)
        else:
            fanouts = repo.fanouts.finish_fanouts(grace)
        if verbosity >= 1:
            for post_id in fanouts:
                self.stdout.write(f"  post {post_id}: fan-out interrupted")
        if dry_run:
            purged = repo.accounts.deleted_accounts_due()
        else:
            purged = repo.accounts.purge_deleted_accounts()
        if verbosity >= 1:
            for user_id in purged:
                self.stdout.write(f"  user {user_id}: deleted account past its grace period")
        wrong = repo.repair.wrong_counts()
        if verbosity >= 1:
            for post_id, n_replies, n_likes, n_reposts in wrong:
                self.stdout.write(
                    f"  post {post_id}: counters should say {n_replies} replies, {n_likes} likes,"
                    f" {n_reposts} reposts"
                )
        mended = 0 if dry_run else repo.repair.mend_counts(wrong)
        tags = repo.repair.unindexed_tags()
        if not dry_run:  # the search's tag index, for tags filed before it existed
            repo.repair.index_tags(tags)
        if not dry_run:  # the staff's "contains" search index, caught up in one run
            repo.directory.index_new_names(limit=None)
        named = repo.repair.index_display_names(dry_run=dry_run)  # people search's index
        if dry_run:
            stale = repo.media_files.unattached_due(limit=100_000)
        else:
            stale = repo.media_files.sweep_unattached()
        strays = repo.media_files.orphans(grace=options["file_grace"])
        if not dry_run:
            repo.media_files.mend_orphans(strays)
        stuck = repo.media_files.stuck()
        if not dry_run:
            for token in stuck:
                try:
                    work.enqueue("media", "picture", {"token": token})
                except work.QueueFull:
                    break  # the queue is busy: the next run queues the rest
        if verbosity >= 1:
            for name in strays.files:
                self.stdout.write(f"  file {name}: no image hash names it")
            for token in strays.hashes:
                self.stdout.write(f"  image:{token}: its files are gone")
        pictures = (
            f"{len(stale)} upload(s) unattached for over a day, {len(strays.files)} "
            f"orphan picture file(s), {len(strays.hashes)} picture(s) without files, "
            f"{len(stuck)} picture(s) queued again"
        )
        odd = repo.repair.names_without_url()
        if verbosity < 1:
            return
        for name, user_id in odd:
            self.stdout.write(
                f"  user {user_id}: name {name!r} has no profile URL "
                f"(staff: /staff/users/id/{user_id}/)"
            )
        if dry_run:
            self.stdout.write(
                f"Dry run: {len(orphans)} orphan username claim(s), "
                f"{sum(map(len, missing.values()))} unlisted post(s), "
                f"{len(unindexed)} unindexed username(s), "
                f"{len(fanouts)} interrupted fan-out(s), {len(purged)} deleted account(s) "
                f"to purge, {len(wrong)} post(s) with wrong counters, {pictures}; "
                "nothing changed."
            )
            self.stdout.write(f"{named} display name(s) to index for people search.")
        else:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Freed {len(freed)} orphan username claim(s); "
                    f"added {added} post(s) to own-posts lists; "
                    f"indexed {indexed} username(s); finished {len(fanouts)} "
                    f"interrupted fan-out(s); purged {len(purged)} deleted account(s); "
                    f"mended the counters of {mended} post(s); {follows} follow(s) in all; "
                    f"deleted {pictures}; indexed {named} display name(s)."
                )
            )
        if odd:
            self.stdout.write(
                f"{len(odd)} username(s) without a URL, listed above: pages show them "
                "unlinked and staff open them by id. Left as they are."
            )
