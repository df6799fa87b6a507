"""/api/v1/statuses/...: posting (the Idempotency-Key as the site's one-off post token),
reading one status and its context, deleting one's own, favourites, and what the site
has not (edits, bookmarks, pins, translations) answered as Mastodon answers without it."""

from __future__ import annotations

import hashlib

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext

from social import auth
from social.federation import outgoing
from social.repository import (
    WITH_HIDDEN,
    Listed,
    MediaNotFound,
    NotAllowed,
    PostCounts,
    PostNotFound,
    PostPending,
    Refused,
)
from social.repository.posts.attachments import MediaProcessing
from social.repository.read.visibility import in_api_context

from . import entities
from .base import ApiError, json_response
from .common import EntityView
from .forms import invalid, limit_param, lookup_ids, new_status
from .paging import page_number

CONTEXT_REPLIES = 60  # direct replies shown under a status (the permalink pages them)
IDEMPOTENCY_KEY_MAX = 256
LOOKUP_MAX = 20  # statuses asked for at once (GET /api/v1/statuses?id[]=)
REPLY_NOT_FOUND = "The post you are trying to reply to does not appear to exist."  # Mastodon's


def post_token(key: str) -> str | None:
    """The site's post token for an Idempotency-Key header: its SHA-256 (64 URL-safe
    characters, whatever the client sent), or None without one."""
    key = key.strip()
    if not key:
        return None
    if len(key) > IDEMPOTENCY_KEY_MAX:
        raise invalid("Idempotency-Key is too long")
    return hashlib.sha256(key.encode()).hexdigest()


