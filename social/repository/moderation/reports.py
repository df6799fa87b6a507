"""Reports: users flag posts, staff resolve them by dismissing, deleting the post, or
suspending its author (ModerationStore.suspend_reported_author).

`post_reports:<post>` maps reporter -> open report id: HSETNX there is what keeps one open
report per user per post, and resolving closes every report it lists. Resolved reports are
kept (they are the moderation record); how many a user can file is bounded by a daily quota.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from time import monotonic
from typing import Unpack

from django.utils.translation import gettext, gettext_noop

from social import keys

from ..base import (
    Client,
    NamedReads,
    Pipe,
    Replies,
    Reply,
    RepositoryBase,
    StoreSettings,
    as_int,
    decode_hash,
    now,
    page_bounds,
    s,
    utc_day,
)
from ..errors import NotAllowed, PostNotFound, RepositoryError
from ..models import Page, Post, User, as_datetime
from ..posts.posting import PostStore
from ..read.reader import PageReader
from ..read.sources import WITH_HIDDEN, Listed, PageExtras, Source
from ..read.visibility import STAFF
from .audit import AuditDraft, AuditStore

# What a reporter can pick; the code is stored, the label shown (translated: reason_label).
REPORT_REASONS: dict[str, str] = {
    "spam": gettext_noop("Spam or scam"),
    "abuse": gettext_noop("Harassment or hate"),
    "illegal": gettext_noop("Illegal content"),
    "other": gettext_noop("Something else"),
}
REPORT_TEXT_MAX = 500
REPORTS_PER_DAY = 20  # per reporter: bounds what one account can pile on staff
OPEN, RESOLVED = "open", "resolved"
OUTCOMES = ("dismissed", "deleted")  # what resolve_report does
# A report closed by suspending the post's author (ModerationStore.suspend_reported_author):
# not one of OUTCOMES, so no form can record it without the suspension.
SUSPENDED = "suspended"
OPEN_COUNT_MAX_AGE = 30.0  # seconds a process shows the open-report count it last read


class AlreadyReported(RepositoryError):
    """The user already has an open report on this post."""


class ReportNotFound(RepositoryError):
    """No report has that id."""


@dataclass(frozen=True)
class Report:
    """A user's report of a post, with the post attached when it was loaded."""

    id: int
    post_id: int
    reporter_id: int
    reporter_name: str
    author_id: int
    reason: str
    text: str
    time: int
    status: str = OPEN
    outcome: str = ""
    resolved_by_name: str = ""
    resolved_at: int | None = None
    post: Post | None = None
    open_on_post: int = 0

    @property
    def reason_label(self) -> str:
        """The reason as the reader's language says it (an unknown code as stored)."""
        if self.reason in REPORT_REASONS:
            return gettext(REPORT_REASONS[self.reason])
        return self.reason

    @property
    def is_open(self) -> bool:
        return self.status == OPEN

    @property
    def created(self) -> datetime:
        return as_datetime(self.time)

    @property
    def resolved(self) -> datetime | None:
        return as_datetime(self.resolved_at)


@dataclass(frozen=True)
class ReportGroup:
    """The reports of one page that are about the same post, oldest first."""

    post_id: int
    post: Post | None
    reports: list[Report]
    open_on_post: int

    @property
    def first(self) -> Report:
        return self.reports[0]


def group_by_post(reports: Sequence[Report]) -> list[ReportGroup]:
    """Group reports by post, in the order each post first appears."""
    groups: dict[int, list[Report]] = {}
    for report in reports:
        groups.setdefault(report.post_id, []).append(report)
    return [
        ReportGroup(post_id, items[0].post, items, max(items[0].open_on_post, len(items)))
        for post_id, items in groups.items()
    ]


def open_reports(post_id: int) -> Reply[int]:
    """The open-report count of a post (HLEN), as posts_with_open_reports reads it."""
    return Reply(f"open:{post_id}")


class OpenReports(PageExtras):
    """Each listed post's open-report count, read on the posts' own pipeline."""

    def then(self, reads: NamedReads, got: Replies, ids: Sequence[int]) -> None:
        for post_id in ids:
            reads.hlen(open_reports(post_id), keys.post_reports(post_id))


def report_from_hash(report_id: int, h: dict[str, str]) -> Report | None:
    """Build a Report from its decoded hash, or None when absent."""
    post_id = as_int(h.get("post_id"))
    if post_id is None:
        return None
    return Report(
        id=int(report_id),
        post_id=post_id,
        reporter_id=as_int(h.get("reporter_id")) or 0,
        reporter_name=h.get("reporter_name") or "",
        author_id=as_int(h.get("author_id")) or 0,
        reason=h.get("reason") or "other",
        text=h.get("text") or "",
        time=as_int(h.get("time")) or 0,
        status=h.get("status") or OPEN,
        outcome=h.get("outcome") or "",
        resolved_by_name=h.get("resolved_by_name") or "",
        resolved_at=as_int(h.get("resolved_at")),
    )


