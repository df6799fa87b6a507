"""What a page does when one of our accounts acts and other servers may need to know: one
job queued, nothing more. The deliver queue's `fanout` handler
(social/work_handlers/deliver.py) then reads who should hear of it (the author's remote
followers, the accounts a post mentions or answers, the account followed or blocked),
builds the activity and queues one delivery per distinct inbox.

So a page pays one round trip when the site federates and none when it does not; the
remote followers are never counted on the page. A site federates when its SITE_URL names
a public host (a public IP address, or a dotted DNS name under none of the special-use
names: .localhost, .test, .example, .invalid, .local, .home.arpa, .internal) or
FEDERATION_HOSTS routes peers (two local instances, tests): a site on http://127.0.0.1 or
http://testserver has no neighbours to tell.

Each hook runs after the action is stored. A full deliver queue loses the news (logged):
the action stands, and other servers learn of it when they next fetch.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from functools import lru_cache
from urllib.parse import urlsplit

from django.conf import settings

from social import work

from .deliver import FANOUT, QUEUE

log = logging.getLogger("social.federation")

# The actions (the payload's `action`) and what their `object` is.
CREATE = "create"  # a post of the actor's (its id)
DELETE = "delete"  # a post of the actor's, deleted
LIKE, UNLIKE = "like", "unlike"  # a post (as acted on: a repost's id stands for its post)
REPOST = "repost"  # the actor's repost (its id)
UNREPOST = "unrepost"  # the post no longer reposted
FOLLOW, UNFOLLOW = "follow", "unfollow"  # an account
BLOCK, UNBLOCK = "block", "unblock"  # an account
UPDATE = "update"  # the actor's own profile (no object)
ACTIONS = (CREATE, DELETE, LIKE, UNLIKE, REPOST, UNREPOST, FOLLOW, UNFOLLOW, BLOCK, UNBLOCK,
           UPDATE)  # fmt: skip


# Names no public server has (RFC 6761, 6762, 8375; .internal: ICANN's private use).
PRIVATE_SUFFIXES = (".localhost", ".test", ".example", ".invalid", ".local", ".home.arpa",
                    ".internal")  # fmt: skip


@lru_cache(maxsize=8)
def _public_site(site_url: str) -> bool:
    host = (urlsplit(site_url).hostname or "").lower().rstrip(".")
    try:
        return ipaddress.ip_address(host).is_global
    except ValueError:
        pass
    # A DNS name the public could reach: dotted, and under no special-use name.
    return "." in host and not f".{host}".endswith(PRIVATE_SUFFIXES)


def federating() -> bool:
    """Whether this site tells other servers of its accounts' actions (module docstring)."""
    return bool(settings.FEDERATION_HOSTS) or _public_site(settings.SITE_URL)


def queue_action(action: str, actor: int, obj: int | None = None) -> None:
    """Queue the fan-out of actor's action on obj, when the site federates."""
    if action not in ACTIONS:
        raise ValueError(f"not an action: {action!r}")
    if not federating():
        return
    payload = {"action": action, "actor": str(int(actor)), "at": str(int(time.time() * 1000))}
    if obj is not None:
        payload["object"] = str(int(obj))
    try:
        work.enqueue(QUEUE, FANOUT, payload)
    except work.QueueFull:
        log.warning("deliver queue full: %s of %s by %s not federated", action, obj, actor)


def posted(author: int, post: int) -> None:
    """author wrote post (Create{Note})."""
    queue_action(CREATE, author, post)


def deleted(author: int, post: int) -> None:
    """author's post was deleted (Delete{Tombstone})."""
    queue_action(DELETE, author, post)


def liked(user: int, post: int) -> None:
    queue_action(LIKE, user, post)


def unliked(user: int, post: int) -> None:
    queue_action(UNLIKE, user, post)


def reposted(user: int, repost: int) -> None:
    """user's repost (its own id) was written (Announce)."""
    queue_action(REPOST, user, repost)


def unreposted(user: int, post: int) -> None:
    """user no longer reposts post (Undo{Announce})."""
    queue_action(UNREPOST, user, post)


def followed(user: int, target: int) -> None:
    queue_action(FOLLOW, user, target)


def unfollowed(user: int, target: int) -> None:
    queue_action(UNFOLLOW, user, target)


def blocked(user: int, target: int) -> None:
    queue_action(BLOCK, user, target)


def unblocked(user: int, target: int) -> None:
    queue_action(UNBLOCK, user, target)


def profile_changed(user: int) -> None:
    """user's profile changed (Update{Person})."""
    queue_action(UPDATE, user)
