"""Who is asking and how often: password checks, the `auth` cookie, the client's address and
the rate limits each action counts against."""

from __future__ import annotations

import hashlib
import ipaddress
import secrets

from django.conf import settings
from django.contrib.auth.hashers import check_password, identify_hasher, make_password
from django.http import HttpRequest, HttpResponse

from social.repository import Repository, User
from social.repository.moderation.limits import Check, Limit


def authenticate(repo: Repository, username: str, password: str) -> User | None:
    """Return the user if username and password match, else None.

    A `password` field that is no Django hash was written by the reference Retwis in plain
    text: it is compared in constant time and, on success, replaced by a hash. Unknown names
    still pay for one hash so timing does not tell which part was wrong.
    """
    creds = repo.users.get_credentials(username)
    if creds is None:
        make_password(password)
        return None
    user, stored = creds.user, creds.password
    try:
        identify_hasher(stored)
    except ValueError:
        if stored and secrets.compare_digest(stored.encode(), password.encode()):
            repo.users.set_password_hash(user.id, make_password(password))
            return user
        return None

    def upgrade(raw: str) -> None:
        repo.users.set_password_hash(user.id, make_password(raw))

    try:
        return user if check_password(password, stored, setter=upgrade) else None
    except ValueError:  # looks like a hash ("md5$...") but is malformed: no login with it
        return None


def client_ip(request: HttpRequest) -> str:
    """Return the client's address: REMOTE_ADDR, or with settings.TRUSTED_PROXY_HEADER set,
    the last address in that header (the one the nearest proxy wrote; earlier entries may be
    the client's own inventions). Without the header, or with junk in it, REMOTE_ADDR."""
    header = settings.TRUSTED_PROXY_HEADER
    if header:
        forwarded = request.META.get(header, "").rsplit(",", 1)[-1].strip()
        try:
            return str(ipaddress.ip_address(forwarded))
        except ValueError:
            pass
    return request.META.get("REMOTE_ADDR", "")[:64]


def address_subject(ip: str) -> str:
    """Return what an address is counted under: itself, or its /64 for IPv6 (one machine
    usually holds a whole /64, so counting single IPv6 addresses would count nothing)."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip[:64] or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def set_auth_cookie(response: HttpResponse, secret: str) -> None:
    """Set the long-lived `auth` cookie: HttpOnly, SameSite=Lax, Secure on HTTPS."""
    response.set_cookie(
        settings.AUTH_COOKIE_NAME,
        secret,
        max_age=settings.AUTH_COOKIE_AGE,
        httponly=True,
        samesite="Lax",
        secure=settings.SECURE_COOKIES,
    )


def clear_auth_cookie(response: HttpResponse) -> None:
    """Remove the `auth` cookie."""
    response.delete_cookie(settings.AUTH_COOKIE_NAME, samesite="Lax")


def limit(scope: str, setting: str) -> Limit:
    """Return the Limit named scope, sized by the (count, window) of settings.<setting>."""
    attempts, window = getattr(settings, setting)
    return Limit(scope, attempts, window)


# Each policy: its scope (a part of keys.rate_limit's key), its setting, its subject.


def login_limits(ip: str, username: str) -> list[Check]:
    """Return what a password check (a login, or a settings page asking for the current
    password) counts against, in this order: every attempt from its address, right or wrong
    (each costs a password hash); failures from its address; failures of its (username,
    address). Never the username alone: failures from elsewhere must not lock the owner out.
    All are counted before the password is checked; login_succeeded() takes back what a
    right password does not owe.
    """
    address = address_subject(ip)
    return [
        (limit("login_attempt_ip", "RETWIS_LIMIT_LOGIN_ATTEMPTS"), address),
        (limit("login_ip", "RETWIS_LIMIT_LOGIN_ADDRESS"), address),
        (limit("login_user_ip", "RETWIS_LIMIT_LOGIN_NAME"), f"{address}|{username.lower()[:20]}"),
    ]


def login_succeeded(repo: Repository, checks: list[Check]) -> None:
    """Undo the failure counts of a password check that succeeded (checks: login_limits'):
    one failure given back to its address, its (username, address)'s forgotten. The attempt
    itself stays counted."""
    _attempt, address, name = checks
    repo.limits.give_back([address], forget=[name])


def signup_limits(ip: str) -> list[Check]:
    """Return what a sign-up counts against: its address."""
    return [(limit("signup_ip", "RETWIS_LIMIT_SIGNUP"), address_subject(ip))]


def app_limits(ip: str) -> list[Check]:
    """Return what registering a client API app counts against: its address."""
    return [(limit("app_ip", "RETWIS_LIMIT_APPS"), address_subject(ip))]


def post_limits(user_id: int) -> list[Check]:
    """Return what publishing a post counts against: its author."""
    return [(limit("post_user", "RETWIS_LIMIT_POSTS"), str(int(user_id)))]


def media_limits(user_id: int) -> list[Check]:
    """Return what uploading a post's picture counts against: its owner."""
    return [(limit("media_user", "RETWIS_LIMIT_MEDIA"), str(int(user_id)))]


def follow_limits(user_id: int) -> list[Check]:
    """Return what a follow or an unfollow counts against: the user making it."""
    return [(limit("follow_user", "RETWIS_LIMIT_FOLLOWS"), str(int(user_id)))]


def repost_limits(user_id: int) -> list[Check]:
    """Return what a repost or its undoing counts against: the user making it."""
    return [(limit("repost_user", "RETWIS_LIMIT_REPOSTS"), str(int(user_id)))]


def like_limits(user_id: int) -> list[Check]:
    """Return what a like or an unlike counts against: the user making it."""
    return [(limit("like_user", "RETWIS_LIMIT_LIKES"), str(int(user_id)))]


def relation_limits(user_id: int) -> list[Check]:
    """Return what a block, unblock, mute or unmute counts against: the user making it."""
    return [(limit("relation_user", "RETWIS_LIMIT_RELATIONS"), str(int(user_id)))]


def resolve_limits(user_id: int) -> list[Check]:
    """Return what a search asking other servers for an account counts against: the user
    searching (each asks a server for up to five documents: social/federation/resolve.py)."""
    return [(limit("resolve_user", "RETWIS_LIMIT_RESOLVES"), str(int(user_id)))]


def report_limits(user_id: int) -> list[Check]:
    """Return what filing a report counts against: the reporter."""
    return [(limit("report_user", "RETWIS_LIMIT_REPORTS"), str(int(user_id)))]


def reset_limits(ip: str, email: str) -> list[Check]:
    """Return what asking for a password reset link counts against: its address, and the
    e-mail address asked about (whether or not an account has it: the answer is the same),
    counted by its digest (an address is longer than a key's subject may be)."""
    mailbox = hashlib.sha256(email.strip().lower().encode()).hexdigest()[:40]
    return [
        (limit("reset_ip", "RETWIS_LIMIT_RESET_ADDRESS"), address_subject(ip)),
        (limit("reset_email", "RETWIS_LIMIT_RESET_EMAIL"), mailbox),
    ]


def profile_limits(user_id: int) -> list[Check]:
    """Return what saving a profile counts against (pages and client API): the user."""
    return [(limit("profile_user", "RETWIS_LIMIT_PROFILE"), str(int(user_id)))]


def email_limits(user_id: int) -> list[Check]:
    """Return what asking to confirm a new e-mail address counts against: the user."""
    return [(limit("email_user", "RETWIS_LIMIT_EMAIL"), str(int(user_id)))]
