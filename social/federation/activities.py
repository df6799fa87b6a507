"""Incoming activities read into what the inbox's worker acts on: pure functions, no Redis.

What another server sends is a stranger's data: every field read here is checked and
bounded, and a field of the wrong shape is treated as absent (or refuses the object with
InvalidObject when it is one we need). Mastodon's reading (app/lib/activitypub/) is the
model:

- `object_id`: an object given by its id or embedded (`{"id": ...}`); `actor_of` the same
  for `actor`. Ids are absolute http(s) URLs of at most URL_MAX characters.
- `is_public`: addressed to the public collection in `to` or `cc` (`as:Public` and
  `Public` as Mastodon accepts them): a followers-only or direct note is not.
- `local_actor` and `local_post`: our own ids (`SITE_URL/ap/users/<id>`,
  `SITE_URL/ap/posts/<id>`, documents.py) back to numbers.
- `parse_note`: a `Note` (or `Article`, `Page`, `Question`: shown by their content, as
  Mastodon shows them) into a NoteDocument: its HTML sanitised (sanitise.py), its plain
  text, content warning, mentions (`Mention` tags' hrefs), hashtags (`Hashtag` tags,
  normalised as ours), attachments (their remote URLs with type, alt text, blurhash and
  size), `inReplyTo`, `url` and `published`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings

from social.text import MAX_MENTIONS, MAX_TAGS, normal_tag

from .names import URL_MAX, url_domain, url_origin
from .sanitise import plain_text, sanitise

PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
PUBLIC_NAMES = frozenset({PUBLIC, "as:Public", "Public"})
NOTE_TYPES = frozenset({"Note", "Article", "Page", "Question"})
TEXT_MAX = 20_000  # characters of a note's plain text kept (its HTML: sanitise.HTML_MAX)
SUMMARY_MAX = 500  # characters of a content warning
ALT_MAX = 1500  # characters of an attachment's description (keys.MEDIA_ALT_MAX)
BLURHASH_MAX = 100
ATTACHMENTS_MAX = 4  # kept per note (Mastodon's 4); more are dropped
LIST_MAX = 64  # entries of an array (to, cc, tag, attachment) looked at
MEDIA_TYPE_MAX = 100
SIDE_MAX = 100_000  # pixels: a width or height past this is no size
PUBLISHED_MAX = 64


class InvalidObject(ValueError):
    """The object is not one we take; `reason` says why (for the log and the counters)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def url_or_none(value: object) -> str | None:
    """Return value when it is an absolute http(s) URL of at most URL_MAX characters."""
    if isinstance(value, str) and len(value) <= URL_MAX and url_origin(value) is not None:
        return value
    return None


def object_id(value: object) -> str | None:
    """The id of an object given by its id or embedded with one, or None."""
    if isinstance(value, Mapping):
        value = value.get("id")
    return url_or_none(value)


def actor_of(activity: Mapping[str, Any]) -> str | None:
    """The activity's actor's id, or None."""
    return object_id(activity.get("actor"))


def kind_of(value: object) -> str:
    """An embedded object's `type` ("" for none, or an object given by its id alone)."""
    kind = value.get("type") if isinstance(value, Mapping) else None
    return kind if isinstance(kind, str) else ""


def same_host(url: str, other: str) -> bool:
    """Whether both URLs are on one domain (its port included): an object's id on its
    actor's server."""
    domain = url_domain(url)
    return domain is not None and domain == url_domain(other)


def _listed(value: object) -> list[Any]:
    """An ActivityStreams property that is one value or an array, as a bounded list."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return items[:LIST_MAX]


def audience(data: Mapping[str, Any]) -> set[str]:
    """The ids in `to` and `cc` (each an id or an object with one)."""
    found: set[str] = set()
    for field in ("to", "cc"):
        for item in _listed(data.get(field)):
            if isinstance(item, Mapping):
                item = item.get("id")
            if isinstance(item, str) and len(item) <= URL_MAX:
                found.add(item)
    return found


def is_public(data: Mapping[str, Any]) -> bool:
    """Whether data is addressed to the public collection (public or unlisted)."""
    return not PUBLIC_NAMES.isdisjoint(audience(data))


def _local_id(uri: str | None, prefix: str) -> int | None:
    if uri is None:
        return None
    head = f"{settings.SITE_URL}/ap/{prefix}/"
    rest = uri[len(head) :] if uri.startswith(head) else ""
    if rest.isascii() and rest.isdigit() and len(rest) <= 19 and not rest.startswith("0"):
        return int(rest)
    return None


def local_actor(uri: str | None) -> int | None:
    """The local account whose actor id uri is (SITE_URL/ap/users/<id>), or None."""
    return _local_id(uri, "users")


def local_post(uri: str | None) -> int | None:
    """The local post whose Note id uri is (SITE_URL/ap/posts/<id>), or None."""
    return _local_id(uri, "posts")


@dataclass(frozen=True)
class RemoteAttachment:
    """A note's attachment as its server gave it: kept as a link, never fetched here."""

    url: str
    media_type: str = ""
    kind: str = "Document"
    description: str = ""
    blurhash: str = ""
    width: int | None = None
    height: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "media_type": self.media_type,
            "type": self.kind,
            "description": self.description,
            "blurhash": self.blurhash,
            "width": self.width,
            "height": self.height,
        }


