"""Mail the site sends: the links that confirm an address and reset a password, and the
notices that say so to the address they concern. Sent while the person waits, through
Django's e-mail framework (EMAIL_* settings, a short EMAIL_TIMEOUT); a server that does not
answer or refuses raises MailUnavailable, which the views turn into "try again later"."""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext

log = logging.getLogger(__name__)


class MailUnavailable(Exception):
    """The mail server could not be reached or refused the message: nothing was sent."""


@dataclass(frozen=True)
class Mail:
    """One message: to whom, its subject and its text."""

    to: str
    subject: str
    body: str


def absolute(request: HttpRequest, name: str, *args: object) -> str:
    """Return the absolute URL of the view `name`: under settings.SITE_URL when set, else
    the request's own scheme and host (a Host header ALLOWED_HOSTS has checked)."""
    path = reverse(name, args=args)
    if settings.SITE_URL:
        return settings.SITE_URL + path
    return request.build_absolute_uri(path)


def send(mails: Sequence[Mail]) -> None:
    """Send every mail over one connection, or raise MailUnavailable."""
    messages = [EmailMessage(m.subject, m.body, None, [m.to]) for m in mails]
    try:
        with get_connection(timeout=settings.EMAIL_TIMEOUT) as connection:
            connection.send_messages(messages)
    except (OSError, smtplib.SMTPException) as error:  # refused, timed out, unreachable
        log.warning("mail not sent: %s", error)
        raise MailUnavailable(str(error)) from error


def confirmation(request: HttpRequest, username: str, email: str, token: str) -> Mail:
    """Return the mail that asks email to confirm it belongs to username."""
    link = absolute(request, "social:email_confirm", token)
    body = gettext(
        "Hello %(name)s,\n\n"
        "To use %(email)s for your Retwis account, open this link within 24 hours:\n\n"
        "%(link)s\n\n"
        "If you did not ask for this, ignore this mail: nothing changes."
    ) % {"name": username, "email": email, "link": link}
    return Mail(email, gettext("Confirm your e-mail address"), body)


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


def reset(request: HttpRequest, username: str, email: str, token: str) -> Mail:
    """Return the mail with a password reset link for username."""
    link = absolute(request, "social:password_reset", token)
    body = gettext(
        "Hello %(name)s,\n\n"
        "To choose a new password for your Retwis account, open this link within an hour:\n\n"
        "%(link)s\n\n"
        "It works once. If you did not ask for it, ignore this mail: your password stays "
        "as it is."
    ) % {"name": username, "link": link}
    return Mail(email, gettext("Reset your Retwis password"), body)
