"""Sign-up, login, logout and CSRF: status, redirects, cookies and the resulting Redis state."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.hashers import (
    Argon2PasswordHasher,
    PBKDF2PasswordHasher,
    check_password,
    identify_hasher,
)
from django.test import Client

from tests.conftest import PASSWORD

NEW_PASSWORD = "a perfectly fine passphrase"


def sign_up(client: Client, username: str = "newbie", **fields):
    data = {"username": username, "password": NEW_PASSWORD, "password2": NEW_PASSWORD}
    return client.post("/register/", {**data, **fields})


def assert_auth_cookie(response, expected_secret: str) -> None:
    cookie = response.cookies["auth"]
    assert cookie.value == expected_secret
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert int(cookie["max-age"]) >= 30 * 86400


def test_it_shows_the_sign_up_form(client):
    response = client.get("/register/")

    assert response.status_code == 200
    for field in (b'name="username"', b'name="password"', b'name="password2"'):
        assert field in response.content


def test_it_creates_the_account_logs_in_and_goes_home(client, r):
    response = sign_up(client, "Newbie")

    assert response.status_code == 302 and response["Location"] == "/"
    user_id = r.hget("users", "Newbie")
    assert user_id == r.hget("users_lower", "newbie")
    stored = r.hgetall(f"user:{user_id}")
    assert stored["username"] == "Newbie"
    assert stored["password"] != NEW_PASSWORD
    identify_hasher(stored["password"])
    assert check_password(NEW_PASSWORD, stored["password"])
    assert r.hget("auths", stored["auth"]) == user_id
    assert stored["last_login"]
    assert_auth_cookie(response, stored["auth"])
    assert b"What are you doing, Newbie?" in client.get("/").content


def test_it_re_shows_sign_up_with_the_message_and_the_typed_username(client, r):
    response = sign_up(client, "bad name!", password="typed-secret-1", password2="typed-secret-1")

    assert response.status_code == 200
    assert b"Use only letters, digits and underscores." in response.content
    assert b'value="bad name!"' in response.content
    assert b"typed-secret-1" not in response.content
    assert "auth" not in response.cookies
    assert not r.exists("users", "next_user_id")


@pytest.mark.parametrize("typed", ["alice", "ALICE"])
def test_it_refuses_a_taken_username_in_any_case(client, alice, r, typed):
    response = sign_up(client, typed)

    assert response.status_code == 200
    assert b"That username is taken. Try another." in response.content
    assert f'value="{typed}"'.encode() in response.content
    assert NEW_PASSWORD.encode() not in response.content
    assert r.hgetall("users") == {"alice": str(alice.id)}
    assert "auth" not in response.cookies


def test_it_refuses_passwords_that_differ_without_echoing_them(client, r):
    response = sign_up(client, password2="something else entirely")

    assert response.status_code == 200
    assert b"The two passwords do not match." in response.content
    assert b"something else entirely" not in response.content
    assert NEW_PASSWORD.encode() not in response.content
    assert b'value="newbie"' in response.content
    assert not r.exists("users")


def test_it_logs_in_and_goes_home(client, alice, r):
    response = client.post("/login/", {"username": "alice", "password": PASSWORD})

    assert response.status_code == 302 and response["Location"] == "/"
    assert_auth_cookie(response, r.hget(f"user:{alice.id}", "auth"))
    assert r.hget(f"user:{alice.id}", "last_login_ip") == "127.0.0.1"
    assert b"What are you doing, alice?" in client.get("/").content


def test_it_logs_in_whatever_the_case_of_the_username(client, alice, r):
    response = client.post("/login/", {"username": "ALICE", "password": PASSWORD})

    assert response.status_code == 302
    assert response.cookies["auth"].value == r.hget(f"user:{alice.id}", "auth")


@pytest.mark.parametrize(
    ("username", "password"), [("alice", "wrong password!"), ("nobody", PASSWORD)]
)
def test_it_never_says_which_part_of_a_login_was_wrong(client, alice, username, password):
    response = client.post("/login/", {"username": username, "password": password})

    assert response.status_code == 400
    assert b"That username and password do not match an account." in response.content
    assert b"no such user" not in response.content.lower()
    assert b"wrong password" not in response.content.lower()
    assert f'value="{username}"'.encode() in response.content
    assert password.encode() not in response.content
    assert "auth" not in response.cookies


@pytest.mark.parametrize("next_url", ["/u/bob/", "/timeline/?page=2"])
def test_it_follows_a_safe_next_after_login(client, alice, bob, next_url):
    response = client.post("/login/", {"username": "alice", "password": PASSWORD, "next": next_url})

    assert response.status_code == 302 and response["Location"] == next_url


def test_it_carries_next_from_the_query_string_through_the_form(client, alice):
    form = client.get("/login/?next=/u/alice/")

    assert b'name="next" value="/u/alice/"' in form.content
    response = client.post("/login/?next=/u/alice/", {"username": "alice", "password": PASSWORD})
    assert response["Location"] == "/u/alice/"


@pytest.mark.parametrize(
    "next_url", ["https://evil.example/", "//evil.example/", "http://evil.example/u/alice/"]
)
def test_it_ignores_an_offsite_next(client, alice, next_url):
    response = client.post("/login/", {"username": "alice", "password": PASSWORD, "next": next_url})

    assert response.status_code == 302 and response["Location"] == "/"
    assert b"evil.example" not in client.get(f"/login/?next={next_url}").content


def write_legacy_user(r, user_id: int, name: str, plain: str) -> str:
    """Write a user the way the PHP Retwis does, plain-text password and all."""
    secret = "b" * 40
    r.incr("next_user_id")
    r.hset(f"user:{user_id}", mapping={"username": name, "password": plain, "auth": secret})
    r.hset("users", name, user_id)
    r.hset("auths", secret, user_id)
    r.zadd("users_by_time", {name: 1_300_000_000})
    return secret


def test_it_logs_in_a_plain_text_legacy_password_and_hashes_it(client, r):
    secret = write_legacy_user(r, 1, "oldtimer", "hunter2hunter2")

    response = client.post("/login/", {"username": "oldtimer", "password": "hunter2hunter2"})

    assert response.status_code == 302
    assert_auth_cookie(response, secret)  # the reference's secret keeps working
    stored = r.hget("user:1", "password")
    assert stored != "hunter2hunter2"
    identify_hasher(stored)
    assert check_password("hunter2hunter2", stored)
    again = Client().post("/login/", {"username": "oldtimer", "password": "hunter2hunter2"})
    assert again.status_code == 302


def test_it_refuses_a_wrong_legacy_password_and_keeps_the_field(client, r):
    write_legacy_user(r, 1, "oldtimer", "hunter2hunter2")

    response = client.post("/login/", {"username": "oldtimer", "password": "hunter3hunter3"})

    assert response.status_code == 400
    assert r.hget("user:1", "password") == "hunter2hunter2"


def test_it_answers_405_to_a_logout_by_get(alice_client, alice, r):
    secret = r.hget(f"user:{alice.id}", "auth")

    assert alice_client.get("/logout/").status_code == 405

    assert r.hget(f"user:{alice.id}", "auth") == secret


def test_it_logs_out_every_device_by_rotating_the_secret(alice_client, alice, r):
    old = r.hget(f"user:{alice.id}", "auth")
    other_device = Client()
    other_device.cookies["auth"] = old

    response = alice_client.post("/logout/")

    assert response.status_code == 302 and response["Location"] == "/"
    assert response.cookies["auth"].value == ""
    assert int(response.cookies["auth"]["max-age"]) == 0
    new = r.hget(f"user:{alice.id}", "auth")
    assert new != old
    assert not r.hexists("auths", old)
    assert r.hget("auths", new) == str(alice.id)
    assert b"Create an account" in other_device.get("/").content


def test_it_lets_a_visitor_log_out_harmlessly(client, r):
    response = client.post("/logout/")

    assert response.status_code == 302
    assert not r.exists("auths")


@pytest.mark.parametrize(
    "url", ["/post/", "/login/", "/register/", "/logout/", "/u/bob/follow/", "/u/bob/unfollow/"]
)
def test_it_refuses_a_post_without_a_csrf_token(repo, alice, bob, r, url):
    client = Client(enforce_csrf_checks=True)
    client.cookies["auth"] = repo.users.record_login(alice.id)
    secret = r.hget(f"user:{alice.id}", "auth")
    data = {"status": "hi", "username": "mallory", "password": NEW_PASSWORD}

    response = client.post(url, {**data, "password2": NEW_PASSWORD})

    assert response.status_code == 403
    assert not r.exists("next_post_id", f"following:{alice.id}")
    assert r.hlen("users") == 2
    assert r.hget(f"user:{alice.id}", "auth") == secret


def test_it_accepts_a_post_with_the_csrf_token_from_the_form(alice, r):
    client = Client(enforce_csrf_checks=True)
    client.get("/login/")
    token = client.cookies["csrftoken"].value

    response = client.post(
        "/login/", {"username": "alice", "password": PASSWORD, "csrfmiddlewaretoken": token}
    )

    assert response.status_code == 302
    assert response.cookies["auth"].value == r.hget(f"user:{alice.id}", "auth")
    assert r.hget(f"user:{alice.id}", "last_login") is not None


def test_a_page_with_several_forms_gives_them_one_working_csrf_token(repo, alice, bob, r):
    client = Client(enforce_csrf_checks=True)
    client.cookies["auth"] = repo.users.record_login(alice.id)

    page = client.get("/u/bob/").content.decode()  # log-out, follow, mute, language
    tokens = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert len(tokens) == 4 and len(set(tokens)) == 1  # Block is a link: it asks first
    assert tokens[0] != client.cookies["csrftoken"].value  # masked, as Django sends it

    response = client.post("/u/bob/follow/", {"csrfmiddlewaretoken": tokens[0]})

    assert response.status_code == 302
    assert r.zscore(f"following:{alice.id}", bob.id) is not None


SITE_HASHERS = [
    "social.hashers.WorkerArgon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]


@pytest.mark.parametrize("old", ["pbkdf2", "plain text", "argon2 of Django's defaults"])
def test_a_login_re_hashes_an_older_password_with_argon2(client, r, settings, old):
    settings.PASSWORD_HASHERS = SITE_HASHERS
    write_legacy_user(r, 1, "oldtimer", "hunter2hunter2")
    stored = {
        "pbkdf2": PBKDF2PasswordHasher().encode("hunter2hunter2", "saltsalt", iterations=1000),
        "plain text": "hunter2hunter2",
        "argon2 of Django's defaults": Argon2PasswordHasher().encode("hunter2hunter2", "saltsalt"),
    }[old]
    r.hset("user:1", "password", stored)

    response = client.post("/login/", {"username": "oldtimer", "password": "hunter2hunter2"})

    assert response.status_code == 302
    upgraded = r.hget("user:1", "password")
    assert upgraded.startswith("argon2$argon2id$v=19$m=19456,t=2,p=1$")
    assert check_password("hunter2hunter2", upgraded)
    again = Client().post("/login/", {"username": "oldtimer", "password": "hunter2hunter2"})
    assert again.status_code == 302
    assert r.hget("user:1", "password") == upgraded  # the same parameters: kept as it is


def test_a_sign_up_hashes_with_argon2(client, r, settings):
    settings.PASSWORD_HASHERS = SITE_HASHERS

    sign_up(client, "newbie")

    user_id = r.hget("users", "newbie")
    assert r.hget(f"user:{user_id}", "password").startswith("argon2$argon2id$")
