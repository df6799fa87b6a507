"""ActivityPub's pages (docs/federation.md): a local account's actor, outbox, followers,
following and featured collections, the instance actor, a post's Note and the activity that
published it, as application/activity+json; and, for the profile and the permalink, the
cheap check of whether a request wants these documents instead of HTML.

Every document is read as a visitor reads the site (ANONYMOUS: the same policy as the
pages) and built from SITE_URL (documents.py). An account suspended or deleted by its owner
answers 410 Gone with a Tombstone, and so do its collections and posts; a post removed by
its author or by staff answers 410 too; what never was answers 404. The inboxes
(`/ap/users/<id>/inbox`, `/ap/inbox`) are routed by the inbox's own module, not here.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views import View

from social.http import SiteHttpRequest
from social.mixins import MAX_PAGE, RepositoryMixin
from social.numbers import whole_number
from social.repository import (
    ANONYMOUS,
    PROFILE,
    WITH_HIDDEN,
    Listed,
    OwnPosts,
    Post,
    Repository,
)
from social.repository.accounts.users import AccountRow
from social.repository.read.reader import PageAt

from . import documents as doc

ID_MAX = 2**63 - 1  # Redis's INCR ceiling: no id of ours is above it
OUTBOX_PAGE_SIZE = 20  # Mastodon's
FOLLOWS_PAGE_SIZE = 40
POSITION_MAX = MAX_PAGE * OUTBOX_PAGE_SIZE
CACHED = "max-age=180, public"  # Mastodon's three minutes for actors, notes, collections
NOT_CACHED = "max-age=0, public"  # a collection's page: it changes with every post


# Content negotiation: the profile and the permalink answer ActivityStreams JSON to those
# who ask for it.


def wants_activity(request: HttpRequest) -> bool:
    """Whether the request asks for ActivityStreams JSON rather than HTML. A browser's
    Accept names no JSON, so its page pays for one substring search.

    The JSON answer says `Vary: Accept`, the HTML page does not: setting the header cost
    the profile 0.7 % of its instructions (bench/instructions.py, 4.12 -> 4.15 M), and no
    cache may keep the page anyway (no freshness, no validator), while a cache that keeps
    the JSON serves it only to a request with the same Accept."""
    accept = request.META.get("HTTP_ACCEPT", "")
    return "json" in accept and prefers_activity(accept[:2000])


@lru_cache(maxsize=256)
def prefers_activity(accept: str) -> bool:
    """Whether an Accept header ranks `application/activity+json` (or `application/ld+json`
    with the ActivityStreams profile, or none) at least as high as HTML (remembered by the
    header: fetchers send the same few)."""
    best_json = best_html = -1.0
    for media_range in accept.split(","):
        kind, *params = (part.strip() for part in media_range.split(";"))
        quality, profile = 1.0, ""
        for param in params:
            name, _, value = param.partition("=")
            name, value = name.strip().lower(), value.strip().strip('"')
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
            elif name == "profile":
                profile = value
        kind = kind.lower()
        if kind == doc.ACTIVITY_JSON or (
            kind == "application/ld+json" and (not profile or doc.AS_PROFILE in profile.split())
        ):
            best_json = max(best_json, quality)
        elif kind in ("text/html", "application/xhtml+xml"):
            best_html = max(best_html, quality)
    return best_json > 0 and best_json >= best_html


def activity_response(
    data: dict[str, Any], status: int = 200, *, cache: str = CACHED, vary: bool = False
) -> HttpResponse:
    """Return data as application/activity+json; vary: the URL answers HTML too."""
    response = HttpResponse(
        json.dumps(data, ensure_ascii=False),
        status=status,
        content_type=f"{doc.ACTIVITY_JSON}; charset=utf-8",
    )
    response["Cache-Control"] = cache
    if vary:
        response["Vary"] = "Accept"
    return response


def not_found(*, vary: bool = False) -> HttpResponse:
    return activity_response({"error": "Record not found"}, 404, cache="no-store", vary=vary)


def gone(object_id: str, former_type: str = "", *, vary: bool = False) -> HttpResponse:
    return activity_response(doc.tombstone(object_id, former_type), 410, vary=vary)


# The documents, as the views below and the profile and permalink answer them.


def actor_response(repo: Repository, user_id: int, *, vary: bool = False) -> HttpResponse:
    """A local account's Person, made with its key pair when it has none yet; 410 for an
    account suspended or deleted, 404 for none (another server's account too: its actor
    is there, as Mastodon answers only its own)."""
    if user_id > ID_MAX:
        return not_found(vary=vary)
    user, public_pem = repo.federation_keys.account_and_public_key(user_id)
    if user is None or user.domain:
        return not_found(vary=vary)
    if user.is_suspended:
        return gone(doc.actor_id(user_id), "Person", vary=vary)
    if not public_pem:
        public_pem = repo.federation_keys.for_account(user_id).public_pem
    return activity_response(doc.person(user, public_pem), vary=vary)


def actor_for_name(repo: Repository, username: str) -> HttpResponse:
    """The profile /u/<name>/ asked for JSON: the account's Person (found ignoring case,
    as the page is)."""
    user_id = repo.users.user_id_for_name(username)
    return actor_response(repo, user_id, vary=True) if user_id is not None else not_found(vary=True)


def post_response(
    repo: Repository, post_id: int, *, which: str = "object", vary: bool = False
) -> HttpResponse:
    """A post's Note (which="object") or the Create that published it ("activity"); a
    repost's Announce for either. 410 for a post removed or by a hidden account (a
    repost: or of such a post), 404 for none and for another server's post (its Note is
    there, as Mastodon answers only its own)."""
    if post_id > ID_MAX:
        return not_found(vary=vary)
    post = load_post(repo, post_id)
    if post is None or post.remote is not None:
        return not_found(vary=vary)
    if post.is_hidden:
        return gone(doc.post_id(post_id), "Note", vary=vary)
    if post.repost_of is not None:  # shown, as on every list, while the post it shares is
        original = load_post(repo, post.repost_of)
        if original is None or original.is_hidden:
            return gone(doc.post_id(post_id), "Announce", vary=vary)
        return activity_response(doc.announce(replace(post, original=original)), vary=vary)
    data = doc.create(post) if which == "activity" else doc.note(post)
    return activity_response(data, vary=vary)


def load_post(repo: Repository, post_id: int) -> Post | None:
    """The post post_id as the read path loads it, hidden or not (the caller decides), or
    None when there is none. One round trip."""
    read = repo.reader.page(Listed((post_id,)), ANONYMOUS, 1, 1, shows=WITH_HIDDEN)
    return read.loaded.get(post_id)


class ActivityView(RepositoryMixin, View):
    """What the documents' views share: GET (and HEAD) only, ids that fit Redis's."""

    request: SiteHttpRequest

    http_method_names = ["get", "head", "options"]

    def account_or_answer(self, user_id: int) -> AccountRow | HttpResponse:
        """The account the URL names with its counts (one round trip), or the answer when
        it is none or another server's (404) or hidden (410)."""
        found = self.repo.users.account(user_id) if user_id <= ID_MAX else None
        if found is None or found.user.domain:
            return not_found()
        if found.user.is_suspended:
            return gone(doc.actor_id(user_id), "Person")
        return found

    def page_asked(self) -> int | None:
        """The page asked for (None: the collection itself; a `page` that is no number
        is page 1, as Mastodon's `?page=true`), up to MAX_PAGE."""
        if "page" not in self.request.GET:
            return None
        return min(max(whole_number(self.request.GET["page"]) or 1, 1), MAX_PAGE)


