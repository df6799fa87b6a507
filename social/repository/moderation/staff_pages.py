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

from ..base import (
    Client,
    Entries,
    Hash,
    Members,
    NamedReads,
    Reply,
    RepositoryBase,
    StoreSettings,
    as_int,
    counts_from,
    decode_hash,
    page_bounds,
    queue_counts,
    s,
)
from ..base import Replies as Got
from ..errors import UserNotFound
from ..models import Counts, Page, Post, User, as_datetime
from ..read.reader import PageReader
from ..read.sources import PROFILE, WITH_HIDDEN, Listed, OwnPosts, PageExtras, TagPosts
from ..read.visibility import STAFF
from .actions import account_user
from .audit import AuditEntry, entries_from_xranges
from .reports import Report, ReportStore, report_from_hash

# What the staff's account page reads beside the posts.
USER = Reply[Hash]("user")
IS_OWNER = Reply[float | None]("owner")
VIEWER_IS_OWNER = Reply[float | None]("viewer_owner")
REPORT_IDS = Reply[Members]("report_ids")
N_REPORTS = Reply[int]("n_reports")
NOTES = Reply[Members]("notes")
LOG = Reply[Members]("log")
BLOCKED_BY = Reply[int]("blocked_by")
MUTED_BY = Reply[int]("muted_by")


def report(report_id: int) -> Reply[Hash]:
    return Reply(f"report:{report_id}")


def log_entry(entry_id: str) -> Reply[Entries]:
    return Reply(f"log:{entry_id}")


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


@dataclass
class AccountReads(PageExtras):
    """What the staff's page of an account reads beside its posts (StaffPageStore.account):
    first the user (the author of its posts: no round trip for them), whether they and
    viewer_id are owners, counts, the ids of reports and log entries, notes; then those
    reports and entries."""

    user_id: int
    viewer_id: int | None

    def first(self, reads: NamedReads) -> None:
        user_id = self.user_id
        reads.hgetall(USER, keys.user(user_id))
        reads.zscore(IS_OWNER, keys.owners(), user_id)
        if self.viewer_id is not None:
            reads.zscore(VIEWER_IS_OWNER, keys.owners(), self.viewer_id)
        queue_counts(reads, user_id)
        reads.zrevrange(REPORT_IDS, keys.user_reports(user_id), 0, ACCOUNT_REPORTS - 1)
        reads.zcard(N_REPORTS, keys.user_reports(user_id))
        reads.lrange(NOTES, keys.moderation_notes(user_id), 0, ACCOUNT_NOTES - 1)
        reads.zrevrange(LOG, keys.audit_by_target(user_id), 0, ACCOUNT_HISTORY - 1)
        reads.zcard(BLOCKED_BY, keys.blocked_by(user_id))
        reads.zcard(MUTED_BY, keys.muted_by(user_id))

    def then(self, reads: NamedReads, got: Got, ids: Sequence[int]) -> None:
        for report_id in got[REPORT_IDS]:
            reads.hgetall(report(int(report_id)), keys.report(int(report_id)))
        for entry_id in got[LOG]:
            entry = s(entry_id)
            reads.xrange(log_entry(entry), keys.audit_log(), min=entry, max=entry)

    def authors(self, got: Got) -> dict[int, User]:
        user = account_user(self.user_id, decode_hash(got[USER]))
        return {self.user_id: user} if user is not None else {}


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
        extras = AccountReads(user_id, viewer_id)
        read = self.reader.page(
            OwnPosts(user_id), STAFF, 1, ACCOUNT_POSTS, shows=PROFILE, extras=extras
        )
        got = read.got
        user = read.authors.get(user_id)
        if user is None:
            raise UserNotFound(user_id)
        report_ids = [int(i) for i in got[REPORT_IDS]]
        built = [report_from_hash(rid, decode_hash(read.then[report(rid)])) for rid in report_ids]
        reports = self.reports.attach_posts([r for r in built if r is not None])
        return Account(
            user=user,
            counts=counts_from(got),
            posts=read.page.items,
            has_more_posts=read.page.has_next,
            reports=reports,
            reports_total=got[N_REPORTS],
            notes=decode_notes(got[NOTES]),
            history=entries_from_xranges(read.then[log_entry(s(i))] for i in got[LOG]),
            is_owner=got[IS_OWNER] is not None,
            viewer_is_owner=got.get(VIEWER_IS_OWNER) is not None,
            blocked_by=got[BLOCKED_BY],
            muted_by=got[MUTED_BY],
            email_confirmed_at=confirmed_at_of(decode_hash(got[USER])),
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

        posts, n_open = self.reports.posts_with_open_reports(Listed(tuple(ids)), 1, per_page)
        return Page(
            items=[PostRow(p, n_open.get(p.id, 0)) for p in posts.items],
            number=number,
            has_next=start - per_page > 0,
            total=top,
            per_page=per_page,
        )

    def staff_tag_page(self, tag: str, number: int = 1, per_page: int = 50) -> Page[PostRow]:
        """Return the newest posts filed under tag (normalised), hidden ones included (what
        moderators removed and posts of suspended authors stay listed): on the read path,
        as staff see a list (two round trips, three when authors are new). A post its
        author deleted has left the list (PostStore.delete_own_post)."""
        posts, n_open = self.reports.posts_with_open_reports(TagPosts(tag), number, per_page)
        return Page(
            items=[PostRow(p, n_open.get(p.id, 0)) for p in posts.items],
            number=number,
            has_next=posts.has_next,
            per_page=per_page,
        )
