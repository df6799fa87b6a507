"""Notifications and markers: Mastodon's /api/v1/notifications (one by one),
/api/v2/notifications (grouped), their unread counts, and /api/v1/markers.

All read the notification store (social/repository/live/notifications.py) with the site's own
grouping and visibility, so an app lists what the notifications page lists, and both
share the `notifications` marker: what an app marks read is read on the site, and the
other way round. Each answer costs a fixed number of round trips whatever the number of
notifications (tests/test_api_notifications.py pins them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse

from social.numbers import id_number
from social.repository.live.markers import TIMELINES
from social.repository.live.notification_events import GROUPED, KINDS, MASTODON_TYPES
from social.repository.live.notifications import (
    GroupPage,
    NotificationGroup,
    Query,
)

from . import entities
from .base import ApiError, json_response
from .common import EntityView
from .forms import invalid, limit_param
from .paging import LIST_MAX, cursor, link_header

# Mastodon's notification types, and our kinds each stands for (a reply is a mention).
TYPES = {
    name: tuple(kind for kind in KINDS if MASTODON_TYPES[kind] == name)
    for name in dict.fromkeys(MASTODON_TYPES.values())
}
GROUP_KEY_RE = re.compile(rf"(?:ungrouped|{'|'.join(GROUPED)})-[0-9]{{1,19}}")
CURSORS = ("max_id", "since_id", "min_id")


def id_of(value: object) -> int | None:
    """An id (social.numbers.id_number), else None."""
    return id_number(value)


def cursor_of(params: Mapping[str, Any], name: str) -> int | None:
    """A paging cursor (paging.cursor: a number, else 400; nothing is read)."""
    return cursor(params, name)


def limit_of(params: Mapping[str, Any], default: int, most: int) -> int:
    """`limit` (forms.limit_param: a number clamped to 1..most, else 400)."""
    return limit_param(params, default, most)


def values(request: HttpRequest, name: str) -> list[str] | None:
    """A list parameter (`name[]`, or `name` repeated); None when absent."""
    found = request.GET.getlist(f"{name}[]") or request.GET.getlist(name)
    if not found and f"{name}[]" not in request.GET and name not in request.GET:
        return None
    return [v[:40] for v in found[:LIST_MAX]]


def query_of(request: HttpRequest, *, grouping: bool) -> Query:
    """types[], exclude_types[], account_id and (grouping) grouped_types[] as a Query."""
    wanted = values(request, "types")
    kinds = set(KINDS) if not wanted else {k for t in wanted for k in TYPES.get(t, ())}
    kinds -= {k for t in values(request, "exclude_types") or () for k in TYPES.get(t, ())}
    grouped = set(GROUPED) if grouping else set()
    asked = values(request, "grouped_types") if grouping else None
    if asked is not None:  # only those named (Mastodon groups none of a list it ignores)
        grouped &= {k for t in asked for k in TYPES.get(t, ())}
    account = request.GET.get("account_id")
    account_id = None
    if account not in (None, ""):
        account_id = id_of(account)
        if account_id is None:
            raise invalid("account_id is not a valid id")
    return Query(frozenset(kinds), frozenset(grouped), account_id)


class NotificationsBase(EntityView):
    """What the notification endpoints share: the reader's page of groups."""

    scopes = {"get": "read:notifications"}

    def page(self, request: HttpRequest, *, grouping: bool) -> GroupPage:
        """The page of groups the request asks for (every parameter checked first)."""
        self.me()
        params = request.GET
        query = query_of(request, grouping=grouping)
        limit = limit_of(params, 40, 80)
        cursors = {name: cursor_of(params, name) for name in CURSORS}
        return self.repo.notifications.groups(self.viewer, query, limit=limit, **cursors)

    def one(self, key: str) -> tuple[NotificationGroup, dict]:
        """The group of key as the reader may see it, with its post's counts; or 404."""
        self.me()
        found = self.repo.notifications.group(self.viewer, key)
        if found is None:
            raise ApiError(404, "Record not found")
        return found[0], found[1].page.counts

    def render_groups(self, groups: list[NotificationGroup]):
        """The Render for groups: their sample accounts and the authors (and, for a reply,
        the reader it answers) of their posts, in one round trip."""
        posts = [g.post for g in groups if g.post is not None]
        ids = [u.id for g in groups for u in g.accounts[: entities.SAMPLE_ACCOUNTS]]
        me = self.me()
        return self.render(posts, ids, read_names={me.username: me.id})


class NotificationsView(NotificationsBase):
    """GET /api/v1/notifications: follows, favourites, mentions (replies among them) and
    reblogs one by one, newest first, as the notifications page shows them."""

    def get(self, request: HttpRequest) -> HttpResponse:
        found = self.page(request, grouping=False)
        render = self.render_groups(found.groups)
        counts = found.read.page.counts if found.read else {}
        data = [
            n
            for g in found.groups
            if (n := entities.notification(render, g, g.events[0], counts)) is not None
        ]
        return json_response(data, headers=link_header(request, found.next_max, found.prev_min))


