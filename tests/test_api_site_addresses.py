"""The client API names our own posts and accounts by their addresses under SITE_URL
(docs/federation.md's addresses), whatever host the client reached the site by: a status's
`uri` is its Note's id and `url` its permalink, a reblog's `uri` its Announce's id, an
account's `uri` its actor and `url` its profile, as Mastodon's API gives them."""

from __future__ import annotations

import pytest

from tests.api import Api, token_for

SITE = "https://alpha.test:8443"  # not the host the test client asks (127.0.0.1)
HOST = {"HTTP_HOST": "127.0.0.1"}


@pytest.fixture
def site(settings) -> str:
    settings.SITE_URL = SITE
    return SITE


def test_a_status_is_named_by_its_note_id_and_permalink_not_the_request_host(repo, site, alice):
    api = Api(token_for(repo, alice))

    posted = api.post("/api/v1/statuses", {"status": "What is my name?"}, **HOST).json()
    read = api.get(f"/api/v1/statuses/{posted['id']}", **HOST).json()

    for status in (posted, read):
        assert status["uri"] == f"{SITE}/ap/posts/{posted['id']}"
        assert status["url"] == f"{SITE}/p/{posted['id']}/"


def test_a_reblog_is_named_by_its_announce_and_the_post_it_shares_by_its_note(
    repo, site, alice, bob
):
    post_id = repo.posts.create_post(alice.id, "share me")
    api = Api(token_for(repo, bob))

    reblog = api.post(f"/api/v1/statuses/{post_id}/reblog", **HOST).json()

    assert reblog["uri"] == f"{SITE}/ap/posts/{reblog['id']}/activity"
    assert reblog["url"] == f"{SITE}/p/{reblog['id']}/"
    assert reblog["reblog"]["uri"] == f"{SITE}/ap/posts/{post_id}"
    assert reblog["reblog"]["url"] == f"{SITE}/p/{post_id}/"


def test_an_account_is_named_by_its_actor_and_profile(repo, site, alice):
    api = Api(token_for(repo, alice))

    me = api.get("/api/v1/accounts/verify_credentials", **HOST).json()
    seen = api.get(f"/api/v1/accounts/{alice.id}", **HOST).json()

    for account in (me, seen):
        assert account["uri"] == f"{SITE}/ap/users/{alice.id}"
        assert account["url"] == f"{SITE}/u/alice/"


def test_a_mention_links_the_profile_under_site_url(repo, site, alice, bob):
    post_id = repo.posts.create_post(alice.id, "hi @bob")

    status = Api(token_for(repo, alice)).get(f"/api/v1/statuses/{post_id}", **HOST).json()

    assert status["mentions"] == [
        {"id": str(bob.id), "username": "bob", "acct": "bob", "url": f"{SITE}/u/bob/"}
    ]
