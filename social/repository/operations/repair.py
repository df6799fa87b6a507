"""Repairs: whole-database scans that find and mend what an interruption or the reference
Retwis left behind (`manage.py repair`).

Each scan iterates with HSCAN/SCAN (never KEYS) in bounded batches, and each mend is safe to
run again: a second run finds nothing left to do.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import cast

from social import keys

from ..accounts.name_words import name_words_of, queue_name_words
from ..accounts.users import name_has_url
from ..base import STATUS_DELETED, RepositoryBase, as_int, batched, s
from ..read.front import queue_front_change
from ..read.loading import COUNT_FIELDS

SCAN_COUNT = 1000
POST_SCAN_BATCH = 5000  # post hashes looked at per pipeline when backfilling own-posts lists


class RepairStore(RepositoryBase):
    """Finding and mending derived keys: name indexes, username claims, own-posts lists, the
    follows total."""

    def iter_user_ids(self) -> Iterator[int]:
        """Yield the id of every account in `users` (HSCAN: no KEYS, bounded replies)."""
        for _, user_id in self.r.hscan_iter(keys.users(), count=SCAN_COUNT):
            parsed = as_int(user_id)
            if parsed is not None:
                yield parsed

    def recount_follows(self) -> int:
        """Set the dashboard's follows total from the graph and return it.

        Sums ZCARD following:<id> over every account, one pipeline per batch of ids. A follow
        landing during the count can leave it one off; the next run corrects it.
        """
        total = 0
        for batch in batched(self.iter_user_ids(), SCAN_COUNT):
            pipe = self._pipe()
            for user_id in batch:
                pipe.zcard(keys.following(user_id))
            total += sum(pipe.execute())
        self.r.set(keys.follows_total(), total)
        return total

    def missing_name_indexes(self) -> list[tuple[str, int]]:
        """Return (username, id) of accounts in `users` that users_lower does not know.

        The reference Retwis writes only `users`; without these entries staff prefix search
        cannot find the account (lookups by exact name still work).
        """
        missing: list[tuple[str, int]] = []
        for batch in batched(self.r.hscan_iter(keys.users(), count=SCAN_COUNT), SCAN_COUNT):
            names = [s(name) for name, _ in batch]
            known = self.r.hmget(keys.usernames_lower(), [n.lower() for n in names])
            missing += [(n, int(i)) for n, (_, i), k in zip(names, batch, known) if k is None]
        return missing

    def backfill_name_indexes(self, accounts: Sequence[tuple[str, int]]) -> int:
        """Index accounts in users_lower (HSETNX: a case-twin keeps the first) and users_lex."""
        added = 0
        for batch in batched(accounts, SCAN_COUNT):
            pipe = self._pipe()
            for name, user_id in batch:
                pipe.hsetnx(keys.usernames_lower(), name.lower(), user_id)
                pipe.zadd(keys.username_index(), {name.lower(): 0})
            added += sum(pipe.execute()[::2])
        return added

    def names_without_url(self) -> list[tuple[str, int]]:
        """Return (username, id) of accounts in `users` whose name no URL can hold.

        The reference Retwis took any name ("a/b", "", ".."): pages show such names
        unlinked and staff open those accounts by id (name_has_url). Nothing mends them: a
        rename would break the reference's own lookups, so they are only reported.
        """
        odd: list[tuple[str, int]] = []
        for name, user_id in self.r.hscan_iter(keys.users(), count=SCAN_COUNT):
            parsed = as_int(user_id)
            if parsed is not None and not name_has_url(s(name)):
                odd.append((s(name), parsed))
        return sorted(odd, key=lambda account: account[1])

    def count_users(self) -> int:
        """Return the number of accounts in `users`."""
        return int(self.r.hlen(keys.users()))

    def has_data(self) -> bool:
        """Return whether any account was ever created (next_user_id exists)."""
        return bool(self.r.exists(keys.next_user_id()))

    def orphan_username_claims(self) -> list[tuple[str, int]]:
        """Return (lower-cased name, id) claims in users_lower whose id has no user hash.

        create_user claims the name before writing the account; a process that dies in
        between leaves such a claim, and the name can never be registered again.
        """
        orphans: list[tuple[str, int]] = []
        claims = self.r.hscan_iter(keys.usernames_lower(), count=SCAN_COUNT)
        for batch in batched(claims, SCAN_COUNT):
            parsed = [(s(name), as_int(uid)) for name, uid in batch]
            pipe = self._pipe()
            for _, user_id in parsed:
                pipe.exists(keys.user(user_id or 0))
            for (name, user_id), exists in zip(parsed, pipe.execute()):
                if not exists:
                    orphans.append((name or "", user_id or 0))
        return orphans

    def free_username_claims(self, claims: Sequence[tuple[str, int]], *, grace: float = 2.0):
        """Free the given orphan claims that are still orphaned after `grace` seconds.

        Return the claims freed. A sign-up in progress has claimed its name but not yet
        written its hash; the pause and second look leave it alone (it writes within
        milliseconds of its claim).
        """
        if not claims:
            return []
        time.sleep(grace)
        pipe = self._pipe()
        for name, user_id in claims:
            pipe.exists(keys.user(user_id))
            pipe.hget(keys.usernames_lower(), name)
        replies = pipe.execute()
        still = [
            (name, user_id)
            for i, (name, user_id) in enumerate(claims)
            if not replies[2 * i] and as_int(replies[2 * i + 1]) == user_id
        ]
        if still:
            self.r.hdel(keys.usernames_lower(), *(name for name, _ in still))
        return still

    def missing_own_posts(self) -> dict[int, list[int]]:
        """Return {author id: post ids} of posts missing from their author's own-posts list.

        The reference Retwis keeps no own-posts list, so posts it wrote show up here. Walks
        the post ids 1..next_post_id in pipelined batches (ids come from one counter, so no
        SCAN is needed); holds one int per post in memory (200,000 posts: a few MB).
        """
        last = as_int(self.r.get(keys.next_post_id())) or 0
        by_author: dict[int, list[int]] = defaultdict(list)
        for start in range(1, last + 1, POST_SCAN_BATCH):
            ids = range(start, min(last, start + POST_SCAN_BATCH - 1) + 1)
            pipe = self._pipe()
            for post_id in ids:
                pipe.hget(keys.post(post_id), "user_id")
            for post_id, author in zip(ids, pipe.execute()):
                if (author_id := as_int(author)) is not None:
                    by_author[author_id].append(post_id)
        missing: dict[int, list[int]] = {}
        for authors in batched(by_author, SCAN_COUNT):
            pipe = self._pipe()
            for author_id in authors:
                pipe.lrange(keys.own_posts(author_id), 0, -1)
            for author_id, listed in zip(authors, pipe.execute()):
                absent = set(by_author[author_id]) - {int(i) for i in listed}
                if absent:
                    missing[author_id] = sorted(absent)
        return missing

    def backfill_own_posts(self, missing: dict[int, list[int]]) -> int:
        """Merge missing post ids into each author's own-posts list, newest first.

        Return the number of ids added. Each list is rewritten under WATCH/MULTI on that one
        key, so a post the author writes meanwhile is not lost (EXEC fails and we retry).
        """
        added = 0
        for author_id, post_ids in missing.items():

            def with_missing(ids: list[int], more: list[int] = post_ids) -> list[int]:
                return sorted(set(ids) | set(more), reverse=True)

            listed, merged = self._rewrite_list(keys.own_posts(author_id), with_missing)
            added += len(merged) - len(listed)
        return added

    def wrong_counts(self) -> list[tuple[int, int, int, int]]:
        """Return (post id, replies, likes, reposts) for each post whose counter fields
        (loading.COUNT_FIELDS) differ from its lists: LLEN replies:<id>, ZCARD likes:<id>
        and ZCARD reposts:<id>.

        Posts written before the counters existed, or a process that died between a like
        and its counter, show up here. Walks the post ids 1..next_post_id in pipelined
        batches (ids come from one counter: no SCAN needed).
        """
        last = as_int(self.r.get(keys.next_post_id())) or 0
        wrong: list[tuple[int, int, int, int]] = []
        for start in range(1, last + 1, POST_SCAN_BATCH):
            ids = range(start, min(last, start + POST_SCAN_BATCH - 1) + 1)
            pipe = self._pipe()
            for post_id in ids:
                pipe.hmget(keys.post(post_id), ["user_id", *COUNT_FIELDS])
                self._queue_recount(pipe, post_id)
            replies = pipe.execute()
            for post_id, (fields, *counted) in zip(
                ids, zip(replies[0::4], replies[1::4], replies[2::4], replies[3::4])
            ):
                author, *stored = fields
                if author is None:
                    continue  # no such post
                if [as_int(value) or 0 for value in stored] != counted:
                    wrong.append((post_id, *counted))
        return wrong

    @staticmethod
    def _queue_recount(pipe, post_id: int) -> None:
        """Queue counting what each counter field counts, in COUNT_FIELDS' order."""
        pipe.llen(keys.replies(post_id))
        pipe.zcard(keys.likes(post_id))
        pipe.zcard(keys.reposts(post_id))

    def mend_counts(self, wrong: Sequence[tuple[int, ...]]) -> int:
        """Set each post's counter fields to what its lists hold now (recounted in the
        same pipeline, so a like landing since wrong_counts is not undone); return how many
        posts were mended. A like landing between the recount and the write can leave one
        off by one; the next run mends it."""
        for batch in batched(wrong, SCAN_COUNT):
            pipe = self._pipe()
            for post_id, *_ in batch:
                self._queue_recount(pipe, post_id)
            counts = pipe.execute()
            pipe = self._pipe()
            for i, (post_id, *_) in enumerate(batch):
                recounted = counts[i * len(COUNT_FIELDS) : (i + 1) * len(COUNT_FIELDS)]
                pipe.hset(keys.post(post_id), mapping=dict(zip(COUNT_FIELDS, recounted)))
            queue_front_change(pipe)
            pipe.execute()
        return len(wrong)

    def unindexed_tags(self) -> list[str]:
        """Return the tags with a post list (tag:<tag>) that the search index (tags_lex)
        lacks: tags filed before it existed. SCAN, in batches."""
        missing: list[str] = []
        prefix = keys.TAG_PATTERN.removesuffix("*")
        scan = self.r.scan_iter(keys.TAG_PATTERN, count=SCAN_COUNT)
        found = (s(k).removeprefix(prefix) for k in scan)
        for batch in batched(found, SCAN_COUNT):
            scores = self.r.zmscore(keys.tag_index(), batch)
            missing += [tag for tag, score in zip(batch, scores) if score is None]
        return missing

    def index_tags(self, tags: Sequence[str]) -> int:
        """Add tags to the search index; return how many were new."""
        added = 0
        for batch in batched(tags, SCAN_COUNT):
            added += cast(int, self.r.zadd(keys.tag_index(), dict.fromkeys(batch, 0)))  # no INCR
        return added

    def index_display_names(self, *, dry_run: bool = False) -> int:
        """Set every account's display-name words (name_words.py) from its user hash, and
        return how many accounts were (dry_run: would be) changed: a database written
        before the index or restored from a backup, an account restored by hand; a
        deleted or purged account's words go.

        Walks the ids 1..next_user_id (one counter: no SCAN), SCAN_COUNT at a time: one
        pipeline reads their hashes' names and the words held, one writes where they
        differ (the script changes nothing for an account a profile save set meanwhile
        to the same words; one set to others between the two wins, and the next run
        looks again).
        """
        last = as_int(self.r.get(keys.next_user_id())) or 0
        changed = 0
        for start in range(1, last + 1, SCAN_COUNT):
            ids = list(range(start, min(last, start + SCAN_COUNT - 1) + 1))
            pipe = self._pipe()
            for user_id in ids:
                pipe.hmget(keys.user(user_id), ["username", "status", "display_name"])
            pipe.hmget(keys.name_words_of(), ids)
            *hashes, held = pipe.execute()
            pipe = self._pipe()
            for user_id, (name, status, display), words in zip(ids, hashes, held):
                gone = not name or s(status) == STATUS_DELETED
                wanted = "" if gone else name_words_of(s(display) or "")
                if wanted != (s(words) or ""):
                    queue_name_words(pipe, user_id, "" if gone else s(display) or "")
            if len(pipe):
                changed += len(pipe) if dry_run else sum(pipe.execute())
        return changed
