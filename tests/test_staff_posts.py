"""The staff post list and its bulk delete with a confirmation step."""

from __future__ import annotations

import json
import re

import pytest

from social.staff.forms import BULK_MAX


@pytest.fixture
def posts(repo, alice, bob):
    """Three posts, oldest first: alice, bob, alice."""
    return [
        repo.posts.create_post(alice.id, "first by alice"),
        repo.posts.create_post(bob.id, "second by bob"),
        repo.posts.create_post(alice.id, "third by alice"),
    ]


def test_the_list_shows_the_newest_posts_first_with_deleted_ones_marked(
    repo, sam, sam_client, posts
):
    repo.moderation.delete_posts([posts[1]], sam, "spam")

    html = sam_client.get("/staff/posts/").content.decode()

    assert html.index("third by alice") < html.index("second by bob") < html.index("first by")
    assert html.count('name="id"') == 2  # a deleted post cannot be selected again
    assert "deleted" in html


def test_the_list_pages_back_through_every_post(repo, sam_client, alice):
    for i in range(60):
        repo.posts.create_post(alice.id, f"post number {i}")

    page2 = sam_client.get("/staff/posts/?page=2").content.decode()

    assert "post number 9<" in page2 and "post number 10<" not in page2
    assert "Page 2 of 2" in page2


def test_the_confirmation_page_lists_what_will_go_and_changes_nothing(r, sam_client, posts):
    response = sam_client.get(
        f"/staff/posts/delete/?id={posts[0]}&id={posts[1]}&next=/staff/posts/"
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert "Delete 2 posts?" in html
    assert "first by alice" in html and "second by bob" in html and "third" not in html
    assert html.count('type="hidden" name="id"') == 2
    assert r.hget(f"post:{posts[0]}", "deleted") is None
    assert r.xlen("audit") == 1  # only the grant that made sam staff


def test_confirming_deletes_every_selected_post_and_logs_each(
    r, sam, sam_client, posts, alice, bob
):
    response = sam_client.post(
        "/staff/posts/delete/",
        {"id": [posts[0], posts[1]], "reason": "spam wave", "next": "/staff/posts/?page=1"},
    )

    assert response.status_code == 302 and response["Location"] == "/staff/posts/?page=1"
    for post_id in posts[:2]:
        assert r.hget(f"post:{post_id}", "deleted") == "1"
        assert r.hget(f"post:{post_id}", "deleted_reason") == "spam wave"
    assert r.hget(f"post:{posts[2]}", "deleted") is None
    assert r.lrange("timeline", 0, -1) == [str(posts[2])]
    assert r.zcard("audit:action:delete_post") == 2
    assert r.zcard(f"audit:actor:{sam.id}") == 2
    assert json.loads(r.lindex(f"notices:{bob.id}", 0))["text"].endswith("Reason: spam wave")
    assert r.llen(f"notices:{alice.id}") == 1


def test_confirming_without_a_reason_asks_again(r, sam_client, posts):
    response = sam_client.post("/staff/posts/delete/", {"id": [posts[0]], "reason": ""})

    assert response.status_code == 400
    assert b"Say why" in response.content
    assert b"first by alice" in response.content
    assert r.hget(f"post:{posts[0]}", "deleted") is None


@pytest.mark.parametrize(
    "query",
    ["", "?id=abc", "?id=-4", "?" + "&".join(f"id={i}" for i in range(1, BULK_MAX + 2))],
    ids=["nothing", "not a number", "negative", "too many"],
)
def test_a_bad_selection_goes_back_to_the_list_with_a_message(sam_client, posts, query):
    response = sam_client.get(f"/staff/posts/delete/{query}", follow=True)

    assert response.redirect_chain[-1][0] == "/staff/posts/"
    shown = re.search(r'<ul class="messages">(.*?)</ul>', response.content.decode(), re.S)
    assert shown and len(re.findall(r'<li class="message error">', shown[1])) == 1


def test_the_confirmation_ignores_a_next_off_this_site(sam_client, posts):
    response = sam_client.get(f"/staff/posts/delete/?id={posts[0]}&next=https://evil.example/")
    assert b"evil.example" not in response.content


def test_a_delete_from_the_confirmation_never_redirects_off_site(sam_client, posts):
    response = sam_client.post(
        "/staff/posts/delete/",
        {"id": [posts[0]], "reason": "spam", "next": "https://evil.example/"},
    )
    assert response["Location"] == "/staff/posts/"
