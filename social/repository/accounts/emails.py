"""E-mail addresses and the links mailed to them: confirming an address, resetting a password.

An account's address counts once confirmed: user:<id>.email (the truth) and its claim in
`emails` (one address, one account). Asking for a new address notes it in `email_pending`
(the page, at once); the mail worker then stores a confirmation link for it, unless another
account holds it or a newer request replaced it (social/work_handlers/mail.py). Following
the link claims the address (HSETNX) before the user hash is written, then lets the old
claim go. On a cluster these keys live on different nodes:
a crash between the claim and the user hash leaves a claim whose account holds another
address, which every lookup treats as stale (and the next confirmation of it takes over).

Links are random tokens stored as their SHA-256 (keys.email_confirmation,
keys.password_reset), each used once (HGETALL and DEL in one MULTI on its one key), made by
the mail worker just before it mails them: a token is never in Redis in clear, not even in
a queued job. A reset link also holds a stamp of the password field it was made under: any
change of password, its own use included, kills every reset link made before.

Each queued mail has an id whose keys.mail_sent marker makes it go out once in effect
(claim_mail, mail_done, unclaim_mail).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Unpack

from social import keys

from ..base import (
    STATUS_DELETED,
    Client,
    Pipe,
    RepositoryBase,
    StoreSettings,
    as_int,
    decode_hash,
    now,
    s,
    user_from_hash,
)
from ..clients.oauth import digest
from ..errors import RepositoryError, UserNotFound
from ..models import User
from ..moderation.audit import AuditDraft, AuditStore

EMAIL_MAX = 254  # RFC 5321's longest path; forms enforce it, this guards other callers
TOKEN_MAX = 128  # longest token text looked up (ours are 43 characters)


class EmailTaken(RepositoryError):
    """The address is confirmed by another account."""


@dataclass(frozen=True)
class EmailState:
    """An account's address: the confirmed one and the one waiting for its link."""

    email: str = ""
    pending: str = ""
    confirmed_at: int | None = None


@dataclass(frozen=True)
class Link:
    """What a mailed link stands for: whose account, which address, and its token."""

    user: User
    email: str
    token: str


