"""A reader remembered for their `auth` cookie is checked on the page's own first pipeline
(visibility.ViewerCheck, RepositoryMixin.read_as_viewer): one round trip fewer, and never a
page shown for a secret that no longer holds, an account suspended since, or a reader whose
staff role or blocks changed since the process remembered them."""

from __future__ import annotations

import pytest
from django.test import Client

from social import keys
from social.repository import Repository
from social.repository.cache import ProcessCache
from tests.conftest import login

T0 = 1_700_000_000


@pytest.fixture
def warm(repo, alice, bob):
    """alice follows bob, who posted; alice's client has read her home page once, so this
    process remembers her for her cookie."""
    repo.graph.follow(alice.id, bob.id, at=T0)
    repo.posts.create_post(bob.id, "bob was here", at=T0 + 1)
    client = login(Client(), repo, alice)
    assert "bob was here" in client.get("/").content.decode()
    return client


@pytest.mark.parametrize("url", ["/", "/timeline/", "/u/bob/", "/p/1/", "/tag/redis/"])
def test_a_secret_rotated_elsewhere_gets_the_visitors_page(repo, r, alice, warm, url):
    warm.get(url)  # remembered
    repo.users.rotate_secret(alice.id)  # logged out on another device

    html = warm.get(url).content.decode()

    assert "Log out" not in html and "@alice" not in html.split("<main")[0]
    assert repo.cache.secrets.get(warm.cookies["auth"].value) is None


def test_an_account_suspended_since_gets_the_visitors_page(repo, r, alice, warm):
    r.hset(keys.user(alice.id), "status", "suspended")  # as another process would write it

    html = warm.get("/").content.decode()

    assert "Your home feed" not in html and "Log out" not in html


def test_a_reader_made_staff_since_is_read_as_staff(repo, r, alice, warm):
    r.hset(keys.user(alice.id), "staff", "1")  # granted by another process

    html = warm.get("/").content.decode()

    assert 'href="/staff/"' in html


def test_a_block_written_by_another_process_applies_at_once(repo, r, alice, bob, warm):
    # As another web process writes it: this process still remembers alice without the
    # `relations` flag, so her page must not be read without her sets.
    r.hset(keys.user(alice.id), "relations", 1)
    r.zadd(keys.blocks(alice.id), {bob.id: T0})
    r.zadd(keys.blocked_by(bob.id), {alice.id: T0})

    html = warm.get("/").content.decode()

    assert "bob was here" not in html


def test_the_navigation_counts_are_read_with_the_page(repo, alice, bob, warm):
    post = repo.posts.create_post(alice.id, "like me", at=T0 + 2)
    repo.likes.like(bob.id, post)

    html = warm.get("/").content.decode()

    assert 'class="count-badge"' in html


def test_the_readers_own_name_changed_by_another_process_shows_on_their_card_at_once(
    repo, r, alice, bob, warm
):
    """Their card (a remembered page part) is keyed on what it shows of the user hash, read
    with the page; bob's card under it, on the name numbered in profile_changes (issue 34)."""
    version = r.get(keys.visibility_version())
    elsewhere = Repository(r, cache=ProcessCache())

    elsewhere.profiles.update(alice.id, display_name="Alice Renamed")
    elsewhere.profiles.update(bob.id, display_name="Bob Renamed")
    html = warm.get("/").content.decode()

    assert html.count('<bdi class="display-name">Alice Renamed</bdi>') == 1  # her card
    assert '<bdi class="display-name">Bob Renamed</bdi>' in html  # his post's card
    assert r.get(keys.visibility_version()) == version