class ReportStore(RepositoryBase):
    """Filing, listing and resolving reports (deleting a post goes through the posts store)."""

    def __init__(
        self,
        client: Client,
        *,
        audit: AuditStore,
        posts: PostStore,
        reader: PageReader,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.audit = audit
        self.posts = posts
        self.reader = reader

    def report_post(
        self, reporter: User, post_id: int, reason: str, text: str = "", *, at=None
    ) -> int:
        """File a report and return its id.

        Raise PostNotFound (missing or deleted post), NotAllowed (own post, daily quota),
        AlreadyReported (an open report by this user on this post). Three round trips: the
        post, the claim (HSETNX), the report and its indexes. The claim is made before the
        report is written; if the process dies in between, the claim points at no report and
        the reporter's next attempt finds that out and takes it over.
        """
        if reason not in REPORT_REASONS:
            raise ValueError(f"unknown report reason {reason!r}")
        ts = now() if at is None else at
        quota = keys.report_quota(reporter.id, utc_day(ts).date())
        pipe = self._pipe()
        pipe.hmget(keys.post(post_id), ["user_id", "deleted"])
        pipe.incr(quota)
        pipe.expire(quota, 2 * 86400)
        pipe.incr(keys.next_report_id())  # ids of refused reports are simply never used
        (author, deleted), filed, _, report_id = pipe.execute()
        author_id = as_int(author)
        if author_id is None or s(deleted) == "1":
            raise PostNotFound(post_id)
        if author_id == reporter.id:
            raise NotAllowed(gettext_noop("You cannot report your own post."))
        if filed > REPORTS_PER_DAY:
            raise NotAllowed(
                gettext_noop("You have sent a lot of reports today. Try again tomorrow.")
            )
        self._claim_report(post_id, reporter.id, report_id)
        pipe = self._pipe()
        pipe.hset(
            keys.report(report_id),
            mapping={
                "post_id": post_id,
                "reporter_id": reporter.id,
                "reporter_name": reporter.username,
                "author_id": author_id,
                "reason": reason,
                "text": text[:REPORT_TEXT_MAX],
                "time": ts,
                "status": OPEN,
            },
        )
        pipe.zadd(keys.open_reports(), {report_id: ts})
        pipe.zadd(keys.user_reports(author_id), {report_id: ts})
        pipe.zadd(keys.user_reported(reporter.id), {str(post_id): ts})
        pipe.execute()
        self.forget_open_count()
        return report_id

    def _claim_report(self, post_id: int, reporter_id: int, report_id: int) -> None:
        """Claim (post, reporter) for report_id or raise AlreadyReported."""
        claims = keys.post_reports(post_id)
        pipe = self._pipe()
        pipe.hsetnx(claims, reporter_id, report_id)
        pipe.hget(claims, reporter_id)
        claimed, holder = pipe.execute()
        if claimed:
            return
        status = s(self.r.hget(keys.report(int(holder)), "status"))
        if status == OPEN:
            raise AlreadyReported(post_id)
        # A claim on a report that was never written (crash) or already resolved (its
        # HDEL lost): take it over. Two racing re-reports by one user may both pass; staff
        # then see a duplicate, and resolving the post closes both.
        self.r.hset(claims, reporter_id, report_id)

    def reports_page(self, status: str = OPEN, number: int = 1, per_page: int = 50) -> Page:
        """Return a page of reports: open ones oldest first, resolved ones newest first.

        Four round trips whatever per_page: the ids, the reports, their posts (with each
        post's number of open reports), the posts' authors.
        """
        start, stop = page_bounds(number, per_page)
        pipe = self._pipe()
        if status == OPEN:
            pipe.zrange(keys.open_reports(), start, stop)
            pipe.zcard(keys.open_reports())
        else:
            pipe.zrevrange(keys.resolved_reports(), start, stop)
            pipe.zcard(keys.resolved_reports())
        raw_ids, total = pipe.execute()
        if status == OPEN:
            self.remember_open_count(total)  # read anyway: the Staff link's count is fresh
        ids = [int(i) for i in raw_ids]
        reports = self._reports_by_ids(ids[:per_page])
        return Page(
            items=self.attach_posts(reports),
            number=max(1, number),
            has_next=len(ids) > per_page,
            total=total,
            per_page=per_page,
        )

    def open_count(self) -> int:
        """Return how many reports are open, for the Staff link of every staff page.

        The process remembers it for OPEN_COUNT_MAX_AGE seconds: one ZCARD (one round trip)
        at most every 30 s per process, none while remembered. The open queue's page reads
        the count anyway and refreshes it, and this process forgets it when it files or
        resolves a report, so a moderator's own actions show at once; another process's
        show within 30 s.
        """
        known = self.cache.open_reports
        if known is not None and monotonic() - known[0] < OPEN_COUNT_MAX_AGE:
            return known[1]
        count = int(self.r.zcard(keys.open_reports()))
        self.remember_open_count(count)
        return count

    def remember_open_count(self, count: int) -> None:
        """Remember count as the number of open reports, read just now."""
        self.cache.open_reports = (monotonic(), int(count))

    def forget_open_count(self) -> None:
        """Forget the remembered count (after this process opened or closed reports)."""
        self.cache.open_reports = None

    def _reports_by_ids(self, ids: Sequence[int]) -> list[Report]:
        """Return the reports that exist among ids, in order, in one round trip."""
        if not ids:
            return []
        pipe = self._pipe()
        for report_id in ids:
            pipe.hgetall(keys.report(report_id))
        built = [report_from_hash(i, decode_hash(h)) for i, h in zip(ids, pipe.execute())]
        return [r for r in built if r is not None]

    def posts_with_open_reports(
        self, source: Source, number: int = 1, per_page: int = 50
    ) -> tuple[Page[Post], dict[int, int]]:
        """Return a page of source as staff see it (hidden posts included) and each post's
        open-report count: the one place the count is read, in the posts' own pipeline
        (OpenReports: the read path's `then`)."""
        read = self.reader.page(
            source, STAFF, number, per_page, shows=WITH_HIDDEN, extras=OpenReports()
        )
        n_open = {p.id: read.then[open_reports(p.id)] for p in read.page.items}
        return read.page, n_open

    def attach_posts(self, reports: list[Report]) -> list[Report]:
        """Return reports with their posts and open-report counts (two round trips)."""
        post_ids = list(dict.fromkeys(r.post_id for r in reports))
        if not post_ids:
            return reports

        posts, n_open = self.posts_with_open_reports(Listed(tuple(post_ids)), 1, len(post_ids))
        by_id = {p.id: p for p in posts.items}
        return [
            replace(r, post=by_id.get(r.post_id), open_on_post=n_open.get(r.post_id, 0))
            for r in reports
        ]

    def get_report(self, report_id: int) -> Report:
        """Return the report or raise ReportNotFound."""
        found = self._reports_by_ids([report_id])
        if not found:
            raise ReportNotFound(report_id)
        return found[0]

    def report_with_post(self, report_id: int) -> Report:
        """Return the report with its post and the post's open-report count (three round
        trips), or raise ReportNotFound."""
        return self.attach_posts([self.get_report(report_id)])[0]

    def resolve_report(
        self, report_id: int, actor: User, outcome: str, reason: str = "", *, at=None
    ) -> bool:
        """Close every open report on the report's post, dismissing it or deleting the post.

        Return False when the report was already resolved. The reason defaults to the
        report's own. Four round trips: the report; the post, its claims and its author; the
        changes with their log entry; the log indexes.
        """
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {outcome!r}")
        report = self.get_report(report_id)
        if not report.is_open:
            return False
        reason = reason or REPORT_REASONS.get(report.reason, report.reason)  # stored: English
        pipe = self._pipe()
        pipe.hmget(keys.post(report.post_id), ["user_id", "deleted", "body"])
        pipe.hgetall(keys.post_reports(report.post_id))
        pipe.hget(keys.user(report.author_id), "username")
        (author, deleted, body), claims, author_name = pipe.execute()
        claims = decode_hash(claims)
        delete = outcome == "deleted" and as_int(author) is not None and s(deleted) != "1"
        draft = AuditDraft(
            actor,
            "delete_post" if delete else "dismiss_report",
            report.author_id,
            s(author_name) or "",
            post_id=report.post_id,
            report_id=report.id,
            reason=reason,
        )

        def queue(pipe: Pipe, ts: int) -> None:
            if delete:
                self.posts.queue_soft_delete(
                    pipe, report.post_id, report.author_id, s(body) or "", actor, reason, ts
                )
            self.queue_close_reports(
                pipe, report.post_id, claims, outcome, actor, ts, also=report.id
            )

        self.audit.run_audited([draft], queue, at=at)
        self.forget_open_count()
        return True

    def queue_close_reports(
        self,
        pipe: Pipe,
        post_id: int,
        claims: dict[str, str],
        outcome: str,
        actor: User,
        ts: int,
        *,
        also: int | None = None,
    ) -> None:
        """Queue resolving the claimed reports of post_id (and `also`), releasing the claims.

        Only the claims read beforehand are released (HDEL by reporter, not DEL), so a
        report filed meanwhile stays open with its claim. If this is cut short, some reports
        stay open (still listed) or some claims stay held (their reporters are told they
        already reported); resolving any report left open on the post finishes the job, and
        report_post takes over a claim whose report is resolved.
        """
        report_ids = [int(v) for v in claims.values()] + ([also] if also is not None else [])
        for report_id in dict.fromkeys(report_ids):
            pipe.hset(
                keys.report(report_id),
                mapping={
                    "status": RESOLVED,
                    "outcome": outcome,
                    "resolved_by": actor.id,
                    "resolved_by_name": actor.username,
                    "resolved_at": ts,
                },
            )
            pipe.zrem(keys.open_reports(), report_id)
            pipe.zadd(keys.resolved_reports(), {str(report_id): ts})
        if claims:
            pipe.hdel(keys.post_reports(post_id), *claims.keys())
            for reporter_id in claims:
                pipe.zrem(keys.user_reported(int(reporter_id)), post_id)
