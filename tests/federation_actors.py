"""Remote actors as Mastodon serves them, for the federation tests: an actor document
(`mastodon_actor`), its WebFinger answer (`webfinger`), a collection's first document
(`collection`), one of its public notes (`mastodon_note`), and RSA keys made once for the
whole run."""

from __future__ import annotations

from functools import cache
from typing import Any

from social.federation.signatures import generate_key_pair

AS = "https://www.w3.org/ns/activitystreams"
PUBLIC = f"{AS}#Public"


@cache
def public_pem(which: int = 0) -> str:
    """An RSA-2048 public key (PEM); `which` picks one of several, each made once."""
    return generate_key_pair().public_pem


def mastodon_actor(
    username: str = "alice", host: str = "remote.test", scheme: str = "https", **changes: Any
) -> dict[str, Any]:
    """The actor document Mastodon 4 serves for https://host/users/username (changes:
    fields replaced; a value of None leaves the field out)."""
    name = username
    base = f"{scheme}://{host}"
    uri = f"{base}/users/{name}"
    doc: dict[str, Any] = {
        "@context": [
            AS,
            "https://w3id.org/security/v1",
            {
                "manuallyApprovesFollowers": "as:manuallyApprovesFollowers",
                "toot": "http://joinmastodon.org/ns#",
            },
        ],
        "id": uri,
        "type": "Person",
        "following": f"{uri}/following",
        "followers": f"{uri}/followers",
        "inbox": f"{uri}/inbox",
        "outbox": f"{uri}/outbox",
        "featured": f"{uri}/collections/featured",
        "preferredUsername": name,
        "name": name.capitalize() + " Remote",
        "summary": (
            '<p>Hello from <a href="https://remote.test/tags/redis" class="mention hashtag" '
            'rel="tag">#<span>redis</span></a><script>alert(1)</script></p>'
        ),
        "url": f"{base}/@{name}",
        "manuallyApprovesFollowers": False,
        "discoverable": True,
        "published": "2023-04-05T00:00:00Z",
        "devices": f"{uri}/collections/devices",
        "publicKey": {"id": f"{uri}#main-key", "owner": uri, "publicKeyPem": public_pem()},
        "tag": [],
        "attachment": [],
        "endpoints": {"sharedInbox": f"{base}/inbox"},
        "icon": {"type": "Image", "mediaType": "image/png", "url": f"{base}/avatars/{name}.png"},
        "image": {"type": "Image", "mediaType": "image/png", "url": f"{base}/headers/{name}.png"},
    }
    for field, value in changes.items():
        if value is None:
            doc.pop(field, None)
        else:
            doc[field] = value
    return doc


def webfinger(name: str, domain: str, href: str, subject: str | None = None) -> dict[str, Any]:
    """Mastodon's WebFinger answer for acct:name@domain pointing to the actor href."""
    return {
        "subject": subject or f"acct:{name}@{domain}",
        "aliases": [href],
        "links": [
            {"rel": "http://webfinger.net/rel/profile-page", "type": "text/html", "href": href},
            {"rel": "self", "type": "application/activity+json", "href": href},
            {"rel": "http://ostatus.org/schema/1.0/subscribe", "template": "https://x/{uri}"},
        ],
    }


def collection(url: str, total: int) -> dict[str, Any]:
    """A collection's first document, as Mastodon serves followers, following, outbox."""
    return {
        "@context": AS,
        "id": url,
        "type": "OrderedCollection",
        "totalItems": total,
        "first": f"{url}?page=1",
    }


def mastodon_note(
    author: str, number: int, *, hashtag: str = "redis", before: str = "", **changes: Any
) -> dict[str, Any]:
    """A public Note of the actor author (its id, https://host/users/name) as Mastodon 4
    writes one: a hashtag in its HTML and its tags; before: HTML put ahead of "about"
    (a script a sanitiser must drop); changes: fields replaced."""
    base = author.split("/users/")[0]
    name = author.rsplit("/", 1)[-1]
    uri = f"{author}/statuses/{number}"
    data: dict[str, Any] = {
        "id": uri,
        "type": "Note",
        "summary": None,
        "inReplyTo": None,
        "published": "2026-11-27T10:00:00Z",
        "url": f"{base}/@{name}/{number}",
        "attributedTo": author,
        "to": [PUBLIC],
        "cc": [f"{author}/followers"],
        "sensitive": False,
        "content": (
            f"<p>Note {number} {before}about "
            f'<a href="{base}/tags/{hashtag.lower()}" class="mention hashtag" rel="tag">'
            f"#<span>{hashtag}</span></a></p>"
        ),
        "attachment": [],
        "tag": [
            {"type": "Hashtag", "href": f"{base}/tags/{hashtag.lower()}", "name": f"#{hashtag}"}
        ],
    }
    data.update(changes)
    return data
