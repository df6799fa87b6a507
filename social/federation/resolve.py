"""Finding a remote account (or post) from what a person types or another server names.

- `resolve_address(repo, "@name@domain")`: WebFinger at the domain
  (`/.well-known/webfinger?resource=acct:name@domain`, following one redirect to another
  domain as Mastodon does), its `self` link of an ActivityPub type, then the actor.
- `resolve_actor(repo, url)`: an actor by its id (or any URL answering its document).
- `resolve_key(repo, key_id)`: the actor holding a public key (a signature's keyId).
- `resolve_note(repo, url)`: a post (`Note`, `Article`, `Page`, `Question`): its document,
  with its id checked, and its author resolved. Storing the post is the inbox's work: the
  parsed document is handed back as it came.
- `resolve_url(repo, url)`: whichever of the two a URL answers (search's profile or post URL).
- `resolve_query(repo, query)`: what search resolves: an address or a URL, else nothing.

An account known and fetched within REFRESH_AFTER (a day) is answered from Redis without a
request; an older one is fetched again, and kept as it was when that fails.

Every request goes through fetch.py (https only, addresses checked, redirects checked);
documents are asked for as ActivityPub JSON and fetched signed by the instance actor (servers
with authorised fetch answer only then). A whole resolution has TIMEOUT seconds, shared by
its requests (each is given what is left), and each body its own limit (WebFinger 64 KiB, a
document 256 KiB). Origin checks, as Mastodon's (`FetchResourceService`,
`ResolveAccountService`, `ProcessAccountService#check_webfinger!`):

- a document's `id` must be the URL it was fetched from, and any redirect must stay on that
  URL's origin; a document naming another id is fetched once more from that id, which must
  then hold;
- an actor on another host than its address's domain is taken only when WebFinger on the
  actor's host confirms the address and points back to the actor;
- a post's author must be on the post's host; the account's name must be the address's.

Every failure is a ResolveError whose `reason` says which step failed and why.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from django.conf import settings
from django.utils.translation import gettext

from . import documents, fetch
from .actor_documents import ActorDocument, InvalidActor, parse_actor, total_items
from .destinations import FetchError, Refused
from .names import (
    ADDRESS_INPUT_MAX,
    Address,
    InvalidAddress,
    is_remote_name,
    parse_address,
    same_origin,
    url_domain,
)
from .signatures import sign_request

if TYPE_CHECKING:
    from social.repository import Repository
    from social.repository.federation.actors import RemoteActor

log = logging.getLogger(__name__)

TIMEOUT = 5.0  # seconds for a whole resolution, every request included
WEBFINGER_MAX = 64 * 1024
DOCUMENT_MAX = 256 * 1024  # an actor or a post
COLLECTION_MAX = 64 * 1024  # a collection's first document (its totalItems)
COUNTS_MIN_LEFT = 1.0  # seconds that must be left to ask for the counts at all
LINKS_MAX = 50  # WebFinger links looked at
URL_QUERY_MAX = 2048  # characters of a URL search resolves

ACCEPT = f'application/activity+json, application/ld+json; profile="{documents.AS_PROFILE}"'
DOCUMENT_TYPES = ("application/activity+json", "application/ld+json")
WEBFINGER_ACCEPT = "application/jrd+json, application/json"
WEBFINGER_TYPES = ("application/jrd+json", "application/json")
ACTOR_TYPES = frozenset({"Person", "Service", "Application", "Group", "Organization"})
NOTE_TYPES = frozenset({"Note", "Article", "Page", "Question"})


class ResolveError(Exception):
    """Nothing could be resolved; `reason` says why (for the log and the person searching)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ResolvedNote:
    """A remote post as fetched (its `id` checked, nothing else kept) and its author."""

    note: dict[str, Any]
    author: RemoteActor


def local_domain() -> str:
    """This site's domain (SITE_URL's host, with its port when not the default)."""
    return documents.domain()


def is_url(text: str) -> bool:
    return text[:8].lower().startswith(("https://", "http://"))


