"""The staff audit log: one Stream entry per staff action, plus indexes to filter it.

Writers queue the XADD on the same pipeline as the change it describes (first, so a change
is never made without its entry), then write the per-actor, per-target and per-action index
sorted sets in a second round trip: the index members are the stream ids, which only the
XADD reply tells us (an explicit `<ms>-*` id would need Redis 7). If the process dies between
the two, the entry is in the stream (the unfiltered log shows it) but missing from the
filtered views; nothing reads an index member whose entry is absent, so that is all it costs.

Entries are never trimmed, edited or removed by the site, nor are their index entries:
staff act at human pace, so the stream grows by a few hundred small entries a day at most,
and the log must be complete.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from django.utils.translation import gettext, gettext_noop
from redis.typing import EncodableT, FieldT

from social import keys

from ..base import (
    Entries,
    Hash,
    Pipe,
    RepositoryBase,
    as_int,
    decode_hash,
    now,
    page_bounds,
    s,
)
from ..models import User, as_datetime

# Every action the log knows, with how a person reads it (in English here, translated when
# shown: AuditEntry.label). Filters offer exactly these.
ACTIONS: dict[str, str] = {
    "suspend": gettext_noop("Suspended account"),
    "unsuspend": gettext_noop("Unsuspended account"),
    "force_logout": gettext_noop("Forced logout"),
    "grant_staff": gettext_noop("Granted staff"),
    "revoke_staff": gettext_noop("Revoked staff"),
    "add_note": gettext_noop("Added note"),
    "delete_post": gettext_noop("Deleted post"),
    "dismiss_report": gettext_noop("Dismissed report"),
    "delete_account": gettext_noop("Deleted own account"),
    "grant_owner": gettext_noop("Made owner"),
    "revoke_owner": gettext_noop("Removed owner"),
    "revoke_app": gettext_noop("Revoked an app's access"),
    "send_reset": gettext_noop("Sent a password reset link"),
    "remove_display_name": gettext_noop("Removed display name"),
    "remove_note": gettext_noop("Removed bio"),
    "remove_avatar": gettext_noop("Removed avatar"),
    "remove_header": gettext_noop("Removed header image"),
    "retry_job": gettext_noop("Sent a failed job back to its queue"),
    "discard_job": gettext_noop("Discarded a failed job"),
    "edit_about": gettext_noop("Edited the server's rules or description"),
    "revive_domain": gettext_noop("Marked a server available for deliveries again"),
    "block_domain": gettext_noop("Blocked a server"),
    "unblock_domain": gettext_noop("Unblocked a server"),
}

# Stream ids are "<ms>-<seq>"; anything else from a query string is ignored.
STREAM_ID_RE = re.compile(r"^\d{1,15}-\d{1,15}$")

REASON_MAX = 500  # longest reason stored; forms enforce it, this guards other callers


@dataclass(frozen=True)
class AuditDraft:
    """One staff action about to be logged: who did what to which user and/or post."""

    actor: User
    action: str
    target_id: int | None = None
    target_name: str = ""
    post_id: int | None = None
    report_id: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class AuditEntry:
    """One entry of the audit log as read back."""

    id: str
    time: int
    actor_id: int
    actor_name: str
    action: str
    target_id: int | None
    target_name: str
    post_id: int | None
    report_id: int | None
    reason: str

    @property
    def created(self) -> datetime:
        return as_datetime(self.time)

    @property
    def label(self) -> str:
        """The action as the reader's language says it (an unknown one as stored)."""
        return gettext(ACTIONS[self.action]) if self.action in ACTIONS else self.action


@dataclass(frozen=True)
class AuditPage:
    """A page of the log, newest first.

    Unfiltered pages are cursor-paged on the stream (`older_than` is the id to continue
    before); filtered pages are numbered pages of an index (`number`).
    """

    items: list[AuditEntry]
    has_older: bool
    older_than: str | None = None
    number: int | None = None
    total: int | None = None


def score_of(entry_id: str) -> int:
    """Return the index score of a stream id: its millisecond time."""
    return int(entry_id.split("-", 1)[0])


def entry_from_fields(entry_id: str, raw: Hash) -> AuditEntry:
    """Decode one XRANGE/XREVRANGE entry."""
    h = decode_hash(raw)
    return AuditEntry(
        id=entry_id,
        time=as_int(h.get("time")) or score_of(entry_id) // 1000,
        actor_id=as_int(h.get("actor")) or 0,
        actor_name=h.get("actor_name") or "",
        action=h.get("action") or "",
        target_id=as_int(h.get("user")),
        target_name=h.get("user_name") or "",
        post_id=as_int(h.get("post")),
        report_id=as_int(h.get("report")),
        reason=h.get("reason") or "",
    )


def entries_from_xranges(replies: Iterable[list]) -> list[AuditEntry]:
    """Decode the replies of one `XRANGE id id` per entry, skipping ids with no entry."""
    out = []
    for reply in replies:
        for entry_id, fields in reply or []:
            out.append(entry_from_fields(s(entry_id), fields))
    return out


