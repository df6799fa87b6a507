"""Validating what clients send: every input bounded, every error a sentence in
Mastodon's words (`Validation failed: ...`, answered with 422)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.http import QueryDict

from social.keys import MEDIA_PER_POST
from social.numbers import id_number, whole_number
from social.post_forms import POST_MAX, RAW_POST_MAX, SPOILER_MAX, post_body
from social.repository.clients.oauth import (
    NAME_MAX,
    REDIRECT_URI_MAX,
    REDIRECT_URIS_MAX,
    WEBSITE_MAX,
)

from . import redirect_uris
from . import scopes as scope_rules
from .base import ApiError


def invalid(message: str) -> ApiError:
    """Mastodon's validation answer."""
    return ApiError(422, f"Validation failed: {message}")


def text_param(params: Mapping[str, Any], name: str, limit: int) -> str:
    """A string parameter (lists take their first item, as a form would), at most limit
    characters, or 422."""
    value = params.get(name)
    if isinstance(value, list):
        value = value[0] if value else ""
    if value is None:
        return ""
    if not isinstance(value, str | int):
        raise invalid(f"{name} must be a string")
    value = str(value)
    if len(value) > limit:
        raise invalid(f"{name} is too long (maximum is {limit} characters)")
    return value


def bad_number(name: str) -> ApiError:
    """The answer to a limit, cursor or id list that is not a number (social.numbers)."""
    return ApiError(400, f"{name} must be a number: 1 to 19 digits 0-9")


def number_param(params: Mapping[str, Any], name: str) -> int | None:
    """A number parameter (a limit, a cursor): None when absent or empty, else a
    social.numbers.whole_number, or ApiError 400."""
    value = params.get(name)
    if value is None or value == "":
        return None
    number = whole_number(value)
    if number is None:
        raise bad_number(name)
    return number


def id_param(value: Any) -> int:
    """A path's id (a string of digits, as Mastodon's are): 1 up to Redis's integer
    range (social.numbers.id_number), else ApiError 404: no such record."""
    number = id_number(value)
    if number is None:
        raise ApiError(404, "Record not found")
    return number


def optional_id(params: Mapping[str, Any], name: str) -> int | None:
    """An optional id parameter (in_reply_to_id): None when absent or empty, else as
    id_param, but 422 when malformed."""
    value = params.get(name)
    if value is None or value == "":
        return None
    number = id_number(value)
    if number is None:
        raise invalid(f"{name} is not a valid id")
    return number


def flag(params: Mapping[str, Any], name: str) -> bool:
    """A boolean parameter as Mastodon reads it (true, "true", "1", "on")."""
    value = params.get(name)
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("1", "true", "on", "yes")


@dataclass(frozen=True)
class AppRegistration:
    name: str
    redirect_uris: tuple[str, ...]
    scopes: tuple[str, ...]
    website: str


def app_registration(params: Mapping[str, Any]) -> AppRegistration:
    """POST /api/v1/apps: client_name, redirect_uris (one per line, or a list), scopes
    (space-separated; default read), website."""
    name = text_param(params, "client_name", NAME_MAX).strip()
    if not name:
        raise invalid("Application name can't be blank")
    raw = params.get("redirect_uris")
    if isinstance(raw, list):
        uris = [str(u).strip() for u in raw[: REDIRECT_URIS_MAX + 1]]
    else:
        text = text_param(params, "redirect_uris", REDIRECT_URI_MAX * REDIRECT_URIS_MAX)
        uris = [u.strip() for u in text.splitlines() if u.strip()]
    if not uris:
        raise invalid("Redirect URI can't be blank")
    if len(uris) > REDIRECT_URIS_MAX:
        raise invalid(f"Redirect URI: at most {REDIRECT_URIS_MAX}")
    for uri in uris:  # the rules: social/api/redirect_uris.py
        too_long = f"is too long (maximum is {REDIRECT_URI_MAX} characters)"
        said = too_long if len(uri) > REDIRECT_URI_MAX else redirect_uris.problem(uri)
        if said:
            raise invalid(f"Redirect URI {said}")
    scope_text = params.get("scopes")
    if isinstance(scope_text, list):
        scope_text = " ".join(str(s) for s in scope_text[: scope_rules.MAX_SCOPES + 1])
    parsed = scope_rules.parse(str(scope_text)[:2000] if scope_text is not None else None)
    if parsed is None:
        raise invalid("Scopes are invalid")
    website = text_param(params, "website", WEBSITE_MAX).strip()
    if website and urlsplit(website).scheme.lower() not in ("http", "https"):
        raise invalid("Website is invalid")
    return AppRegistration(name, tuple(dict.fromkeys(uris)), parsed or scope_rules.DEFAULT, website)


