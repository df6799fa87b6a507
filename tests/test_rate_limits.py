"""Login and sign-up limits: per client address and per (username, address), never per
username alone, so nobody can lock an account's owner out; the client address can come from
a trusted proxy header."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from retwis_site.settings import envrate, envseconds
from social import auth
from tests.conftest import PASSWORD

ATTACKER, OWNER = "203.0.113.66", "198.51.100.7"
NEW_ACCOUNT = {"password": "a-fine-password-9", "password2": "a-fine-password-9"}


def login(client: Client, username: str, password: str, address: str = "127.0.0.1", **extra):
    data = {"username": username, "password": password}
    return client.post("/login/", data, REMOTE_ADDR=address, **extra)


def fail_login(client: Client, username: str, address: str = "127.0.0.1") -> int:
    return login(client, username, "wrong-password", address).status_code


def test_failed_logins_count_per_address_and_per_name_from_that_address(client, alice, r):
    assert fail_login(client, "alice") == 400

    assert r.get("ratelimit:login_ip:127.0.0.1") == "1"
    assert r.get("ratelimit:login_user_ip:127.0.0.1|alice") == "1"
    assert 0 < r.ttl("ratelimit:login_user_ip:127.0.0.1|alice") <= 15 * 60
    assert 0 < r.ttl("ratelimit:login_ip:127.0.0.1") <= 15 * 60
    assert sorted(r.scan_iter(match="ratelimit:login_user:*")) == []  # no count of the name alone


def test_the_owners_password_works_from_another_address_after_a_flood_of_failures(client, alice, r):
    for _ in range(10):
        assert fail_login(client, "alice", ATTACKER) == 400
    assert fail_login(client, "alice", ATTACKER) == 429  # the attacker is stopped...

    response = login(Client(), "alice", PASSWORD, OWNER)

    assert response.status_code == 302 and response.cookies["auth"].value  # ...the owner not
    assert r.hget(f"user:{alice.id}", "last_login_ip") == OWNER
    assert r.get(f"ratelimit:login_user_ip:{ATTACKER}|alice") == "10"  # the refusal not counted


def test_even_the_right_password_is_refused_from_an_address_that_used_up_its_guesses(
    client, alice, r
):
    for _ in range(10):
        fail_login(client, "ALICE", ATTACKER)

    response = login(client, "alice", PASSWORD, ATTACKER)

    assert response.status_code == 429
    assert b"Too many login attempts from your network. Try again in 15 minutes." in (
        response.content
    )
    assert 0 < int(response["Retry-After"]) <= 15 * 60
    assert "auth" not in response.cookies
    assert r.hget(f"user:{alice.id}", "last_login") is None


def test_an_address_is_limited_across_usernames(client, alice, bob, r):
    for i in range(20):
        assert fail_login(client, f"name{i}", ATTACKER) == 400

    assert login(client, "bob", PASSWORD, ATTACKER).status_code == 429
    assert r.get(f"ratelimit:login_ip:{ATTACKER}") == "20"  # refused: given back
    assert r.get(f"ratelimit:login_user_ip:{ATTACKER}|bob") == "0"
    assert login(Client(), "bob", PASSWORD, OWNER).status_code == 302


def test_successful_logins_do_not_use_up_the_address(alice, r):
    for _ in range(25):  # an office behind one address, logging in all morning
        assert login(Client(), "alice", PASSWORD).status_code == 302

    assert r.get("ratelimit:login_ip:127.0.0.1") == "0"
    assert not r.exists("ratelimit:login_user_ip:127.0.0.1|alice")


def test_every_login_attempt_counts_against_its_address_right_or_wrong(client, alice, r):
    for _ in range(3):
        assert login(Client(), "alice", PASSWORD).status_code == 302
    assert fail_login(client, "alice") == 400

    assert r.get("ratelimit:login_attempt_ip:127.0.0.1") == "4"
    assert 0 < r.ttl("ratelimit:login_attempt_ip:127.0.0.1") <= 15 * 60
    assert r.get("ratelimit:login_ip:127.0.0.1") == "1"  # the failure limit: failures only


def test_right_passwords_from_one_address_are_limited_before_any_hash_is_checked(
    alice, bob, r, settings, monkeypatch
):
    settings.RETWIS_LIMIT_LOGIN_ATTEMPTS = (3, 600)
    for who in ("alice", "bob", "alice"):
        assert login(Client(), who, PASSWORD).status_code == 302
    checked = []
    monkeypatch.setattr(auth, "authenticate", lambda *args: checked.append(args))

    refused = login(Client(), "bob", PASSWORD)

    assert refused.status_code == 429 and checked == []  # no password hash computed
    assert b"Too many login attempts from your network. Try again in 10 minutes." in (
        refused.content
    )
    assert 0 < int(refused["Retry-After"]) <= 600 and "auth" not in refused.cookies
    assert r.get("ratelimit:login_attempt_ip:127.0.0.1") == "3"  # the refusal given back
    assert r.get("ratelimit:login_ip:127.0.0.1") == "0"
    monkeypatch.undo()
    assert login(Client(), "bob", PASSWORD, OWNER).status_code == 302  # another address


def test_the_current_password_on_a_settings_page_counts_as_an_attempt(alice_client, alice, r):
    response = alice_client.post("/settings/delete/", {"password": "not it"})

    assert response.status_code == 400
    assert r.get("ratelimit:login_attempt_ip:127.0.0.1") == "1"


def test_the_api_password_grant_counts_every_attempt_too(client, alice, r, settings):
    from tests.test_api_oauth import password_token, register

    settings.RETWIS_LIMIT_LOGIN_ATTEMPTS = (2, 600)
    app = register(client)
    answers = [password_token(client, app).status_code for _ in range(3)]

    assert answers == [200, 200, 429]
    assert r.get("ratelimit:login_attempt_ip:127.0.0.1") == "2"
    assert r.zcard(f"oauth:user:{alice.id}") == 2  # no token for the refused one


def test_a_successful_login_forgets_its_names_failures_but_not_the_addresses(client, alice, r):
    fail_login(client, "alice")

    assert login(client, "alice", PASSWORD).status_code == 302

    assert not r.exists("ratelimit:login_user_ip:127.0.0.1|alice")
    assert r.get("ratelimit:login_ip:127.0.0.1") == "1"


def test_the_limits_are_settings(client, alice, r, settings):
    settings.RETWIS_LIMIT_LOGIN_NAME = (2, 30)

    fail_login(client, "alice")
    fail_login(client, "alice")
    response = login(client, "alice", PASSWORD)

    assert response.status_code == 429
    assert b"Try again in 30 seconds." in response.content
    assert 0 < r.ttl("ratelimit:login_user_ip:127.0.0.1|alice") <= 30


def test_a_proxy_header_is_ignored_unless_configured(client, alice, r):
    fail_login_via_proxy = login(
        client, "alice", "wrong-password", "127.0.0.1", HTTP_X_FORWARDED_FOR=ATTACKER
    )

    assert fail_login_via_proxy.status_code == 400
    assert r.get("ratelimit:login_ip:127.0.0.1") == "1"
    assert not r.exists(f"ratelimit:login_ip:{ATTACKER}")


def test_behind_a_trusted_proxy_each_visitor_has_their_own_address(alice, bob, r, settings):
    settings.TRUSTED_PROXY_HEADER = "HTTP_X_FORWARDED_FOR"
    for i in range(20):  # one visitor's failures...
        login(Client(), f"name{i}", "wrong", "127.0.0.1", HTTP_X_FORWARDED_FOR=ATTACKER)

    # ...do not stop another visitor coming through the same proxy
    response = login(Client(), "bob", PASSWORD, "127.0.0.1", HTTP_X_FORWARDED_FOR=OWNER)

    assert response.status_code == 302
    assert r.get(f"ratelimit:login_ip:{ATTACKER}") == "20"
    assert not r.exists("ratelimit:login_ip:127.0.0.1")
    assert r.hget(f"user:{bob.id}", "last_login_ip") == OWNER


def test_the_trusted_header_counts_the_address_the_proxy_wrote_not_the_clients_claim(
    alice, r, settings
):
    settings.TRUSTED_PROXY_HEADER = "HTTP_X_FORWARDED_FOR"
    # nginx's $proxy_add_x_forwarded_for appends the address it saw to what the client sent
    forwarded = f"10.9.9.9, {OWNER}, {ATTACKER}"

    login(Client(), "alice", "wrong", "127.0.0.1", HTTP_X_FORWARDED_FOR=forwarded)

    assert r.get(f"ratelimit:login_ip:{ATTACKER}") == "1"
    assert sorted(r.scan_iter(match="ratelimit:login_ip:*")) == [f"ratelimit:login_ip:{ATTACKER}"]


@pytest.mark.parametrize("header", ["", "not an address", "1.2.3.4.5", "::g"])
def test_a_missing_or_junk_trusted_header_falls_back_to_the_peer(alice, r, settings, header):
    settings.TRUSTED_PROXY_HEADER = "HTTP_X_REAL_IP"

    login(Client(), "alice", "wrong", OWNER, HTTP_X_REAL_IP=header)

    assert sorted(r.scan_iter(match="ratelimit:login_ip:*")) == [f"ratelimit:login_ip:{OWNER}"]


def test_ipv6_addresses_are_counted_by_their_64_bit_prefix(alice, r):
    login(Client(), "alice", "wrong", "2001:db8:1:2::aaaa")
    login(Client(), "alice", "wrong", "2001:db8:1:2:ffff::1")

    assert r.get("ratelimit:login_ip:2001:db8:1:2::/64") == "2"
    assert r.get("ratelimit:login_user_ip:2001:db8:1:2::/64|alice") == "2"


def test_an_ipv4_mapped_address_counts_as_the_ipv4_address():
    assert auth.address_subject("::ffff:192.0.2.1") == "192.0.2.1"
    assert auth.address_subject("") == "unknown"


def test_sign_ups_from_one_address_are_limited_with_a_retry_after(client, r):
    r.set("ratelimit:signup_ip:127.0.0.1", 10, ex=60)

    response = client.post("/register/", {"username": "newbie", **NEW_ACCOUNT})

    assert response.status_code == 429
    assert b"Too many new accounts from your network. Try again in 1 minute." in response.content
    assert 0 < int(response["Retry-After"]) <= 60
    assert r.hget("users", "newbie") is None
    assert b'value="newbie"' in response.content  # what was typed is kept
    assert r.get("ratelimit:signup_ip:127.0.0.1") == "10"


def test_a_sign_up_counts_against_its_address(client, r):
    response = client.post("/register/", {"username": "newbie", **NEW_ACCOUNT})

    assert response.status_code == 302
    assert r.get("ratelimit:signup_ip:127.0.0.1") == "1"
    assert 0 < r.ttl("ratelimit:signup_ip:127.0.0.1") <= 60 * 60


def test_a_sign_up_refused_for_a_taken_name_does_not_count(client, alice, r):
    response = client.post("/register/", {"username": "ALICE", **NEW_ACCOUNT})

    assert b"That username is taken" in response.content
    assert r.get("ratelimit:signup_ip:127.0.0.1") == "0"
    assert r.hlen("users") == 1


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("30/10m", (30, 600)), ("5/90", (5, 90)), ("1/1d", (1, 86400)), (" 2/3h ", (2, 10800))],
)
def test_a_rate_setting_reads_count_and_window(monkeypatch, raw, expected):
    monkeypatch.setenv("RETWIS_LIMIT_X", raw)

    assert envrate("RETWIS_LIMIT_X", "1/1s") == expected


@pytest.mark.parametrize("raw", ["30", "30/", "/10m", "0/10m", "3/0", "3/10ms", "x/1h", "3/8d"])
def test_a_bad_rate_setting_is_refused(monkeypatch, raw):
    monkeypatch.setenv("RETWIS_LIMIT_X", raw)

    with pytest.raises(ImproperlyConfigured, match="RETWIS_LIMIT_X"):
        envrate("RETWIS_LIMIT_X", "1/1s")


@pytest.mark.parametrize("raw", ["soon", "0", "-1", "nan", "inf", "99999"])
def test_a_bad_timeout_setting_is_refused(monkeypatch, raw):
    monkeypatch.setenv("REDIS_X_TIMEOUT", raw)

    with pytest.raises(ImproperlyConfigured, match="REDIS_X_TIMEOUT"):
        envseconds("REDIS_X_TIMEOUT", 1.0)


def test_a_timeout_setting_takes_fractions(monkeypatch):
    monkeypatch.setenv("REDIS_X_TIMEOUT", "0.25")

    assert envseconds("REDIS_X_TIMEOUT", 1.0) == 0.25
    assert envseconds("REDIS_UNSET_TIMEOUT", 1.5) == 1.5


@pytest.mark.parametrize(
    ("header", "meta_key"),
    [("X-Forwarded-For", "HTTP_X_FORWARDED_FOR"), ("x-real-ip", "HTTP_X_REAL_IP"), ("", "")],
)
def test_the_trusted_proxy_header_setting_names_a_request_header(header, meta_key):
    assert settings_with({"TRUSTED_PROXY_HEADER": header}).stdout.strip() == repr(meta_key)


@pytest.mark.parametrize("header", ["X Forwarded For", "X-Forwarded-For:", "Ünïcode"])
def test_a_trusted_proxy_header_that_is_no_header_name_is_refused(header):
    result = settings_with({"TRUSTED_PROXY_HEADER": header})

    assert result.returncode != 0
    assert "TRUSTED_PROXY_HEADER must be a header name" in result.stderr


def settings_with(env: dict[str, str]) -> subprocess.CompletedProcess:
    """Import the site's settings in a fresh interpreter with env; print the proxy header."""
    code = "import retwis_site.settings as s; print(repr(s.TRUSTED_PROXY_HEADER))"
    base = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**base, "REDIS_URL": "redis://127.0.0.1:9/0", **env},
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )
