"""Requests as this site's views see them: `request.user` is the repository's user.

django-stubs types `request.user` as contrib.auth's user model or its AnonymousUser, the
users AuthenticationMiddleware sets. Here RedisAuthMiddleware sets it, to the repository's
User or AnonymousUser (which quack like Django's, see social.repository.models); these
classes say so to the type checker, the way healthchecks' `hc/accounts/http.py` does. They
are annotations only: no request is ever built from them.
"""

from __future__ import annotations

from django.http import HttpRequest

from social.repository import AnonymousUser, User


class SiteHttpRequest(HttpRequest):
    """A request after RedisAuthMiddleware: a user or a visitor."""

    # The stubs' type is contrib.auth's user, which this site never sets: not a subtype.
    user: User | AnonymousUser  # type: ignore[assignment]
    # True while social.remembered renders a page to remember (its CSRF field is then a
    # slot); never set on most requests, so read it with getattr(request, "remembering").
    remembering: bool


class AuthenticatedHttpRequest(SiteHttpRequest):
    """A request from a logged-in user: what views behind LoginNextMixin see."""

    user: User
