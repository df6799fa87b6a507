"""Mail the site sends: the links that confirm an address and reset a password, and the
notices that say so to the address they concern.

Never sent while a person waits: a page queues a job on the worker tier (queue "mail",
the queue_* functions here), and the worker writes and sends it
(social/work_handlers/mail.py), so a page answers alike, in the same time, whether or not
an address has an account and whether or not the mail server is up. Links are built from
settings.SITE_URL, never from a request. A server that does not answer or refuses raises
MailUnavailable, which the worker retries with the mail queue's backoff.
"""

from __future__ import annotations

import logging
import secrets
import smtplib
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.urls import reverse
from django.utils.translation import get_language, gettext

from social import work

log = logging.getLogger(__name__)

QUEUE = "mail"


class MailUnavailable(Exception):
    """The mail server could not be reached or refused the message: nothing was sent."""


@dataclass(frozen=True)
class Mail:
    """One message: to whom, its subject and its text."""

    to: str
    subject: str
    body: str


def absolute(name: str, *args: object) -> str:
    """Return the absolute URL of the view `name` under settings.SITE_URL (required when
    DEBUG is off): never a request's Host, whose port or name a client chooses."""
    return settings.SITE_URL + reverse(name, args=args)


def send(mails: Sequence[Mail]) -> None:
    """Send every mail over one connection, or raise MailUnavailable."""
    if not mails:
        return
    messages = [EmailMessage(m.subject, m.body, None, [m.to]) for m in mails]
    try:
        with get_connection(timeout=settings.EMAIL_TIMEOUT) as connection:
            connection.send_messages(messages)
    except (OSError, smtplib.SMTPException) as error:  # refused, timed out, unreachable
        log.warning("mail not sent: %s", error)
        raise MailUnavailable(str(error)) from error


# --- Queued from the pages ------------------------------------------------------------------
# Each job's payload: what the worker needs to write the mail then (no request, no link: a
# link is made just before it is mailed), the language to write it in, and `mail`, the id
# that makes it go out once in effect. Each raises work.QueueFull when the queue is full.


def _queue(kind: str, **payload: str) -> str:
    """Queue one mail job of kind; return its job id."""
    mail_id = secrets.token_hex(16)
    language = get_language() or settings.LANGUAGE_CODE
    return work.enqueue(QUEUE, kind, {**payload, "lang": language, "mail": mail_id})


def queue_confirmation(user_id: int, email: str) -> str:
    """Queue the link that confirms email, pending for user_id, or, when another account
    holds email, a word to that address that someone tried to use it."""
    return _queue("confirm_address", user=str(user_id), email=email)


def queue_change_notice(username: str, old: str, new: str) -> str:
    """Queue the notice to the old address that another is asked for."""
    return _queue("address_change_notice", name=username, old=old, new=new)


def queue_removal_notice(username: str, old: str) -> str:
    """Queue the notice to an address that it no longer belongs to the account."""
    return _queue("address_removed_notice", name=username, old=old)


def queue_reset(*, email: str = "", user_id: int | None = None) -> str:
    """Queue a password reset link: for the account whose confirmed address is email (none,
    or suspended: nothing is sent), or, from staff, for user_id's confirmed address."""
    if user_id is not None:
        return _queue("password_reset", user=str(user_id))
    return _queue("password_reset", email=email)


# --- Written by the worker --------------------------------------------------------------------


def confirmation(username: str, email: str, token: str) -> Mail:
    """Return the mail that asks email to confirm it belongs to username."""
    link = absolute("social:email_confirm", token)
    body = gettext(
        "Hello %(name)s,\n\n"
        "To use %(email)s for your Retwis account, open this link within 24 hours:\n\n"
        "%(link)s\n\n"
        "If you did not ask for this, ignore this mail: nothing changes."
    ) % {"name": username, "email": email, "link": link}
    return Mail(email, gettext("Confirm your e-mail address"), body)


def taken_notice(email: str) -> Mail:
    """Return the word to an address another account asked to use, which its own account
    holds (the asker was answered as for a free address, and learns nothing)."""
    body = gettext(
        "Hello,\n\n"
        "Someone asked to use %(email)s for another Retwis account. It stays with yours: "
        "nothing changes.\n\n"
        "If that was you, use another address for the other account."
    ) % {"email": email}
    return Mail(email, gettext("Someone tried to use your e-mail address"), body)


def change_notice(username: str, old: str, new: str) -> Mail:
    """Return the notice to the old address that another is asked for."""
    body = gettext(
        "Hello %(name)s,\n\n"
        "Someone logged in to your Retwis account asked to use %(new)s instead of this "
        "address. It changes once that address confirms it.\n\n"
        "If that was not you, change your password now."
    ) % {"name": username, "new": new}
    return Mail(old, gettext("Your e-mail address is being changed"), body)


def removal_notice(username: str, old: str) -> Mail:
    """Return the notice to an address that it no longer belongs to the account."""
    body = gettext(
        "Hello %(name)s,\n\n"
        "This address was removed from your Retwis account: password reset links can no "
        "longer be sent to it.\n\n"
        "If that was not you, change your password now."
    ) % {"name": username}
    return Mail(old, gettext("Your e-mail address was removed"), body)


def reset(username: str, email: str, token: str) -> Mail:
    """Return the mail with a password reset link for username."""
    link = absolute("social:password_reset", token)
    body = gettext(
        "Hello %(name)s,\n\n"
        "To choose a new password for your Retwis account, open this link within an hour:\n\n"
        "%(link)s\n\n"
        "It works once. If you did not ask for it, ignore this mail: your password stays "
        "as it is."
    ) % {"name": username, "link": link}
    return Mail(email, gettext("Reset your Retwis password"), body)
