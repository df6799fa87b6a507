"""Timelines (home, public, tag), favourites, notifications and search: every list of
posts read on the read path for the reader (paging.read_posts), so blocks, mutes, word
filters and visibility apply exactly as on the site's pages."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from social.repository import HomeFeed, Liked, TagPosts, Timeline
from social.repository.api_reads import NOTIFICATION_KINDS, Event
from social.text import normal_tag

from . import entities
from .base import ApiError, json_response
from .common import EntityView
from .forms import flag, limit_param, text_param
from .paging import cursor, link_header, read_posts

# Mastodon's notification types, and ours they stand for.
TYPES = {
    "follow": "follow", "favourite": "like", "mention": "mention", "reply": "reply",
    "reblog": "repost",
}  # fmt: skip


class HomeView(EntityView):
    """GET /api/v1/timelines/home: the reader's home feed, as the home page reads it."""

    scopes = {"get": "read:statuses"}
    checks_token_on_page = True

    def get(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        page = read_posts(
            self.repo, HomeFeed(me.id), self.viewer, request.GET, check=self.token_check
        )
        return self.statuses_response(page)


class PublicView(EntityView):
    """GET /api/v1/timelines/public: the global timeline (every account here is local;
    remote=true and only_media=true list nothing)."""

    scopes = {"get": "read:statuses"}
    public = frozenset({"get"})

    checks_token_on_page = True

    def get(self, request: HttpRequest) -> HttpResponse:
        if flag(request.GET, "remote") or flag(request.GET, "only_media"):
            self.confirm_token()
            return json_response([])
        page = read_posts(self.repo, Timeline(), self.viewer, request.GET, check=self.token_check)
        return self.statuses_response(page)


class TagView(EntityView):
    """GET /api/v1/timelines/tag/:hashtag: the newest posts with #hashtag."""

    scopes = {"get": "read:statuses"}
    public = frozenset({"get"})

    checks_token_on_page = True

    def get(self, request: HttpRequest, hashtag: str) -> HttpResponse:
        tag = normal_tag(hashtag[:100])
        if not tag or flag(request.GET, "remote") or flag(request.GET, "only_media"):
            self.confirm_token()
            return json_response([])
        page = read_posts(
            self.repo, TagPosts(tag), self.viewer, request.GET, check=self.token_check
        )
        return self.statuses_response(page)


class FavouritesView(EntityView):
    """GET /api/v1/favourites: the posts the reader likes, most recently liked first."""

    scopes = {"get": "read:favourites"}

    checks_token_on_page = True

    def get(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        page = read_posts(self.repo, Liked(me.id), self.viewer, request.GET, check=self.token_check)
        return self.statuses_response(page)


class NotificationsView(EntityView):
    """GET /api/v1/notifications: follows, favourites, mentions and replies one by one,
    newest first (types[] / exclude_types[] filter them); as the notifications page, none
    from accounts kept apart or muted, or about posts the reader may not see or filters.
    (The site's unread count is cleared by its own page, as Mastodon's markers are.)"""

    scopes = {"get": "read:notifications"}

    def get(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        params = request.GET
        limit = limit_param(params, 40, 80)
        wanted = set(self.kinds(params.getlist("types[]") or params.getlist("types")))
        if not wanted:
            wanted = set(NOTIFICATION_KINDS)
        wanted -= set(self.kinds(params.getlist("exclude_types[]")))
        max_id, since_id, min_id = (cursor(params, n) for n in ("max_id", "since_id", "min_id"))
        events = [e for e in self.repo.api_reads.events(me.id) if e.kind in wanted]
        events = after(events, max_id) if max_id is not None else events
        for newer_than in (since_id, min_id):
            events = before(events, newer_than) if newer_than is not None else events
        if min_id is not None:  # the page just above min_id: the oldest of those newer
            events = events[-limit * 4 :]
        shown, posts, read = self.repo.api_reads.shown_events(self.viewer, events[: limit * 4])
        page = shown[-limit:] if min_id is not None else shown[:limit]
        data = self.notifications(page, posts, read.page.counts if read else {})
        headers = {}
        more = len(shown) > limit or len(events) > limit * 4
        link = link_header(
            request,
            page[-1].id if page and more and min_id is None else None,
            page[0].id if page else None,
        )
        if link:
            headers["Link"] = link
        return json_response(data, headers=headers)

    @staticmethod
    def kinds(types: list[str]) -> list[str]:
        return [TYPES[t] for t in types[:10] if t in TYPES]

    def notifications(self, events: list[Event], posts: dict, counts: dict) -> list[dict]:
        named = [posts[e.post_id] for e in events if e.post_id in posts]
        render = self.render(named, [e.actor_id for e in events])
        found = (entities.notification(render, e, posts, counts) for e in events)
        return [n for n in found if n is not None]


def after(events: list[Event], event_id: int) -> list[Event]:
    """The events older than event_id: those after it in the list (events of one second
    keep the list's order), or by id when it is gone."""
    at = next((i for i, e in enumerate(events) if e.id == event_id), None)
    return events[at + 1 :] if at is not None else [e for e in events if e.id < event_id]


def before(events: list[Event], event_id: int) -> list[Event]:
    """The events newer than event_id (see after)."""
    at = next((i for i, e in enumerate(events) if e.id == event_id), None)
    return events[:at] if at is not None else [e for e in events if e.id > event_id]


class ClearNotificationsView(EntityView):
    """POST /api/v1/notifications/clear: delete every notification of the reader."""

    scopes = {"post": "write:notifications"}

    def post(self, request: HttpRequest) -> HttpResponse:
        self.repo.notifications.clear(self.me().id)
        return json_response({})


class SearchView(EntityView):
    """GET /api/v2/search?q=: accounts and hashtags, as /search/ finds them (the site does
    not search the text of posts: `statuses` is always empty)."""

    scopes = {"get": "read:search"}
    public = frozenset({"get"})

    def get(self, request: HttpRequest) -> HttpResponse:
        query = text_param(request.GET, "q", 500).strip()
        kind = text_param(request.GET, "type", 20)
        if not query:
            raise ApiError(400, "Validation failed: q can't be blank")
        limit = limit_param(request.GET, 20, 40)
        results = self.repo.search.search(query, self.viewer)
        people = [r.user for r in results.people][:limit] if kind in ("", "accounts") else []
        tags = results.tags[:limit] if kind in ("", "hashtags") else []
        render = self.render(user_ids=[u.id for u in people])
        return json_response(
            {
                "accounts": [a for u in people if (a := render.account(u.id)) is not None],
                "statuses": [],
                "hashtags": [entities.tag(render, t.tag, t.posts) for t in tags],
            }
        )
