"""Small leaks: a suspended account's name, logged-in pages in shared caches, invisible posts,
and the Redis password on the DEBUG error page."""

from __future__ import annotations

import sys

import pytest
from django.test import Client
from django.views import debug
from django.views.debug import SafeExceptionReporterFilter

from social import views
from social.debug import mask_url_passwords
from social.post_forms import PostForm
from social.repository.moderation.actions import SYSTEM_ACTOR

T0 = 1_700_000_000

# --- a suspended account is absent ---------------------------------------------------------


@pytest.fixture
def suspended_bob(repo, bob):
    repo.moderation.suspend(bob.id, SYSTEM_ACTOR, "spam")
    return bob


def test_following_a_suspended_user_is_a_404_that_names_no_one(
    r, alice, alice_client, suspended_bob
):
    response = alice_client.post("/u/bob/follow/", follow=True)

    assert response.status_code == 404
    assert b"bob" not in response.content
    assert r.zscore(f"following:{alice.id}", suspended_bob.id) is None
    assert r.zcard(f"followers:{suspended_bob.id}") == 0
    assert r.get("stats:follows") is None


def test_unfollowing_a_suspended_user_is_a_404_too(repo, r, alice, alice_client, bob):
    repo.graph.follow(alice.id, bob.id, at=T0)
    repo.moderation.suspend(bob.id, SYSTEM_ACTOR, "spam")

    response = alice_client.post("/u/bob/unfollow/", follow=True)

    assert response.status_code == 404 and b"bob" not in response.content
    assert r.zscore(f"following:{alice.id}", bob.id) == T0  # kept for an unsuspension


def test_staff_still_follow_a_suspended_user_they_can_see(repo, r, sam, sam_client, suspended_bob):
    response = sam_client.post("/u/bob/follow/")

    assert response.status_code == 302
    assert r.zscore(f"following:{sam.id}", suspended_bob.id) is not None


# --- logged-in pages are private -----------------------------------------------------------


@pytest.mark.parametrize("url", ["/", "/timeline/", "/u/bob/", "/u/bob/followers/"])
def test_a_logged_in_page_tells_shared_caches_to_keep_out(r, alice, alice_client, bob, url):
    response = alice_client.get(url)

    assert response.status_code == 200
    assert "private" in response["Cache-Control"]
    assert r.hget(f"user:{alice.id}", "auth") == alice_client.cookies["auth"].value


def test_a_staff_page_stays_uncached_and_private(sam_client):
    control = sam_client.get("/staff/")["Cache-Control"]

    assert "private" in control and "no-store" in control


def test_a_page_for_a_visitor_is_not_marked_private(r, alice):
    keys_before = r.dbsize()

    response = Client().get("/timeline/")

    assert "private" not in response.get("Cache-Control", "")
    assert r.dbsize() == keys_before


# --- invisible posts -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "status",
    ["\u200b", "\u200b\u200c\u200d", " \u2060 \ufeff ", "\u00ad", "\u200e\u200f",
     "\u034f\ufe0f", "\u3164\u2800", "\u180e\u2061"],
)  # fmt: skip
def test_a_post_of_invisible_characters_is_refused(alice_client, alice, r, status):
    form = PostForm(data={"status": status})
    response = alice_client.post("/post/", {"status": status})

    assert not form.is_valid()
    assert form.errors["status"] == ["Write something first: this shows nothing."]
    assert response.status_code == 400
    assert r.get("next_post_id") is None and r.llen("timeline") == 0


@pytest.mark.parametrize("status", ["\u200bhi", "👩\u200d💻", "é", "\u0301a"])
def test_a_post_with_something_visible_keeps_its_invisible_characters(alice_client, r, status):
    response = alice_client.post("/post/", {"status": status})

    assert response.status_code == 302
    assert r.hget("post:1", "body") == status


# --- the DEBUG error page ------------------------------------------------------------------

STARS = SafeExceptionReporterFilter.cleansed_substitute
PASSWORD = "s3cret-pw"
URL = f"redis://default:{PASSWORD}@redis.example:6380/0"
MASKED = f"redis://default:{STARS}@redis.example:6380/0"


@pytest.mark.parametrize(
    ("text", "masked"),
    [(URL, MASKED), ("redis://:pw@h:1/0", f"redis://:{STARS}@h:1/0"),
     ("rediss://u:p%40ss@h/1", f"rediss://u:{STARS}@h/1"),
     ("redis://h:6379/0", "redis://h:6379/0"), ("a@b.c", "a@b.c"),
     ("x redis://a:b@h y redis://c:d@h", f"x redis://a:{STARS}@h y redis://c:{STARS}@h")],
)  # fmt: skip
def test_a_password_in_a_url_is_masked(text, masked):
    assert mask_url_passwords(text) == masked


def technical_500(request) -> str:
    """Return the DEBUG error page of an exception raised while request was handled."""
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        reporter = debug.ExceptionReporter(request, *sys.exc_info())
        return reporter.get_traceback_html()


def test_the_debug_error_page_masks_the_redis_password(rf, settings):
    settings.REDIS_URL = URL
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": URL}}
    request = rf.get("/", REDIS_URL=URL)

    page = technical_500(request)

    assert PASSWORD not in page
    assert page.count(MASKED) >= 3  # the setting, the cache's LOCATION, the environment
    assert settings.REDIS_URL == URL  # masked on the page only


def test_a_500_under_debug_shows_no_redis_password(r, settings, monkeypatch):
    settings.DEBUG = True
    settings.REDIS_URL = URL

    def broken(self, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(views.TimelineView, "get_context_data", broken)
    response = Client(raise_request_exception=False).get("/timeline/", REDIS_URL=URL)

    assert response.status_code == 500 and b"RuntimeError" in response.content
    # (PASSWORD by name: the page quotes this test's own lines in its traceback)
    assert PASSWORD.encode() not in response.content and MASKED.encode() in response.content
    assert r.dbsize() == 0
