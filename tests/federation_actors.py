"""Remote actors as Mastodon serves them, for the federation tests: an actor document
(`mastodon_actor`), its WebFinger answer (`webfinger`), a collection's first document
(`collection`), and RSA keys made once for the whole run."""

from __future__ import annotations

from functools import cache
from typing import Any

from social.federation.signatures import generate_key_pair

AS = "https://www.w3.org/ns/activitystreams"


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
