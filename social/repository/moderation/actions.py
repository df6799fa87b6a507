"""Moderation: staff flags, suspension, soft-deleted posts, notes, and an account's file.

Every change here is one staff action and is logged (see audit.py): a read of the target
(one round trip), one pipeline with the audit XADD first and then the change, and one for
the audit indexes. No MULTI: a change touches the target user's keys and global indexes
(`auths`, `staff_users`, `suspended_users`, `timeline`), which a Redis Cluster keeps on
different nodes. The user hash is always written first because it is the truth every
reader checks; the global sorted sets are indexes for the staff lists, and repeating the
action (or its no-op path) re-syncs them.

Reports live in reports.py. This store is given the audit, reports, posts and users
stores it acts through (the log, soft deletion, loading posts, secret rotation).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Unpack

from django.utils.translation import gettext, gettext_noop

from social import keys

from ..accounts.profiles import ProfileStore
from ..accounts.users import UserStore
from ..base import (
    STATUS_DELETED,
    STATUS_SUSPENDED,
    Client,
    NamedReads,
    Pipe,
    Replies,
    RepositoryBase,
    StoreSettings,
    as_int,
    decode_hash,
    queue_hiding,
    s,
    user_from_hash,
)
from ..errors import NotAllowed, UserNotFound
from ..models import User
from ..posts.attachments import decode_media
from ..posts.media_files import forget
from ..posts.posting import PostStore
from ..read.reader import PageReader
from .audit import REASON_MAX, AuditDraft, AuditStore
from .reports import SUSPENDED, ReportStore

NOTES_CAP = 200  # the newest notes on an account; older ones fall off
NOTE_MAX = 1000

# Who acts when a person runs `manage.py createstaff` (user ids start at 1). It counts as
# an owner, and it alone makes and unmakes owners.
SYSTEM_ACTOR = User(id=0, username="manage.py", is_staff=True)

# Refusals (NotAllowed) are English here and translated where they are shown (the views'
# gettext(str(error))): gettext_noop only marks them for the catalogue.
OWNER_ONLY = gettext_noop("Only an owner can grant or revoke staff.")
OWNER_SUSPEND = gettext_noop(
    "Only an owner can suspend a staff account, by revoking staff first: ask an owner."
)
OWNER_KEEPS = gettext_noop("An owner keeps staff: only manage.py createstaff changes owners.")


@dataclass(frozen=True)
class Target:
    """The account a staff action is about, and whether it and the actor are owners."""

    user: User
    secret: str
    is_owner: bool
    actor_is_owner: bool


def account_user(user_id: int, h: Mapping[str, str | None]) -> User | None:
    """Return the account of a decoded user hash as staff see it, or None when there is none.

    user_from_hash takes an empty name for a missing account; the reference Retwis let an
    account be called "", and staff must still be able to open it and act on it. A purged
    deleted account (a tombstone: status deleted, no name) stays absent.
    """
    if not h or (not h.get("username") and h.get("status") == STATUS_DELETED):
        return None
    if h.get("username"):
        return user_from_hash(user_id, h)
    unnamed = user_from_hash(user_id, {**h, "username": "?"})
    return replace(unnamed, username="") if unnamed is not None else None


def check_suspension(target: Target, actor: User) -> None:
    """Raise NotAllowed when actor may not suspend target: themselves, or staff (owners
    revoke staff first; other staff are told to ask an owner)."""
    user = target.user
    if user.id == actor.id:
        raise NotAllowed(gettext_noop("You cannot suspend yourself."))
    if user.is_staff and not target.actor_is_owner:
        raise NotAllowed(OWNER_SUSPEND)
    if user.is_staff:
        raise NotAllowed(gettext_noop("Revoke staff before suspending this account."))


def check_staff_change(target: Target, actor: User) -> None:
    """Raise NotAllowed when actor may not grant or revoke target's staff: their own, or
    actor is no owner."""
    if target.user.id == actor.id:
        raise NotAllowed(gettext_noop("You cannot change your own staff status."))
    if not target.actor_is_owner:
        raise NotAllowed(OWNER_ONLY)


def already_suspended(user: User) -> str:
    """Return the refusal for suspending an account that already is (or was deleted by
    its owner: hidden alike)."""
    if user.is_deleted:
        return gettext("@%(name)s deleted their account: it is hidden already.") % {
            "name": user.username
        }
    return gettext("@%(name)s is already suspended.") % {"name": user.username}


class ModerationStore(RepositoryBase):
    """Staff actions on accounts and posts, each logged."""

    def __init__(
        self,
        client: Client,
        *,
        audit: AuditStore,
        posts: PostStore,
        reports: ReportStore,
        users: UserStore,
        reader: PageReader,
        profiles: ProfileStore,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.profiles = profiles
        self.audit = audit
        self.posts = posts
        self.reports = reports
        self.users = users
        self.reader = reader

    def _target(self, user_id: int, actor: User | None = None) -> Target:
        """Return the account with its secret, and who of it and actor is an owner, in one
        round trip; raise UserNotFound.

        The actor's standing is read, not locked: an owner demoted by the command line in
        the instant before their action still makes it (owners change by hand, rarely).
        """
        reads = self.reads()
        self._queue_target(reads, user_id, actor)
        return self._target_from(user_id, actor, reads.execute())

    @staticmethod
    def _queue_target(reads: NamedReads, user_id: int, actor: User | None) -> None:
        """Queue _target's reads on reads (its names: user, owner, actor)."""
        reads.hgetall("user", keys.user(user_id))
        reads.zscore("owner", keys.owners(), user_id)
        if actor is not None and actor.id != SYSTEM_ACTOR.id:
            reads.zscore("actor", keys.owners(), actor.id)

    @staticmethod
    def _target_from(user_id: int, actor: User | None, got: Replies) -> Target:
        """Return the Target that _queue_target's replies describe; raise UserNotFound."""
        h = decode_hash(got.hash("user"))
        user = account_user(user_id, h)
        if user is None:
            raise UserNotFound(user_id)
        actor_is_owner = actor is not None and (
            actor.id == SYSTEM_ACTOR.id or got.get("actor") is not None
        )
        return Target(user, h.get("auth") or "", got["owner"] is not None, actor_is_owner)

    def is_owner(self, user_id: int) -> bool:
        """Return whether user_id is an owner."""
        return self.r.zscore(keys.owners(), user_id) is not None

    def grant_owner(self, user_id: int, actor: User, reason: str = "", *, at=None) -> bool:
        """Make staff member user_id an owner; False when already one. Only the command
        line (SYSTEM_ACTOR) makes owners: no one can make themselves one from the site."""
        if actor.id != SYSTEM_ACTOR.id:
            raise NotAllowed(gettext_noop("Owners are made with manage.py createstaff --owner."))
        target = self._target(user_id)
        user = target.user
        if not user.is_staff or user.is_suspended:
            raise NotAllowed(gettext_noop("Make the account staff first (and not suspended)."))
        if target.is_owner:
            return False

        def queue(pipe: Pipe, ts: int) -> None:
            pipe.zadd(keys.owners(), {str(user.id): ts})

        draft = AuditDraft(actor, "grant_owner", user.id, user.username, reason=reason)
        self.audit.run_audited([draft], queue, at=at)
        return True

    def revoke_owner(self, user_id: int, actor: User, reason: str = "", *, at=None) -> bool:
        """Make user_id an owner no more (staff still); False when not one. Command line
        only, as grant_owner."""
        if actor.id != SYSTEM_ACTOR.id:
            raise NotAllowed(gettext_noop("Owners are changed with manage.py createstaff."))
        target = self._target(user_id)
        if not target.is_owner:
            return False

        def queue(pipe: Pipe, ts: int) -> None:
            pipe.zrem(keys.owners(), user_id)

        draft = AuditDraft(actor, "revoke_owner", user_id, target.user.username, reason=reason)
        self.audit.run_audited([draft], queue, at=at)
        return True

    def grant_staff(self, user_id: int, actor: User, reason: str = "", *, at=None) -> bool:
        """Make user_id staff; False (and the index re-synced) when already staff. Owners
        only."""
        target = self._target(user_id, actor)
        check_staff_change(target, actor)
        user = target.user
        if user.is_suspended:
            raise NotAllowed(gettext_noop("Unsuspend the account before making it staff."))
        if user.domain:
            raise NotAllowed(gettext_noop("An account of another server cannot be staff here."))
        if user.is_staff:
            self.r.zadd(keys.staff_users(), {user.username: 0}, nx=True)
            return False

        def queue(pipe: Pipe, ts: int) -> None:
            pipe.hset(keys.user(user_id), "staff", "1")
            pipe.zadd(keys.staff_users(), {user.username: ts})

        draft = AuditDraft(actor, "grant_staff", user.id, user.username, reason=reason)
        self.audit.run_audited([draft], queue, at=at)
        return True

    def revoke_staff(self, user_id: int, actor: User, reason: str = "", *, at=None) -> bool:
        """Take staff away from user_id; False (and the index re-synced) when not staff.

        Owners only, and an owner's staff only from the command line, which takes the
        ownership with it (two log entries).
        """
        target = self._target(user_id, actor)
        check_staff_change(target, actor)
        user = target.user
        if target.is_owner and actor.id != SYSTEM_ACTOR.id:
            raise NotAllowed(OWNER_KEEPS)
        if not user.is_staff:
            self.r.zrem(keys.staff_users(), user.username)
            return False

        def queue(pipe: Pipe, ts: int) -> None:
            pipe.hdel(keys.user(user_id), "staff")
            pipe.zrem(keys.staff_users(), user.username)
            pipe.zrem(keys.owners(), user_id)

        drafts = [AuditDraft(actor, "revoke_staff", user.id, user.username, reason=reason)]
        if target.is_owner:
            owner = AuditDraft(actor, "revoke_owner", user.id, user.username, reason=reason)
            drafts.insert(0, owner)
        self.audit.run_audited(drafts, queue, at=at)
        return True

    def suspend(self, user_id: int, actor: User, reason: str, *, at=None) -> bool:
        """Suspend user_id and log them out everywhere; False when already suspended.

        Nothing of theirs is removed: every reader skips suspended authors, so unsuspending
        brings it all back.
        """
        target = self._target(user_id, actor)
        check_suspension(target, actor)
        user = target.user
        if user.is_suspended:
            self.r.zadd(keys.suspended_users(), {user.username: 0}, nx=True)
            return False

        def queue(pipe: Pipe, ts: int) -> None:
            self._queue_suspension(pipe, target, actor, reason, ts)

        draft = AuditDraft(actor, "suspend", user.id, user.username, reason=reason)
        self.audit.run_audited([draft], queue, at=at)
        return True

    def _queue_suspension(
        self, pipe: Pipe, target: Target, actor: User, reason: str, ts: int
    ) -> None:
        """Queue the writes of a suspension: the user hash first (the truth every reader
        checks), the secret rotation (logged out everywhere), the staff list's index."""
        user = target.user
        pipe.hset(
            keys.user(user.id),
            mapping={
                "status": STATUS_SUSPENDED,
                "suspended_reason": reason[:REASON_MAX],
                "suspended_at": ts,
                "suspended_by": actor.id,
            },
        )
        if not user.domain:  # a remote account never logs in here: no secret to rotate
            self.users.queue_secret_rotation(pipe, user.id, target.secret)
        pipe.zadd(keys.suspended_users(), {user.username: ts})
        queue_hiding(pipe)  # their posts leave every page

    def suspension_refusal(self, user_id: int, actor: User) -> str:
        """Return why actor may not suspend user_id ("" when they may), by the rules of
        suspend(); an account already suspended is refused too. One round trip; raise
        UserNotFound."""
        target = self._target(user_id, actor)
        try:
            check_suspension(target, actor)
        except NotAllowed as refusal:
            return str(refusal)
        if target.user.is_suspended:
            return already_suspended(target.user)
        return ""

    def suspend_reported_author(self, report_id: int, actor: User, reason: str, *, at=None) -> bool:
        """Suspend the author of a reported post, and close every open report on that post
        with the outcome "suspended"; return False when the report was already resolved.

        A moderator who suspends from a report has dealt with it: every post of a suspended
        author is hidden from every reader, so a report left open would ask the queue again
        about a post no one can see, and whoever came to it next would dismiss it, and the
        record would say "dismissed" where the answer was a suspension. So the post's
        reports are closed in the suspension's own pipeline, under one audit entry (a
        suspension naming the post and the report). The post itself is kept as it is, not
        deleted: unsuspending brings it back with the rest. The author's reports on other
        posts stay open: each is about a post of its own (delete it, or dismiss).

        The rules are suspend()'s: not yourself, not staff (an owner revokes staff first),
        and an account already suspended is refused (NotAllowed) with the report left open.
        Raise ReportNotFound, UserNotFound. Five round trips: the report; the author with
        the post's claims; the change with its log entry; the log indexes; the visibility
        version.
        """
        report = self.reports.get_report(report_id)
        if not report.is_open:
            return False
        reads = self.reads()
        self._queue_target(reads, report.author_id, actor)
        reads.hgetall("claims", keys.post_reports(report.post_id))
        got = reads.execute()
        target = self._target_from(report.author_id, actor, got)
        check_suspension(target, actor)
        if target.user.is_suspended:
            raise NotAllowed(already_suspended(target.user))
        claims = decode_hash(got.hash("claims"))
        user = target.user

        def queue(pipe: Pipe, ts: int) -> None:
            self._queue_suspension(pipe, target, actor, reason, ts)
            self.reports.queue_close_reports(
                pipe, report.post_id, claims, SUSPENDED, actor, ts, also=report.id
            )

        draft = AuditDraft(
            actor,
            "suspend",
            user.id,
            user.username,
            post_id=report.post_id,
            report_id=report.id,
            reason=reason,
        )
        self.audit.run_audited([draft], queue, at=at)
        self.reports.forget_open_count()
        return True

    def unsuspend(self, user_id: int, actor: User, reason: str = "", *, at=None) -> bool:
        """Lift a suspension; False (and the index re-synced) when not suspended."""
        user = self._target(user_id).user
        if not user.is_suspended:
            self.r.zrem(keys.suspended_users(), user.username)
            return False

        def queue(pipe: Pipe, ts: int) -> None:
            # domain_block: a server's block marks what it suspended (domains.py).
            fields = ("status", "suspended_reason", "suspended_at", "suspended_by", "domain_block")
            pipe.hdel(keys.user(user_id), *fields)
            pipe.zrem(keys.suspended_users(), user.username)
            queue_hiding(pipe)  # their posts come back

        draft = AuditDraft(actor, "unsuspend", user.id, user.username, reason=reason)
        self.audit.run_audited([draft], queue, at=at)
        return True

    def force_logout(self, user_id: int, actor: User, reason: str = "", *, at=None) -> None:
        """Rotate user_id's auth secret so every device is logged out."""
        target = self._target(user_id)
        user, old_secret = target.user, target.secret
        if user.id == actor.id:
            raise NotAllowed(gettext_noop("Use “Log out” to log yourself out."))

        def queue(pipe: Pipe, ts: int) -> None:
            self.users.queue_secret_rotation(pipe, user_id, old_secret)

        draft = AuditDraft(actor, "force_logout", user.id, user.username, reason=reason)
        self.audit.run_audited([draft], queue, at=at)

    def add_note(self, user_id: int, actor: User, text: str, *, at=None) -> None:
        """Add a staff note to user_id's account (the newest NOTES_CAP are kept)."""
        user = self._target(user_id).user
        text = text[:NOTE_MAX]

        def queue(pipe: Pipe, ts: int) -> None:
            note = {"text": text, "by": actor.id, "by_name": actor.username, "time": ts}
            pipe.lpush(keys.moderation_notes(user_id), json.dumps(note))
            pipe.ltrim(keys.moderation_notes(user_id), 0, NOTES_CAP - 1)

        draft = AuditDraft(actor, "add_note", user.id, user.username, reason=text)
        self.audit.run_audited([draft], queue, at=at)

    def remove_display_name(self, user_id: int, actor: User, reason: str) -> bool:
        """Remove the account's display name (logged); False when it has none."""
        return self._remove_part(user_id, actor, reason, "display_name")

    def remove_note(self, user_id: int, actor: User, reason: str) -> bool:
        """Remove the account's bio (logged); False when it has none."""
        return self._remove_part(user_id, actor, reason, "note")

    def remove_avatar(self, user_id: int, actor: User, reason: str) -> bool:
        """Remove the account's avatar and its files (logged); False when it has none."""
        return self._remove_part(user_id, actor, reason, "avatar")

    def remove_header(self, user_id: int, actor: User, reason: str) -> bool:
        """Remove the account's header image and its files (logged); False when none."""
        return self._remove_part(user_id, actor, reason, "header")

    def _remove_part(self, user_id: int, actor: User, reason: str, part: str) -> bool:
        user = self._target(user_id).user
        if not getattr(user, part):
            return False
        self.profiles.remove(actor, user, part, reason)
        return True

    def delete_posts(
        self, post_ids: Sequence[int], actor: User, reason: str, *, at=None
    ) -> list[int]:
        """Soft-delete posts (each logged, authors notified); return the ids deleted.

        Posts already deleted or missing are skipped. Open reports on a deleted post are
        closed as "deleted". Four round trips whatever the number of posts: the posts and
        their open reports, their authors, the changes, the audit indexes.
        """
        ids = list(dict.fromkeys(int(i) for i in post_ids))
        pipe = self._pipe()
        for post_id in ids:
            pipe.hmget(keys.post(post_id), ["user_id", "deleted", "body", "media"])
            pipe.hgetall(keys.post_reports(post_id))
        replies = pipe.execute() if ids else []
        found, pictures = [], {}
        for post_id, (author, deleted, body, items), claims in zip(
            ids, replies[0::2], replies[1::2]
        ):
            if (author_id := as_int(author)) is not None and s(deleted) != "1":
                found.append((post_id, author_id, s(body) or "", decode_hash(claims)))
                pictures[post_id] = decode_media(s(items))
        authors = self._users_by_ids(a for _, a, _, _ in found)
        found = [f for f in found if f[1] in authors]
        drafts = [
            AuditDraft(actor, "delete_post", a, authors[a].username, post_id=p, reason=reason)
            for p, a, _, _ in found
        ]

        def queue(pipe: Pipe, ts: int) -> None:
            for post_id, author_id, body, claims in found:
                self.posts.queue_soft_delete(pipe, post_id, author_id, body, actor, reason, ts)
                self.reports.queue_close_reports(pipe, post_id, claims, "deleted", actor, ts)

        if found:
            self.audit.run_audited(drafts, queue, at=at)
            self.reports.forget_open_count()
            # Their pictures go, files too (two round trips more when there are any).
            forget(self, [item.id for p, _, _, _ in found for item in pictures[p]])
        return [p for p, _, _, _ in found]
