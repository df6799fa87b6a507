"""Login and sign-up are rate limited per IP and per username, in expiring Redis counters."""

from django.test import Client

from social.repository.limits import LOGIN_PER_USER, SIGNUP_PER_IP
from tests.conftest import PASSWORD


def fail_login(client: Client, username: str) -> int:
    return client.post("/login/", {"username": username, "password": "wrong-password"}).status_code


def test_failed_logins_are_counted_per_username_and_ip_with_a_window(client, alice, r):
    assert fail_login(client, "alice") == 400
    assert r.get("ratelimit:login_user:alice") == "1"
    assert r.get("ratelimit:login_ip:127.0.0.1") == "1"
    assert 0 < r.ttl("ratelimit:login_user:alice") <= LOGIN_PER_USER.window


def test_it_refuses_even_the_right_password_once_the_username_limit_is_used_up(client, alice, r):
    for _ in range(LOGIN_PER_USER.attempts):
        fail_login(client, "alice")
    response = client.post("/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 429
    assert b"Too many failed attempts" in response.content
    assert "auth" not in response.cookies


def test_the_username_limit_ignores_case(client, alice, r):
    fail_login(client, "ALICE")
    assert r.get("ratelimit:login_user:alice") == "1"


def test_a_successful_login_forgets_that_usernames_failures(client, alice, r):
    fail_login(client, "alice")
    response = client.post("/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302
    assert r.exists("ratelimit:login_user:alice") == 0
    assert r.get("ratelimit:login_ip:127.0.0.1") == "1"  # the IP's count stays


def test_sign_ups_from_one_ip_are_limited(client, r):
    r.set("ratelimit:signup_ip:127.0.0.1", SIGNUP_PER_IP.attempts, ex=60)
    response = client.post(
        "/register/",
        {"username": "newbie", "password": "a-fine-password-9", "password2": "a-fine-password-9"},
    )
    assert response.status_code == 429
    assert b"Too many new accounts" in response.content
    assert r.hget("users", "newbie") is None
    assert b'value="newbie"' in response.content  # what was typed is kept


def test_a_sign_up_counts_against_its_ip(client, r):
    response = client.post(
        "/register/",
        {"username": "newbie", "password": "a-fine-password-9", "password2": "a-fine-password-9"},
    )
    assert response.status_code == 302
    assert r.get("ratelimit:signup_ip:127.0.0.1") == "1"
    assert 0 < r.ttl("ratelimit:signup_ip:127.0.0.1") <= SIGNUP_PER_IP.window
