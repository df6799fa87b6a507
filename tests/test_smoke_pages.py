"""Every page in the public table answers for a visitor and for a logged-in user."""

import pytest

PAGES = [
    "/",
    "/timeline/",
    "/register/",
    "/login/",
    "/healthz",
    "/u/alice/",
    "/u/alice/followers/",
    "/u/alice/following/",
    "/p/1/",
]


@pytest.fixture
def a_post(repo, alice, bob):
    repo.graph.follow(bob.id, alice.id)
    return repo.posts.create_post(alice.id, "smoke test")


@pytest.mark.parametrize("url", PAGES)
def test_every_page_answers_a_visitor(client, a_post, url):
    assert client.get(url).status_code == 200


@pytest.mark.parametrize("url", PAGES)
def test_every_page_answers_a_logged_in_user(bob_client, a_post, url):
    response = bob_client.get(url)

    assert response.status_code == 200
    if url != "/healthz":
        assert b"@bob" in response.content and b"Log out" in response.content


def test_logged_in_home_shows_the_compose_form(alice_client, alice):
    response = alice_client.get("/")

    assert response.status_code == 200
    assert b"What are you doing, alice?" in response.content


def test_the_visitor_home_offers_both_forms_and_the_latest_posts(client, a_post):
    content = client.get("/").content

    assert b'action="/register/"' in content and b'action="/login/"' in content
    assert b"smoke test" in content