class StatusesView(EntityView):
    """POST /api/v1/statuses: publish a status or a reply, under the posting limit.
    GET ?id[]=: those of up to LOOKUP_MAX statuses the reader may open, in one read."""

    scopes = {"get": "read:statuses", "post": "write:statuses"}
    public = frozenset({"get"})

    def get(self, request: HttpRequest) -> HttpResponse:
        ids = lookup_ids(request, LOOKUP_MAX)
        read = self.repo.reader.page(
            Listed(tuple(ids)), self.viewer, 1, max(1, len(ids)), shows=WITH_HIDDEN
        )
        # As the read path lists them for the reader (not across a block, no hidden post
        # but for staff); a reblog is read by its own id (GET /api/v1/statuses/:id).
        listed = {p.id: p for p in read.page.items if p.repost_of is None}
        posts = [listed[i] for i in ids if i in listed]
        return json_response(entities.statuses(self.render(posts), posts, read.page.counts))

    def post(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        form = new_status(self.request.params)
        token = post_token(request.headers.get("Idempotency-Key", ""))
        reply_to = self.replied(form.reply_to) if form.reply_to is not None else None
        headers = self.enforce(
            auth.post_limits(me.id), gettext("You have posted a lot in a short time.")
        )
        try:
            post_id = self.repo.posts.create_post(
                me.id,
                form.body,
                token=token,
                reply_to=reply_to,
                media=form.media_ids,
                spoiler_text=form.spoiler_text,
                sensitive=form.sensitive,
            )
        except MediaProcessing:  # Mastodon's words
            raise ApiError(
                422, "Cannot attach files that have not finished processing. Try again in a moment!"
            ) from None
        except MediaNotFound as missing:  # Mastodon's words
            ids = ", ".join(missing.ids)
            raise ApiError(
                422, f"Media {ids} not found or already attached to another post"
            ) from None
        except PostPending:
            raise ApiError(409, "This status is still being saved from the first try") from None
        except (PostNotFound, Refused):  # across a block: not there for them (Mastodon's)
            raise ApiError(404, REPLY_NOT_FOUND) from None
        except NotAllowed as error:
            raise ApiError(403, gettext(str(error))) from None
        outgoing.posted(me.id, post_id)
        return json_response(self.status_json(post_id), headers=headers)

    def replied(self, status_id: int) -> int:
        """The id of the status a reply answers: the one named, or the one a reblog
        shares, when the reader may open and act on it; else 404, as Mastodon answers."""
        try:
            return self.visible_post(status_id, to_act=True, shared=True)[0].id
        except (PostNotFound, ApiError):
            raise ApiError(404, REPLY_NOT_FOUND) from None


class StatusView(EntityView):
    """GET /api/v1/statuses/:id (anyone who may open its permalink); DELETE: the
    reader's own (answered with the status and its text, as Mastodon does; their own
    reblog is undone, under the repost limit, and answered as it was)."""

    scopes = {"get": "read:statuses", "delete": "write:statuses"}
    public = frozenset({"get"})

    def get(self, request: HttpRequest, status_id: str) -> HttpResponse:
        return json_response(self.status_json(status_id))

    def delete(self, request: HttpRequest, status_id: str) -> HttpResponse:
        me = self.me()
        post, counts = self.visible_post(status_id, to_act=True)
        if post.author_id != me.id:
            raise ApiError(404, "Record not found")  # Mastodon: not yours is not found
        if post.repost_of is not None:  # a reblog is undone, not deleted
            return self.unreblog(me.id, post.id, post.repost_of)
        data = entities.status(self.render([post]), post, {post.id: counts}, text=True)
        self.repo.posts.delete_own_post(me.id, post.id)
        outgoing.deleted(me.id, post.id)
        return json_response(data)

    def put(self, request: HttpRequest, status_id: str) -> HttpResponse:
        self.visible_post(status_id)
        raise invalid("Editing posts is not supported on this server")

    def unreblog(self, user_id: int, repost_id: int, shared: int) -> HttpResponse:
        """Undo the reader's reblog repost_id of shared; answer it as it was."""
        data = self.status_json(repost_id)
        headers = self.enforce(
            auth.repost_limits(user_id), gettext("You have reposted a lot in a short time.")
        )
        if self.repo.reposts.unrepost(user_id, shared):
            outgoing.unreposted(user_id, shared)
        return json_response(data, headers=headers)


class ContextView(EntityView):
    """GET /api/v1/statuses/:id/context: the posts above it (up to five, oldest first)
    and its first CONTEXT_REPLIES direct replies (oldest first)."""

    scopes = {"get": "read:statuses"}
    public = frozenset({"get"})

    def get(self, request: HttpRequest, status_id: str) -> HttpResponse:
        post, _ = self.visible_post(status_id)
        conversation = self.repo.pages.conversation(post.id, self.viewer, 1, CONTEXT_REPLIES)
        counts = conversation.counts
        # Those a filter warns of carry `filtered`.
        replies = [
            p
            for p in conversation.replies.items
            if in_api_context(counts.get(p.id, PostCounts()), reply=True)
        ]
        ancestors = [
            p
            for p in conversation.ancestors
            if in_api_context(counts.get(p.id, PostCounts()), reply=False)
        ]
        render = self.render([*ancestors, *replies])
        return json_response(
            {
                "ancestors": entities.statuses(render, ancestors, counts),
                "descendants": entities.statuses(render, replies, counts),
            }
        )


class FavouriteView(EntityView):
    """POST /api/v1/statuses/:id/favourite and /unfavourite: idempotent, under the like
    limit, as the pages' Like button; a reblog's favourite is the status it shares. The
    status the path names."""

    scopes = {"post": "write:favourites"}
    action = "like"

    def post(self, request: HttpRequest, status_id: str) -> HttpResponse:
        me = self.me()
        liking = self.action == "like"
        post, _ = self.visible_post(status_id, to_act=liking, shared=True)
        headers = self.enforce(
            auth.like_limits(me.id), gettext("You have liked a lot in a short time.")
        )
        try:
            if liking:
                if self.repo.likes.like(me.id, post.id):
                    outgoing.liked(me.id, post.id)
            elif self.repo.likes.unlike(me.id, post.id):
                outgoing.unliked(me.id, post.id)
        except Refused:  # across a block: not there for them, as Mastodon answers
            raise ApiError(404, "Record not found") from None
        except NotAllowed as error:
            raise ApiError(403, gettext(str(error))) from None
        return json_response(self.status_json(status_id), headers=headers)


class WhoView(EntityView):
    """GET /api/v1/statuses/:id/favourited_by and /reblogged_by: who likes or reposts it,
    most recent first."""

    scopes = {"get": "read:statuses"}
    public = frozenset({"get"})
    which = "favourited_by"

    def get(self, request: HttpRequest, status_id: str) -> HttpResponse:
        post, _ = self.visible_post(status_id, shared=True)  # a reblog's: the status's
        limit = limit_param(request.GET, 40, 80)
        number = page_number(request.GET)
        who = (
            self.repo.account_lists.likers
            if self.which == "favourited_by"
            else self.repo.account_lists.reposted_by
        )
        page = who(post.id, self.viewer, number, limit)
        return self.accounts_response(page)


class ReblogView(EntityView):
    """POST /api/v1/statuses/:id/reblog (the reblog: the reader's repost, holding the
    status) and /unreblog (the status, reblogged no more): idempotent, under the repost
    limit, as the pages' Repost button."""

    scopes = {"post": "write:statuses"}
    action = "repost"

    def post(self, request: HttpRequest, status_id: str) -> HttpResponse:
        me = self.me()
        post, _ = self.visible_post(status_id, to_act=self.action == "repost", shared=True)
        shared = post.id  # a reblog's id: the status it shares
        headers = self.enforce(
            auth.repost_limits(me.id), gettext("You have reposted a lot in a short time.")
        )
        try:
            if self.action == "repost":
                repost_id, new = self.repo.reposts.repost(me.id, shared)
                if new:
                    outgoing.reposted(me.id, repost_id)
                return json_response(self.status_json(repost_id), headers=headers)
            if self.repo.reposts.unrepost(me.id, shared):
                outgoing.unreposted(me.id, shared)
        except Refused:  # across a block: not there for them, as Mastodon answers
            raise ApiError(404, "Record not found") from None
        except NotAllowed as error:
            raise ApiError(403, gettext(str(error))) from None
        return json_response(self.status_json(shared), headers=headers)


class UnsupportedStatusActionView(EntityView):
    """POST /api/v1/statuses/:id/bookmark, /pin, /mute...: what the site has not. The
    status must be there (404 otherwise); then 422, as Mastodon refuses what it cannot."""

    scopes = {"post": "write:statuses"}

    def post(self, request: HttpRequest, status_id: str, action: str) -> HttpResponse:
        self.visible_post(status_id)
        raise invalid(f"{action.capitalize()} is not supported on this server")
