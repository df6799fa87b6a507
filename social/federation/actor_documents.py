"""Another server's actor document (`Person`, `Service`...) read into the fields we keep.

Pure functions, no Redis and no network: parse_actor() takes the JSON a fetch returned and
the URL it came from, and gives an ActorDocument or raises InvalidActor with the reason. It
is a stranger's data, so every field is checked and bounded before it is kept:

- `type` one of ACTOR_TYPES; `id` exactly the URL it was fetched from (the resolver refetches
  a document whose id names another URL: resolve.py), on a domain names.py accepts;
  `preferredUsername` a valid remote name (names.is_remote_name); `inbox` a URL the client
  may send to (https; http only under FEDERATION_ALLOW_HTTP: destinations.parse_url);
  `publicKey` owned by the actor (`owner` equal to its id), its key id on the actor's
  domain, its PEM one signatures.py loads (RSA 2048 to 8192 bits, or Ed25519).
- URLs at most URL_MAX characters, each one the client may fetch; a wrong type or a bad
  URL in an optional field (outbox, collections, avatar...) leaves that field out rather
  than refusing the actor, as Mastodon does.
- The display name is plain text without control characters, cut to DISPLAY_NAME_MAX
  (Mastodon's hard limit); the bio is sanitised HTML (sanitise.py, Mastodon's rules), kept
  whole up to SUMMARY_HTML_MAX characters, else as its plain text in a paragraph; its plain
  text (NOTE_TEXT_MAX) is what search and lists show.

The account's domain (its `name@domain`) is the actor's own host unless the resolver, having
checked WebFinger both ways, says otherwise (resolve.py).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

from .activities import published
from .destinations import FetchError, parse_url
from .names import InvalidAddress, is_remote_name, normalise_domain, url_domain, url_origin
from .sanitise import plain_text, sanitise
from .signatures import MAX_KEY_PEM, SignatureError, load_public_key

ACTOR_TYPES = frozenset({"Person", "Service", "Application", "Group", "Organization"})
URL_MAX = 2048  # characters of any URL kept (signatures.MAX_KEY_ID for a key id)
DISPLAY_NAME_MAX = 100  # Mastodon's DISPLAY_NAME_LENGTH_HARD_LIMIT
SUMMARY_HTML_MAX = 10_000  # characters of sanitised bio kept as HTML
NOTE_TEXT_MAX = 1_000  # characters of the bio's plain text
COUNT_MAX = 2**53  # a collection's totalItems past this is no count
LIST_MAX = 10  # entries of an array looked at (publicKey, url, icon)


class InvalidActor(ValueError):
    """The document is no actor we keep; `reason` says why (for logs and the searcher)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ActorDocument:
    """A remote actor as we keep it: checked, bounded, sanitised (parse_actor)."""

    uri: str
    name: str  # preferredUsername, as sent
    domain: str  # of its `name@domain`
    actor_type: str
    inbox: str
    key_id: str
    public_key: str  # PEM
    shared_inbox: str = ""
    outbox: str = ""
    followers_url: str = ""
    following_url: str = ""
    url: str = ""  # its profile page there ("" when it gives none)
    display_name: str = ""
    summary_html: str = ""  # sanitised
    note_text: str = ""  # the bio's words alone
    avatar_url: str = ""
    header_url: str = ""
    locked: bool = False
    published: int | None = None  # unix s
    # As its server reports them (its collections' totalItems), None when it did not say.
    followers_count: int | None = None
    following_count: int | None = None
    statuses_count: int | None = None

    @property
    def acct(self) -> str:
        """`name@domain`, as the site shows it and the API's `acct` says it."""
        return f"{self.name}@{self.domain}"


def parse_actor(doc: object, *, fetched_from: str, domain: str | None = None) -> ActorDocument:
    """Return the actor document `doc` (parsed JSON) fetched from `fetched_from`, checked
    and bounded; `domain`: its address's domain when the resolver confirmed one other than
    the actor's host. Raise InvalidActor with the reason."""
    if not isinstance(doc, Mapping):
        raise InvalidActor("the document is not a JSON object")
    actor_type = _actor_type(doc.get("type"))
    uri = _required_url(doc.get("id"), "id")
    if uri != fetched_from:
        raise InvalidActor(f"the document's id is not the URL it came from ({fetched_from})")
    host = url_domain(uri)
    try:
        domain = normalise_domain(domain) if domain else host
    except InvalidAddress:
        raise InvalidActor(f"{domain!r} is not a domain") from None
    if not domain:
        raise InvalidActor("the actor's id has no domain")
    name = doc.get("preferredUsername")
    if not isinstance(name, str) or not is_remote_name(name):
        raise InvalidActor("preferredUsername is missing or not a valid account name")
    key_id, public_key = _public_key(doc.get("publicKey"), uri)
    endpoints = doc.get("endpoints")
    summary_html, note_text = _summary(doc.get("summary"))
    return ActorDocument(
        uri=uri,
        name=name,
        domain=domain,
        actor_type=actor_type,
        inbox=_required_url(doc.get("inbox"), "inbox"),
        key_id=key_id,
        public_key=public_key,
        shared_inbox=_url(endpoints.get("sharedInbox")) if isinstance(endpoints, Mapping) else "",
        outbox=_url(doc.get("outbox")),
        followers_url=_url(doc.get("followers")),
        following_url=_url(doc.get("following")),
        url=_link(doc.get("url")),
        display_name=_display_name(doc.get("name")),
        summary_html=summary_html,
        note_text=note_text,
        avatar_url=_image(doc.get("icon")),
        header_url=_image(doc.get("image")),
        locked=doc.get("manuallyApprovesFollowers") is True,
        published=published(doc.get("published")),
    )


