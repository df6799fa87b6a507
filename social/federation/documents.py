"""Our accounts, posts and lists as ActivityStreams JSON, in Mastodon's dialect.

Pure functions of the repository's dataclasses and `SITE_URL` (docs/federation.md's
addresses): nothing here reads Redis or the request, so one document is the same whoever
asks and whatever `Host` they asked with. Shapes follow what Mastodon sends
(app/serializers/activitypub/: ActorSerializer, NoteSerializer, the collection
controllers), with these differences:

- A post has no `conversation`/`context` (Mastodon's `tag:` URI of the thread, optional):
  the thread is what `inReplyTo` says. No `replies`, `likes`, `shares` collections yet.
- `cc` names the followers collection and the accounts the post mentions (Mastodon's
  active mentions); a reply reaches the account it answers by its mention, which the
  composer writes (as Mastodon's does).
- A repost's `Announce` has the id `/ap/posts/<repost id>/activity` (Mastodon's
  `/statuses/<id>/activity`), and `/ap/posts/<repost id>` answers it too.
- Followers and following list every account the site's own pages list (the same policy:
  account_reader.py), as Mastodon does unless an account hides its lists, which no one
  here can: the HTML lists are public already.
- `featured` (pinned posts) is always empty: the site has no pins.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from social import media
from social.repository import Post, User
from social.repository.models import Attachment
from social.repository.posts.attachments import FULL, KIND
from social.templating.faces import bio
from social.templating.links import post_text, profile_url, tag_url, url

ACTIVITY_JSON = "application/activity+json"
AS_PROFILE = "https://www.w3.org/ns/activitystreams"
PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
SECURITY = "https://w3id.org/security/v1"
MEDIA_TYPE = "image/webp"  # every stored picture (social/images.py)
AVATAR_SIZE, HEADER_SIZE = "400", "1500"  # the sizes the client API names too

TOOT = "http://joinmastodon.org/ns#"
# Mastodon's extension terms (app/helpers/context_helper.rb), each with the terms it needs;
# a document's @context names those of the terms it uses.
TERMS: dict[str, dict[str, Any]] = {
    "manuallyApprovesFollowers": {"manuallyApprovesFollowers": "as:manuallyApprovesFollowers"},
    "featured": {"toot": TOOT, "featured": {"@id": "toot:featured", "@type": "@id"}},
    "discoverable": {"toot": TOOT, "discoverable": "toot:discoverable"},
    "indexable": {"toot": TOOT, "indexable": "toot:indexable"},
    "sensitive": {"sensitive": "as:sensitive"},
    "Hashtag": {"Hashtag": "as:Hashtag"},
    "blurhash": {"toot": TOOT, "blurhash": "toot:blurhash"},
    # FEP-2c59's term, defined here rather than by its remote context, which not every
    # JSON-LD processor has bundled.
    "webfinger": {"webfinger": "https://purl.archive.org/socialweb/webfinger#webfinger"},
}
ACTOR_TERMS = ("manuallyApprovesFollowers", "featured", "discoverable", "indexable", "webfinger")
NOTE_TERMS = ("sensitive", "Hashtag", "blurhash")


def context(*terms: str, security: bool = False) -> list[Any]:
    """The @context of a document using Mastodon's extension `terms` (and the security
    vocabulary for a `publicKey`), as Mastodon writes it."""
    extensions: dict[str, Any] = {}
    for term in terms:
        extensions.update(TERMS[term])
    return [AS_PROFILE, *([SECURITY] if security else []), *([extensions] if extensions else [])]


def site() -> str:
    """The site's address, every id's base (never a request's Host)."""
    return settings.SITE_URL


def domain() -> str:
    """The domain in our accounts' `name@domain`: SITE_URL's host, with its port when not
    the scheme's default, lower-cased."""
    parts = urlsplit(settings.SITE_URL)
    host = instance_actor_name()
    if ":" in host:  # an IPv6 address, bracketed as in a URL
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return host if parts.port in (None, default) else f"{host}:{parts.port}"


# Addresses (docs/federation.md): ids use numeric ids, which never change.


def actor_id(user_id: int) -> str:
    return f"{site()}/ap/users/{int(user_id)}"


def instance_actor_id() -> str:
    return f"{site()}/ap/actor"


def shared_inbox() -> str:
    return f"{site()}/ap/inbox"


def key_id(actor: str) -> str:
    return f"{actor}#main-key"


def post_id(post: int) -> str:
    return f"{site()}/ap/posts/{int(post)}"


def activity_id(post: int) -> str:
    """The id of the Create (a post) or Announce (a repost) that published post."""
    return f"{post_id(post)}/activity"


def page_url(collection: str, number: int, start: int | None = None) -> str:
    """A collection's page `number` (`start`: the list position it starts at, when a page
    before it read past hidden posts)."""
    return f"{collection}?page={number}" + (f"&from={start}" if start is not None else "")


def absolute(address: str) -> str:
    """A path on this site made absolute under SITE_URL (a bucket's URL already is)."""
    return site() + address if address.startswith("/") else address


def profile_page(user: User) -> str:
    """The account's profile page (the home page for a legacy name no URL leads to)."""
    return absolute(profile_url(user.username) or url("social:home"))


def permalink(post: int) -> str:
    return absolute(url("social:post_detail", int(post)))


def iso(ts: float | None) -> str:
    """Unix seconds as Mastodon writes `published`: 2026-01-02T03:04:05Z."""
    moment = datetime.fromtimestamp(ts or 0, tz=UTC).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")


def linked_html(html: str) -> str:
    """The site's HTML of a text in a paragraph, its links made absolute."""
    return "<p>" + html.replace('href="/', f'href="{site()}/') + "</p>"


def image(kind: str, token: str, size: str) -> dict[str, str]:
    return {"type": "Image", "mediaType": MEDIA_TYPE, "url": absolute(media.url(kind, token, size))}


# Actors.


def person(user: User, public_pem: str) -> dict[str, Any]:
    """A local account as a `Person` (Mastodon's ActorSerializer)."""
    actor = actor_id(user.id)
    data: dict[str, Any] = {
        "@context": context(*ACTOR_TERMS, security=True),
        "id": actor,
        "type": "Person",
        "following": f"{actor}/following",
        "followers": f"{actor}/followers",
        "inbox": f"{actor}/inbox",
        "outbox": f"{actor}/outbox",
        "featured": f"{actor}/featured",
        "preferredUsername": user.username,
        "name": user.shown_name,
        "summary": linked_html(str(bio(user))) if user.note else "",
        "url": profile_page(user),
        "manuallyApprovesFollowers": False,  # locked accounts come with the next issue
        # As the client API says of every account: the directory and search list everyone.
        "discoverable": True,
        "indexable": True,
        "webfinger": f"{user.username}@{domain()}",
        "publicKey": {"id": key_id(actor), "owner": actor, "publicKeyPem": public_pem},
        "tag": [],
        "attachment": [],
        "endpoints": {"sharedInbox": shared_inbox()},
    }
    if user.signup_time:  # Mastodon gives the day alone (its midnight)
        day = datetime.fromtimestamp(user.signup_time, tz=UTC).date()
        data["published"] = f"{day.isoformat()}T00:00:00Z"
    if user.avatar:
        data["icon"] = image("avatar", user.avatar, AVATAR_SIZE)
    if user.header:
        data["image"] = image("header", user.header, HEADER_SIZE)
    return data


def instance_actor(public_pem: str) -> dict[str, Any]:
    """The instance actor (`Application`): it signs the site's own fetches (Mastodon's
    /actor, named by the domain)."""
    actor = instance_actor_id()
    return {
        "@context": context("manuallyApprovesFollowers", security=True),
        "id": actor,
        "type": "Application",
        "inbox": shared_inbox(),
        "outbox": f"{actor}/outbox",
        "preferredUsername": instance_actor_name(),
        "url": absolute(url("social:home")),
        "manuallyApprovesFollowers": True,
        "publicKey": {"id": key_id(actor), "owner": actor, "publicKeyPem": public_pem},
        "endpoints": {"sharedInbox": shared_inbox()},
    }


def instance_actor_name() -> str:
    """The instance actor's preferredUsername: SITE_URL's host, lower-cased (no account
    name holds a dot, so it is no one's)."""
    return (urlsplit(settings.SITE_URL).hostname or "").lower()


def tombstone(object_id: str, former_type: str = "") -> dict[str, Any]:
    """What a deleted (or suspended) actor or a removed post answers, with 410 Gone."""
    data: dict[str, Any] = {"@context": AS_PROFILE, "id": object_id, "type": "Tombstone"}
    if former_type:
        data["formerType"] = former_type
    return data


# Posts.


def note(post: Post, *, embedded: bool = False) -> dict[str, Any]:
    """A post as a `Note` (Mastodon's NoteSerializer; see the module docstring for what
    it leaves out). embedded: inside an activity or a collection, whose @context holds."""
    mentioned = [actor_id(user_id) for _name, user_id in post.mentions]
    data: dict[str, Any] = {
        "id": post_id(post.id),
        "type": "Note",
        "summary": post.spoiler_text or None,
        "inReplyTo": post_id(post.reply_to) if post.reply_to else None,
        "published": iso(post.time),
        "url": permalink(post.id),
        "attributedTo": actor_id(post.author_id),
        "to": [PUBLIC],
        "cc": [f"{actor_id(post.author_id)}/followers", *unique(mentioned)],
        # A content warning hides the whole post: Mastodon marks such a post sensitive.
        "sensitive": post.sensitive or bool(post.spoiler_text),
        "content": linked_html(str(post_text(post))),
        "attachment": [document(item) for item in post.media],
        "tag": [
            *({"type": "Mention", "href": actor_id(uid), "name": f"@{name}"}
              for name, uid in unique_mentions(post.mentions)),
            *({"type": "Hashtag", "href": absolute(tag_url(tag)), "name": f"#{tag}"}
              for tag in post.tags),
        ],
    }  # fmt: skip
    if not embedded:
        data = {"@context": context(*NOTE_TERMS), **data}
    return data


def document(item: Attachment) -> dict[str, Any]:
    """A post's picture as Mastodon's attachment: a `Document`, its alt text as `name`."""
    return {
        "type": "Document",
        "mediaType": MEDIA_TYPE,
        "url": absolute(media.url(KIND, item.id, FULL)),
        "name": item.alt or None,
        "blurhash": item.blurhash or None,
        "width": item.width,
        "height": item.height,
    }


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def unique_mentions(mentions: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """Each mentioned account once (a post may name one twice, in two cases)."""
    seen: dict[int, str] = {}
    for name, user_id in mentions:
        seen.setdefault(user_id, name)
    return [(name, user_id) for user_id, name in seen.items()]


def create(post: Post, *, embedded: bool = False) -> dict[str, Any]:
    """The `Create` that published post, the Note inside it."""
    inner = note(post, embedded=True)
    data: dict[str, Any] = {
        "id": activity_id(post.id),
        "type": "Create",
        "actor": inner["attributedTo"],
        "published": inner["published"],
        "to": inner["to"],
        "cc": inner["cc"],
        "object": inner,
    }
    return data if embedded else {"@context": context(*NOTE_TERMS), **data}


def announce(repost: Post, *, embedded: bool = False) -> dict[str, Any]:
    """A repost as an `Announce` of the post it shares, addressed to everyone, its
    reposter's followers and the shared post's author (when the read path gave it)."""
    actor = actor_id(repost.author_id)
    cc = [*([actor_id(repost.original.author_id)] if repost.original else []), f"{actor}/followers"]
    data: dict[str, Any] = {
        "id": activity_id(repost.id),
        "type": "Announce",
        "actor": actor,
        "published": iso(repost.time),
        "to": [PUBLIC],
        "cc": cc,
        "object": post_id(repost.repost_of or 0),
    }
    return data if embedded else {"@context": AS_PROFILE, **data}


def activity(post: Post, *, embedded: bool = False) -> dict[str, Any]:
    """The activity that published post: Announce for a repost, Create for a post."""
    if post.repost_of is not None:
        return announce(post, embedded=embedded)
    return create(post, embedded=embedded)


# Collections (Mastodon's CollectionSerializer, paged as its controllers page).


def collection(collection_id: str, total: int, *, paged: bool = True) -> dict[str, Any]:
    """An `OrderedCollection` with its size and (paged) its first page's address."""
    data: dict[str, Any] = {
        "@context": AS_PROFILE,
        "id": collection_id,
        "type": "OrderedCollection",
        "totalItems": total,
    }
    if paged:
        data["first"] = page_url(collection_id, 1)
    else:
        data["orderedItems"] = []
    return data


def collection_page(
    collection_id: str,
    number: int,
    items: list[Any],
    *,
    total: int | None = None,
    start: int | None = None,
    has_next: bool = False,
    next_from: int | None = None,
    terms: Sequence[str] = (),
) -> dict[str, Any]:
    """An `OrderedCollectionPage`: page `number` of collection_id (starting at list
    position `start` when not its number's own place), its items in order, `next` when
    there is a page after it (at next_from when not its number's own place), `prev` from
    page 2 on. terms: the extension terms its items use."""
    data: dict[str, Any] = {
        "@context": context(*terms) if terms else AS_PROFILE,
        "id": page_url(collection_id, number, start),
        "type": "OrderedCollectionPage",
    }
    if total is not None:
        data["totalItems"] = total
    if has_next:
        data["next"] = page_url(collection_id, number + 1, next_from)
    if number > 1:
        data["prev"] = page_url(collection_id, number - 1)
    data["partOf"] = collection_id
    data["orderedItems"] = items
    return data
