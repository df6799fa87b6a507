"""The mail queue's handlers: write each mail the pages queued (social/mail.py) and send it.

Each job sends once in effect: its `mail` id is claimed in Redis before anything is
written (EmailStore.claim_mail) and marked sent after the server took the mail. Delivery is
at least once all the same: a worker that dies after the server took the mail and before
the mark (or whose mark's round trip fails) leaves the claim to expire
(keys.MAIL_SENDING_TTL); the job, taken over, then sends it again with a fresh link (the
first one works too, until one is used or it expires). A mail server that is down or
refuses is a work.Retry (the mail queue's backoff, about 12 hours of tries), and the links
made for the mail that did not go out are dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.utils import translation

from social import mail, work
from social.mail import Mail
from social.repository import EmailTaken, Repository, get_repository
from social.repository.accounts.emails import Link


@dataclass(frozen=True)
class Outgoing:
    """What one job sends: its mails, and the links made for them."""

    mails: tuple[Mail, ...] = ()
    links: tuple[Link, ...] = ()


Writer = Callable[[Repository, dict[str, str]], Outgoing]


def deliver(payload: dict[str, str], write: Writer) -> None:
    """Write payload's mail with write (in the language it was asked in) and send it, once
    in effect; raise work.Retry while the mail server fails or another worker sends it."""
    repo = get_repository()
    mail_id = payload.get("mail", "")
    if not mail_id:
        raise work.Permanent("a mail job without its id")
    claim = repo.emails.claim_mail(mail_id)
    if claim == "sent":
        return
    if claim == "sending":
        raise work.Retry("another worker is sending it")
    outgoing = Outgoing()
    try:
        with translation.override(payload.get("lang") or settings.LANGUAGE_CODE):
            outgoing = write(repo, payload)
        mail.send(outgoing.mails)
    except BaseException as error:
        repo.emails.drop_links(outgoing.links)
        repo.emails.unclaim_mail(mail_id)
        if isinstance(error, mail.MailUnavailable):
            raise work.Retry(str(error)) from error
        raise
    repo.emails.mail_done(mail_id)


def handles(kind: str) -> Callable[[Writer], Writer]:
    """Register a writer of kind's mail as the mail queue's handler of kind."""

    def register(write: Writer) -> Writer:
        def run(payload: dict[str, str]) -> None:
            deliver(payload, write)

        run.__name__ = run.__qualname__ = write.__name__
        work.handler(mail.QUEUE, kind)(run)
        return write

    return register


@handles("confirm_address")
def confirm_address(repo: Repository, payload: dict[str, str]) -> Outgoing:
    """The confirmation link for the address the account asked for; the word to its owner
    when another account holds it; nothing when a newer request replaced it."""
    email = payload["email"]
    try:
        link = repo.emails.make_confirmation(int(payload["user"]), email)
    except EmailTaken:
        return Outgoing((mail.taken_notice(email),))
    if link is None:
        return Outgoing()
    return Outgoing((mail.confirmation(link.user.username, email, link.token),), (link,))


@handles("address_change_notice")
def address_change_notice(repo: Repository, payload: dict[str, str]) -> Outgoing:
    """The old address told that another is asked for."""
    return Outgoing((mail.change_notice(payload["name"], payload["old"], payload["new"]),))


@handles("address_removed_notice")
def address_removed_notice(repo: Repository, payload: dict[str, str]) -> Outgoing:
    """The address told that it was removed from the account."""
    return Outgoing((mail.removal_notice(payload["name"], payload["old"]),))


@handles("password_reset")
def password_reset(repo: Repository, payload: dict[str, str]) -> Outgoing:
    """A reset link to the account's confirmed address: the account whose address payload
    names (none, or suspended: nothing), or, from staff, the account payload names."""
    if "user" in payload:
        link = repo.emails.make_reset(int(payload["user"]))
    else:
        user = repo.emails.account_for(payload["email"])
        link = repo.emails.make_reset(user.id) if user and not user.is_suspended else None
    if link is None:
        return Outgoing()
    return Outgoing((mail.reset(link.user.username, link.email, link.token),), (link,))
