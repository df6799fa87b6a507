"""Pages that are the same for every visitor, answered from memory while nothing they show
has changed.

The welcome page and the timeline, for a visitor (no user, no flash message), show only
what the page's own read returned: the posts, their counts, the newest sign-ups, the
trending tags. So the rendered page is remembered under a fingerprint of exactly that (and
of the language, host, path and each card's shown age, which changes with the clock), with
a slot where each request's own masked CSRF token goes (the forms of the welcome page and
the footer): the read still happens on every request (one round trip), the rendering only
when the fingerprint is new. Bounded (RETWIS_PAGE_CACHE_SIZE), oldest first out.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Hashable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.translation import get_language
from markupsafe import Markup

from social.csrf import get_token
from social.http import SiteHttpRequest
from social.repository.cache import BoundedCache
from social.repository.models import Page, Post
from social.templating.filters import age

# Where a remembered page's CSRF token goes: random per process, so no text can forge it.
CSRF_SLOT = f"csrf-slot-{secrets.token_hex(16)}"
# Set in the environ by social/front.py when it would remember the page whole, and by
# render_to_response to offer it: (the body with the slot, when it stops being right).
WANTED = "retwis.front.wanted"
OFFERED = "retwis.front.page"
PAGES: BoundedCache[tuple, tuple[bytes, str]] = BoundedCache(settings.RETWIS_PAGE_CACHE_SIZE)


def csrf_field(request: HttpRequest) -> Markup | None:
    """The CSRF field while a remembered page renders (the slot), else None."""
    if getattr(request, "remembering", False):
        return Markup('<input type="hidden" name="csrfmiddlewaretoken" value="%s">') % CSRF_SLOT
    return None


def posts_fingerprint(page: Page[Post], now: float) -> tuple:
    """What a page of posts shows: each post (frozen: its text, flags, author), its counts
    and its shown age."""
    return tuple((post, page.counts.get(post.id), age(post.created, now)) for post in page.items)


class RememberedPageMixin:
    """A TemplateView whose page for a visitor is remembered (see the module docstring).
    Subclasses say what the page shows in remembered_fingerprint(context), or None."""

    request: SiteHttpRequest

    def remembered_fingerprint(self, context: dict) -> Hashable | None:
        raise NotImplementedError

    def remembered_until(self, context: dict, now: float) -> float | None:
        """When the page stops being right by the clock alone (a card's shown age), for
        social/front.py to answer it until then; None: not offered."""
        return None

    def render_to_response(self, context: dict, **response_kwargs) -> HttpResponse:
        request = self.request
        if (
            request.user.is_authenticated
            or "messages" in request.COOKIES  # a flash message to show once
            or (shown := self.remembered_fingerprint(context)) is None
        ):
            return super().render_to_response(context, **response_kwargs)  # type: ignore[misc]
        now = time.time()
        key = (request.get_host(), request.get_full_path(), get_language(), shown)
        found = PAGES.get(key)
        if found is None:
            request.remembering = True
            try:
                response = super().render_to_response(context, **response_kwargs)  # type: ignore[misc]
                response.render()
            finally:
                request.remembering = False
            if response.status_code != 200:
                return response
            found = (response.content, response["Content-Type"])
            PAGES.put(key, found)
        body, content_type = found
        if request.META.get(WANTED) and (until := self.remembered_until(context, now)):
            request.META[OFFERED] = (body, until)
        token = get_token(request).encode()  # masked afresh; sets the cookie when new
        return HttpResponse(body.replace(CSRF_SLOT.encode(), token), content_type=content_type)
