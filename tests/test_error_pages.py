"""Refused forms and odd stored passwords fail politely."""

from django.test import Client

from social import auth


def test_a_post_without_a_csrf_token_gets_a_friendly_403_in_the_site_look(alice):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/login/", {"username": "alice", "password": "whatever"})
    assert response.status_code == 403
    assert b"That form had expired" in response.content
    assert b"Retwis" in response.content


def test_a_malformed_hash_like_legacy_password_refuses_login_without_crashing(repo, r):
    user = repo.users.create_user("legacy", "md5$x")
    assert r.hget(f"user:{user.id}", "password") == "md5$x"
    assert auth.authenticate(repo, "legacy", "md5$x") is None
    assert r.hget(f"user:{user.id}", "password") == "md5$x"
