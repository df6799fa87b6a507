"""Template context shared by every page."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import get_script_prefix
from django.utils.functional import empty

from social import templating
from social.repository import AnonymousUser


def script_prefix(request: HttpRequest) -> dict:
    """Tell the templates' url() the script prefix of this request (nothing in the context)."""
    templating.set_script_prefix(get_script_prefix())
    return {}


def user(request: HttpRequest) -> dict:
    """Expose request.user as `user`, resolved: every page's header shows who is logged in.

    The middleware's lazy object is unwrapped once here so the template's many `user.id` and
    `user.is_authenticated` look-ups (one per post in a feed) are plain attribute reads.
    """
    found = getattr(request, "user", None)
    if found is None:
        return {"user": AnonymousUser()}
    wrapped = getattr(found, "_wrapped", None)
    if wrapped is not None:  # a SimpleLazyObject from RedisAuthMiddleware
        if wrapped is empty:
            found._setup()
        found = found._wrapped
    return {"user": found}