class Resolver:
    """One resolution: its deadline, shared by every request it makes, and its signer."""

    def __init__(self, repo: Repository, *, timeout: float = TIMEOUT) -> None:
        self.repo = repo
        self.deadline = time.monotonic() + timeout
        self._key: tuple[str, str] | None = None

    # --- What callers ask for -------------------------------------------------------------

    def address(self, text: str, *, refresh: bool = False) -> RemoteActor:
        """The account `@name@domain` names (resolve_address)."""
        try:
            address = parse_address(text.strip())
        except InvalidAddress as error:
            raise ResolveError(f"{text[:100]!r} is not a fediverse address ({error})") from None
        if address.domain == local_domain():
            raise ResolveError(f"@{address} is an account of this site")
        known = self.repo.remote_actors.by_acct(str(address))
        if known is not None and not refresh and not known.is_stale():
            return known
        try:
            return self._by_webfinger(address)
        except ResolveError as error:
            return self._known_or_raise(known, error)

    def actor(self, url: str, *, refresh: bool = False) -> RemoteActor:
        """The account whose actor document `url` answers (resolve_actor)."""
        self._check_remote(url)
        known = self.repo.remote_actors.by_uri(url)
        if known is not None and not refresh and not known.is_stale():
            return known
        try:
            doc, uri = self._document(url)
            if _type_of(doc) not in ACTOR_TYPES:
                raise ResolveError(f"{url} is not an account (its type is {_type_of(doc)!r})")
            return self._actor_from(doc, uri)
        except ResolveError as error:
            return self._known_or_raise(known, error)

    def key(self, key_id: str, *, refresh: bool = False) -> RemoteActor:
        """The account whose public key has this id (resolve_key)."""
        known = self.repo.remote_actors.by_key_id(key_id)
        if known is not None and not refresh and not known.is_stale():
            return known
        # A key id is its actor's id and a fragment (Mastodon's #main-key), or a URL of its
        # own answering the actor (its id then read from there, as for any URL) or a key
        # naming its owner (then fetched, and holding the key).
        self._check_remote(key_id)
        doc, uri = self._document(key_id.partition("#")[0])
        owner = doc.get("owner")
        if _type_of(doc) in ACTOR_TYPES:
            actor = self._actor_from(doc, uri)
        elif isinstance(owner, str) and url_domain(owner) == url_domain(uri):
            actor = self.actor(owner, refresh=True)
        else:
            raise ResolveError(f"{key_id} names no actor")
        if actor.key_id != key_id:
            raise ResolveError(f"the actor {actor.uri} does not hold the key {key_id}")
        return actor

    def note(self, url: str) -> ResolvedNote:
        """The post `url` answers and its author (resolve_note)."""
        self._check_remote(url)
        doc, uri = self._document(url)
        return self._note_from(doc, uri)

    def url(self, url: str) -> RemoteActor | ResolvedNote:
        """The account or the post `url` answers (resolve_url)."""
        self._check_remote(url)
        known = self.repo.remote_actors.by_uri(url)
        if known is not None and not known.is_stale():
            return known
        doc, uri = self._document(url)
        kind = _type_of(doc)
        if kind in ACTOR_TYPES:
            return self._actor_from(doc, uri)
        if kind in NOTE_TYPES:
            return self._note_from(doc, uri)
        raise ResolveError(f"{url} is neither an account nor a post (its type is {kind!r})")

    # --- Steps ----------------------------------------------------------------------------

    def _by_webfinger(self, address: Address) -> RemoteActor:
        subject, href = self._webfinger(address)
        doc, uri = self._document(href)
        if _type_of(doc) not in ACTOR_TYPES:
            raise ResolveError(f"WebFinger of @{subject} names {href}, which is no account")
        host = url_domain(uri)
        if host != subject.domain:
            self._confirm(subject, doc, uri, host)
        actor = self._parse(doc, uri, subject.domain)
        if actor.name.lower() != subject.name.lower():
            raise ResolveError(f"the actor {uri} is called {actor.name!r}, not {subject.name!r}")
        return self._store(actor)

    def _confirm(
        self, subject: Address, doc: Mapping[str, Any], uri: str, host: str | None
    ) -> None:
        """Check that WebFinger on the actor's own host names it by subject (an account whose
        address is on another domain than its server: Mastodon's WEB_DOMAIN)."""
        name = doc.get("preferredUsername")
        if host is None or not isinstance(name, str) or not is_remote_name(name):
            raise ResolveError(f"the actor {uri} has no valid preferredUsername")
        try:
            back, back_href = self._finger(Address(name, host))
        except ResolveError as error:
            raise ResolveError(
                f"{subject.domain} names an actor on {host}, whose WebFinger does not "
                f"confirm @{subject}: {error.reason}"
            ) from None
        if str(back).lower() != str(subject).lower() or back_href != uri:
            raise ResolveError(
                f"{subject.domain} names an actor on {host}, which does not confirm @{subject}"
            )

    def _actor_from(self, doc: Mapping[str, Any], uri: str) -> RemoteActor:
        """Store the actor document doc (fetched from uri). Its address's domain is its
        host, or the domain WebFinger confirmed before (kept while its name stays)."""
        known = self.repo.remote_actors.by_uri(uri)
        domain = known.domain if known is not None else None
        actor = self._parse(doc, uri, domain)
        if known is not None and actor.name.lower() != known.name.lower():
            actor = self._parse(doc, uri, None)  # renamed: only its host vouches for it
        return self._store(actor)

    def _note_from(self, doc: Mapping[str, Any], uri: str) -> ResolvedNote:
        if _type_of(doc) not in NOTE_TYPES:
            raise ResolveError(f"{uri} is not a post (its type is {_type_of(doc)!r})")
        author = _first_id(doc.get("attributedTo"))
        if author is None:
            raise ResolveError(f"the post {uri} names no author")
        if url_domain(author) != url_domain(uri):
            raise ResolveError(f"the post {uri} names an author on another server ({author})")
        return ResolvedNote(dict(doc), self.actor(author))

    def _parse(self, doc: Mapping[str, Any], uri: str, domain: str | None) -> ActorDocument:
        try:
            actor = parse_actor(doc, fetched_from=uri, domain=domain)
        except InvalidActor as error:
            raise ResolveError(f"the actor {uri} is refused: {error.reason}") from None
        return self._with_counts(actor)

    def _store(self, actor: ActorDocument) -> RemoteActor:
        from social.repository.federation.actors import ActorConflict

        try:
            return self.repo.remote_actors.upsert(actor)
        except ActorConflict as error:
            raise ResolveError(str(error)) from None

    def _with_counts(self, actor: ActorDocument) -> ActorDocument:
        """The actor with its followers, following and posts counted as its server counts
        them (its collections' totalItems; None for each it does not give in time)."""
        return replace(
            actor,
            followers_count=self._count(actor.followers_url, actor),
            following_count=self._count(actor.following_url, actor),
            statuses_count=self._count(actor.outbox, actor),
        )

    def _count(self, url: str, actor: ActorDocument) -> int | None:
        """A collection's totalItems, or None: no collection, no time left for it, or one
        on another server (a stranger's document does not send us elsewhere)."""
        left = self.deadline - time.monotonic()
        if not url or not same_origin(url, actor.uri) or left < COUNTS_MIN_LEFT:
            return None
        try:
            return total_items(self._json(self._get(url, COLLECTION_MAX)))
        except ResolveError as error:
            log.info("no count at %s for %s: %s", url, actor.uri, error.reason)
            return None

    # --- WebFinger ------------------------------------------------------------------------

    def _webfinger(self, address: Address) -> tuple[Address, str]:
        """Return the subject WebFinger gives for address and its actor's URL, following
        one redirect to the subject's own domain (Mastodon's Webfinger::RedirectError)."""
        subject, href = self._finger(address)
        if subject.domain != address.domain:
            again, href = self._finger(subject)
            if str(again).lower() != str(subject).lower():
                raise ResolveError(f"WebFinger for @{address} redirects more than once")
            subject = again
        return subject, href

    def _finger(self, address: Address) -> tuple[Address, str]:
        """Ask address's domain for it: return the subject it answers with (address
        itself when it gives none) and the href of its ActivityPub `self` link."""
        scheme = "http" if settings.FEDERATION_ALLOW_HTTP else "https"
        resource = quote(address.resource, safe="@:")
        url = f"{scheme}://{address.domain}/.well-known/webfinger?resource={resource}"
        response = self._get(
            url, WEBFINGER_MAX, accept=WEBFINGER_ACCEPT, types=WEBFINGER_TYPES, signed=False
        )
        if response.status == 404:
            raise ResolveError(f"{address.domain} has no account @{address}")
        doc = self._json(response)
        subject = _subject(doc.get("subject"), address)
        links = doc.get("links")
        for link in links[:LINKS_MAX] if isinstance(links, list) else []:
            if (
                isinstance(link, Mapping)
                and link.get("rel") == "self"
                and _is_activity_type(link.get("type"))
                and isinstance(link.get("href"), str)
            ):
                return subject, link["href"]
        raise ResolveError(
            f"WebFinger at {address.domain} names no ActivityPub actor for @{address}"
        )

    # --- Fetching -------------------------------------------------------------------------

    def _document(self, url: str) -> tuple[Mapping[str, Any], str]:
        """Return an ActivityPub document and its id: the one at url when its id is url,
        else the one at the id it names (fetched once more, and holding then)."""
        doc = self._json(self._get(url, DOCUMENT_MAX))
        named = doc.get("id")
        if named == url:
            return doc, url
        if not isinstance(named, str) or not is_url(named):
            raise ResolveError(f"the document at {url} has no id")
        again = self._json(self._get(named, DOCUMENT_MAX))
        if again.get("id") != named:
            raise ResolveError(f"the document at {named} does not say it is {named}")
        return again, named

    def _get(
        self,
        url: str,
        max_bytes: int,
        *,
        accept: str = ACCEPT,
        types: tuple[str, ...] = DOCUMENT_TYPES,
        signed: bool = True,
    ) -> fetch.Response:
        """GET url within what is left of the deadline (nothing is asked of a server
        staff block, or one under it); a redirect must stay on url's origin. A 404 comes
        back (WebFinger says what it means); another failure raises."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ResolveError(f"no time was left to fetch {url} (at most {TIMEOUT:g} s in all)")
        if self.repo.federation_domains.is_blocked(domain := url_domain(url) or ""):
            raise ResolveError(f"{domain or url[:100]} is blocked here")
        try:
            response = fetch.get(
                url,
                accept=accept,
                max_bytes=max_bytes,
                timeout=left,
                content_types=types,
                sign=self._sign if signed else None,
            )
        except Refused as error:  # an address or URL the client never asks: for good
            raise ResolveError(f"{url} is not fetched: {error.reason}") from None
        except FetchError as error:
            raise ResolveError(f"fetching {url} failed: {error.reason}") from None
        if not same_origin(response.url, url):
            raise ResolveError(f"{url} redirects to another server ({response.url})")
        if response.status == 410:
            raise ResolveError(f"{url} is gone (410)")
        if response.status != 404 and not 200 <= response.status < 300:
            raise ResolveError(f"{url} answered {response.status}")
        return response

    def _json(self, response: fetch.Response) -> dict[str, Any]:
        if response.status == 404:
            raise ResolveError(f"{response.url} was not found (404)")
        try:
            doc = json.loads(response.body)
        except (ValueError, RecursionError):
            raise ResolveError(f"{response.url} answered something other than JSON") from None
        if not isinstance(doc, dict):
            raise ResolveError(f"{response.url} answered JSON that is not an object")
        return doc

    def _sign(self, method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        """Sign a request as the instance actor (its key made when first needed)."""
        if self._key is None:
            pair = self.repo.federation_keys.for_instance()
            self._key = (documents.key_id(documents.instance_actor_id()), pair.private_pem)
        key_id, private_pem = self._key
        return sign_request(
            method, url, headers, body if method != "GET" else None, key_id, private_pem
        )

    # --- Small checks ---------------------------------------------------------------------

    def _check_remote(self, url: str) -> None:
        if not isinstance(url, str) or not is_url(url) or len(url) > URL_QUERY_MAX:
            raise ResolveError(f"{str(url)[:100]!r} is not an http(s) URL")
        if url_domain(url) == local_domain():
            raise ResolveError(f"{url[:200]} is on this site")

    @staticmethod
    def _known_or_raise(known: RemoteActor | None, error: ResolveError) -> RemoteActor:
        """A refetch that failed keeps the account as it was; nothing known: the error."""
        if known is None:
            raise error
        log.info("kept %s as it was: %s", known.uri, error.reason)
        return known


def _type_of(doc: Mapping[str, Any]) -> str:
    """A document's type: a string, or the first known one of a list."""
    kind = doc.get("type")
    if isinstance(kind, list):
        known = [k for k in kind[:10] if isinstance(k, str) and k in ACTOR_TYPES | NOTE_TYPES]
        return known[0] if known else ""
    return kind if isinstance(kind, str) else ""


