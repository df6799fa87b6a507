"""/.well-known/nodeinfo and /nodeinfo/2.0: what server this is, for the tools and apps
that ask (NodeInfo 2.0, as Mastodon serves it; http://nodeinfo.diaspora.software/)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from .base import json_response
from .common import EntityView
from .instance import DESCRIPTION, TITLE

SCHEMA = "http://nodeinfo.diaspora.software/ns/schema/2.0"
SOFTWARE = "retwis"  # NodeInfo's name: [a-z0-9-]
SOFTWARE_VERSION = "0.1.0"  # pyproject.toml's (tests/test_nodeinfo.py holds them equal)


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
    its usage (repository/stats.py: one round trip) and whether anyone may sign up."""

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
            "metadata": {"nodeName": TITLE, "nodeDescription": DESCRIPTION},
        }
        content_type = f'application/json; profile="{SCHEMA}#"'
        return json_response(data, headers={"Content-Type": content_type})
