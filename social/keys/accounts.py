"""Accounts: usernames and their indexes, deleted accounts, display-name search, e-mail
addresses and the links mailed out (kept, like OAuth's secrets, as the SHA-256 of their text)."""

from __future__ import annotations

import re

from ._shared import _checked_digest


def usernames_lower() -> str:
    """Hash: lower-cased username -> user id; HSETNX here claims a name ignoring case."""
    return "users_lower"


def username_index() -> str:
    """Sorted set, all scores 0: lower-cased usernames, for ZRANGEBYLEX prefix search."""
    return "users_lex"


def deleted_users() -> str:
    """Sorted set: ids of accounts their owners deleted, by when (purged after the grace)."""
    return "deleted_users"


DELETED_ACCOUNT_GRACE_DAYS = 30


def usernames_lower_checked() -> str:
    """String: the highest user id whose name sign-up has claimed in users_lower."""
    return "users_lower_checked"


def name_trigram(trigram: str) -> str:
    """Sorted set, all scores 0: "<lower-cased name> <user id>" of every account whose
    name holds `trigram` (three of a-z, 0-9, _): the "contains" search (directory.py)."""
    allowed = "abcdefghijklmnopqrstuvwxyz0123456789_"
    if len(trigram) != 3 or any(c not in allowed for c in trigram):
        raise ValueError(f"bad trigram {trigram!r}")
    return f"{{names}}:tri:{trigram}"


def name_trigrams_checked() -> str:
    """String: the highest user id whose name is in the name_trigram sets."""
    return "{names}:checked"


def name_words() -> str:
    """Sorted set, all scores 0: "<word> <user id>" for every word of every display name,
    folded (social/search_words.py): people found by the start of any word of their name."""
    return "{names}:words"


def name_words_of() -> str:
    """Hash: user id -> the words name_words holds for it (space-separated): what to take
    out when the name changes, and the other words a search of several checks."""
    return "{names}:words_of"


# Links mailed out are secrets: kept, like OAuth's, as the SHA-256 of their text.


def emails() -> str:
    """Hash: confirmed address (lower-cased) -> user id; user:<id>.email is the truth."""
    return "emails"


def email_confirmation(digest: str) -> str:
    """Hash: an address's confirmation link (by the SHA-256 of its token); used once."""
    return f"email_confirm:{_checked_digest(digest)}"


EMAIL_CONFIRMATION_TTL = 24 * 60 * 60


def password_reset(digest: str) -> str:
    """Hash: a password reset link (by the SHA-256 of its token); used once."""
    return f"password_reset:{_checked_digest(digest)}"


PASSWORD_RESET_TTL = 60 * 60


MAIL_ID_RE = r"[0-9a-f]{32}"


def mail_sent(mail_id: str) -> str:
    """String: `sending` while a worker sends one queued mail (social/work_handlers/mail.py),
    then `sent`: a mail job run twice sends once."""
    if not re.fullmatch(MAIL_ID_RE, mail_id):
        raise ValueError(f"not a mail id: {mail_id!r}")
    return f"mail_sent:{mail_id}"


MAIL_SENDING_TTL = 5 * 60  # a worker that died sending: its mail is tried again after this


MAIL_SENT_TTL = 3 * 24 * 60 * 60  # longer than the mail queue's retries (about 12 hours)