class NotificationView(NotificationsBase):
    """GET /api/v1/notifications/:id: one notification."""

    def get(self, request: HttpRequest, notification_id: str) -> HttpResponse:
        event_id = id_of(notification_id)
        if event_id is None:
            raise ApiError(404, "Record not found")
        group, counts = self.one(f"ungrouped-{event_id}")
        render = self.render_groups([group])
        found = entities.notification(render, group, group.events[0], counts)
        if found is None:
            raise ApiError(404, "Record not found")
        return json_response(found)


class GroupedNotificationsView(NotificationsBase):
    """GET /api/v2/notifications: the groups of the notifications page (likes and reposts
    per post, follows per day; grouped_types[] narrows it), newest first, with the
    accounts and statuses they name beside them."""

    def get(self, request: HttpRequest) -> HttpResponse:
        expand = request.GET.get("expand_accounts") or "full"
        if expand not in ("full", "partial_avatars"):
            raise ApiError(
                400, "Invalid value for 'expand_accounts', allowed values are 'full' and "
                "'partial_avatars'",
            )  # fmt: skip
        found = self.page(request, grouping=True)
        data = self.results(found.groups, found.read.page.counts if found.read else {}, True)
        if expand == "partial_avatars":  # every account comes in full
            data["partial_accounts"] = []
        return json_response(data, headers=link_header(request, found.next_max, found.prev_min))

    def results(self, groups: list[NotificationGroup], counts: Mapping, paged: bool) -> dict:
        """A GroupedNotificationsResults."""
        render = self.render_groups(groups)
        ids = dict.fromkeys(u.id for g in groups for u in g.accounts[: entities.SAMPLE_ACCOUNTS])
        posts = {g.post.id: g.post for g in groups if g.post is not None}
        return {
            "accounts": [a for i in ids if (a := render.account(i)) is not None],
            "statuses": [entities.status(render, p, counts) for p in posts.values()],
            "notification_groups": [entities.notification_group(g, paged=paged) for g in groups],
        }


class NotificationGroupView(GroupedNotificationsView):
    """GET /api/v2/notifications/:group_key: one group (its key as a page gave it)."""

    def get(self, request: HttpRequest, group_key: str) -> HttpResponse:  # type: ignore[override]
        group, counts = self.found(group_key)
        return json_response(self.results([group], counts, False))

    def found(self, group_key: str) -> tuple[NotificationGroup, dict]:
        if not GROUP_KEY_RE.fullmatch(group_key):
            raise ApiError(404, "Record not found")
        return self.one(group_key)


class NotificationGroupAccountsView(NotificationGroupView):
    """GET /api/v2/notifications/:group_key/accounts: every account of a group."""

    def get(self, request: HttpRequest, group_key: str) -> HttpResponse:  # type: ignore[override]
        group, _ = self.found(group_key)
        return json_response(self.accounts_json(list(group.accounts)))


class UnreadCountView(NotificationsBase):
    """GET /api/v1/notifications/unread_count (events) and /api/v2/... (groups): how many
    are newer than the `notifications` marker, counting at most `limit` (100, at most
    1,000)."""

    grouping = False

    def get(self, request: HttpRequest) -> HttpResponse:
        self.me()
        query = query_of(request, grouping=self.grouping)
        limit = limit_of(request.GET, 100, 1000)
        count = self.repo.notifications.unread_count(self.viewer, query, limit=limit)
        return json_response({"count": count})


class MarkersView(EntityView):
    """GET /api/v1/markers?timeline[]=home&timeline[]=notifications: where the reader
    stopped; POST (home[last_read_id], notifications[last_read_id]) saves it. The
    notifications page saves `notifications` too, when it is seen."""

    scopes = {"get": "read:statuses", "post": "write:statuses"}

    def get(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        wanted = [t for t in values(request, "timeline") or () if t in TIMELINES]
        if not wanted:
            return json_response({})
        saved = self.repo.markers.get(me.id)
        return json_response({t: entities.marker(saved[t]) for t in wanted if t in saved})

    def post(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        wanted = {}
        for timeline in TIMELINES:
            value = self.last_read(timeline)
            if value is None:
                continue
            found = id_of(value)
            if found is None:
                raise invalid(f"{timeline}[last_read_id] is not a valid id")
            wanted[timeline] = found
        saved = self.repo.markers.save(me.id, wanted)
        return json_response({t: entities.marker(m) for t, m in saved.items()})

    def last_read(self, timeline: str) -> object:
        """The last_read_id sent for timeline: JSON's {"home": {"last_read_id": ...}} or a
        form's home[last_read_id]; None when not sent."""
        params = self.request.params
        nested = params.get(timeline)
        if isinstance(nested, dict):
            return nested.get("last_read_id")
        value = params.get(f"{timeline}[last_read_id]")
        return None if value in (None, "") else value


class ClearNotificationsView(EntityView):
    """POST /api/v1/notifications/clear: delete every notification of the reader."""

    scopes = {"post": "write:notifications"}

    def post(self, request: HttpRequest) -> HttpResponse:
        self.repo.notifications.clear(self.me().id)
        return json_response({})