class AuditStore(RepositoryBase):
    """Append to the audit log and read it back, newest first."""

    def _queue_audit(self, pipe: Pipe, draft: AuditDraft, ts: int) -> int:
        """Queue the XADD of draft on pipe; return its position among pipe's replies."""
        if draft.action not in ACTIONS:
            raise ValueError(f"unknown audit action {draft.action!r}")
        fields: dict[FieldT, EncodableT] = {
            "actor": draft.actor.id,
            "actor_name": draft.actor.username,
            "action": draft.action,
            "user": "" if draft.target_id is None else draft.target_id,
            "user_name": draft.target_name,
            "post": "" if draft.post_id is None else draft.post_id,
            "report": "" if draft.report_id is None else draft.report_id,
            "reason": draft.reason[:REASON_MAX],
            "time": ts,
        }
        position = len(pipe)
        pipe.xadd(keys.audit_log(), fields)
        return position

    def _index_audit(self, written: Sequence[tuple[AuditDraft, bytes | str]]) -> None:
        """Add the stream ids just written to their actor, target and action indexes."""
        if not written:
            return
        pipe = self._pipe()
        for draft, raw_id in written:
            entry_id = s(raw_id)
            member = {entry_id: score_of(entry_id)}
            pipe.zadd(keys.audit_by_actor(draft.actor.id), member)
            pipe.zadd(keys.audit_by_action(draft.action), member)
            if draft.target_id is not None:
                pipe.zadd(keys.audit_by_target(draft.target_id), member)
        pipe.execute()

    def run_audited(
        self, drafts: Sequence[AuditDraft], queue_writes, *, at: int | None = None
    ) -> list:
        """Execute one pipeline: the drafts' XADDs first, then queue_writes(pipe, ts).

        Return the replies of queue_writes' commands. Two round trips in all: the pipeline,
        then the index writes (see the module docstring for what a crash between costs).
        """
        ts = now() if at is None else at
        pipe = self._pipe()
        positions = [self._queue_audit(pipe, draft, ts) for draft in drafts]
        queue_writes(pipe, ts)
        replies = self.send(pipe)  # moves the visibility version if the writes hide posts
        self._index_audit([(d, replies[p]) for d, p in zip(drafts, positions)])
        return replies[len(drafts) :]

    def audit_page(
        self,
        *,
        actor_id: int | None = None,
        action: str | None = None,
        target_id: int | None = None,
        number: int = 1,
        older_than: str | None = None,
        per_page: int = 50,
    ) -> AuditPage:
        """Return a page of the log, newest first, filtered by any of actor/action/target.

        Unfiltered: one XREVRANGE from the cursor (one round trip). Filtered: two round
        trips whatever the log's size: a page of every chosen index (and its size), then the
        ZMSCOREs that intersect the smallest index's page with the others plus one exact
        XRANGE per id. With several filters a page can hold fewer than per_page entries.
        """
        index_keys = []
        if actor_id is not None:
            index_keys.append(keys.audit_by_actor(actor_id))
        if action:
            index_keys.append(keys.audit_by_action(action))
        if target_id is not None:
            index_keys.append(keys.audit_by_target(target_id))
        if not index_keys:
            return self._stream_page(older_than, per_page)
        return self._index_page(index_keys, max(1, number), per_page)

    def _stream_page(self, older_than: str | None, per_page: int) -> AuditPage:
        """Return per_page entries older than the cursor, straight off the stream."""
        top = "+"
        if older_than and STREAM_ID_RE.match(older_than):
            top = f"({older_than}"  # exclusive range: Redis 6.2+
        rows = cast(
            Entries, self.r.xrevrange(keys.audit_log(), max=top, min="-", count=per_page + 1)
        )
        items = [entry_from_fields(s(i), f) for i, f in rows[:per_page]]
        has_older = len(rows) > per_page
        return AuditPage(
            items=items,
            has_older=has_older,
            older_than=items[-1].id if has_older and items else None,
        )

    def _index_page(self, index_keys: list[str], number: int, per_page: int) -> AuditPage:
        """Return a numbered page of the intersection of index_keys, newest first."""
        start, stop = page_bounds(number, per_page)
        pipe = self._pipe()
        for key in index_keys:
            pipe.zcard(key)
            pipe.zrevrange(key, start, stop)
        replies = pipe.execute()
        sizes = replies[0::2]
        smallest = min(range(len(index_keys)), key=lambda i: sizes[i])
        ids = [s(m) for m in replies[1::2][smallest]]
        others = [k for i, k in enumerate(index_keys) if i != smallest]
        shown = ids[:per_page]
        pipe = self._pipe()
        for key in others:
            if shown:
                pipe.zmscore(key, shown)
        for entry_id in shown:
            pipe.xrange(keys.audit_log(), min=entry_id, max=entry_id)
        replies = pipe.execute() if len(pipe) else []
        checks = replies[: len(others)] if shown else []
        keep = [all(c[i] is not None for c in checks) for i in range(len(shown))]
        xranges = replies[len(checks) :]
        entries = entries_from_xranges(x for x, k in zip(xranges, keep) if k)
        return AuditPage(
            items=entries,
            has_older=len(ids) > per_page,
            number=number,
            total=sizes[smallest] if not others else None,
        )
