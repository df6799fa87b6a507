"""The instance's `version` names only a Mastodon version whose client-visible surface
the site has: apps turn features on by it (Mastodon.py's @api_version, Tusky's and
Phanpy's checks), and call what that version added. Each version's entries here are the
endpoints apps first call at that version; every one up to the version the instance names
must answer (not 404, not 405)."""

from __future__ import annotations

import re

from social.api.instance import VERSION
from tests.api import Api, token_for

# Mastodon version -> what apps call once the server says it is at least that version.
GATED = {
    (4, 0, 0): ["/api/v2/filters", "/api/v2/filters/1/keywords", "/api/v1/followed_tags"],
    (4, 2, 0): ["/api/v1/instance/languages"],
    (4, 3, 0): [
        "/api/v2/notifications",
        "/api/v1/notifications/unread_count",
        "/api/v1/statuses?id[]=1",
        "/api/v1/accounts?id[]=1",
    ],
}


def claimed() -> tuple[int, ...]:
    found = re.match(r"(\d+)\.(\d+)\.(\d+)", VERSION)
    assert found, VERSION
    return tuple(int(n) for n in found.groups())


def test_the_version_keeps_its_compatible_suffix_and_mastodons_form():
    assert re.fullmatch(r"\d+\.\d+\.\d+ \(compatible; Retwis\)", VERSION)


def test_every_endpoint_of_the_versions_up_to_the_named_one_answers(repo, alice):
    api = Api(token_for(repo, alice))
    api.post("/api/v2/filters", {"title": "t", "context": ["home"]}, as_json=True)
    repo.posts.create_post(alice.id, "one")
    missing = [
        path
        for version, paths in GATED.items()
        if version <= claimed()
        for path in paths
        if api.get(path).status_code in (404, 405)
    ]
    assert missing == []
    for check in ("/api/v1/instance", "/api/v2/instance"):
        assert api.get(check).json()["version"] == VERSION
