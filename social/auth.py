"""Logging in and out: password checks and the `auth` cookie."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth.hashers import check_password, identify_hasher, make_password
from django.http import HttpRequest, HttpResponse

from social.repository import Repository, User
from social.repository.limits import LOGIN_PER_IP, LOGIN_PER_USER, SIGNUP_PER_IP, Check


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
    """Return the client address as the server saw it (no proxy headers are trusted)."""
    return request.META.get("REMOTE_ADDR", "")[:64]


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


def login_limits(ip: str, username: str) -> list[Check]:
    """Return what a login attempt counts against: its IP and the name it tried."""
    return [(LOGIN_PER_IP, ip or "unknown"), (LOGIN_PER_USER, login_subject(username))]


def login_subject(username: str) -> str:
    """Return the subject a login for username is counted under (its lower-cased name)."""
    return username.lower()[:64]


def signup_limits(ip: str) -> list[Check]:
    """Return what a sign-up counts against: its IP."""
    return [(SIGNUP_PER_IP, ip or "unknown")]
