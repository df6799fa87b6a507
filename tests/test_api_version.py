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
    (2, 8, 0): ["/api/v1/accounts/search?q=a"],
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


def test_statuses_and_accounts_are_looked_up_by_id_as_the_reader_may_see_them(
    repo, alice, bob, charlie
):
    api = Api(token_for(repo, alice))
    mine = repo.posts.create_post(alice.id, "mine")
    theirs = repo.posts.create_post(bob.id, "theirs")
    hidden = repo.posts.create_post(charlie.id, "across a block")
    repost = repo.reposts.repost(bob.id, mine)
    repo.relations.block(alice.id, charlie.id)

    found = api.get(
        "/api/v1/statuses",
        {"id[]": [theirs, "99", "%C2%B2", "²", hidden, mine, theirs, repost or 0, "1" * 25]},
    )
    assert found.status_code == 200
    assert [s["id"] for s in found.json()] == [str(theirs), str(mine)]
    people = api.get("/api/v1/accounts", {"id[]": [bob.id, 999, "x", alice.id]}).json()
    assert [a["username"] for a in people] == ["bob", "alice"]
    assert api.get("/api/v1/statuses", {"id[]": list(range(1, 22))}).status_code == 422
    assert api.get("/api/v1/accounts", {"id[]": list(range(1, 42))}).status_code == 422
    languages = api.get("/api/v1/instance/languages").json()
    assert {"code": "en", "name": "English"} in languages