def total_items(doc: object) -> int | None:
    """Return a collection document's `totalItems` (a followers, following or outbox
    count as its server reports it), or None when it gives no sane one."""
    if not isinstance(doc, Mapping):
        return None
    total = doc.get("totalItems")
    if isinstance(total, bool) or not isinstance(total, int) or not 0 <= total < COUNT_MAX:
        return None
    return total


def _actor_type(value: object) -> str:
    """The actor's type (one of ACTOR_TYPES; of a list of types, the first such)."""
    types = value[:LIST_MAX] if isinstance(value, list) else [value]
    for kind in types:
        if isinstance(kind, str) and kind in ACTOR_TYPES:
            return kind
    raise InvalidActor("the document is not an actor (Person, Service, Application, Group...)")


def _url(value: object) -> str:
    """An optional URL: one the client may fetch, else ""."""
    if not isinstance(value, str) or not value or len(value) > URL_MAX:
        return ""
    if url_origin(value) is None:
        return ""
    try:
        parse_url(value)
    except FetchError:
        return ""
    return value


def _required_url(value: object, what: str) -> str:
    """A URL the actor must have; InvalidActor naming `what` when it is missing or bad."""
    if not isinstance(value, str) or not value:
        raise InvalidActor(f"{what} is missing")
    if len(value) > URL_MAX:
        raise InvalidActor(f"{what} is longer than {URL_MAX} characters")
    if url_origin(value) is None:
        raise InvalidActor(f"{what} is not an http(s) URL on a valid domain")
    try:
        parse_url(value)
    except FetchError as error:
        raise InvalidActor(f"{what}: {error.reason}") from None
    return value


def _public_key(value: object, actor: str) -> tuple[str, str]:
    """Return (key id, PEM) of the actor's key: of a list, the first its owner is the actor."""
    candidates = value[:LIST_MAX] if isinstance(value, list) else [value]
    owned = [key for key in candidates if isinstance(key, Mapping) and key.get("owner") == actor]
    if not owned:
        raise InvalidActor("publicKey is missing or not owned by the actor")
    key = owned[0]
    key_id = _required_url(key.get("id"), "publicKey.id")
    if url_domain(key_id) != url_domain(actor):
        raise InvalidActor("publicKey.id is not on the actor's domain")
    pem = key.get("publicKeyPem")
    if not isinstance(pem, str) or not pem:
        raise InvalidActor("publicKey.publicKeyPem is missing")
    if len(pem) > MAX_KEY_PEM:
        raise InvalidActor(f"publicKey.publicKeyPem is longer than {MAX_KEY_PEM} characters")
    try:
        load_public_key(pem)
    except SignatureError as error:
        raise InvalidActor(f"publicKey.publicKeyPem: {error.reason}") from None
    return key_id, pem


def _link(value: object) -> str:
    """The profile page an actor's `url` names: a string, a Link's href, or the first
    http(s) one of a list of those."""
    entries = value[:LIST_MAX] if isinstance(value, list) else [value]
    for entry in entries:
        href = entry.get("href") if isinstance(entry, Mapping) else entry
        found = _url(href)
        if found:
            return found
    return ""


def _image(value: object) -> str:
    """The URL of an `icon` or `image`: an Image's `url` (itself a string, a Link or a
    list), a bare string, or the first usable one of a list of Images."""
    entries = value[:LIST_MAX] if isinstance(value, list) else [value]
    for entry in entries:
        found = _link(entry.get("url")) if isinstance(entry, Mapping) else _url(entry)
        if found:
            return found
    return ""


# Left out of a display name: control and format characters (bidirectional overrides that
# would turn the rest of a line around), lone surrogates, unassigned code points; kept:
# the joiners emoji sequences need.
_DROPPED = frozenset({"Cc", "Cf", "Cs", "Cn", "Co"})
_KEPT = frozenset({"\u200d", "\u200c"})


def _display_name(value: object) -> str:
    if not isinstance(value, str):
        return ""
    kept = "".join(
        c
        for c in value[: DISPLAY_NAME_MAX * 4]
        if c in _KEPT or unicodedata.category(c) not in _DROPPED
    )
    return " ".join(kept.split())[:DISPLAY_NAME_MAX]


def _summary(value: object) -> tuple[str, str]:
    """Return the bio as sanitised HTML and as plain text (both "" when there is none)."""
    if not isinstance(value, str) or not value.strip():
        return "", ""
    html = sanitise(value)
    text = plain_text(html, NOTE_TEXT_MAX)
    if len(html) > SUMMARY_HTML_MAX:
        html = f"<p>{escape(text)}</p>" if text else ""
    return html, text
