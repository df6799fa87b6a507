"""What the streaming process asks the repository, synchronously (it runs these in a thread,
asyncio.to_thread): who a token is, and what each listener of an event is told.

Why the sync repository in a thread rather than an async loader: the decision is the read
path's (reader.py, visibility.py) and the entities are the REST API's (entities.py), both
sync; a second, async copy of either would drift from the pages. One thread call handles
one event for every listener it may concern, so the event loop only moves bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from social.api import entities
from social.api.common import render_for
from social.api.scopes import covers
from social.repository import Repository, User, Viewer
from social.repository.live.bus import DELETE, FILTERS_CHANGED, NOTIFICATION, UPDATE
from social.repository.live.live import ListenerFilters, LiveEvent

from .errors import Refused
from .streams import NOTIFICATION_STREAMS, Stream

# Mastodon's errors for a token (streaming/index.js: AuthenticationError is 401).
MISSING_TOKEN = "Missing access token"
INVALID_TOKEN = "Invalid access token"
DISABLED = "Your login is currently disabled"
NO_SCOPE = "Access token does not have the required scopes"


@dataclass(frozen=True)
class Listener:
    """Who a connection reads as: their account and token's scopes."""

    user: User
    scopes: tuple[str, ...]

    @cached_property
    def viewer(self) -> Viewer:
        """The reader, with their blocks and mutes always read: the user's `relations`
        flag is as it was when they connected, and they may have blocked or muted since."""
        return Viewer(self.user.id, self.user.is_staff)


def authenticate(repo: Repository, token: str) -> Listener:
    """Return the token's listener; raise Refused (401 missing, unknown or revoked, an app's
    own token or a deleted account; 403 a suspended account)."""
    if not token:
        raise Refused(401, MISSING_TOKEN)
    stored, user = repo.oauth.authenticate(token)
    if stored is None or stored.user_id is None or user is None or user.is_deleted:
        raise Refused(401, INVALID_TOKEN)
    if user.is_suspended:
        raise Refused(403, DISABLED)
    if not covers(stored.scopes, "read:statuses") and not covers(
        stored.scopes, "read:notifications"
    ):
        raise Refused(401, NO_SCOPE)
    return Listener(user, stored.scopes)


@dataclass(frozen=True)
class Audience:
    """One subscription of one connection, as the delivery sees it."""

    key: int  # the subscription's id in the hub
    listener: Listener
    stream: Stream
    base: str  # the site's origin, for the entities' URLs


@dataclass
class Told:
    """What one event tells: (subscription key, event name, payload) in order."""

    messages: list[tuple[int, str, str]] = field(default_factory=list)
    took: tuple[float, float] = (0.0, 0.0)  # monotonic begin and end (the hub's log)


def tell(
    repo: Repository,
    event: LiveEvent,
    audience: Iterable[Audience],
    filters: ListenerFilters | None = None,
) -> Told:
    """Decide and render event for each subscription that may hear of it (each reader's own
    read path at this moment: blocks, mutes, filters, hidden posts). An update is decided
    for all its readers at once (LiveStore.updates_for: a round trip or two, whatever their
    number; filters: the process's ListenerFilters) and rendered once for each distinct
    outcome."""
    audience = list(audience)
    told = Told()
    updates = _updates(repo, event, audience, filters) if event.kind == UPDATE else {}
    for sub in audience:
        message = updates.get(sub.key) if event.kind == UPDATE else _message(repo, event, sub)
        if message is not None:
            told.messages.append((sub.key, message[0], message[1]))
    return told


def _message(repo: Repository, event: LiveEvent, sub: Audience) -> tuple[str, str] | None:
    stream, listener = sub.stream, sub.listener
    if event.kind == DELETE and event.post_id is not None:
        return (DELETE, str(event.post_id)) if stream.tells_updates else None
    if event.kind == FILTERS_CHANGED:
        mine = stream.name == "user" and event.user_id == listener.user.id
        return (FILTERS_CHANGED, "undefined") if mine else None
    if event.kind == NOTIFICATION:
        return _notification(repo, event, sub)
    return None


def _hears_update(event: LiveEvent, sub: Audience) -> bool:
    """Whether the subscription's stream and token take this update at all."""
    stream = sub.stream
    if not stream.tells_updates or not covers(sub.listener.scopes, "read:statuses"):
        return False
    if stream.public and event.repost_of is not None:  # reposts stay out of the timeline
        return False
    return not stream.tag or stream.tag in event.tags


def _updates(
    repo: Repository,
    event: LiveEvent,
    audience: list[Audience],
    filters: ListenerFilters | None,
) -> dict[int, tuple[str, str]]:
    """The update message for each subscription (by key) that may see it."""
    found: dict[int, tuple[str, str]] = {}
    renders: dict[tuple[str, bool], entities.Render] = {}
    payloads: dict[object, str] = {}
    subs = [s for s in audience if _hears_update(event, s)]
    readers = [(s.listener.viewer, s.stream.name == "user") for s in subs]
    delivered = repo.live.updates_for(readers, event, filters) if subs else {}
    for sub, reader in zip(subs, readers):
        got = delivered.get(reader)
        if got is None:
            continue
        viewer = reader[0]
        # The render names the post's accounts as the reader may see them: it depends on
        # the reader only by whether they are staff (visibility.may_see_account).
        shape = (sub.base, viewer.is_staff)
        if shape not in renders:
            renders[shape] = render_for(repo, viewer, sub.base, [got.post])
        memo = (shape, got.post.id, tuple(got.counts.items()))
        payload = payloads.get(memo)
        if payload is None:
            status = entities.status(renders[shape], got.post, got.counts)
            payload = payloads[memo] = json.dumps(status, ensure_ascii=False)
        found[sub.key] = (UPDATE, payload)
    return found


def _notification(repo: Repository, event: LiveEvent, sub: Audience) -> tuple[str, str] | None:
    note = event.notification
    mine = event.user_id == sub.listener.user.id and sub.stream.name in NOTIFICATION_STREAMS
    if note is None or not mine or not covers(sub.listener.scopes, "read:notifications"):
        return None
    shown = repo.live.notification_for(sub.listener.viewer, note)
    if shown is None:
        return None
    group, counts = shown
    me, viewer = sub.listener.user, sub.listener.viewer
    posts = [group.post] if group.post is not None else []
    ids = [u.id for u in group.accounts]
    render = render_for(repo, viewer, sub.base, posts, ids, read_names={me.username: me.id})
    data = entities.notification(render, group, group.events[0], counts)
    return (NOTIFICATION, json.dumps(data, ensure_ascii=False)) if data is not None else None
