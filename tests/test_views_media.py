"""Pictures and content warnings on the site's pages (issue 26): the composer's files and
descriptions, cards' grids, permalinks, content warnings and sensitive pictures, and every
bad upload refused on the form with the rest kept and nothing stored."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import translation

from social import keys
from tests.api import all_keys
from tests.test_images import noisy_png, picture, png_claiming

HOME = "/"


@pytest.fixture(autouse=True)
def in_english():
    with translation.override("en"):
        yield


def stored_files() -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def upload(data: bytes, name: str = "p.png", content_type: str = "image/png"):
    return SimpleUploadedFile(name, data, content_type=content_type)


def test_a_post_with_pictures_shows_a_grid_on_cards_and_the_permalink(alice_client, alice, r):
    response = alice_client.post(
        HOME,
        {
            "status": "Two views",
            "picture_1": upload(picture(size=(2000, 1000))),
            "alt_1": "A red field",
            "picture_3": upload(picture("JPEG", size=(300, 600)), "b.jpg", "image/jpeg"),
            "alt_3": "A tall <red> door",
        },
        follow=True,
    )
    assert response.status_code == 200
    assert "Next time, describe each picture" not in response.content.decode()
    (post_id,) = r.lrange(keys.own_posts(alice.id), 0, -1)
    post = r.hgetall(keys.post(int(post_id)))
    tokens = re.findall(r"[0-9a-f]{16}", post["media"])
    assert len(tokens) == 2 and "sensitive" not in post and "spoiler_text" not in post
    assert [r.hget(keys.image(t), "state") for t in tokens] == ["attached", "attached"]
    assert r.zcard(keys.media_unattached()) == 0
    assert len(stored_files()) == 4
    for page in ("/timeline/", f"/p/{post_id}/"):
        html = alice_client.get(page).content.decode()
        first = (
            f'<a class="media-item" href="/media/posts/{tokens[0]}-1600.webp">'
            f'<img src="/media/posts/{tokens[0]}-640.webp" width="640" height="320" '
            f'alt="A red field" loading="lazy" decoding="async"></a>'
        )
        assert first in html
        assert 'width="300" height="600" alt="A tall &lt;red&gt; door"' in html
        assert 'class="media-grid media-2"' in html


def test_a_picture_without_a_description_posts_with_a_gentle_reminder(alice_client, r, alice):
    response = alice_client.post(HOME, {"status": "", "picture_1": upload(picture())}, follow=True)
    html = response.content.decode()
    assert "Next time, describe each picture" in html
    assert 'alt="A picture its author did not describe"' in html
    (post_id,) = r.lrange(keys.own_posts(alice.id), 0, -1)
    assert r.hget(keys.post(int(post_id)), "body") == ""


def test_a_content_warning_folds_the_body_and_pictures(alice_client, r, alice):
    alice_client.post(
        HOME,
        {"status": "The end", "spoiler_text": "  Book   spoilers ",
         "picture_1": upload(picture()), "alt_1": "Cover"},
    )  # fmt: skip
    (post_id,) = r.lrange(keys.own_posts(alice.id), 0, -1)
    assert r.hget(keys.post(int(post_id)), "spoiler_text") == "Book spoilers"
    html = alice_client.get("/timeline/").content.decode()
    folded = re.search(r'<details class="cw"><summary>(.*?)</summary>(.*?)</details>', html, re.S)
    assert folded and "Book spoilers" in folded[1]
    assert "The end" in folded[2] and 'alt="Cover"' in folded[2]


def test_sensitive_pictures_are_blurred_until_opened(alice_client, r):
    alice_client.post(HOME, {"status": "Look", "sensitive": "on", "picture_1": upload(picture())})
    html = alice_client.get("/timeline/").content.decode()
    assert '<details class="sensitive-media"><summary>' in html
    assert 'class="media-grid media-1 blurred" aria-hidden="true"' in html
    assert "Sensitive pictures: show them" in html


def test_a_post_without_pictures_is_shown_as_before(alice_client, r):
    alice_client.post(HOME, {"status": "Plain", "sensitive": "on"})
    html = alice_client.get("/timeline/").content.decode()
    assert '<p class="body">Plain</p>' in html and "media-grid" not in html
    assert "sensitive" not in r.hgetall(keys.post(1))


BAD = {
    "not an image": ({"picture_1": upload(b"just text")}, "not a PNG, JPEG, WebP or GIF"),
    "lying type": ({"picture_1": upload(b"<html><script>x()</script>", "a.jpg", "image/jpeg")},
                   "not a PNG, JPEG, WebP or GIF"),
    "truncated": ({"picture_1": upload(noisy_png()[:3000])}, "damaged or cut short"),
    "bomb": ({"picture_1": upload(png_claiming(50_000, 50_000))}, "too many pixels"),
    "svg": ({"picture_1": upload(b"<svg xmlns='http://www.w3.org/2000/svg'><script>x()</script>"
                                 b"</svg>", "a.svg", "image/svg+xml")},
            "not a PNG, JPEG, WebP or GIF"),
    "fifth": ({**{f"picture_{n}": upload(picture()) for n in range(1, 6)}},
              "A post holds at most 4 pictures."),
    "long alt": ({"picture_1": upload(picture()), "alt_1": "x" * 1501},
                 "Keep a description to 1,500 characters (this one has 1,501)."),
    "long warning": ({"spoiler_text": "w" * 141}, "Keep the warning to 140 characters"),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD)
def test_bad_uploads_are_said_on_the_form_with_the_rest_kept_and_nothing_stored(
    alice_client, alice, r, case
):
    extra, says = BAD[case]
    data = {"status": "My words stay", "alt_2": "Kept description", **extra}
    if case == "fifth":
        data.pop("alt_2")
    response = alice_client.post(HOME, data)
    html = response.content.decode()
    assert response.status_code == 400
    assert says in html
    assert "My words stay</textarea>" in html
    if case != "fifth":
        assert "Kept description</textarea>" in html
        assert '<details class="compose-extra" open>' in html
    assert all_keys(r, "image:*") == [] and stored_files() == []
    assert r.llen(keys.own_posts(alice.id)) == 0 and not r.exists(keys.media_unattached())


def test_a_post_refused_after_its_pictures_were_stored_deletes_them(alice_client, alice, r):
    alice_client.post(HOME, {"status": "gone soon"})
    alice_client.post("/p/1/delete/", {})
    r.hset(keys.post(1), "deleted", "1")
    response = alice_client.post(
        HOME, {"status": "a reply", "reply_to": "1", "picture_1": upload(picture())}
    )
    assert response.status_code == 400
    assert "choose them again" in response.content.decode()
    assert all_keys(r, "image:*") == [] and stored_files() == []


def test_atom_feeds_carry_the_pictures_as_enclosures(alice_client, client, r, alice):
    alice_client.post(HOME, {"status": "Feed me", "picture_1": upload(picture())})
    (post_id,) = r.lrange(keys.own_posts(alice.id), 0, -1)
    (token,) = re.findall(r"[0-9a-f]{16}", r.hget(keys.post(int(post_id)), "media"))
    size = Path(settings.MEDIA_ROOT, f"posts/{token}-1600.webp").stat().st_size
    atom = client.get("/timeline/feed/").content.decode()
    assert (
        f'<link href="http://testserver/media/posts/{token}-1600.webp" length="{size}" '
        f'rel="enclosure" type="image/webp"/>' in atom
    )
