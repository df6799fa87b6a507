"""Notices on the home page (a moderator removed your post): shown, and dismissed by POST."""

from __future__ import annotations

from django.test import Client

from social.repository.moderation.actions import SYSTEM_ACTOR
from tests.conftest import login


def removed_post(repo, author) -> int:
    post_id = repo.posts.create_post(author.id, "off-topic rant")
    repo.moderation.delete_posts([post_id], SYSTEM_ACTOR, "spam")
    return post_id


def test_the_home_page_tells_the_author_their_post_was_removed(repo, alice, alice_client):
    removed_post(repo, alice)

    page = alice_client.get("/").content.decode()

    assert "was removed by moderators. Reason: spam" in page
    assert 'action="/notices/dismiss/"' in page


def test_dismissing_clears_the_notices_for_good(repo, alice, alice_client, r):
    removed_post(repo, alice)

    response = alice_client.post("/notices/dismiss/")

    assert response.status_code == 302 and response["Location"] == "/"
    assert not r.exists(f"notices:{alice.id}")
    assert "was removed by moderators" not in alice_client.get("/").content.decode()


def test_dismissing_needs_a_post_a_login_and_the_csrf_token(repo, alice, r):
    removed_post(repo, alice)
    visitor = Client()
    owner = login(Client(enforce_csrf_checks=True), repo, alice)

    assert login(Client(), repo, alice).get("/notices/dismiss/").status_code == 405
    assert visitor.post("/notices/dismiss/")["Location"].startswith("/login/?next=/")
    assert owner.post("/notices/dismiss/").status_code == 403
    assert r.llen(f"notices:{alice.id}") == 1