class ActorView(ActivityView):
    """GET /ap/users/<id>: the account's Person."""

    def get(self, request: HttpRequest, user_id: int) -> HttpResponse:
        return actor_response(self.repo, user_id)


class InstanceActorView(ActivityView):
    """GET /ap/actor: the instance actor (Application), with its key pair."""

    def get(self, request: HttpRequest) -> HttpResponse:
        public_pem = self.repo.federation_keys.for_instance().public_pem
        return activity_response(doc.instance_actor(public_pem))


class InstanceOutboxView(ActivityView):
    """GET /ap/actor/outbox: the instance actor publishes nothing."""

    def get(self, request: HttpRequest) -> HttpResponse:
        outbox = f"{doc.instance_actor_id()}/outbox"
        return activity_response(doc.collection(outbox, 0, paged=False))


class OutboxView(ActivityView):
    """GET /ap/users/<id>/outbox: the account's posts and reposts as the Create and
    Announce activities that published them, newest first, OUTBOX_PAGE_SIZE a page, as a
    visitor sees them on the profile (a page that read past hidden posts sends its `next`
    on with `from`, as the site's pager does)."""

    def get(self, request: HttpRequest, user_id: int) -> HttpResponse:
        outbox = f"{doc.actor_id(user_id)}/outbox"
        number = self.page_asked()
        if number is None:
            found = self.account_or_answer(user_id)
            if isinstance(found, HttpResponse):
                return found
            return activity_response(doc.collection(outbox, found.counts.posts))
        if user_id > ID_MAX:
            return not_found()
        start = whole_number(request.GET.get("from", ""))
        at = PageAt(start=start) if number > 1 and start is not None else None
        if at is not None and (at.start or 0) > POSITION_MAX:
            at = None
        read = self.repo.reader.page(
            OwnPosts(user_id), ANONYMOUS, number, OUTBOX_PAGE_SIZE, shows=PROFILE, fill=True,
            at=at,
        )  # fmt: skip
        page = read.page
        # Nothing to show: is there such an account, and is it shown? A name@domain (every
        # remote account's; a legacy local name's at worst, which costs a round trip): is
        # it ours?
        if not page.items or any("@" in post.author_name for post in page.items):
            answer = self.account_or_answer(user_id)
            if isinstance(answer, HttpResponse):
                return answer
        items = [doc.activity(post, embedded=True) for post in page.items]
        data = doc.collection_page(
            outbox, number, items, start=at.start if at else None, has_next=page.has_next,
            next_from=page.next_from, terms=doc.NOTE_TERMS,
        )  # fmt: skip
        return activity_response(data, cache=NOT_CACHED)


