"""Template context shared by every page."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django.urls import get_script_prefix
from django.utils.functional import empty
from django.utils.translation import get_language
from markupsafe import Markup

from social.csrf import get_token
from social.remembered import csrf_field
from social.repository import AnonymousUser
from social.templating import links


def script_prefix(request: HttpRequest) -> dict:
    """Tell the templates' url() the script prefix of this request, and give them the
    active language once (`LANGUAGE_CODE`: the templates' gettext reads it from the page's
    context instead of asking Django for every message)."""
    links.set_script_prefix(get_script_prefix())
    return {"LANGUAGE_CODE": get_language() or settings.LANGUAGE_CODE}


class CsrfInput:
    """The hidden CSRF field, made once per page however many forms it has.

    Django's Jinja2 backend masks a new token for every `{{ csrf_input }}` on a page (the
    logged-in header has a log-out form, feeds a composer or a follow button): 32 random
    characters each. One masked token per response is what BREACH protection needs, and it
    is masked by social.csrf.get_token (Django's, one urandom read instead of 64).
    """

    __slots__ = ("request", "html")

    def __init__(self, request: HttpRequest) -> None:
        self.request = request
        self.html: Markup | None = None

    def __html__(self) -> Markup:
        if self.html is None:
            slot = csrf_field(self.request)  # a remembered page: its token goes in later
            if slot is not None:
                return slot
            self.html = Markup(
                '<input type="hidden" name="csrfmiddlewaretoken" value="{}">'
            ).format(get_token(self.request))
        return self.html

    __str__ = __html__


def csrf(request: HttpRequest) -> dict:
    """Give the templates one CSRF field for the whole page (see CsrfInput)."""
    return {"csrf_input": CsrfInput(request)}


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
