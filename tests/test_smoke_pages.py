"""Every public page answers for a visitor and a logged-in user."""

import pytest


@pytest.mark.parametrize("url", ["/", "/timeline/", "/register/", "/login/", "/healthz"])
def test_public_pages_answer_a_visitor(client, url):
    assert client.get(url).status_code == 200


def test_logged_in_home_shows_the_compose_form(alice_client, alice):
    response = alice_client.get("/")
    assert response.status_code == 200
    assert b"What are you doing, alice?" in response.content