def new_token() -> str:
    """Return a fresh link token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def claim_of(email: str) -> str:
    """Return the field an address is claimed under in `emails`: the address lower-cased
    (two spellings of one mailbox are one address)."""
    return email.strip().lower()[:EMAIL_MAX]


def password_stamp(password_field: str) -> str:
    """Return what a reset link remembers of the password field it was made under."""
    return hashlib.sha256(password_field.encode()).hexdigest()[:32]


def holds(h: Mapping[str, str | None], email: str) -> bool:
    """Whether a decoded user hash belongs to a live account whose confirmed address is
    email (ignoring case): a claim pointing at it is no stale one."""
    return (
        bool(h.get("username"))
        and h.get("status") != STATUS_DELETED
        and claim_of(h.get("email") or "") == claim_of(email)
    )


class EmailStore(RepositoryBase):
    """Addresses, confirmation links and password reset links."""

    def __init__(
        self, client: Client, *, audit: AuditStore, **config: Unpack[StoreSettings]
    ) -> None:
        super().__init__(client, **config)
        self.audit = audit

    def state(self, user_id: int) -> EmailState:
        """Return user_id's addresses (one round trip)."""
        got = self.r.hmget(keys.user(user_id), ["email", "email_pending", "email_at"])
        email, pending, at = (s(v) for v in got)
        return EmailState(email=email or "", pending=pending or "", confirmed_at=as_int(at))

    def account_for(self, email: str) -> User | None:
        """Return the live account whose confirmed address is email (ignoring case), or
        None (two round trips)."""
        user_id = as_int(self.r.hget(keys.emails(), claim_of(email)))
        if user_id is None:
            return None
        h = decode_hash(self.r.hgetall(keys.user(user_id)))
        return user_from_hash(user_id, h) if holds(h, email) else None

    def _holder(self, email: str) -> int | None:
        """Return the id of the account that holds email confirmed, or None."""
        user = self.account_for(email)
        return None if user is None else user.id

    # --- Confirming an address ----------------------------------------------------------

    def note_pending(self, user_id: int, email: str) -> str:
        """Note email as the address user_id asked for (whether or not another account
        holds it: the page answers alike); return it as stored. One round trip."""
        email = email.strip()[:EMAIL_MAX]
        self.r.hset(keys.user(user_id), "email_pending", email)
        return email

    def drop_pending(self, user_id: int) -> None:
        """Forget the address user_id asked for (its mail could not be queued)."""
        self.r.hdel(keys.user(user_id), "email_pending")

    def make_confirmation(self, user_id: int, email: str, *, at: int | None = None) -> Link | None:
        """Make a link that confirms email for user_id and return it, or None when email is
        no longer the account's pending address (replaced by a newer request, removed, the
        account gone). Raise EmailTaken when another account holds email confirmed.
        """
        email = email.strip()[:EMAIL_MAX]
        h = decode_hash(self.r.hgetall(keys.user(user_id)))
        user = user_from_hash(user_id, h)
        if user is None or user.is_deleted or h.get("email_pending") != email:
            return None
        holder = self._holder(email)
        if holder is not None and holder != user_id:
            raise EmailTaken(email)
        token = new_token()
        key = keys.email_confirmation(digest(token))
        created = now() if at is None else at
        pipe = self._pipe()
        pipe.hset(key, mapping={"user_id": user_id, "email": email, "created": created})
        pipe.expire(key, keys.EMAIL_CONFIRMATION_TTL)
        pipe.execute()
        return Link(user=user, email=email, token=token)

    def request_change(self, user_id: int, email: str, *, at: int | None = None) -> str:
        """Note email as pending and make its confirmation link at once; return the link's
        token (tests and fixtures; the site splits the two between page and worker). Raise
        EmailTaken when another account holds email confirmed."""
        link = self.make_confirmation(user_id, self.note_pending(user_id, email), at=at)
        if link is None:
            raise UserNotFound(user_id)
        return link.token

    def confirmation(self, token: str) -> Link | None:
        """Return what a confirmation link would confirm, or None when it is unknown,
        expired, superseded by a newer request or its account gone (nothing is written)."""
        if not token or len(token) > TOKEN_MAX:
            return None
        h = decode_hash(self.r.hgetall(keys.email_confirmation(digest(token))))
        return self._confirmable(h, token)

    def _confirmable(self, link: Mapping[str, str | None], token: str) -> Link | None:
        user_id, email = as_int(link.get("user_id")), link.get("email") or ""
        if user_id is None or not email:
            return None
        h = decode_hash(self.r.hgetall(keys.user(user_id)))
        user = user_from_hash(user_id, h)
        if user is None or user.is_deleted or h.get("email_pending") != email:
            return None
        return Link(user=user, email=email, token=token)

    def confirm(self, token: str, *, at: int | None = None) -> Link | None:
        """Use a confirmation link: make its address the account's confirmed one and return
        the link, or None (as confirmation() says). Raise EmailTaken when another account
        confirmed the address meanwhile (the link is used up all the same).

        Order: the link is taken, the address claimed (HSETNX; a stale claim is taken
        over), the user hash written, then the old address's claim let go.
        """
        if not token or len(token) > TOKEN_MAX:
            return None
        taken = self._take_hash(keys.email_confirmation(digest(token)))
        link = self._confirmable(taken, token) if taken is not None else None
        if link is None:
            return None
        user_id, claim = link.user.id, claim_of(link.email)
        if not self.r.hsetnx(keys.emails(), claim, user_id):
            holder = self._holder(link.email)
            if holder is not None and holder != user_id:
                self.r.hdel(keys.user(user_id), "email_pending")  # its link is gone
                raise EmailTaken(link.email)
            self.r.hset(keys.emails(), claim, user_id)  # stale, or ours already
        old = s(self.r.hget(keys.user(user_id), "email")) or ""
        pipe = self._pipe()
        pipe.hset(
            keys.user(user_id),
            mapping={"email": link.email, "email_at": now() if at is None else at},
        )
        pipe.hdel(keys.user(user_id), "email_pending")
        pipe.execute()
        if old and claim_of(old) != claim:
            self.release(user_id, old)
        return link

    def release(self, user_id: int, email: str) -> None:
        """Let go of the claim on email when it is user_id's (another account's stays)."""
        if as_int(self.r.hget(keys.emails(), claim_of(email))) == user_id:
            self.r.hdel(keys.emails(), claim_of(email))

    def remove(self, user_id: int) -> str:
        """Remove user_id's address (confirmed and pending); return the confirmed one that
        was removed, or ""."""
        old = s(self.r.hget(keys.user(user_id), "email")) or ""
        self.r.hdel(keys.user(user_id), "email", "email_at", "email_pending")
        if old:
            self.release(user_id, old)
        return old

    def queue_forget(self, pipe: Pipe, user_id: int, h: Mapping[str, str | None]) -> None:
        """Queue removing the address of a deleted account (h: its decoded user hash) and
        its claim. An account holds its claim (user:<id>.email says so), so no check."""
        email = h.get("email") or ""
        if email:
            pipe.hdel(keys.emails(), claim_of(email))
        pipe.hdel(keys.user(user_id), "email", "email_at", "email_pending")

    # --- Resetting a password -----------------------------------------------------------

    def make_reset(self, user_id: int, *, at: int | None = None) -> Link | None:
        """Make a password reset link for user_id's confirmed address; return it, or None
        when the account is gone or has no confirmed address."""
        h = decode_hash(self.r.hgetall(keys.user(user_id)))
        user, email = user_from_hash(user_id, h), h.get("email") or ""
        if user is None or user.is_deleted or not email:
            return None
        token = new_token()
        key = keys.password_reset(digest(token))
        pipe = self._pipe()
        pipe.hset(
            key,
            mapping={
                "user_id": user_id,
                "stamp": password_stamp(h.get("password") or ""),
                "email": email,
                "created": now() if at is None else at,
            },
        )
        pipe.expire(key, keys.PASSWORD_RESET_TTL)
        pipe.execute()
        return Link(user=user, email=email, token=token)

    def staff_log_reset(
        self, user_id: int, actor: User, reason: str = "", *, at: int | None = None
    ) -> User:
        """Log in the audit log that staff send user_id a reset link (the mail worker makes
        and mails it: make_reset); return the account. Raise UserNotFound when there is no
        live account with a confirmed address."""
        h = decode_hash(self.r.hgetall(keys.user(user_id)))
        user = user_from_hash(user_id, h)
        if user is None or user.is_deleted or not h.get("email"):
            raise UserNotFound(user_id)
        draft = AuditDraft(actor, "send_reset", user.id, user.username, reason=reason)
        self.audit.run_audited([draft], lambda pipe, ts: None, at=at)
        return user

    def reset_link(self, token: str) -> Link | None:
        """Return the account a reset link may reset, or None when the link is unknown,
        expired, used, made before the password last changed, or its account deleted or
        without that address (nothing is written)."""
        if not token or len(token) > TOKEN_MAX:
            return None
        h = decode_hash(self.r.hgetall(keys.password_reset(digest(token))))
        return self._resettable(h, token)

    def _resettable(self, link: Mapping[str, str | None], token: str) -> Link | None:
        user_id = as_int(link.get("user_id"))
        if user_id is None:
            return None
        h = decode_hash(self.r.hgetall(keys.user(user_id)))
        user = user_from_hash(user_id, h)
        if (
            user is None
            or user.is_deleted
            or not secrets.compare_digest(
                password_stamp(h.get("password") or ""), link.get("stamp") or ""
            )
            or claim_of(h.get("email") or "") != claim_of(link.get("email") or "")
        ):
            return None
        return Link(user=user, email=h.get("email") or "", token=token)

    def take_reset(self, token: str) -> Link | None:
        """Use a reset link: delete it and return what reset_link() would (a link is used
        once, even by two submissions at the same moment)."""
        if not token or len(token) > TOKEN_MAX:
            return None
        taken = self._take_hash(keys.password_reset(digest(token)))
        return self._resettable(taken, token) if taken is not None else None

    # --- Queued mail, sent once in effect -------------------------------------------------

    def claim_mail(self, mail_id: str) -> str:
        """Claim a queued mail for sending; return "claimed" (send it, then mail_done or
        unclaim_mail), "sent" (it went out already: nothing to do) or "sending" (another
        worker is at it, or died at it less than keys.MAIL_SENDING_TTL ago)."""
        key = keys.mail_sent(mail_id)
        if self.r.set(key, "sending", nx=True, ex=keys.MAIL_SENDING_TTL):
            return "claimed"
        return "sent" if s(self.r.get(key)) == "sent" else "sending"

    def drop_links(self, links: Sequence[Link]) -> None:
        """Forget links made for a mail that did not go out (no one knows their tokens;
        dropped so a day of retries leaves none behind)."""
        if not links:
            return
        pipe = self._pipe()
        for link in links:
            pipe.delete(keys.email_confirmation(digest(link.token)))
            pipe.delete(keys.password_reset(digest(link.token)))
        pipe.execute()

    def mail_done(self, mail_id: str) -> None:
        """Note that a claimed mail went out (or had nothing to send)."""
        self.r.set(keys.mail_sent(mail_id), "sent", ex=keys.MAIL_SENT_TTL)

    def unclaim_mail(self, mail_id: str) -> None:
        """Give a claimed mail up (the server refused it): the next try may send it."""
        self.r.delete(keys.mail_sent(mail_id))