def _is_activity_type(kind: object) -> bool:
    """Whether a WebFinger link's type is ActivityPub JSON."""
    if not isinstance(kind, str):
        return False
    media, _, params = kind.partition(";")
    media = media.strip().lower()
    return media == "application/activity+json" or (
        media == "application/ld+json" and documents.AS_PROFILE in params
    )


def _subject(value: object, asked: Address) -> Address:
    """The account a WebFinger answer is about: its `acct:` subject, else the one asked."""
    if not isinstance(value, str) or len(value) > ADDRESS_INPUT_MAX or is_url(value):
        return asked
    try:
        return parse_address(value)
    except InvalidAddress:
        raise ResolveError(f"WebFinger for @{asked} answers for {value[:200]!r}") from None


def _first_id(value: object) -> str | None:
    """The id an `attributedTo` names: a string, an object's id, the first of a list."""
    entries = value[:10] if isinstance(value, list) else [value]
    for entry in entries:
        found = entry.get("id") if isinstance(entry, Mapping) else entry
        if isinstance(found, str) and is_url(found):
            return found
    return None


def resolve_address(repo: Repository, text: str, *, refresh: bool = False) -> RemoteActor:
    """Return the remote account `@name@domain` names (known and fresh, or resolved now),
    or raise ResolveError."""
    return Resolver(repo).address(text, refresh=refresh)


