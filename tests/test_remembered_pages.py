"""The welcome page and the timeline a visitor sees are answered from memory while nothing
they show has changed (social/remembered.py), each with its own CSRF token."""

from __future__ import annotations

import io
import re
from html import unescape

import pytest
from django.test import Client

from retwis_site.wsgi import application
from social import account_forms, keys, remembered
from social.repository import Repository
from social.repository.cache import ProcessCache
from tests.conftest import CLUSTER, PASSWORD, make_user

T0 = 1_700_000_000
TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture(autouse=True)
def forget():
    remembered.PAGES.clear()
    yield
    remembered.PAGES.clear()


@pytest.fixture
def posted(repo, alice):
    return alice, repo.posts.create_post(alice.id, "hello from alice", at=T0)


def renders(monkeypatch) -> list:
    """Count the renderings of remembered pages."""
    seen: list = []
    real = remembered.PAGES.put
    monkeypatch.setattr(remembered.PAGES, "put", lambda k, v: (seen.append(k), real(k, v)))
    return seen


@pytest.mark.parametrize("url", ["/", "/timeline/"])
def test_a_visitors_page_renders_once_while_nothing_changes(repo, posted, monkeypatch, url):
    seen = renders(monkeypatch)

    first = Client().get(url).content.decode()
    second = Client().get(url).content.decode()

    assert len(seen) == 1
    assert "hello from alice" in first and "hello from alice" in second
    assert remembered.CSRF_SLOT not in first + second


def test_each_visitor_gets_a_working_token_of_their_own(repo, posted, r):
    Client().get("/")  # remembered now
    one, two = Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)

    tokens = [TOKEN.findall(c.get("/").content.decode()) for c in (one, two)]
    response = two.post(
        "/login/",
        {"username": "alice", "password": PASSWORD, "csrfmiddlewaretoken": tokens[1][0]},
    )

    assert all(len(set(t)) == 1 for t in tokens)  # one token for all the page's forms
    assert tokens[0][0] != tokens[1][0]
    assert one.cookies["csrftoken"].value != two.cookies["csrftoken"].value
    assert response.status_code == 302 and "auth" in response.cookies


def test_a_change_it_shows_is_rendered_at_once(repo, posted, monkeypatch):
    alice, post_id = posted
    Client().get("/")
    bob = make_user(repo, "bob")
    repo.likes.like(bob.id, post_id)  # the count changes: a new fingerprint

    html = Client().get("/").content.decode()

    assert '<span class="action likes"><span aria-hidden="true">♥</span> 1 like</span>' in unescape(
        html
    )


def test_a_logged_in_reader_or_a_flash_message_is_never_served_from_memory(
    repo, posted, alice_client, monkeypatch
):
    seen = renders(monkeypatch)
    alice_client.get("/timeline/")
    visitor = Client()
    visitor.cookies["messages"] = "anything"
    visitor.get("/timeline/")

    assert seen == []


def test_each_language_has_its_own(repo, posted, monkeypatch):
    seen = renders(monkeypatch)

    english = Client().get("/timeline/").content.decode()
    chinese = Client(headers={"accept-language": "zh-hans"}).get("/timeline/").content.decode()

    assert len(seen) == 2 and english != chinese


def test_the_timelines_remembered_side_column_follows_new_sign_ups_and_the_language(
    repo, posted, alice_client
):
    """The side column (trending tags, newest sign-ups) is a remembered page part keyed by
    what it shows and the language: a new account shows on the next request. (The tags
    themselves are summed once a minute per process: TrendingStore.)"""
    repo.posts.create_post(posted[0].id, "all about #fresh")
    before = alice_client.get("/timeline/").content.decode()
    make_user(repo, "newcomer")
    after = alice_client.get("/timeline/").content.decode()
    chinese = alice_client.get("/timeline/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    side = [re.search(r'<aside class="card">.*?</aside>', html, re.S).group(0)
            for html in (before, after, chinese)]  # fmt: skip
    assert 'href="/tag/fresh/"' in side[0] and "@newcomer" not in side[0]
    assert 'href="/tag/fresh/"' in side[1] and "@newcomer" in side[1] and "1 post" in side[1]
    assert "@newcomer" in side[2] and "Trending today" not in side[2]


def test_the_remembered_welcome_page_builds_no_forms_until_it_renders(repo, posted, monkeypatch):
    built: list[str] = []

    def counted(form_class):
        real = form_class.__init__

        def init(self, *args, **kwargs):
            built.append(form_class.__name__)
            real(self, *args, **kwargs)

        monkeypatch.setattr(form_class, "__init__", init)

    counted(account_forms.RegisterForm)
    counted(account_forms.LoginForm)

    first = Client().get("/").content.decode()
    built_first = sorted(built)
    second = Client().get("/").content.decode()

    assert built_first == ["LoginForm", "RegisterForm"]
    assert sorted(built) == built_first  # the second visitor's page came from memory
    assert second == first.replace(TOKEN.search(first)[1], TOKEN.search(second)[1])
    assert 'id="login_username"' in second and 'id="id_password2"' in second


def test_a_name_changed_in_another_process_renders_only_the_pages_that_show_it(
    repo, posted, r, monkeypatch
):
    """Issue 34, part 3: the change is numbered (accounts/profile_changes.py), not a move
    of the visibility version; a remembered page that shows its author is rendered anew,
    one that does not is answered from memory still."""
    alice, _ = posted
    bob = make_user(repo, "bob")
    for url in ("/", "/timeline/"):
        Client().get(url)
    seen = renders(monkeypatch)
    version = r.get(keys.visibility_version())
    elsewhere = Repository(r, cache=ProcessCache())

    elsewhere.profiles.update(bob.id, display_name="Bob Renamed")  # on neither page
    unchanged = [Client().get(url).content.decode() for url in ("/", "/timeline/")]
    elsewhere.profiles.update(alice.id, display_name="Alice Renamed")
    changed = [Client().get(url).content.decode() for url in ("/", "/timeline/")]

    assert len(seen) == 2  # the two pages once each, after alice's change
    assert all("Alice Renamed" not in html for html in unchanged)
    assert all('<bdi class="display-name">Alice Renamed</bdi>' in html for html in changed)
    assert r.get(keys.visibility_version()) == version


@pytest.mark.skipif(CLUSTER, reason="not remembered on a cluster (front.py)")
def test_the_front_page_answered_before_django_shows_a_name_changed_elsewhere(repo, posted, r):
    alice, _ = posted
    application.pages.clear()
    assert "hello from alice" in front_page()  # remembered whole (social/front.py)
    assert "Alice Renamed" not in front_page()

    Repository(r, cache=ProcessCache()).profiles.update(alice.id, display_name="Alice Renamed")

    assert '<bdi class="display-name">Alice Renamed</bdi>' in front_page()


def front_page() -> str:
    """GET / through the site's WSGI application (social/front.py first)."""
    environ = {
        "REQUEST_METHOD": "GET", "PATH_INFO": "/", "QUERY_STRING": "", "SERVER_NAME": "testserver",
        "SERVER_PORT": "80", "HTTP_HOST": "testserver", "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1", "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": io.StringIO(),
    }  # fmt: skip
    return b"".join(application(environ, lambda status, headers, exc_info=None: None)).decode()
