"""What server this is, for the tools and apps that ask: /.well-known/nodeinfo and
/nodeinfo/2.0 (NodeInfo 2.0, as Mastodon serves it; http://nodeinfo.diaspora.software/),
/.well-known/host-meta (XRD, or JSON) and the WebFinger it names (RFC 7033: an account's
profile page, nothing to federate with)."""

from __future__ import annotations

import re

from django.http import HttpRequest, HttpResponse
from django.utils.html import escape

from social.repository import may_see_account
from social.templating.links import profile_url

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
        href = self.base_url() + "/nodeinfo/2.0"
        return json_response({"links": [{"rel": SCHEMA, "href": href}]})


class NodeInfoView(EntityView):
    """GET /nodeinfo/2.0: the software, its protocols (none: the site does not federate,
    so it claims no ActivityPub, though NodeInfo's schema wants one),
    its usage (repository/moderation/stats.py: one round trip) and whether anyone may sign up."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        usage = self.repo.stats.usage()
        data = {
            "version": "2.0",
            "software": {"name": SOFTWARE, "version": SOFTWARE_VERSION},
            "protocols": [],
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
        template = self.base_url() + "/.well-known/webfinger?resource={uri}"
        accepts = request.headers.get("Accept", "")
        if self.as_json or accepts.startswith(JSON_TYPES):
            return json_response({"links": [{"rel": "lrdd", "template": template}]})
        body = XRD.format(template=escape(template))
        response = HttpResponse(body, content_type="application/xrd+xml; charset=utf-8")
        response["Cache-Control"] = "max-age=3600, public"
        return with_cors(response)


RESOURCE_MAX = 300
ACCT_RE = re.compile(r"(?:acct:)?@?([^@\s]+)(?:@([^@\s]+))?", re.IGNORECASE)


class WebFingerView(EntityView):
    """GET /.well-known/webfinger?resource=acct:name@host: the account's profile page
    (JRD). Unknown, suspended, another host's: 404; no resource:
    400. The site does not federate: no ActivityPub link."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        resource = text_param(request.GET, "resource", RESOURCE_MAX).strip()
        if not resource:
            raise ApiError(400, "Missing resource parameter")
        name = self.name_in(resource, request.get_host())
        user_id = self.repo.users.user_id_for_name(name) if name else None
        user = self.repo.users.get_user(user_id) if user_id is not None else None
        path = profile_url(user.username) if user is not None else None
        if user is None or path is None or not may_see_account(self.viewer, user):
            raise ApiError(404, "Record not found")
        page = self.base_url() + path
        host = request.get_host()
        data = {
            "subject": f"acct:{user.username}@{host}",
            "aliases": [page],
            "links": [
                {"rel": "http://webfinger.net/rel/profile-page", "type": "text/html", "href": page}
            ],
        }
        return json_response(data, headers={"Content-Type": "application/jrd+json"})

    @staticmethod
    def name_in(resource: str, host: str) -> str:
        """The username an `acct:name@host` (or `name@host`) resource names on this host,
        or ""."""
        found = ACCT_RE.fullmatch(resource)
        if found is None:
            return ""
        name, at = found.group(1), found.group(2)
        if at and at.lower() not in (host.lower(), host.split(":")[0].lower()):
            return ""
        return name