def resolve_actor(repo: Repository, url: str, *, refresh: bool = False) -> RemoteActor:
    """Return the remote account whose actor document url answers, or raise ResolveError."""
    return Resolver(repo).actor(url, refresh=refresh)


def resolve_key(repo: Repository, key_id: str, *, refresh: bool = False) -> RemoteActor:
    """Return the remote account whose public key has this id (a signature's keyId): known
    and fresh, or its actor fetched now; refresh: fetched now whatever is known (a
    signature that failed with the key held). Raise ResolveError."""
    return Resolver(repo).key(key_id, refresh=refresh)


def resolve_note(repo: Repository, url: str) -> ResolvedNote:
    """Return the remote post url answers (not stored) and its author, or raise
    ResolveError."""
    return Resolver(repo).note(url)


def resolve_url(repo: Repository, url: str) -> RemoteActor | ResolvedNote:
    """Return the account or post url answers, or raise ResolveError."""
    return Resolver(repo).url(url)


def remote_query(query: str) -> str | None:
    """What a search query names on another server, in one spelling: an http(s) URL, or an
    address `name@domain`; None for anything else (words, a name, this site's addresses)."""
    text = query.strip()
    if is_url(text):
        if len(text) > URL_QUERY_MAX or url_domain(text) in (None, local_domain()):
            return None
        return text
    if text.count("@") != 1 + text.startswith("@") or len(text) > ADDRESS_INPUT_MAX:
        return None
    try:
        address = parse_address(text)
    except InvalidAddress:
        return None
    return None if address.domain == local_domain() else str(address)


