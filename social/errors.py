"""Error pages in the site's look.

404 and 403 render base.html, which may show the logged-in user: if Redis is down while a
404 is being rendered, fall back to the 503 page. 500 never touches Redis.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from social.middleware import unavailable_response
from social.redis_client import UNAVAILABLE
from social.repository import AnonymousUser


def _render(request: HttpRequest, template: str, status: int, context: dict) -> HttpResponse:
    try:
        html = render_to_string(template, context, request=request)
    except UNAVAILABLE:
        return unavailable_response(request)
    return HttpResponse(html, status=status)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _render(request, "404.html", 404, {})


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _render(request, "403.html", 403, {})


def server_error(request: HttpRequest) -> HttpResponse:
    html = render_to_string("500.html", {"user": AnonymousUser(), "request": request})
    return HttpResponse(html, status=500)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """Explain a refused form (stale page, cookies off) in the site's look."""
    return _render(request, "403_csrf.html", 403, {"reason": reason})