@dataclass(frozen=True)
class NewStatus:
    body: str
    reply_to: int | None
    media_ids: tuple[str, ...] = ()
    spoiler_text: str = ""
    sensitive: bool = False


TOO_MANY_MEDIA = f"Cannot attach more than {MEDIA_PER_POST} files"  # Mastodon's words
MEDIA_IDS_READ = 50  # ids read at most (more is refused as too many anyway)


def list_param(params: Mapping[str, Any], name: str) -> list[str]:
    """A list parameter: `name[]` (or `name`) of a form, repeated, or a JSON array; its
    items that are strings or numbers, the first MEDIA_IDS_READ + 1."""
    if hasattr(params, "getlist"):
        raw: Any = params.getlist(f"{name}[]") or params.getlist(name)
    else:
        raw = params.get(name, params.get(f"{name}[]"))
    if raw is None or raw == "":
        return []
    if not isinstance(raw, list):
        raw = [raw]
    return [str(v) for v in raw[: MEDIA_IDS_READ + 1] if isinstance(v, str | int)]


UNSUPPORTED_STATUS = {
    "poll": "Polls are not supported on this server",
    "scheduled_at": "Scheduled posts are not supported on this server",
}


def new_status(params: Mapping[str, Any]) -> NewStatus:
    """POST /api/v1/statuses: status (the site's rules: newlines become spaces, 1 to
    POST_MAX characters; may be empty with pictures), in_reply_to_id, media_ids[] (at
    most MEDIA_PER_POST), spoiler_text (up to SPOILER_MAX), sensitive. What the site has
    not (polls, scheduling, a visibility but public) is refused with 422, as Mastodon
    refuses what an instance does not allow."""
    for name, message in UNSUPPORTED_STATUS.items():
        value = params.get(name) or params.get(f"{name}[]")
        if value not in (None, "", [], {}):
            raise invalid(message)
    visibility = text_param(params, "visibility", 20)
    if visibility not in ("", "public"):
        raise invalid("Only public posts exist on this server")
    media_ids = list_param(params, "media_ids")
    if len(media_ids) > MEDIA_PER_POST:
        raise ApiError(422, TOO_MANY_MEDIA)
    spoiler = re.sub(r"\s+", " ", text_param(params, "spoiler_text", SPOILER_MAX)).strip()
    try:  # a post of pictures alone may have no text
        body = post_body(text_param(params, "status", RAW_POST_MAX), empty_ok=bool(media_ids))
    except ValidationError as error:  # Mastodon's words for the site's rule
        too_long = error.code == "max_length"
        raise invalid(
            f"Text character limit of {POST_MAX} exceeded" if too_long else "Text can't be blank"
        ) from None
    return NewStatus(
        body,
        optional_id(params, "in_reply_to_id"),
        tuple(dict.fromkeys(media_ids)),
        spoiler,
        flag(params, "sensitive"),
    )


def limit_param(params: Mapping[str, Any], default: int, most: int) -> int:
    """`limit`: default when absent, else a number clamped to 1..most (Mastodon clamps);
    ApiError 400 when it is not a number."""
    number = number_param(params, "limit")
    return default if number is None else max(1, min(number, most))


def first_ids(request: Any, most: int) -> list[int]:
    """`id[]` (or `id`) of a question about many accounts (relationships, familiar
    followers): the first `most` values that are not empty, once each, in order; one that
    is not a number (social.numbers.whole_number) is a 400, as a cursor's. From the query,
    or from a JSON body (Mastodon.py sends familiar_followers' ids so, on a GET)."""
    source = getattr(request, "params", None)
    if isinstance(source, dict) and not isinstance(source, QueryDict) and "id" in source:
        name, given = "id", source["id"]
        values = [str(v) for v in (given if isinstance(given, list) else [given])[:most]]
    else:
        name = "id[]" if "id[]" in request.GET else "id"
        values = request.GET.getlist(name)[:most]
    raw = [value for value in values if value and value != "None"]
    ids = [number for value in raw if (number := whole_number(value)) is not None]
    if len(ids) < len(raw):
        raise bad_number(name)
    return list(dict.fromkeys(ids))


def lookup_ids(request: Any, most: int) -> list[int]:
    """`id[]` of a lookup of many records (statuses, accounts): the ids, once each, in the
    order given; those that are not ids (social.numbers.id_number) are none (as unknown
    ones); more than `most` is 422."""
    raw = request.GET.getlist("id[]") or request.GET.getlist("id")
    if len(raw) > most:
        raise invalid(f"id: at most {most}")
    return list(dict.fromkeys(i for v in raw if (i := id_number(v)) is not None))
