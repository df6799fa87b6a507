"""The visitor's front page is answered before Django while nothing it shows has changed
(social/front.py): each visitor with a token of their own, every change shown at once."""

from __future__ import annotations

import io
import re

import pytest
from django.test import Client

from retwis_site.wsgi import application
from social import keys, remembered
from tests.conftest import CLUSTER, PASSWORD, make_user

T0 = 1_700_000_000
TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
SECRET = "0123456789abcdefABCDEF0123456789"


@pytest.fixture(autouse=True)
def forget():
    remembered.PAGES.clear()
    application.pages.clear()
    yield
    remembered.PAGES.clear()
    application.pages.clear()


@pytest.fixture
def django_calls(monkeypatch) -> list:
    """Count the requests that reach Django."""
    calls: list = []
    real = application.application
    monkeypatch.setattr(
        application, "application", lambda env, start: (calls.append(1), real(env, start))[1]
    )
    return calls


def get(path="/", cookie="", method="GET", query="", **headers) -> tuple[str, dict, str]:
    """Call the site's WSGI application; return status, headers, page."""
    environ = {
        "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query,
        "SERVER_NAME": "testserver", "SERVER_PORT": "80", "HTTP_HOST": "testserver",
        "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1", "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""), "wsgi.errors": io.StringIO(), "HTTP_COOKIE": cookie,
        **{"HTTP_" + name.upper(): value for name, value in headers.items()},
    }  # fmt: skip
    answer: dict = {}

    def start_response(status, headers, exc_info=None):
        answer.update(status=status, headers=headers)

    body = b"".join(application(environ, start_response))
    headers_by_name: dict = {}
    for name, value in answer["headers"]:
        headers_by_name.setdefault(name.lower(), []).append(value.strip())
    return answer["status"], headers_by_name, body.decode()


pytestmark = pytest.mark.skipif(CLUSTER, reason="not remembered on a cluster (front.py)")


def test_a_visitor_is_answered_from_memory_with_a_token_and_cookie_of_their_own(
    repo, alice, django_calls
):
    repo.posts.create_post(alice.id, "hello from alice", at=T0)
    first = get()
    second, third = get(), get(cookie=f"csrftoken={SECRET}")

    assert len(django_calls) == 1
    for status, headers, html in (first, second, third):
        assert status.startswith("200") and "hello from alice" in html
        assert remembered.CSRF_SLOT not in html
        assert int(headers["content-length"][0]) == len(html.encode())
        assert headers["vary"] == ["Cookie, Accept-Language"]
        assert headers["x-frame-options"] == ["DENY"] and headers["content-security-policy"]
    tokens = [set(TOKEN.findall(html)) for _, _, html in (first, second, third)]
    assert all(len(t) == 1 for t in tokens) and len(set.union(*tokens)) == 3
    cookies = [h["set-cookie"] for _, h, _ in (first, second, third)]
    assert cookies[2] == [
        f"csrftoken={SECRET}; expires={cookies[2][0].split('expires=')[1].split(';')[0]}; "
        "HttpOnly; Max-Age=31449600; Path=/; SameSite=Lax"
    ]
    assert cookies[0][0].split(";")[1:] and cookies[0][0][:42] != cookies[1][0][:42]


def test_a_database_flushed_under_the_process_is_never_answered_from_memory(
    repo, alice, r, django_calls
):
    repo.posts.create_post(alice.id, "hello from alice", at=T0)
    assert "hello from alice" in get()[2]
    r.flushdb()
    bob = make_user(repo, "bob")
    repo.posts.create_post(bob.id, "news from bob", at=T0)  # one post again

    html = get()[2]

    assert "news from bob" in html and "hello from alice" not in html
    assert len(django_calls) == 2


def test_a_database_without_a_visibility_version_is_never_answered_from_memory(
    repo, alice, r, django_calls
):
    repo.posts.create_post(alice.id, "hello from alice", at=T0)
    r.delete(keys.visibility_version())  # as the reference Retwis leaves a database
    get()
    get()

    assert len(django_calls) == 2


