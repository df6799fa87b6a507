"""The answer of an action a page's script sent (static/js/site.js: Like, Repost, Follow,
Mute, Block, asked with `Accept: application/json`): what the control becomes, in the
page's language, instead of the redirect a form without script gets. The same view serves
both; a message goes to the JSON, never into the next page's messages."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse


def wants_json(request: HttpRequest) -> bool:
    """Whether the page's script asked (Accept: application/json), not a plain form."""
    return "application/json" in request.headers.get("Accept", "")


def answer(
    request: HttpRequest,
    back: str,
    message: str,
    *,
    level: int = messages.SUCCESS,
    control: dict | None = None,
    status: int = 200,
) -> HttpResponse:
    """A plain form: the message for the next page, and back. The script: JSON with the
    message, `ok`, and `control` (what the control that acted becomes: its `action` URL,
    `label`, `title`, `pressed`, `count`, `count_title`). An error (level ERROR) answers
    `status` (400 when given 200)."""
    if not wants_json(request):
        if message:
            messages.add_message(request, level, message)
        return HttpResponseRedirect(back)
    ok = level != messages.ERROR
    body = {"ok": ok, "message": message, "control": control or {}}
    return JsonResponse(body, status=status if ok or status != 200 else 400)


def refused_json(message: str, status: int, retry_after: int | None = None) -> JsonResponse:
    """A refusal (a rate limit 429, Redis down 503) for the script, in its words."""
    response = JsonResponse({"ok": False, "message": message, "control": {}}, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    response["Cache-Control"] = "no-store"
    return response
