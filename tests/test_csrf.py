"""The page's CSRF token (social/csrf.py): Django's format and checks, one random read."""

from __future__ import annotations

import re

from django.middleware.csrf import CSRF_ALLOWED_CHARS, _unmask_cipher_token
from django.test import Client, RequestFactory

from social import csrf

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([A-Za-z0-9]{64})"')


def test_every_byte_below_248_maps_evenly_onto_the_62_characters_and_the_rest_is_dropped():
    assert csrf.ACCEPTED == 248 == 4 * len(CSRF_ALLOWED_CHARS)
    kept = bytes(range(256)).translate(csrf._TABLE, csrf._REJECTED).decode()

    assert kept == CSRF_ALLOWED_CHARS * 4  # each character from exactly four byte values


def test_a_random_string_has_the_length_asked_for_and_changes_every_time():
    strings = {csrf.random_string() for _ in range(50)}

    assert len(strings) == 50
    assert all(len(s) == 32 and set(s) <= set(CSRF_ALLOWED_CHARS) for s in strings)
    assert len(csrf.random_string(1000)) == 1000  # more than one read's worth


def test_a_new_visitor_gets_a_secret_for_the_cookie_and_a_token_that_unmasks_to_it():
    request = RequestFactory().get("/")

    token = csrf.get_token(request)

    secret = request.META["CSRF_COOKIE"]
    assert request.META["CSRF_COOKIE_NEEDS_UPDATE"] is True
    assert len(token) == 64 and len(secret) == 32
    assert _unmask_cipher_token(token) == secret


def test_each_token_is_masked_afresh_from_the_cookies_secret():
    request = RequestFactory().get("/")
    request.META["CSRF_COOKIE"] = secret = "a" * 16 + "Z9" * 8

    first, second = csrf.get_token(request), csrf.get_token(request)

    assert first != second and first[32:] != second[32:]
    assert _unmask_cipher_token(first) == _unmask_cipher_token(second) == secret
    assert request.META["CSRF_COOKIE"] == secret


def test_djangos_middleware_accepts_the_pages_token_and_refuses_a_post_without_one():
    client = Client(enforce_csrf_checks=True)
    page = client.get("/login/")
    token = TOKEN.search(page.content.decode()).group(1)
    assert _unmask_cipher_token(token) == page.cookies["csrftoken"].value

    refused = client.post("/login/", {"username": "nobody", "password": "wrong"})
    accepted = client.post(
        "/login/", {"username": "nobody", "password": "wrong", "csrfmiddlewaretoken": token}
    )

    assert refused.status_code == 403
    assert accepted.status_code == 400  # past the CSRF check, to the form's own error
    assert 'name="password"' in accepted.content.decode()