def test_its_token_logs_in(repo, alice):
    get()  # remembered
    _, headers, html = get()
    secret = headers["set-cookie"][0].split(";")[0].split("=")[1]
    client = Client(enforce_csrf_checks=True)
    client.cookies["csrftoken"] = secret

    response = client.post(
        "/login/",
        {"username": "alice", "password": PASSWORD, "csrfmiddlewaretoken": TOKEN.findall(html)[0]},
    )

    assert response.status_code == 302 and "auth" in response.cookies


@pytest.mark.parametrize(
    "change",
    ["post", "reply", "like", "unlike", "repost", "unrepost", "delete", "display name"],
)
def test_every_change_it_shows_is_shown_at_once(repo, alice, r, django_calls, change):
    bob = make_user(repo, "bob")
    post_id = repo.posts.create_post(alice.id, "hello from alice", at=T0)
    if change == "unlike":
        repo.likes.like(bob.id, post_id)
    elif change == "unrepost":
        repo.reposts.repost(bob.id, post_id)
    get()
    before = r.mget(keys.front_version(), keys.visibility_version())

    if change == "post":
        repo.posts.create_post(bob.id, "news from bob", at=T0 + 5)
    elif change == "reply":
        repo.posts.create_post(bob.id, "@alice a reply", at=T0 + 5, reply_to=post_id)
    elif change in ("like", "unlike"):
        getattr(repo.likes, change)(bob.id, post_id)
    elif change in ("repost", "unrepost"):
        getattr(repo.reposts, change)(bob.id, post_id)
    elif change == "delete":
        repo.posts.delete_own_post(alice.id, post_id)
    else:
        repo.profiles.update(alice.id, display_name="Alice Renamed")
    html = get()[2]

    assert r.mget(keys.front_version(), keys.visibility_version()) != before
    assert len(django_calls) == 2
    shown = {
        "post": "news from bob",
        "reply": "1 reply",
        "like": "1 like",
        "repost": "1 repost",
        "display name": "Alice Renamed",
    }
    if change in shown:
        assert shown[change] in html
    elif change in ("unlike", "unrepost"):
        assert f"1 {change[2:]}" not in html and "hello from alice" in html
    else:
        assert "hello from alice" not in html


def test_a_cards_age_moving_renders_it_again(repo, alice, django_calls, monkeypatch):
    import time

    repo.posts.create_post(alice.id, "hello from alice", at=int(time.time()) - 30)
    assert '<span aria-hidden="true">now</span>' in get()[2]
    later = time.time() + 31
    monkeypatch.setattr(time, "time", lambda: later)

    html = get()[2]

    assert len(django_calls) == 2 and '<span aria-hidden="true">1m</span>' in html


@pytest.mark.parametrize(
    "request_",
    [
        {"cookie": "auth=whatever"},
        {"cookie": "messages=something"},
        {"cookie": "csrftoken=short"},
        {"query": "page=2"},
        {"method": "HEAD"},
        {"path": "/timeline/"},
    ],
)
def test_other_requests_go_to_django(repo, alice, django_calls, request_):
    repo.posts.create_post(alice.id, "hello from alice", at=T0)
    get()
    get(**request_)
    get()

    assert len(django_calls) == 2  # the last from memory


def test_each_language_has_its_own_page(repo, alice, django_calls):
    repo.posts.create_post(alice.id, "hello from alice", at=T0)
    get()
    chinese = get(ACCEPT_LANGUAGE="zh-hans")[2]
    again = get(ACCEPT_LANGUAGE="zh-hans")[2]
    cookie = get(cookie="django_language=zh-hans")[2]

    assert len(django_calls) == 3
    assert 'lang="zh-hans"' in chinese and 'lang="zh-hans"' in again and 'lang="zh-hans"' in cookie
    assert 'lang="en"' in get()[2]
