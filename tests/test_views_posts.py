"""Posting, the home feed, the timeline and permalinks: status, redirects, escaping, state."""

from __future__ import annotations

import html
import time

import pytest
from django.test import Client

from tests.conftest import login, make_user

SCRIPT = "<script>alert(1)</script>"
ESCAPED = b"&lt;script&gt;alert(1)&lt;/script&gt;"


def test_it_publishes_a_post_and_goes_home(alice_client, alice, r):
    response = alice_client.post("/post/", {"status": "  hello\nworld  "})

    assert response.status_code == 302 and response["Location"] == "/"
    stored = r.hgetall("post:1")
    assert (stored["user_id"], stored["body"]) == (str(alice.id), "hello world")
    assert abs(int(stored["time"]) - time.time()) < 5
    assert r.lrange(f"posts:{alice.id}", 0, -1) == ["1"]
    assert r.lrange(f"user_posts:{alice.id}", 0, -1) == ["1"]
    assert r.lrange("timeline", 0, -1) == ["1"]
    home = alice_client.get("/")
    assert b"Posted." in home.content and b"hello world" in home.content


def test_it_delivers_a_post_to_followers_home_feeds(alice_client, alice, bob, bob_client, repo, r):
    repo.graph.follow(bob.id, alice.id)

    alice_client.post("/post/", {"status": "for my fans"})

    assert r.lrange(f"posts:{bob.id}", 0, -1) == ["1"]
    assert b"for my fans" in bob_client.get("/").content


def test_it_goes_back_to_a_safe_next_after_posting(alice_client):
    response = alice_client.post("/post/", {"status": "hi", "next": "/timeline/"})

    assert response["Location"] == "/timeline/"


def test_it_ignores_an_offsite_next_after_posting(alice_client):
    response = alice_client.post("/post/", {"status": "hi", "next": "https://evil.example/"})

    assert response["Location"] == "/"


@pytest.mark.parametrize(
    ("status", "message"),
    [
        ("   ", b"Write something first."),
        ("x" * 281, b"Keep it to 280 characters (this one has 281)."),
    ],
)
def test_it_re_shows_home_with_the_error_and_the_typed_text(
    alice_client, alice, r, status, message
):
    alice_client.post("/post/", {"status": "an earlier post"})

    response = alice_client.post("/post/", {"status": status})

    assert response.status_code == 400
    assert message in response.content
    assert f">\n{status}</textarea>".encode() in response.content
    assert b"an earlier post" in response.content  # the home feed is still there
    assert r.llen("timeline") == 1


def test_it_answers_405_to_posting_by_get(alice_client, r):
    assert alice_client.get("/post/").status_code == 405
    assert not r.exists("timeline")


def test_it_escapes_markup_in_posts_everywhere(alice_client, alice, repo):
    post_id = repo.posts.create_post(alice.id, SCRIPT)

    for page in ("/", "/timeline/", "/u/alice/", f"/p/{post_id}/"):
        content = alice_client.get(page).content
        assert ESCAPED in content, page
        assert SCRIPT.encode() not in content, page
    visitor_home = Client().get("/").content
    assert ESCAPED in visitor_home and SCRIPT.encode() not in visitor_home


def test_it_escapes_markup_in_usernames_written_by_other_software(client, r, repo):
    # Our sign-up refuses such names; a database written by another Retwis may hold one.
    name = "<img src=x onerror=alert(1)>"
    r.hset("user:9", mapping={"username": name, "password": "x", "auth": "c" * 40})
    r.hset("users", name, 9)
    r.zadd("users_by_time", {name: 1_300_000_000})
    repo.posts.create_post(9, "hi")

    content = client.get("/timeline/").content

    assert b"&lt;img src=x onerror=alert(1)&gt;" in content
    assert name.encode() not in content


def test_it_pages_the_home_feed(alice_client, alice, repo):
    for i in range(15):
        repo.posts.create_post(alice.id, f"post number {i:02}", at=1_700_000_000 + i)

    first = alice_client.get("/").content
    second = alice_client.get("/?page=2").content

    assert b"post number 14" in first and b"post number 05" in first
    assert b"post number 04" not in first and b'rel="next"' in first
    assert b"post number 04" in second and b"post number 00" in second
    assert b"post number 05" not in second and b'rel="prev"' in second


@pytest.mark.parametrize("junk", ["abc", "-3", "0", "", "1e9"])
def test_it_treats_a_junk_page_number_as_a_valid_page(alice_client, alice, repo, junk):
    repo.posts.create_post(alice.id, "the only post")

    response = alice_client.get(f"/?page={junk}")

    assert response.status_code == 200


def test_it_shows_page_one_for_a_non_number(alice_client, alice, repo):
    repo.posts.create_post(alice.id, "the only post")

    assert b"the only post" in alice_client.get("/?page=abc").content


def test_it_says_what_to_do_when_the_feed_is_empty(alice_client):
    content = alice_client.get("/").content

    assert "No posts yet — follow someone" in html.unescape(content.decode())


def test_it_pages_the_global_timeline(client, alice, repo):
    for i in range(55):
        repo.posts.create_post(alice.id, f"tl {i:02}", at=1_700_000_000 + i)

    first = client.get("/timeline/").content
    second = client.get("/timeline/?page=2").content

    assert b"tl 54" in first and b"tl 05" in first and b"tl 04" not in first
    assert b"tl 04" in second and b"tl 00" in second and b"tl 05" not in second
    assert b"@alice" in first  # the latest sign-ups


def test_it_shows_relative_times_with_the_exact_time_on_hover(client, alice, repo):
    repo.posts.create_post(alice.id, "five minutes old", at=int(time.time()) - 300)

    content = client.get("/timeline/").content

    assert b'<span aria-hidden="true">5m</span>' in content
    assert b'title="' in content and b" UTC" in content


def test_it_shows_a_permalink_linking_to_the_author(client, alice, repo):
    post_id = repo.posts.create_post(alice.id, "permanent")

    response = client.get(f"/p/{post_id}/")

    assert response.status_code == 200
    assert b"permanent" in response.content and b'href="/u/alice/"' in response.content


def test_it_answers_a_missing_post_with_the_sites_404_page(client):
    response = client.get("/p/999/")

    assert response.status_code == 404
    assert b"Retwis" in response.content and b"Not found" in response.content


def test_it_hides_a_removed_post_from_others_but_not_its_author(client, repo, r):
    author = make_user(repo, "author")
    post_id = repo.posts.create_post(author.id, "regrettable")
    r.hset(f"post:{post_id}", "deleted", "1")

    assert client.get(f"/p/{post_id}/").status_code == 404
    assert login(Client(), repo, author).get(f"/p/{post_id}/").status_code == 200
