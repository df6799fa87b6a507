"""The client API's pictures (issue 26): POST /api/v1/media and /api/v2/media, GET and
PUT /api/v1/media/:id, media_ids[], spoiler_text and sensitive on POST /api/v1/statuses,
media_attachments on statuses, the instance's limits. Each refusal is Mastodon's JSON
error and stores nothing (Redis and files). Pictures are processed by the worker (issue
33): 202 with `url: null`, 206 while processing, 200 once ready (work.run_pending here)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from social import keys, work
from social.work import queues
from tests.api import Api, all_keys, token_for
from tests.conftest import make_user
from tests.test_images import jpeg_with_exif, noisy_png, picture, png_claiming


def stored_files() -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def upload(data: bytes, name: str = "p.png", content_type: str = "image/png"):
    return SimpleUploadedFile(name, data, content_type=content_type)


@pytest.fixture
def api(repo, alice) -> Api:
    return Api(token_for(repo, alice))


def uploaded(api: Api, data: bytes | None = None, **fields) -> str:
    """Upload a picture and have the worker process it; return its id."""
    response = api.post("/api/v2/media", {"file": upload(data or picture()), **fields})
    assert response.status_code == 202, response.content
    work.run_pending("media")
    return response.json()["id"]


def test_v2_media_answers_202_the_worker_processes_it_and_then_it_is_200(api, alice, r):
    response = api.post(
        "/api/v2/media", {"file": upload(picture(size=(3200, 1000))), "description": "Dunes"}
    )
    assert response.status_code == 202, response.content
    data = response.json()
    token = data["id"]
    assert data["type"] == "image" and data["description"] == "Dunes"
    assert data["url"] is None and data["preview_url"] is None and data["blurhash"] is None
    h = r.hgetall(keys.image(token))
    assert h["state"] == "processing" and h["owner"] == str(alice.id)
    assert stored_files() == [h["original"]] and h["original"].startswith(f"uploads/{token}-")
    waiting = api.get(f"/api/v1/media/{token}")
    assert waiting.status_code == 206 and waiting.json()["url"] is None

    assert work.run_pending("media") == 1

    ready = api.get(f"/api/v1/media/{token}")
    assert ready.status_code == 200
    data = ready.json()
    assert data["url"] == f"http://testserver/media/posts/{token}-1600.webp"
    assert data["preview_url"] == f"http://testserver/media/posts/{token}-640.webp"
    assert data["meta"] == {
        "original": {"width": 1600, "height": 500, "size": "1600x500", "aspect": 3.2},
        "small": {"width": 640, "height": 200, "size": "640x200", "aspect": 3.2},
    }
    assert len(data["blurhash"]) == 28 and data["description"] == "Dunes"
    assert r.hgetall(keys.image(token))["state"] == "unattached"
    assert "original" not in r.hgetall(keys.image(token))
    assert stored_files() == [f"posts/{token}-1600.webp", f"posts/{token}-640.webp"]
    v1 = api.post("/api/v1/media", {"file": upload(jpeg_with_exif())})
    assert v1.status_code == 202 and v1.json()["url"] is None  # v1 queues too


def test_a_status_naming_a_picture_still_processing_is_mastodons_422(api, alice, r):
    token = api.post("/api/v2/media", {"file": upload(picture())}).json()["id"]

    early = api.post("/api/v1/statuses", {"status": "too soon", "media_ids[]": [token]})

    assert early.status_code == 422
    assert early.json()["error"] == (
        "Cannot attach files that have not finished processing. Try again in a moment!"
    )
    assert r.llen(keys.own_posts(alice.id)) == 0
    assert r.hget(keys.image(token), "state") == "processing"
    described = api.put(f"/api/v1/media/{token}", {"description": "Said early"})
    assert described.status_code == 206 and described.json()["description"] == "Said early"
    work.run_pending("media")
    done = api.post("/api/v1/statuses", {"status": "now", "media_ids[]": [token]})
    assert done.status_code == 200
    assert done.json()["media_attachments"][0]["description"] == "Said early"


def test_a_full_media_queue_is_a_503_with_retry_after_and_not_counted(api, alice, r, monkeypatch):
    monkeypatch.setitem(
        queues.QUEUES, "media", dataclasses.replace(queues.QUEUES["media"], limit=0)
    )

    response = api.post("/api/v2/media", {"file": upload(picture())})

    assert response.status_code == 503 and response["Retry-After"] == "60"
    assert all_keys(r, "image:*") == [] and stored_files() == []
    assert r.get(keys.rate_limit("media_user", str(alice.id))) == "0"  # given back


def test_a_status_with_pictures_a_warning_and_sensitive(api, alice, repo, r):
    first = uploaded(api)
    second = uploaded(api, picture("GIF"))
    described = api.put(f"/api/v1/media/{second}", {"description": "A GIF"})
    assert described.status_code == 200 and described.json()["description"] == "A GIF"
    assert api.get(f"/api/v1/media/{first}").json()["id"] == first
    response = api.post(
        "/api/v1/statuses",
        {"status": "", "media_ids[]": [first, second], "spoiler_text": "Spiders"},
    )
    assert response.status_code == 200, response.content
    status = response.json()
    assert [m["id"] for m in status["media_attachments"]] == [first, second]
    assert status["media_attachments"][1]["description"] == "A GIF"
    assert status["spoiler_text"] == "Spiders" and status["sensitive"] is True
    post = r.hgetall(keys.post(int(status["id"])))
    assert post["spoiler_text"] == "Spiders" and first in post["media"]
    assert r.hget(keys.image(first), "state") == "attached"
    # Once in a post, Mastodon no longer shows or changes it through /media/:id.
    assert api.get(f"/api/v1/media/{first}").status_code == 404
    assert api.put(f"/api/v1/media/{first}", {"description": "x"}).status_code == 404
    again = api.get(f"/api/v1/statuses/{status['id']}").json()
    assert again["media_attachments"] == status["media_attachments"]
    timeline = Api(None).get("/api/v1/timelines/public").json()
    assert timeline[0]["media_attachments"][0]["id"] == first


def test_sensitive_alone_marks_the_pictures(api, r):
    token = uploaded(api)
    status = api.post(
        "/api/v1/statuses", {"status": "hi", "media_ids[]": [token], "sensitive": "true"}
    ).json()
    assert status["sensitive"] is True and status["spoiler_text"] == ""


BAD_FILES = {
    "not an image": (b"hello, I am text", "a.png", "image/png", "not a PNG, JPEG, WebP or GIF"),
    "lies about its type": (picture("PNG"), "a.jpg", "image/jpeg", None),
    "cut short": (noisy_png()[:200], "a.png", "image/png", "damaged or cut short"),
    "bomb": (png_claiming(50_000, 50_000), "a.png", "image/png", "too many pixels"),
    "svg": (b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
            "a.svg", "image/svg+xml", "not a PNG, JPEG, WebP or GIF"),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD_FILES)
def test_bad_files_are_422_and_store_nothing(api, r, case):
    data, name, kind, says = BAD_FILES[case]
    response = api.post("/api/v2/media", {"file": upload(data, name, kind)})
    if says is None:  # the bytes decide: a PNG named .jpg is a PNG, kept as WebP
        assert response.status_code == 202
        return
    assert response.status_code == 422
    assert says in response.json()["error"]
    assert all_keys(r, "image:*") == [] and stored_files() == []


@pytest.mark.parametrize(
    ("data", "status", "says"),
    [
        ({}, 422, "File can't be blank"),
        ({"description": "x" * 1501}, 422, "Description is too long"),
    ],
)
def test_missing_file_and_long_alt_are_422(api, r, data, status, says):
    if "description" in data:
        data = {**data, "file": upload(picture())}
    response = api.post("/api/v2/media", data)
    assert response.status_code == status and says in response.json()["error"]
    assert all_keys(r, "image:*") == [] and stored_files() == []


def test_a_picture_the_worker_refuses_answers_mastodons_422_and_keeps_no_file(api, r):
    token = api.post("/api/v2/media", {"file": upload(noisy_png()[:3000])}).json()["id"]

    work.run_pending("media")

    failed = api.get(f"/api/v1/media/{token}")
    assert failed.status_code == 422
    assert failed.json()["error"] == (
        "Error processing thumbnail for uploaded media: The picture is damaged or cut short."
    )
    assert r.hget(keys.image(token), "state") == "failed" and stored_files() == []
    refused = api.post("/api/v1/statuses", {"status": "x", "media_ids[]": [token]})
    assert refused.status_code == 422 and f"Media {token} not found" in refused.json()["error"]


def test_media_ids_refused_as_mastodon_refuses_them(api, repo, alice, r):
    bob = make_user(repo, "bob")
    bobs = Api(token_for(repo, bob)).post("/api/v2/media", {"file": upload(picture())})
    mine = [api.post("/api/v2/media", {"file": upload(picture())}).json()["id"] for _ in range(5)]
    work.run_pending("media")
    used = mine[4]
    assert api.post("/api/v1/statuses", {"status": "a", "media_ids[]": [used]}).status_code == 200
    posts = r.llen(keys.own_posts(alice.id))
    cases = [
        (mine[:4] + [bobs.json()["id"]], "Cannot attach more than 4 files"),
        ([mine[0], bobs.json()["id"]], f"Media {bobs.json()['id']} not found"),
        ([mine[0], used], f"Media {used} not found or already attached to another post"),
        (["123"], "Media 123 not found"),
    ]
    for ids, says in cases:
        response = api.post("/api/v1/statuses", {"status": "b", "media_ids[]": ids})
        assert response.status_code == 422 and says in response.json()["error"]
    assert r.llen(keys.own_posts(alice.id)) == posts
    assert [r.hget(keys.image(t), "state") for t in mine[:4]] == ["unattached"] * 4
    # Another account's picture is theirs: not shown, not described.
    other = bobs.json()["id"]
    assert api.get(f"/api/v1/media/{other}").status_code == 404
    assert api.put(f"/api/v1/media/{other}", {"description": "mine"}).status_code == 404
    assert r.hget(keys.image(other), "alt") == ""


def test_the_instance_advertises_the_real_limits(client):
    v2 = client.get("/api/v2/instance").json()["configuration"]
    assert v2["statuses"]["max_media_attachments"] == 4
    assert v2["media_attachments"]["supported_mime_types"] == [
        "image/png", "image/jpeg", "image/webp", "image/gif"
    ]  # fmt: skip
    assert v2["media_attachments"]["image_size_limit"] == 10 * 1024 * 1024
    assert v2["media_attachments"]["image_matrix_limit"] == 40_000_000
    v1 = client.get("/api/v1/instance").json()["configuration"]
    assert v1["media_attachments"] == v2["media_attachments"]


def test_uploads_need_a_token_with_write_media(repo, alice, r):
    response = Api(token_for(repo, alice, "read")).post(
        "/api/v2/media", {"file": upload(picture())}
    )
    assert response.status_code == 403
    assert Api(None).post("/api/v2/media", {"file": upload(picture())}).status_code == 401
    assert all_keys(r, "image:*") == [] and stored_files() == []
