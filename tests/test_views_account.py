"""Owning your account: changing the password and deleting the account, as pages: status,
redirects, cookies, CSRF, and the resulting Redis state."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.hashers import check_password
from django.test import Client

from tests.conftest import PASSWORD, login, make_user

NEW_PASSWORD = "a brand new secret 42"


def logged_in_name(client: Client) -> str | None:
    """Return who the client's cookie logs in as (the home page's greeting), or None."""
    found = re.search(r"What are you doing, ([^?]+)\?", client.get("/").content.decode())
    return found.group(1) if found else None


def change(client: Client, old: str = PASSWORD, new1: str = NEW_PASSWORD, new2: str = ""):
    data = {"old_password": old, "new_password1": new1, "new_password2": new2 or new1}
    return client.post("/settings/password/", data)


# --- Change password ---------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/settings/password/", "/settings/delete/"])
def test_the_settings_pages_need_a_login(client, url):
    response = client.get(url)

    assert response.status_code == 302 and response["Location"] == f"/login/?next={url}"


@pytest.mark.parametrize("url", ["/settings/password/", "/settings/delete/"])
def test_the_settings_pages_are_linked_from_the_hub_which_home_links(alice_client, url):
    assert b'href="/settings/"' in alice_client.get("/").content
    assert f'href="{url}"'.encode() in alice_client.get("/settings/").content


def test_the_password_page_asks_for_the_current_and_the_new_one_twice(alice_client):
    html = alice_client.get("/settings/password/").content.decode()

    for name in ("old_password", "new_password1", "new_password2"):
        assert f'name="{name}"' in html
    assert 'autocomplete="current-password"' in html and 'autocomplete="new-password"' in html


def test_changing_the_password_keeps_this_device_and_logs_out_the_others(repo, r, alice):
    here = login(Client(), repo, alice)
    elsewhere = login(Client(), repo, alice)
    old_secret = r.hget(f"user:{alice.id}", "auth")

    response = change(here)

    new_secret = r.hget(f"user:{alice.id}", "auth")
    assert response.status_code == 302 and response["Location"] == "/"
    assert new_secret != old_secret and response.cookies["auth"].value == new_secret
    assert check_password(NEW_PASSWORD, r.hget(f"user:{alice.id}", "password"))
    assert r.hget("auths", new_secret) == str(alice.id)
    home = here.get("/").content.decode()
    assert "Your password is changed. Your other devices are logged out." in home
    assert "What are you doing, alice?" in home
    assert logged_in_name(elsewhere) is None  # the old cookie no longer logs in


def test_the_new_password_logs_in_and_the_old_one_does_not(repo, alice, alice_client):
    change(alice_client)

    old = Client().post("/login/", {"username": "alice", "password": PASSWORD})
    new = Client().post("/login/", {"username": "alice", "password": NEW_PASSWORD})

    assert old.status_code == 400 and new.status_code == 302


def test_a_wrong_current_password_keeps_the_form_with_a_message(repo, r, alice, alice_client):
    before = r.hmget(f"user:{alice.id}", ["password", "auth"])

    response = change(alice_client, old="not my password")

    html = response.content.decode()
    assert response.status_code == 400
    assert "That is not your current password." in html
    assert 'name="old_password"' in html and 'value="not my password"' not in html
    assert r.hmget(f"user:{alice.id}", ["password", "auth"]) == before
    assert logged_in_name(alice_client) == "alice"


@pytest.mark.parametrize(
    ("new1", "new2", "message"),
    [
        (NEW_PASSWORD, "something else entirely", "The two passwords do not match."),
        ("short", "short", "This password is too short."),
        ("12345678901", "12345678901", "This password is entirely numeric."),
        ("xalice_x", "xalice_x", "The password is too similar to the username."),
    ],
)
def test_a_weak_or_mistyped_new_password_is_refused(r, alice, alice_client, new1, new2, message):
    before = r.hget(f"user:{alice.id}", "password")

    response = change(alice_client, new1=new1, new2=new2)

    assert response.status_code == 400 and message in response.content.decode()
    assert r.hget(f"user:{alice.id}", "password") == before


def test_guessing_the_current_password_is_rate_limited_like_logging_in(
    settings, r, alice, alice_client
):
    settings.RETWIS_LIMIT_LOGIN_NAME = (2, 900)

    statuses = [change(alice_client, old=f"guess {i}").status_code for i in range(3)]
    last = change(alice_client)  # even the right one waits now

    assert statuses == [400, 400, 429]
    assert last.status_code == 429 and "Retry-After" in last
    assert b"Too many login attempts" in last.content
    assert r.get("ratelimit:login_user_ip:127.0.0.1|alice") == "2"
    assert not check_password(NEW_PASSWORD, r.hget(f"user:{alice.id}", "password"))


def test_changing_the_password_needs_the_csrf_token(repo, r, alice):
    strict = login(Client(enforce_csrf_checks=True), repo, alice)
    before = r.hget(f"user:{alice.id}", "password")

    assert change(strict).status_code == 403
    assert r.hget(f"user:{alice.id}", "password") == before


def test_the_password_page_refuses_a_get_with_data_as_a_change(r, alice, alice_client):
    before = r.hget(f"user:{alice.id}", "password")

    alice_client.get(
        "/settings/password/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assert r.hget(f"user:{alice.id}", "password") == before


# --- Delete the account ------------------------------------------------------------------


def test_the_delete_page_says_what_happens_and_asks_for_the_password(alice_client):
    html = alice_client.get("/settings/delete/").content.decode()

    assert "stays reserved for 30 days" in html
    assert 'name="password"' in html and "Delete my account" in html


def test_deleting_the_account_logs_out_and_says_so_on_the_welcome_page(
    repo, r, alice, bob, charlie, alice_client
):
    repo.graph.follow(alice.id, bob.id)
    repo.graph.follow(charlie.id, alice.id)
    post_id = repo.posts.create_post(alice.id, "my last words")
    old_cookie = alice_client.cookies["auth"].value

    response = alice_client.post("/settings/delete/", {"password": PASSWORD})

    assert response.status_code == 302 and response["Location"] == "/"
    assert response.cookies["auth"].value == "" and response.cookies["auth"]["max-age"] == 0
    welcome = alice_client.get("/").content.decode()
    assert "Your account alice is deleted. Its name stays reserved for 30 days." in welcome
    assert "Create an account" in welcome  # the welcome page: logged out
    user = r.hgetall(f"user:{alice.id}")
    assert user["status"] == "deleted" and user["auth"] != old_cookie
    assert r.zscore("deleted_users", alice.id) is not None
    assert not r.exists(f"following:{alice.id}") and not r.exists(f"followers:{alice.id}")
    assert r.zscore(f"followers:{bob.id}", alice.id) is None
    assert r.zscore(f"following:{charlie.id}", alice.id) is None
    assert r.hget("users", "alice") == str(alice.id)  # the name stays taken
    gone = login_with_cookie(old_cookie)
    assert logged_in_name(gone) is None
    assert Client().get("/u/alice/").status_code == 404
    assert Client().get(f"/p/{post_id}/").status_code == 404
    assert b"my last words" not in Client().get("/timeline/").content
    assert b"my last words" not in login(Client(), repo, charlie).get("/").content


def login_with_cookie(secret: str) -> Client:
    client = Client()
    client.cookies["auth"] = secret
    return client


def test_the_deleted_name_cannot_be_taken_or_logged_into_during_the_grace_period(
    r, alice, alice_client
):
    alice_client.post("/settings/delete/", {"password": PASSWORD})

    signup = Client().post(
        "/register/", {"username": "Alice", "password": NEW_PASSWORD, "password2": NEW_PASSWORD}
    )
    relogin = Client().post("/login/", {"username": "alice", "password": PASSWORD})

    assert signup.status_code == 200 and b"That username is taken." in signup.content
    assert relogin.status_code == 400 and not relogin.cookies.get("auth")
    assert r.hget("users_lower", "alice") == str(alice.id)


def test_staff_see_the_deletion_in_the_audit_log(alice, alice_client, sam_client):
    alice_client.post("/settings/delete/", {"password": PASSWORD})

    log = sam_client.get("/staff/log/").content.decode()

    assert "Deleted own account" in log and "alice" in log


def test_a_wrong_password_deletes_nothing(repo, r, alice, bob, alice_client):
    repo.graph.follow(alice.id, bob.id)

    response = alice_client.post("/settings/delete/", {"password": "nope"})

    assert response.status_code == 400
    assert b"That is not your current password." in response.content
    assert r.hget(f"user:{alice.id}", "status") is None
    assert r.zscore(f"followers:{bob.id}", alice.id) is not None
    assert logged_in_name(alice_client) == "alice"


def test_a_staff_account_is_refused_clearly(r, sam, sam_client):
    page = sam_client.get("/settings/delete/").content.decode()
    response = sam_client.post("/settings/delete/", {"password": PASSWORD})

    assert "Staff accounts cannot be deleted here." in page and 'name="password"' not in page
    assert response.status_code == 403
    assert b"Staff accounts cannot be deleted here." in response.content
    assert r.hget(f"user:{sam.id}", "status") is None
    assert not r.exists("deleted_users")


def test_deleting_needs_a_post_with_the_csrf_token(repo, r, alice):
    strict = login(Client(enforce_csrf_checks=True), repo, alice)

    refused = strict.post("/settings/delete/", {"password": PASSWORD})
    strict.get("/settings/delete/", {"password": PASSWORD})

    assert refused.status_code == 403
    assert r.hget(f"user:{alice.id}", "status") is None


def test_a_deleted_account_leaves_other_peoples_follow_lists_and_counts(
    repo, r, alice, bob, alice_client
):
    repo.graph.follow(bob.id, alice.id)
    other = make_user(repo, "other")
    repo.graph.follow(alice.id, other.id)

    alice_client.post("/settings/delete/", {"password": PASSWORD})

    assert "@alice" not in Client().get("/u/bob/following/").content.decode()
    assert "@alice" not in Client().get("/u/other/followers/").content.decode()
    assert r.zcard(f"following:{bob.id}") == 0 and r.zcard(f"followers:{other.id}") == 0