def resolve_query(repo: Repository, query: str) -> RemoteActor | None:
    """For search: the remote account a query names (`@name@domain`, `name@domain`, an
    account's URL, or a post's URL: its author), resolved; None when the query names no
    remote account (words, a local name). Raise ResolveError when it names one that cannot
    be resolved."""
    named = remote_query(query)
    if named is None:
        return None
    if is_url(named):
        found = resolve_url(repo, named)
        return found.author if isinstance(found, ResolvedNote) else found
    return resolve_address(repo, named)


@dataclass(frozen=True)
class Found:
    """What a person's search found on other servers: the accounts' ids, or why not."""

    ids: tuple[int, ...] = ()
    error: str = ""


def search_remote(repo: Repository, user_id: int | None, query: str) -> Found:
    """Resolve the remote account a logged-in person's search names (resolve_query), within
    their RETWIS_LIMIT_RESOLVES: a search that names one asks other servers for it. Nothing
    for a visitor (their search finds the accounts known here) or a query naming none."""
    from social import auth

    if user_id is None or remote_query(query) is None:
        return Found()
    if not repo.limits.hit(auth.resolve_limits(user_id)).allowed:
        return Found(error=gettext("You have searched other servers a lot in a short time."))
    try:
        actor = resolve_query(repo, query)
    except ResolveError as error:
        log.info("search for %r: %s", query[:200], error.reason)
        return Found(error=error.reason)
    return Found((actor.id,)) if actor is not None else Found()
