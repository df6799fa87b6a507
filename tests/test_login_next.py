"""The login form carries a safe `next` through GET and POST; an unsafe one is dropped."""

from tests.conftest import PASSWORD


def test_the_login_form_keeps_a_local_next_in_a_hidden_field(client):
    response = client.get("/login/?next=/u/bob/")
    assert b'name="next" value="/u/bob/"' in response.content


def test_the_login_form_drops_an_offsite_next(client):
    response = client.get("/login/?next=https://evil.example/")
    assert b"evil.example" not in response.content


def test_an_anonymous_post_sends_to_login_then_home_not_to_the_post_only_url(client):
    response = client.post("/post/", {"status": "hello"})
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/"


def test_an_anonymous_follow_sends_to_login_then_back_to_the_profile(client, bob, r):
    response = client.post("/u/bob/follow/")
    assert response["Location"] == "/login/?next=/u/bob/"
    assert r.zcard(f"followers:{bob.id}") == 0


def test_logging_in_goes_to_the_safe_next(client, alice, r):
    form = client.get("/login/?next=/u/alice/")
    assert b'name="next" value="/u/alice/"' in form.content
    response = client.post(
        "/login/", {"username": "alice", "password": PASSWORD, "next": "/u/alice/"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/u/alice/"
    assert r.hget(f"user:{alice.id}", "last_login") is not None
