"""What the staff pages read: one account with its posts, reports, notes and history, and
the lists of posts (newest site-wide, by tag, by id), every post through the read path
(reader.py) as staff see them (hidden ones included)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Unpack

from social import keys
from social.text import normal_tag

from .audit import AuditEntry, entries_from_xranges
from .base import (
    Client,
    NamedReads,
    RepositoryBase,
    StoreSettings,
    as_int,
    counts_from,
    decode_hash,
    page_bounds,
    queue_counts,
    s,
)
from .errors import UserNotFound
from .models import Counts, Page, Post, User, as_datetime
from .moderation import account_user
from .reader import PageReader
from .reports import Report, ReportStore, report_from_hash
from .sources import PROFILE, WITH_HIDDEN, Listed, OwnPosts
from .visibility import STAFF

ACCOUNT_POSTS = 10
ACCOUNT_REPORTS = 10
ACCOUNT_NOTES = 20
ACCOUNT_HISTORY = 20


@dataclass(frozen=True)
class Note:
    """A staff note on an account."""

    text: str
    author_id: int
    author_name: str
    time: int

    @property
    def created(self) -> datetime:
        return as_datetime(self.time)


def confirmed_at_of(h: Mapping[str, str | None]) -> datetime | None:
    """Return when a decoded user hash's address was confirmed, or None without one."""
    if not h.get("email"):
        return None
    return as_datetime(as_int(h.get("email_at")) or 0)


@dataclass(frozen=True)
class Account:
    """Everything the staff page of one account shows."""

    user: User
    counts: Counts
    posts: list[Post]
    has_more_posts: bool
    reports: list[Report]
    reports_total: int
    notes: list[Note]
    history: list[AuditEntry] = field(default_factory=list)
    is_owner: bool = False
    viewer_is_owner: bool = False  # whether the staff member looking may grant and revoke
    # How many accounts block and mute this one: a signal for moderation (relations.py).
    blocked_by: int = 0
    muted_by: int = 0
    # When its e-mail address was confirmed (None: it has none): staff may send it a reset
    # link. The address itself is not shown.
    email_confirmed_at: datetime | None = None


@dataclass(frozen=True)
class PostRow:
    """A post in the staff list, with how many open reports it has."""

    post: Post
    open_reports: int


def decode_notes(raw: list) -> list[Note]:
    """Decode LRANGE'd JSON notes, skipping any that do not parse."""
    out = []
    for item in raw:
        try:
            h = json.loads(item)
            out.append(Note(h["text"], int(h["by"]), h["by_name"], int(h["time"])))
        except (TypeError, ValueError, KeyError):
            continue
    return out


