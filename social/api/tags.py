"""/api/v1/tags/:name (a tag and its last week of use), following a tag (not here: 422),
and /api/v1/featured_tags/suggestions (the tags the reader uses most). The site features
no tags on profiles: /api/v1/featured_tags and an account's featured tags are empty."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from social.repository.posts.tags import TagUse
from social.text import normal_tag

from . import entities
from .base import ApiError, json_response
from .common import EntityView

RAW_MAX = 200  # characters of a path's tag looked at (normal_tag keeps 50)
SUGGESTIONS = 10  # tags suggested at most (Mastodon's)


def tag_name(raw: str) -> str:
    """The tag a path names, normalised as posts file it (text.normal_tag), or 404."""
    name = normal_tag(raw[:RAW_MAX])
    if not name:
        raise ApiError(404, "Record not found")
    return name


class TagView(EntityView):
    """GET /api/v1/tags/:name: the tag (as posts file it), its history over the last seven
    days from its own list of posts (repository/posts/tags.py: two round trips) and `following`
    (false: the site has no followed tags) for a user's call; 404 for a tag no post has
    used, as Mastodon's."""

    public = frozenset({"get"})  # any token, as Mastodon's (no scope named)

    def get(self, request: HttpRequest, hashtag: str) -> HttpResponse:
        use = self.repo.tags.use(tag_name(hashtag))
        if use is None:
            raise ApiError(404, "Record not found")
        following = False if self.user is not None else None
        render = entities.Render(self.base_url())
        return json_response(entities.tag_use(render, use, following=following))


class TagFollowView(EntityView):
    """POST /api/v1/tags/:name/follow, /unfollow: the site has no followed tags (a known
    tag is 422, as Mastodon answers what an instance does not allow; another 404)."""

    scopes = {"post": "write:follows"}

    def post(self, request: HttpRequest, hashtag: str) -> HttpResponse:
        self.me()
        if self.repo.tags.use(tag_name(hashtag)) is None:
            raise ApiError(404, "Record not found")
        raise ApiError(422, "Following tags is not supported on this server")


class FeaturedTagSuggestionsView(EntityView):
    """GET /api/v1/featured_tags/suggestions: the tags the reader used most in their newest
    posts (repository/posts/tags.py), most used first; `history` empty (not read for these)."""

    scopes = {"get": "read:accounts"}

    def get(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        render = entities.Render(self.base_url())
        used = self.repo.tags.most_used(me.id, SUGGESTIONS)
        return json_response([entities.tag_use(render, TagUse(name, ())) for name, _ in used])
