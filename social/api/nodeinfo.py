"""What server this is, for the tools, apps and servers that ask: /.well-known/nodeinfo
and /nodeinfo/2.0 (NodeInfo 2.0, as Mastodon serves it; http://nodeinfo.diaspora.software/),
/.well-known/host-meta (XRD, or JSON) and the WebFinger it names (RFC 7033: an account's
profile page and ActivityPub actor, docs/federation.md). Every address is SITE_URL's."""

from __future__ import annotations

import re
from urllib.parse import unquote

from django.http import HttpRequest, HttpResponse
from django.utils.html import escape

from social.federation import documents as doc
from social.repository import ANONYMOUS, User, may_see_account

from .base import ApiError, json_response, with_cors
from .common import EntityView
from .forms import text_param
from .instance import DESCRIPTION, TITLE, VERSION

SCHEMA = "http://nodeinfo.diaspora.software/ns/schema/2.0"
SOFTWARE = "retwis"  # NodeInfo's name: [a-z0-9-]
SOFTWARE_VERSION = "0.1.0"  # pyproject.toml's (tests/test_nodeinfo.py holds them equal)
# The API the site speaks, as Mastodon-compatible servers (Hometown...) name it in
# `metadata.upstream`: apps that detect the server by NodeInfo (megalodon's detector) take
# an unknown `software` whose upstream is Mastodon for Mastodon. The version is the one
# /api/v1/instance names (its number).
UPSTREAM = {"name": "mastodon", "version": VERSION.split(" ", 1)[0]}


class DiscoveryView(EntityView):
    """GET /.well-known/nodeinfo: where the NodeInfo document is."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        href = doc.site() + "/nodeinfo/2.0"
        return json_response({"links": [{"rel": SCHEMA, "href": href}]})


class NodeInfoView(EntityView):
    """GET /nodeinfo/2.0: the software, its protocol (ActivityPub), its usage
    (repository/moderation/stats.py: one round trip) and whether anyone may sign up."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        usage = self.repo.stats.usage()
        data = {
            "version": "2.0",
            "software": {"name": SOFTWARE, "version": SOFTWARE_VERSION},
            "protocols": ["activitypub"],
            "services": {"outbound": [], "inbound": []},
            "usage": {
                "users": {
                    "total": usage.users,
                    "activeMonth": usage.active_month,
                    "activeHalfyear": usage.active_halfyear,
                },
                "localPosts": usage.posts,
            },
            "openRegistrations": True,
            "metadata": {"nodeName": TITLE, "nodeDescription": DESCRIPTION, "upstream": UPSTREAM},
        }
        content_type = f'application/json; profile="{SCHEMA}#"'
        return json_response(data, headers={"Content-Type": content_type})


XRD = """<?xml version="1.0" encoding="UTF-8"?>
<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">
  <Link rel="lrdd" template="{template}"/>
</XRD>
"""
JSON_TYPES = ("application/json", "application/jrd+json")


class HostMetaView(EntityView):
    """GET /.well-known/host-meta: where WebFinger is (its `lrdd` template), as XRD, or as
    JSON for /.well-known/host-meta.json or a request that accepts only JSON (as Mastodon
    answers both)."""

    public = frozenset({"get"})
    app_may_call = True
    as_json = False

    def get(self, request: HttpRequest) -> HttpResponse:
        template = doc.site() + "/.well-known/webfinger?resource={uri}"
        accepts = request.headers.get("Accept", "")
        if self.as_json or accepts.startswith(JSON_TYPES):
            return json_response({"links": [{"rel": "lrdd", "template": template}]})
        body = XRD.format(template=escape(template))
        response = HttpResponse(body, content_type="application/xrd+xml; charset=utf-8")
        response["Cache-Control"] = "max-age=3600, public"
        return with_cors(response)


RESOURCE_MAX = 300
ACCT_RE = re.compile(r"(?:acct:)?@?([^@\s]+)(?:@([^@\s]+))?", re.IGNORECASE)
ACTOR_PATH_RE = re.compile(r"/ap/users/([0-9]{1,19})")
PROFILE_PATH_RE = re.compile(r"/u/([^/]+)/?")
PROFILE_PAGE = "http://webfinger.net/rel/profile-page"


class WebFingerView(EntityView):
    """GET /.well-known/webfinger?resource=...: a local account named `acct:name@domain`
    (the domain is SITE_URL's host, with its port when not the default), by its actor's
    URL or its profile's, as JRD: its profile page and its ActivityPub actor (`self`); the
    instance actor by `acct:<host>@domain` or its URL. Unknown, suspended, another
    domain's: 404; no resource: 400."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        resource = text_param(request.GET, "resource", RESOURCE_MAX).strip()
        if not resource:
            raise ApiError(400, "Missing resource parameter")
        user_id, name = self.named_in(resource)
        if name and name.lower() == doc.instance_actor_name():
            return self.answer(self.instance_actor())
        if user_id is None and name:
            user_id = self.repo.users.user_id_for_name(name)
        user = self.repo.users.get_user(user_id) if user_id is not None else None
        if user is None or not may_see_account(ANONYMOUS, user):
            raise ApiError(404, "Record not found")
        return self.answer(self.account(user))

    @staticmethod
    def named_in(resource: str) -> tuple[int | None, str]:
        """The account a resource names here: (its id, "") by its actor's URL, (None, a
        name) by `acct:`, a profile's URL or the instance actor's URL, (None, "") when
        it names nothing here."""
        site = doc.site()
        if resource.startswith(("https://", "http://")):
            if resource == doc.instance_actor_id():
                return None, doc.instance_actor_name()
            path = resource[len(site) :] if resource.startswith(site + "/") else ""
            if found := ACTOR_PATH_RE.fullmatch(path):
                return int(found.group(1)), ""
            if found := PROFILE_PATH_RE.fullmatch(path):
                return None, unquote(found.group(1))
            return None, ""
        found = ACCT_RE.fullmatch(resource)
        if found is None:
            return None, ""
        name, at = found.group(1), found.group(2)
        if at and at.lower() != doc.domain():
            return None, ""
        return None, name

    @staticmethod
    def account(user: User) -> dict:
        page, actor = doc.profile_page(user), doc.actor_id(user.id)
        return {
            "subject": f"acct:{user.username}@{doc.domain()}",
            "aliases": [page, actor],
            "links": [
                {"rel": PROFILE_PAGE, "type": "text/html", "href": page},
                {"rel": "self", "type": doc.ACTIVITY_JSON, "href": actor},
            ],
        }

    @staticmethod
    def instance_actor() -> dict:
        actor = doc.instance_actor_id()
        return {
            "subject": f"acct:{doc.instance_actor_name()}@{doc.domain()}",
            "aliases": [actor],
            "links": [
                {"rel": PROFILE_PAGE, "type": "text/html", "href": doc.site() + "/"},
                {"rel": "self", "type": doc.ACTIVITY_JSON, "href": actor},
            ],
        }

    @staticmethod
    def answer(data: dict) -> HttpResponse:
        return json_response(data, headers={"Content-Type": "application/jrd+json"})