class StaffPageStore(RepositoryBase):
    """The staff's reads of accounts and posts."""

    def __init__(
        self,
        client: Client,
        *,
        reports: ReportStore,
        reader: PageReader,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.reports = reports
        self.reader = reader

    def account(self, user_id: int, viewer_id: int | None = None) -> Account:
        """Return the staff view of one account in four round trips, or raise UserNotFound.

        Through the read path (its own posts, hidden ones included, as staff see them):
        1) the user, whether they and viewer_id are owners, counts, the ids of their latest
        posts, reports, notes and log entries; 2) those posts, reports and entries; 3) the
        reported posts; 4) their authors (the account itself, but a post can be missing
        from the latest ten).
        """

        def first(reads: NamedReads) -> None:
            reads.hgetall("user", keys.user(user_id))
            reads.zscore("owner", keys.owners(), user_id)
            if viewer_id is not None:
                reads.zscore("viewer_owner", keys.owners(), viewer_id)
            queue_counts(reads, user_id)
            reads.zrevrange("report_ids", keys.user_reports(user_id), 0, ACCOUNT_REPORTS - 1)
            reads.zcard("n_reports", keys.user_reports(user_id))
            reads.lrange("notes", keys.moderation_notes(user_id), 0, ACCOUNT_NOTES - 1)
            reads.zrevrange("log", keys.audit_by_target(user_id), 0, ACCOUNT_HISTORY - 1)
            reads.zcard("blocked_by", keys.blocked_by(user_id))
            reads.zcard("muted_by", keys.muted_by(user_id))

        def then(reads: NamedReads, got: dict) -> None:
            for report_id in got["report_ids"]:
                reads.hgetall(f"report:{int(report_id)}", keys.report(int(report_id)))
            for entry_id in got["log"]:
                entry_id = s(entry_id)
                reads.xrange(f"log:{entry_id}", keys.audit_log(), min=entry_id, max=entry_id)

        def owner(got: dict) -> dict[int, User]:
            user = account_user(user_id, decode_hash(got["user"]))
            return {user_id: user} if user is not None else {}

        read = self.reader.page(
            OwnPosts(user_id),
            STAFF,
            1,
            ACCOUNT_POSTS,
            shows=PROFILE,
            first=first,
            then=then,
            authors=owner,
        )
        got = read.got
        user = owner(got).get(user_id)
        if user is None:
            raise UserNotFound(user_id)
        report_ids = [int(i) for i in got["report_ids"]]
        built = [
            report_from_hash(rid, decode_hash(read.then[f"report:{rid}"])) for rid in report_ids
        ]
        reports = self.reports.attach_posts([r for r in built if r is not None])
        return Account(
            user=user,
            counts=counts_from(got),
            posts=read.page.items,
            has_more_posts=read.page.has_next,
            reports=reports,
            reports_total=got["n_reports"],
            notes=decode_notes(got["notes"]),
            history=entries_from_xranges(read.then[f"log:{s(i)}"] for i in got["log"]),
            is_owner=got["owner"] is not None,
            viewer_is_owner=got.get("viewer_owner") is not None,
            blocked_by=got["blocked_by"],
            muted_by=got["muted_by"],
            email_confirmed_at=confirmed_at_of(decode_hash(got["user"])),
        )

    def posts_by_ids(self, post_ids: Sequence[int]) -> list[Post]:
        """Return the posts that exist among post_ids, deleted ones included, in order."""
        read = self.reader.page(
            Listed(tuple(post_ids)), STAFF, 1, max(1, len(post_ids)), shows=WITH_HIDDEN
        )
        return [read.loaded[i] for i in dict.fromkeys(post_ids) if i in read.loaded]

    def staff_posts_page(self, number: int = 1, per_page: int = 50) -> Page[PostRow]:
        """Return the newest posts site-wide, deleted ones included: three round trips.

        Post ids come from INCR, so the newest posts are the ids counting down from
        next_post_id: no extra list to keep, and paging goes past the timeline's 1000. An
        id whose post was never written (a crash after INCR) is skipped: a page can be short.
        """
        number = max(1, number)
        top = as_int(self.r.get(keys.next_post_id())) or 0
        start = top - page_bounds(number, per_page)[0]  # ids count down from the newest
        ids = list(range(start, max(0, start - per_page), -1))

        posts, n_open = self.reports.posts_with_open_reports(ids)
        return Page(
            items=[PostRow(p, n_open.get(p.id, 0)) for p in posts],
            number=number,
            has_next=start - per_page > 0,
            total=top,
            per_page=per_page,
        )

    def staff_tag_page(self, tag: str, number: int = 1, per_page: int = 50) -> Page[PostRow]:
        """Return the newest posts filed under tag (normalised), hidden ones included (what
        moderators removed and posts of suspended authors stay listed): three round trips.
        A post its author deleted has left the list (PostStore.delete_own_post)."""
        start, stop = page_bounds(number, per_page)
        ids = [int(i) for i in self.r.lrange(keys.tag_posts(normal_tag(tag)), start, stop)]
        posts, n_open = self.reports.posts_with_open_reports(ids[:per_page])
        return Page(
            items=[PostRow(p, n_open.get(p.id, 0)) for p in posts],
            number=number,
            has_next=len(ids) > per_page,
            per_page=per_page,
        )