@dataclass(frozen=True)
class NoteDocument:
    """A remote note as we keep it: checked, bounded, sanitised (parse_note)."""

    uri: str
    attributed_to: str
    html: str  # sanitised
    text: str  # its words alone (search, notifications, the post hash's body)
    url: str = ""
    summary: str = ""  # a content warning, plain text
    sensitive: bool = False
    published: int | None = None
    in_reply_to: str | None = None
    mentions: tuple[str, ...] = ()  # actor ids its Mention tags name
    hashtags: tuple[str, ...] = ()  # normalised as ours (text.normal_tag)
    attachments: tuple[RemoteAttachment, ...] = ()
    public: bool = False


def parse_note(data: object, *, actor: str) -> NoteDocument:
    """Return the note data (an embedded object) of actor's activity, checked: its id
    on actor's server, attributed to actor. Raise InvalidObject."""
    if not isinstance(data, Mapping):
        raise InvalidObject("the object is not embedded")
    if kind_of(data) not in NOTE_TYPES:
        raise InvalidObject(f"the object is a {kind_of(data) or 'thing'} with no type we show")
    uri = object_id(data)
    if uri is None:
        raise InvalidObject("the note has no id")
    if not same_host(uri, actor):
        raise InvalidObject("the note's id is not on its actor's server")
    if object_id(data.get("attributedTo")) != actor:
        raise InvalidObject("the note is not attributed to the activity's actor")
    content = data.get("content")
    html = sanitise(content) if isinstance(content, str) else ""
    summary = data.get("summary")
    warning = plain_text(sanitise(summary), SUMMARY_MAX) if isinstance(summary, str) else ""
    return NoteDocument(
        uri=uri,
        attributed_to=actor,
        html=html,
        text=plain_text(html, TEXT_MAX),
        url=_link(data.get("url")) or "",
        summary=warning,
        sensitive=data.get("sensitive") is True or bool(warning),
        published=published(data.get("published")),
        in_reply_to=object_id(data.get("inReplyTo")),
        mentions=_mentions(data.get("tag")),
        hashtags=_hashtags(data.get("tag")),
        attachments=_attachments(data.get("attachment")),
        public=is_public(data),
    )


def _link(value: object) -> str | None:
    """A `url` given as a string, a Link object, or an array of either (the first http(s)
    one, preferring text/html)."""
    for item in _listed(value):
        if isinstance(item, Mapping):
            item = item.get("href")
        if (found := url_or_none(item)) is not None:
            return found
    return None


def _mentions(tags: object) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for tag in _listed(tags):
        if kind_of(tag) == "Mention" and (href := url_or_none(tag.get("href"))) is not None:
            found.setdefault(href, None)
            if len(found) == MAX_MENTIONS:
                break
    return tuple(found)


def _hashtags(tags: object) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for tag in _listed(tags):
        name = tag.get("name") if kind_of(tag) == "Hashtag" else None
        if isinstance(name, str) and len(name) <= 101:
            normal = normal_tag(name.removeprefix("#"))
            if normal and not normal.isdigit():
                found.setdefault(normal, None)
                if len(found) == MAX_TAGS:
                    break
    return tuple(found)


def _attachments(value: object) -> tuple[RemoteAttachment, ...]:
    kept: list[RemoteAttachment] = []
    for item in _listed(value):
        if not isinstance(item, Mapping) or (url := _link(item.get("url"))) is None:
            continue
        media_type, name, blurhash = item.get("mediaType"), item.get("name"), item.get("blurhash")
        kept.append(
            RemoteAttachment(
                url=url,
                media_type=_short(media_type, MEDIA_TYPE_MAX),
                kind=kind_of(item)[:32] or "Document",
                description=_plain(name, ALT_MAX),
                blurhash=_short(blurhash, BLURHASH_MAX),
                width=_side(item.get("width")),
                height=_side(item.get("height")),
            )
        )
        if len(kept) == ATTACHMENTS_MAX:
            break
    return tuple(kept)


def _plain(value: object, limit: int) -> str:
    """Text given as plain text (an alt text), without control characters, cut to limit."""
    if not isinstance(value, str):
        return ""
    return "".join(c for c in value[:limit] if c.isprintable() or c == "\n").strip()


def _short(value: object, limit: int) -> str:
    """A short printable string (a media type, a blurhash) as given, else ""."""
    if isinstance(value, str) and 0 < len(value) <= limit and value.isprintable():
        return value
    return ""


def _side(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= SIDE_MAX:
        return value
    return None


def published(value: object) -> int | None:
    """Unix seconds of an ISO 8601 date with its zone, or None."""
    if not isinstance(value, str) or len(value) > PUBLISHED_MAX:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    seconds = int(moment.timestamp())
    return seconds if 0 < seconds < 2**40 else None
