"""Limits before pictures (issue 33, part 2): every upload path (the composer, the settings
page, POST /api/v2/media, update_credentials) checks its cheap fields first, then counts the
attempt, and only then reads a picture; a refused picture counts; over the limit, no
picture is read at all. Redis counters and stored files asserted."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.utils import translation

from social import images, keys
from tests.api import Api, all_keys, token_for
from tests.test_images import jpeg_claiming, picture, png_claiming

HOME = "/"
SETTINGS = "/settings/profile/"
PATCH = "/api/v1/accounts/update_credentials"
DEEP = png_claiming(6300, 6300, bits=16, body=309 * 1024)  # the 16-bit PNG
CUT = jpeg_claiming(6300, 6300, 693)  # the truncated JPEG


@pytest.fixture(autouse=True)
def in_english():
    with translation.override("en"):
        yield


@pytest.fixture
def unread(monkeypatch):
    """Fail the test if any picture is read (its header inspected or its pixels decoded)."""

    def refuse(*args, **kwargs):
        raise AssertionError("a picture was read")

    monkeypatch.setattr(images, "inspect", refuse)
    monkeypatch.setattr(images, "opened", refuse)


def upload(data: bytes, name: str = "p.png", content_type: str = "image/png"):
    return SimpleUploadedFile(name, data, content_type=content_type)


def stored_files() -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def counted(r, scope: str, user) -> int:
    return int(r.get(keys.rate_limit(scope, str(user.id))) or 0)


def patch(client, token: str, files: dict):
    body = encode_multipart(BOUNDARY, files)
    return client.patch(
        PATCH, body, content_type=MULTIPART_CONTENT, HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def test_the_composer_counts_a_refused_picture_and_not_a_cheap_mistake(
    alice_client, alice, r, monkeypatch
):
    for bad in (DEEP, CUT):
        refused = alice_client.post(HOME, {"status": "words", "picture_1": upload(bad)})
        assert refused.status_code == 400
    assert counted(r, "post_user", alice) == 2  # each counted, though refused
    monkeypatch.setattr(images, "inspect", lambda data: pytest.fail("a picture was read"))
    cheap = alice_client.post(HOME, {"status": "x" * 281, "picture_1": upload(picture())})
    assert cheap.status_code == 400 and "Keep it to 280 characters" in cheap.content.decode()
    long_alt = {"status": "ok", "picture_1": upload(picture()), "alt_1": "a" * 1501}
    assert alice_client.post(HOME, long_alt).status_code == 400
    # No picture was read for those, but their uploads cost the server: they count (the
    # attack of issue 33 sends four huge pictures with a status too long, in a loop).
    assert counted(r, "post_user", alice) == 4
    typo = alice_client.post(HOME, {"status": "x" * 281})  # no pictures: not counted
    assert typo.status_code == 400 and counted(r, "post_user", alice) == 4
    assert r.llen(keys.own_posts(alice.id)) == 0
    assert all_keys(r, "image:*") == [] and stored_files() == []


def test_the_composer_over_its_limit_reads_no_picture(alice_client, alice, r, settings, unread):
    settings.RETWIS_LIMIT_POSTS = (1, 600)
    r.set(keys.rate_limit("post_user", str(alice.id)), 1, ex=600)

    response = alice_client.post(HOME, {"status": "hi", "picture_1": upload(picture())})

    assert response.status_code == 429
    assert counted(r, "post_user", alice) == 1  # the refusal given back
    assert all_keys(r, "image:*") == [] and stored_files() == []


def test_the_api_counts_an_upload_before_reading_it_and_a_refused_one_counts(
    repo, alice, r, settings
):
    api = Api(token_for(repo, alice))
    for bad in (DEEP, CUT):
        response = api.post("/api/v2/media", {"file": upload(bad)})
        assert response.status_code == 422
        assert "X-RateLimit-Remaining" in response.headers
    assert counted(r, "media_user", alice) == 2
    assert api.post("/api/v2/media", {"description": "d" * 1501}).status_code == 422
    assert counted(r, "media_user", alice) == 2  # a cheap mistake is not counted
    assert all_keys(r, "image:*") == [] and stored_files() == []


def test_the_api_over_its_limit_reads_no_picture(repo, alice, r, settings, unread):
    settings.RETWIS_LIMIT_MEDIA = (1, 600)
    r.set(keys.rate_limit("media_user", str(alice.id)), 1, ex=600)

    response = Api(token_for(repo, alice)).post("/api/v2/media", {"file": upload(picture())})

    assert response.status_code == 429
    assert all_keys(r, "image:*") == [] and stored_files() == []


def test_a_profile_save_is_counted_before_its_pictures_are_read(
    client, alice_client, alice, repo, r
):
    refused = alice_client.post(SETTINGS, {"display_name": "A", "avatar": upload(DEEP)})
    assert refused.status_code == 400 and "too big to process" in refused.content.decode()
    assert counted(r, "profile_user", alice) == 1
    api = patch(client, token_for(repo, alice), {"header": io.BytesIO(CUT)})
    assert api.status_code == 422 and "damaged or cut short" in api.json()["error"]
    assert counted(r, "profile_user", alice) == 2
    assert r.hget(keys.user(alice.id), "display_name") is None  # nothing saved
    assert all_keys(r, "image:*") == [] and stored_files() == []


def test_a_profile_save_over_the_limit_reads_no_picture(
    client, alice_client, alice, repo, r, settings, unread
):
    settings.RETWIS_LIMIT_PROFILE = (1, 3600)
    r.set(keys.rate_limit("profile_user", str(alice.id)), 1, ex=3600)

    page = alice_client.post(SETTINGS, {"display_name": "A", "avatar": upload(picture())})
    api = patch(client, token_for(repo, alice), {"avatar": io.BytesIO(picture())})

    assert page.status_code == 429 and api.status_code == 429
    assert all_keys(r, "image:*") == [] and stored_files() == []


def test_a_loop_of_refused_submissions_with_pictures_meets_the_post_limit(
    alice_client, alice, r, settings, monkeypatch
):
    monkeypatch.setattr(images, "inspect", lambda data: pytest.fail("a picture was read"))
    limit = 3
    settings.RETWIS_LIMIT_POSTS = (limit, 600)
    sent = {"status": "x" * 281, "picture_1": upload(picture())}

    answers = [alice_client.post(HOME, dict(sent)).status_code for _ in range(limit + 2)]

    assert answers == [400] * limit + [429, 429]
    assert counted(r, "post_user", alice) == limit


def test_at_the_limit_a_form_with_pictures_is_refused_before_its_body_is_parsed(
    alice_client, alice, r, settings, monkeypatch
):
    """UploadLimitMiddleware: past the post (or profile) limit a multipart form gets its
    429 before CsrfViewMiddleware parses the body (the parsing is what a loop of huge
    uploads costs); under it, nothing changes and the view counts as before."""
    from django.http.multipartparser import MultiPartParser

    big = picture() + bytes(300_000)  # past UPLOAD_PEEK_BYTES, as real pictures are
    settings.RETWIS_LIMIT_POSTS = (1, 600)
    settings.RETWIS_LIMIT_PROFILE = (1, 600)
    first = alice_client.post(HOME, {"status": "x" * 281, "picture_1": upload(big)})
    assert first.status_code == 400 and counted(r, "post_user", alice) == 1
    parsed: list[int] = []
    real_parse = MultiPartParser.parse
    monkeypatch.setattr(MultiPartParser, "parse", lambda self: parsed.append(1) or real_parse(self))

    again = alice_client.post(HOME, {"status": "hello", "picture_1": upload(big)})
    reply = alice_client.post("/post/", {"status": "hello", "picture_1": upload(big)})
    small = alice_client.post(HOME, {"status": "hello", "picture_1": upload(picture())})

    assert again.status_code == reply.status_code == 429
    assert int(again["Retry-After"]) > 0
    assert "You have posted a lot in a short time." in again.content.decode()
    assert parsed == [1]  # only the small form's body was parsed
    assert small.status_code == 429  # the view counted it: past the limit too
    assert counted(r, "post_user", alice) == 1  # a look, not an attempt
    # The profile form (avatar, header) the same, with its own limit and words.
    r.set(keys.rate_limit("profile_user", str(alice.id)), 1, ex=600)
    profile = alice_client.post("/settings/profile/", {"avatar": upload(big)})
    assert profile.status_code == 429 and parsed == [1]
    assert "changed your profile many times" in profile.content.decode()
    # A form without pictures (urlencoded) is left to its view, which counts and refuses.
    plain = alice_client.post(
        "/settings/profile/", "display_name=Al", content_type="application/x-www-form-urlencoded"
    )
    assert plain.status_code == 429 and "Too many changes." in plain.content.decode()
