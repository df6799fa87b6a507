"""Timelines (home, public, tag), favourites and search: every list of posts read on the
read path for the reader (paging.read_posts), so blocks, mutes, word filters and
visibility apply exactly as on the site's pages. Notifications: notifications.py."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from social.federation.resolve import Found, search_remote
from social.repository import HOME, PLAIN, PUBLIC, HomeFeed, Liked, TagPosts, Timeline
from social.repository.read.search import KINDS
from social.text import normal_tag

from . import entities
from .base import ApiError, json_response
from .common import EntityView
from .forms import flag, limit_param, number_param, text_param
from .paging import read_posts


class HomeView(EntityView):
    """GET /api/v1/timelines/home: the reader's home feed, as the home page reads it."""

    scopes = {"get": "read:statuses"}
    checks_token_on_page = True

    def get(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        page = read_posts(
            self.repo, HomeFeed(me.id), self.viewer, request.GET, shows=HOME, check=self.token_check
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
        page = read_posts(
            self.repo, Timeline(), self.viewer, request.GET, shows=PUBLIC, check=self.token_check
        )
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
            self.repo, TagPosts(tag), self.viewer, request.GET, shows=PUBLIC, check=self.token_check
        )
        return self.statuses_response(page)


class FavouritesView(EntityView):
    """GET /api/v1/favourites: the posts the reader likes, most recently liked first."""

    scopes = {"get": "read:favourites"}

    checks_token_on_page = True

    def get(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        page = read_posts(
            self.repo, Liked(me.id), self.viewer, request.GET, shows=PLAIN, check=self.token_check
        )
        return self.statuses_response(page)


class SearchView(EntityView):
    """GET /api/v2/search?q=: accounts, hashtags and statuses as /search/ finds them
    (statuses: the reader's own, liked, reposted, replied to or mentioning them, as
    Mastodon's search cluster finds them; none without a user). `type` narrows
    to one kind (another value finds nothing, as Mastodon's); `limit` and `offset` page
    each kind; `resolve=true` asks another server for the account an address or a URL
    names (social/federation/resolve.py; a user's token only); `following` is ignored."""

    scopes = {"get": "read:search"}
    public = frozenset({"get"})

    def get(self, request: HttpRequest) -> HttpResponse:
        query = text_param(request.GET, "q", 500).strip()
        kind = text_param(request.GET, "type", 20)
        if not query:
            raise ApiError(400, "Validation failed: q can't be blank")
        limit = limit_param(request.GET, 20, 40)
        offset = number_param(request.GET, "offset") or 0  # past what a kind holds: none
        kinds = KINDS if kind == "" else {kind} & set(KINDS)
        # resolve=true: an address or a URL is asked of its server (a user's token only).
        asked = flag(request.GET, "resolve") and "accounts" in kinds
        remote = search_remote(self.repo, self.viewer.id, query) if asked else Found()
        results = self.repo.search.search(
            query, self.viewer, kinds=kinds, limit=limit, offset=offset, resolved=remote.ids
        )
        posts = results.posts
        render = self.render(posts.items)
        return json_response(
            {
                "accounts": self.listed_accounts({p.user.id: p.row for p in results.people}),
                "statuses": entities.statuses(render, posts.items, posts.counts),
                "hashtags": [entities.tag(render, t.tag, t.posts) for t in results.tags],
            }
        )
