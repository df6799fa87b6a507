"""What a picture served from /media/ varies by: nothing. Its file never changes and is the
same for every reader, so a shared cache (a CDN) keeps one copy of it."""

from __future__ import annotations

from social import keys
from social.images import AVATAR_SIZES, process
from social.repository.accounts.profiles import Picture
from tests.test_images import picture


def test_a_picture_carries_no_vary_so_a_cdn_keeps_one_copy_for_every_language(
    client, alice, repo, r
):
    repo.profiles.update(alice.id, pictures=[Picture("avatar", process(picture(), AVATAR_SIZES))])
    token = r.hget(keys.user(alice.id), "avatar")
    path = f"/media/avatars/{token}-96.webp"

    answers = [
        client.get(path, HTTP_ACCEPT_LANGUAGE="zh-hans"),
        client.get(path, HTTP_ACCEPT_LANGUAGE="en"),
        client.get(path, HTTP_COOKIE="django_language=zh-hans"),
    ]

    for response in answers:
        assert response.status_code == 200 and not response.has_header("Vary")
        assert response["Cache-Control"] == "public, max-age=31536000, immutable"
        assert "Content-Language" not in response
    assert len({b"".join(a.streaming_content) for a in answers}) == 1
    assert r.hget(keys.image(token), "state") == "live"
    assert "Accept-Language" in client.get("/timeline/", HTTP_ACCEPT_LANGUAGE="zh-hans")["Vary"]
