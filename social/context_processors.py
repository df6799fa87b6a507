"""Template context shared by every page."""

from __future__ import annotations

from django.http import HttpRequest

from social.repository import AnonymousUser


def user(request: HttpRequest) -> dict:
    """Expose request.user (still lazy) as `user`."""
    return {"user": getattr(request, "user", AnonymousUser())}
