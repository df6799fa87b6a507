"""/api/v1/accounts/...: the reader's own account, others' accounts, their posts and
follow lists, relationships, and following, blocking and muting (through the same
repository methods and limits as the pages' buttons)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext

from social import auth, work
from social.federation import outgoing
from social.federation.documents import domain
from social.federation.resolve import Found, search_remote
from social.images import MAX_BYTES
from social.keys import RELATIONS_CAP
from social.profile_forms import ProfileForm
from social.profile_views import queue_pictures
from social.repository import PROFILE, CannotFollowSelf, NotAllowed, OwnPosts, Post
from social.repository.accounts.users import AccountRow
from social.text import normal_tag

from . import entities
from .base import BODY_MAX, ApiError, json_response
from .common import EntityView
from .forms import (
    first_ids,
    flag,
    invalid,
    limit_param,
    lookup_ids,
    number_param,
    text_param,
)
from .media import busy
from .paging import page_number, read_posts

RELATIONSHIPS_MAX = 80  # ids asked about at once
LOOKUP_MAX = 40  # accounts asked for at once (GET /api/v1/accounts?id[]=)


class VerifyCredentialsView(EntityView):
    """GET /api/v1/accounts/verify_credentials: the reader's own account, with `source`."""

    scopes = {"get": "read:accounts"}

    def get(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        render = self.render(user_ids=[me.id])
        return json_response(render.account(me.id, me, source=True))


class AccountView(EntityView):
    """GET /api/v1/accounts/:id (anyone; a suspended account is not found)."""

    scopes = {"get": "read:accounts"}
    public = frozenset({"get"})

    def get(self, request: HttpRequest, account_id: str) -> HttpResponse:
        return json_response(self.account_json(self.target(account_id)))


class LookupView(EntityView):
    """GET /api/v1/accounts/lookup?acct=name (or name@this.host, or name@domain: a remote
    account known here; as Mastodon's, no other server is asked)."""

    scopes = {"get": "read:accounts"}
    public = frozenset({"get"})

    def get(self, request: HttpRequest) -> HttpResponse:
        acct = text_param(request.GET, "acct", 400).strip().lstrip("@")
        name, _, host = acct.partition("@")
        local = not host or host.lower() in (request.get_host().split(":")[0].lower(), domain())
        if not name:
            raise ApiError(404, "Record not found")
        if local:
            user_id = self.repo.users.user_id_for_name(name)
        else:
            remote = self.repo.remote_actors.by_acct(acct)
            user_id = remote.id if remote is not None else None
        if user_id is None:
            raise ApiError(404, "Record not found")
        return json_response(self.account_json(self.target(user_id)))


class AccountSearchView(EntityView):
    """GET /api/v1/accounts/search?q=: accounts as /search/ finds them (the name, its
    start or a part of it; at most SEARCH_LIMIT), for a user's token as Mastodon asks;
    `following=true` keeps those the reader follows; `offset` and `limit` page them."""

    scopes = {"get": "read:accounts"}

    def get(self, request: HttpRequest) -> HttpResponse:
        self.me()
        query = text_param(request.GET, "q", 500).strip()
        if not query:
            raise invalid("q can't be blank")
        limit = limit_param(request.GET, 40, 80)
        offset = number_param(request.GET, "offset") or 0
        resolved = (
            search_remote(self.repo, self.viewer.id, query)
            if flag(request.GET, "resolve")
            else Found()
        )
        results = self.repo.search.search(query.lstrip("#"), self.viewer, resolved=resolved.ids)
        people = [
            p for p in results.people if p.viewer_follows or not flag(request.GET, "following")
        ]
        rows = {p.user.id: p.row for p in people[offset : offset + limit]}
        return json_response(self.listed_accounts(rows))


class AccountStatusesView(EntityView):
    """GET /api/v1/accounts/:id/statuses: their posts and reposts, newest first, as
    Mastodon filters them: `only_media` (their posts with pictures), `exclude_replies`
    (their threads kept: a reply to themselves), `exclude_reblogs`, `tagged` (their posts
    with the tag); `pinned` is empty (the site pins nothing). The filters keep posts as
    the read path fills the page (paging.read_posts): no round trip more than a page."""

    scopes = {"get": "read:statuses"}
    public = frozenset({"get"})

    def get(self, request: HttpRequest, account_id: str) -> HttpResponse:
        row = self.target(account_id)
        params = request.GET
        tagged = text_param(params, "tagged", 200).strip().lstrip("#")
        tag = normal_tag(tagged) if tagged else None
        if flag(params, "pinned") or tag == "":  # no pins; a tag that is none
            return json_response([])
        keep = status_filter(
            row.user.username,
            only_media=flag(params, "only_media"),
            no_replies=flag(params, "exclude_replies"),
            no_reblogs=flag(params, "exclude_reblogs"),
            tag=tag,
        )
        page = read_posts(
            self.repo, OwnPosts(row.user.id), self.viewer, params, shows=PROFILE, keep=keep
        )
        return self.statuses_response(page)


def status_filter(
    username: str, *, only_media: bool, no_replies: bool, no_reblogs: bool, tag: str | None
) -> Callable[[Post], bool] | None:
    """What an account's statuses keep of its list, as Mastodon's AccountStatusesFilter
    (None: everything). A repost is none of theirs with pictures or a tag; a reply kept by
    exclude_replies is one to a post of their own (a thread)."""
    if not (only_media or no_replies or no_reblogs or tag):
        return None
    own = username.lower()

    def keep(post: Post) -> bool:
        if post.repost_of is not None:
            return not (only_media or no_reblogs or tag)
        if only_media and not post.media:
            return False
        if tag and tag not in post.tags:
            return False
        return not (no_replies and post.reply_to and post.reply_to_name.lower() != own)

    return keep


class FollowListView(EntityView):
    """GET /api/v1/accounts/:id/followers and /following, newest first."""

    scopes = {"get": "read:accounts"}
    public = frozenset({"get"})
    which = "followers"

    def get(self, request: HttpRequest, account_id: str) -> HttpResponse:
        row = self.target(account_id)
        limit = limit_param(request.GET, 40, 80)
        number = page_number(request.GET)
        listed = self.repo.account_lists.follow_list(
            row.user.id, self.which, number, limit, viewer=self.viewer, counts=True
        )
        return self.accounts_response(listed)


class RelationListView(FollowListView):
    """GET /api/v1/blocks and /api/v1/mutes: the reader's, newest first."""

    scopes = {"get": "read:blocks"}
    public = frozenset()

    def get(self, request: HttpRequest) -> HttpResponse:  # type: ignore[override]
        me = self.me()
        limit = limit_param(request.GET, 40, 80)
        number = page_number(request.GET)
        pages = {
            "blocks": self.repo.account_lists.blocks_page,
            "mutes": self.repo.account_lists.mutes_page,
        }
        return self.accounts_response(pages[self.which](me.id, number, limit, counts=True))


class AccountsView(EntityView):
    """GET /api/v1/accounts?id[]=: up to LOOKUP_MAX accounts as a list shows them to the
    reader (the account read path: none suspended, none across a block), in one read."""

    scopes = {"get": "read:accounts"}
    public = frozenset({"get"})

    def get(self, request: HttpRequest) -> HttpResponse:
        found = self.repo.people.listed(lookup_ids(request, LOOKUP_MAX), self.viewer)
        rows = {e.user.id: AccountRow(e.user, e.counts) for e in found if e.counts}
        return json_response(self.listed_accounts(rows))


class RelationshipsView(EntityView):
    """GET /api/v1/accounts/relationships?id[]=...: the reader's relation to each of the
    first RELATIONSHIPS_MAX ids (each a number, else 400; empty ones skipped)."""

    scopes = {"get": "read:follows"}

    def get(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        ids = first_ids(request, RELATIONSHIPS_MAX)
        found = self.repo.users.relationships(me.id, ids)
        return json_response([entities.relationship(found[i]) for i in dict.fromkeys(ids)])


class AccountActionView(EntityView):
    """POST /api/v1/accounts/:id/follow, /unfollow, /block, /unblock, /mute, /unmute:
    idempotent; the Relationship after. Limits as the pages' (follows; relations)."""

    ACTIONS = ("follow", "unfollow", "block", "unblock", "mute", "unmute")
    SCOPES = {
        "follow": "write:follows", "unfollow": "write:follows",
        "block": "write:blocks", "unblock": "write:blocks",
        "mute": "write:mutes", "unmute": "write:mutes",
    }  # fmt: skip
    action = "follow"

    def scope_for(self, method: str) -> str | None:
        return self.SCOPES[self.action] if method == "post" else None

    def post(self, request: HttpRequest, account_id: str) -> HttpResponse:
        me = self.me()
        row = self.target(account_id, hidden_ok=self.action in ("unblock", "unmute"))
        if self.action in ("follow", "unfollow"):
            checks = auth.follow_limits(me.id)
            message = gettext("You have followed and unfollowed a lot in a short time.")
        else:
            checks = auth.relation_limits(me.id)
            message = gettext("You have blocked and muted a lot in a short time.")
        headers = self.enforce(checks, message)
        try:
            if self.action in ("follow", "unfollow"):
                changed = getattr(self.repo.graph, self.action)(me.id, row.user.id)
            else:
                changed = getattr(self.repo.relations, self.action)(me.id, row.user.id)
            if changed and self.action not in ("mute", "unmute"):  # a mute is ours alone
                outgoing.queue_action(self.action, me.id, row.user.id)
        except CannotFollowSelf:
            raise ApiError(403, "You cannot follow yourself") from None
        except NotAllowed as error:
            message = gettext(str(error))
            if "%(cap)s" in message:
                message = message % {"cap": f"{RELATIONS_CAP:,}"}
            raise ApiError(403, message) from None
        found = self.repo.users.relationships(me.id, [row.user.id])
        return json_response(entities.relationship(found[row.user.id]), headers=headers)


class UpdateCredentialsView(EntityView):
    """PATCH /api/v1/accounts/update_credentials: `display_name`, `note`, `avatar`,
    `header` (multipart for the pictures; JSON or a form for the texts), checked by the
    settings page's own form: a bad field is Mastodon's 422 and nothing is stored. Pictures
    are processed by the worker: the account answered (with `source`) shows the new ones
    once ready."""

    scopes = {"patch": "write:accounts"}
    # Two pictures of up to 10 MB each and the texts (social/images.py).
    body_max = 2 * MAX_BYTES + BODY_MAX

    def patch(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        params = self.request.params
        data = (
            params
            if hasattr(params, "getlist")
            else {name: value for name, value in params.items() if isinstance(value, str)}
        )
        files = getattr(self.request, "upload_files", None) or self.request.FILES
        form = ProfileForm(data, files)
        if not form.is_valid():
            raise invalid(self.form_errors(form))
        changes = form.changes()
        headers = {}
        if form.changes_anything():  # a PATCH that changes nothing is not counted
            headers = self.enforce(  # before any picture is read; a refused one counts
                auth.profile_limits(me.id),
                gettext("You have changed your profile a lot in a short time."),
            )
        checked = form.checked_pictures()
        if checked is None:
            raise invalid(self.form_errors(form))
        try:  # processed by the worker: the account shows them once ready
            queue_pictures(self.repo, me.id, checked)
        except work.QueueFull:
            raise busy() from None
        self.repo.profiles.update(me.id, **changes)
        outgoing.profile_changed(me.id)  # pictures: once adopted (work_handlers/media.py)
        me = self.repo.users.get_user(me.id) or me
        render = self.render(user_ids=[me.id])
        return json_response(render.account(me.id, me, source=True), headers=headers)

    @staticmethod
    def form_errors(form: ProfileForm) -> str:
        """The form's errors as one line: "field: message; ..."."""
        return "; ".join(f"{name}: {error}" for name, errs in form.errors.items() for error in errs)
