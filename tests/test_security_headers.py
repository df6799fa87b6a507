"""Every response carries the headers that limit what an injected script could do."""

import pytest


@pytest.mark.parametrize("url", ["/", "/timeline/", "/login/", "/u/nobody/"])
def test_pages_send_a_strict_content_security_policy(client, url):
    policy = client.get(url)["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy


def test_staff_pages_send_it_too(sam_client):
    response = sam_client.get("/staff/")
    assert response.status_code == 200
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_the_auth_cookie_is_httponly_and_samesite_lax(client, alice):
    from tests.conftest import PASSWORD

    response = client.post("/login/", {"username": "alice", "password": PASSWORD})
    cookie = response.cookies["auth"]
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert int(cookie["max-age"]) > 30 * 86400
    assert response["X-Frame-Options"] == "DENY"