class FollowsView(ActivityView):
    """GET /ap/users/<id>/followers and /following: their size, and pages of the accounts
    in them (actor ids) as the site's own lists show them to a visitor (documents.py's
    docstring), FOLLOWS_PAGE_SIZE a page."""

    which = "followers"

    def get(self, request: HttpRequest, user_id: int) -> HttpResponse:
        address = f"{doc.actor_id(user_id)}/{self.which}"
        number = self.page_asked()
        found = self.account_or_answer(user_id)
        if isinstance(found, HttpResponse):
            return found
        if number is None:
            counts = found.counts
            total = counts.followers if self.which == "followers" else counts.following
            return activity_response(doc.collection(address, total))
        page = self.repo.account_lists.follow_list(
            user_id, self.which, number, FOLLOWS_PAGE_SIZE, ANONYMOUS
        )
        items = [doc.actor_id(entry.user.id) for entry in page.items]
        data = doc.collection_page(
            address, number, items, total=page.total or 0, has_next=page.has_next
        )
        return activity_response(data, cache=NOT_CACHED)


class FeaturedView(ActivityView):
    """GET /ap/users/<id>/featured: pinned posts; the site has none, so it is empty."""

    def get(self, request: HttpRequest, user_id: int) -> HttpResponse:
        found = self.account_or_answer(user_id)
        if isinstance(found, HttpResponse):
            return found
        featured = f"{doc.actor_id(user_id)}/featured"
        return activity_response(doc.collection(featured, 0, paged=False))


class PostView(ActivityView):
    """GET /ap/posts/<id> (the Note) and /ap/posts/<id>/activity (its Create); a
    repost's Announce for both."""

    which = "object"

    def get(self, request: HttpRequest, post_id: int) -> HttpResponse:
        return post_response(self.repo, post_id, which=self.which)
