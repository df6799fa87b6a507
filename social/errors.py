"""Error pages in the site's look, and Mastodon's JSON error on the API's paths.

404 and 403 render base.html, which may show the logged-in user: if Redis is down while a
404 is being rendered, fall back to the 503 page. 500 never touches Redis.

On a path that answers JSON (social.api.base.is_api_path) every handler answers
`{"error": ...}` instead of a page: what the API's views do not catch themselves, Django's
own 400s (a bad Host, too many fields) and any 500 (logged by Django, as on the site).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.views import defaults

from social.api.base import error_response, is_api_path, refused_request
from social.middleware import unavailable_response
from social.redis_client import UNAVAILABLE
from social.repository import AnonymousUser


def _render(request: HttpRequest, template: str, status: int, context: dict) -> HttpResponse:
    try:
        html = render_to_string(template, context, request=request)
    except UNAVAILABLE:
        return unavailable_response(request)
    return HttpResponse(html, status=status)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_path(request.path):
        return refused_request(exception) or error_response(400, "Bad request")
    return defaults.bad_request(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_path(request.path):
        return error_response(404, "Record not found")
    return _render(request, "404.html", 404, {})


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_path(request.path):
        return error_response(403, "This action is not allowed")
    return _render(request, "403.html", 403, {})


def server_error(request: HttpRequest) -> HttpResponse:
    if is_api_path(request.path):
        return error_response(500, "Internal server error")
    html = render_to_string("500.html", {"user": AnonymousUser(), "request": request})
    return HttpResponse(html, status=500)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """Explain a refused form (stale page, cookies off) in the site's look."""
    return _render(request, "403_csrf.html", 403, {"reason": reason})
