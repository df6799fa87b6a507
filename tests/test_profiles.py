"""Profiles (issue 26): the settings page, the API's update_credentials, where they show,
staff removal, purge, and the files behind the pictures. New pictures are processed by the
worker (issue 33): work.run_pending("media") here."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.template import engines
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.urls import reverse

from social import keys, work
from social.images import AVATAR_SIZES, process
from social.repository import PROCESS_CACHE, Repository
from social.repository.accounts.profiles import Picture
from social.repository.cache import ProcessCache
from social.streaming.deliver import Audience, Listener, tell
from social.streaming.streams import Stream
from social.work import queues
from tests.api import Api, token_for
from tests.conftest import make_user
from tests.test_images import noisy_png, picture, png_claiming
from tests.test_live_bus import events

SETTINGS = "/settings/profile/"
PATCH = "/api/v1/accounts/update_credentials"


def upload(data: bytes, name: str = "face.png", content_type: str = "image/png"):
    return SimpleUploadedFile(name, data, content_type=content_type)


def stored_files() -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def image_keys(r) -> list[str]:
    return sorted(k for k in r.scan_iter("image:*"))


def test_it_saves_a_name_a_bio_and_pictures_from_the_settings_page(alice_client, alice, bob, r):
    response = alice_client.post(
        SETTINGS,
        {
            "display_name": "  Alice 🌷 爱丽丝 ",
            "note": "Hi @bob!\r\nI like #Redis",
            "avatar": upload(picture("PNG", (500, 300))),
            "header": upload(picture("JPEG", (2000, 800)), "h.jpg", "image/jpeg"),
        },
    )

    assert response.status_code == 302 and response.url == SETTINGS
    waiting = r.hgetall(keys.user(alice.id))
    assert "avatar" not in waiting and "header" not in waiting  # the worker's to make
    assert r.hget(keys.image(waiting["avatar_pending"]), "state") == "processing"
    page = alice_client.get(SETTINGS).content.decode()
    assert "Your new avatar and header image are being processed" in page
    assert work.run_pending("media") == 2
    assert "being processed" not in alice_client.get(SETTINGS).content.decode()
    h = r.hgetall(keys.user(alice.id))
    assert "avatar_pending" not in h and "header_pending" not in h
    assert h["display_name"] == "Alice 🌷 爱丽丝"
    assert h["note"] == "Hi @bob!\nI like #Redis"
    assert h["note_mentions"] == f"{bob.id}:bob" and h["note_tags"] == "redis"
    avatar, header = h["avatar"], h["header"]
    assert r.hgetall(keys.image(avatar)) | {"time": "t", "bytes": "b"} == {
        "owner": str(alice.id), "kind": "avatar", "state": "live",
        "sizes": "400:400x400 96:96x96", "time": "t", "bytes": "b",
    }  # fmt: skip
    assert r.hget(keys.image(header), "sizes") == "1500:1500x500"
    assert stored_files() == sorted(
        [f"avatars/{avatar}-400.webp", f"avatars/{avatar}-96.webp", f"headers/{header}-1500.webp"]
    )


def test_the_profile_shows_header_avatar_name_and_linked_bio(client, alice, bob, repo):
    repo.profiles.update(alice.id, display_name="Alice", note="Ask @bob\nabout #redis")
    page = client.get(reverse("social:profile", args=["alice"])).content.decode()

    assert '<bdi class="display-name">Alice</bdi> <span class="handle">@alice</span>' in page
    assert 'href="/u/bob/">@bob</a><br>about <a class="tag" href="/tag/redis/">#redis</a>' in page
    assert "avatar-initial" in page  # no picture: a generated initial


def test_html_in_a_name_or_bio_is_text_everywhere(client, alice_client, alice, repo, r):
    alice_client.post(
        SETTINGS, {"display_name": "<b>x</b><script>1</script>", "note": "<img src=x onerror=1>"}
    )
    assert r.hget(keys.user(alice.id), "display_name") == "<b>x</b><script>1</script>"
    repo.posts.create_post(alice.id, "hello")

    for path in ("/u/alice/", "/timeline/"):
        page = client.get(path).content.decode()
        assert "<script>1</script>" not in page and "<img src=x" not in page
        assert "&lt;b&gt;x&lt;/b&gt;&lt;script&gt;1&lt;/script&gt;" in page


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("display_name", "     ", "something besides spaces"),
        ("display_name", "\u200b\u200b", "something besides spaces"),
        ("display_name", "x" * 51, "Keep it to 50 characters"),
        ("note", "y" * 501, "Keep it to 500 characters"),
    ],
)
def test_a_bad_text_is_refused_on_the_form_and_nothing_is_stored(
    alice_client, alice, r, field, value, message
):
    before = r.hgetall(keys.user(alice.id))
    data = {"display_name": "Kept name", "note": "Kept bio", field: value}
    data["avatar"] = upload(picture())

    response = alice_client.post(SETTINGS, data)

    page = response.content.decode()
    assert response.status_code == 400 and message in page
    other = "note" if field == "display_name" else "display_name"
    assert f"Kept {'bio' if other == 'note' else 'name'}" in page  # the rest as typed
    assert r.hgetall(keys.user(alice.id)) == before
    assert image_keys(r) == [] and stored_files() == []


@pytest.mark.parametrize(
    "data, name, content_type, message",
    [
        (b"not a picture at all", "a.png", "image/png", "not a PNG, JPEG"),
        (picture("PNG"), "a.gif", "image/gif", None),  # a real PNG named GIF: taken as a PNG
        (b"<html><body>hi</body></html>", "a.jpg", "image/jpeg", "not a PNG, JPEG"),
        (
            b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
            "a.svg",
            "image/svg+xml",
            "not a PNG, JPEG",
        ),
        (png_claiming(50_000, 50_000), "bomb.png", "image/png", "too many pixels"),
        (noisy_png()[:200], "cut.png", "image/png", "damaged or cut short"),
    ],
    ids=["not-an-image", "lying-name", "html-as-jpeg", "svg", "bomb", "cut-short"],
)
def test_a_bad_picture_is_refused_with_a_clear_message_and_nothing_stored(
    alice_client, alice, r, data, name, content_type, message
):
    before = r.hgetall(keys.user(alice.id))

    response = alice_client.post(
        SETTINGS,
        {"display_name": "Typed", "note": "", "avatar": upload(data, name, content_type)},
    )

    if message is None:  # told by its content, not its name: accepted
        assert response.status_code == 302
        work.run_pending("media")
        assert r.hget(keys.user(alice.id), "avatar")
        return
    assert response.status_code == 400
    page = response.content.decode()
    assert message in page and 'value="Typed"' in page
    assert r.hgetall(keys.user(alice.id)) == before
    assert image_keys(r) == [] and stored_files() == []


def test_a_new_avatar_replaces_the_old_files_and_metadata(alice_client, alice, r):
    alice_client.post(SETTINGS, {"display_name": "", "note": "", "avatar": upload(picture())})
    work.run_pending("media")
    old = r.hget(keys.user(alice.id), "avatar")
    alice_client.post(SETTINGS, {"display_name": "", "note": "", "avatar": upload(picture())})
    assert r.hget(keys.user(alice.id), "avatar") == old  # until the new one is ready
    work.run_pending("media")
    new = r.hget(keys.user(alice.id), "avatar")

    assert new != old
    assert image_keys(r) == [keys.image(new)]
    assert stored_files() == [f"avatars/{new}-400.webp", f"avatars/{new}-96.webp"]

    alice_client.post(SETTINGS, {"display_name": "", "note": "", "remove_avatar": "on"})
    assert r.hget(keys.user(alice.id), "avatar") is None
    assert image_keys(r) == [] and stored_files() == []


def test_the_media_view_serves_a_picture_as_webp_for_a_year_and_nothing_else(
    client, alice, repo, r
):
    from social.images import AVATAR_SIZES, process
    from social.repository.accounts.profiles import Picture

    repo.profiles.update(alice.id, pictures=[Picture("avatar", process(picture(), AVATAR_SIZES))])
    token = r.hget(keys.user(alice.id), "avatar")

    response = client.get(f"/media/avatars/{token}-96.webp")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/webp"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Cache-Control"] == "public, max-age=31536000, immutable"
    assert response["Content-Disposition"] == "inline"
    assert response["Content-Security-Policy"] == "default-src 'none'; sandbox"
    assert b"".join(response.streaming_content)[:4] == b"RIFF"
    for bad in ("avatars/../../secret_key", f"avatars/{token}-96.html", "x.webp"):
        assert client.get(f"/media/{bad}").status_code == 404


def test_cards_show_the_authors_name_and_avatar_and_change_with_the_profile(client, alice, repo):
    repo.posts.create_post(alice.id, "first post")
    before = client.get("/timeline/").content.decode()
    assert "author-display" not in before and "avatar-initial" in before

    repo.profiles.update(alice.id, display_name="Alice Liddell")
    after = client.get("/timeline/").content.decode()

    assert '<bdi class="display-name">Alice Liddell</bdi>' in after


def test_emoji_in_names_and_posts_are_references_so_pages_stay_two_bytes_a_character(
    client, alice, repo
):
    repo.posts.create_post(alice.id, "coffee \u2615 and a bike \U0001f6b2")
    repo.profiles.update(alice.id, display_name="Alice \U0001f33f")

    html = client.get("/timeline/").content.decode()

    assert '<bdi class="display-name">Alice &#127807;</bdi>' in html
    assert "coffee \u2615 and a bike &#128690;" in html  # beyond U+FFFF only
    assert max(html) <= "\uffff"


def test_generated_avatars_differ_by_account():
    from social.templating.faces import avatar

    shown = {str(avatar(i, f"user{i}")) for i in range(1, 13)}
    assert len(shown) == 12
    assert "hue-1" in str(avatar(1, "alice")) and 'data-initial="A"' in str(avatar(1, "alice"))


def test_staff_remove_a_name_a_bio_and_an_avatar_with_an_audit_entry(sam_client, alice, repo, r):
    from social.images import AVATAR_SIZES, process
    from social.repository.accounts.profiles import Picture

    avatar = Picture("avatar", process(picture(), AVATAR_SIZES))
    repo.profiles.update(alice.id, display_name="Rude", note="rude bio", pictures=[avatar])
    for part in ("display_name", "note", "avatar"):
        response = sam_client.post(
            f"/staff/users/alice/remove_{part}/", {f"remove_{part}-reason": "Breaks rule 2"}
        )
        assert response.status_code == 302

    h = r.hgetall(keys.user(alice.id))
    assert not {"display_name", "note", "note_mentions", "avatar"} & h.keys()
    assert image_keys(r) == [] and stored_files() == []
    actions = [fields["action"] for _, fields in r.xrange(keys.audit_log())]
    removals = [a for a in actions if a.startswith("remove_")]
    assert removals == ["remove_display_name", "remove_note", "remove_avatar"]


def test_a_non_staff_account_cannot_remove_a_profile(alice_client, bob, repo, r):
    repo.profiles.update(bob.id, display_name="Bob")
    alice_client.post("/staff/users/bob/remove_display_name/", {"remove_display_name-reason": "x"})
    assert r.hget(keys.user(bob.id), "display_name") == "Bob"


def test_purging_a_deleted_account_deletes_its_files(alice, repo, r):
    from social.images import AVATAR_SIZES, HEADER_SIZES, process
    from social.repository.accounts.profiles import Picture

    repo.profiles.update(
        alice.id,
        pictures=[
            Picture("avatar", process(picture(), AVATAR_SIZES)),
            Picture("header", process(picture(), HEADER_SIZES)),
        ],
    )
    assert len(stored_files()) == 3
    repo.accounts.delete_account(alice, at=1)
    repo.accounts.purge_deleted_accounts(at=10**10)

    assert stored_files() == [] and image_keys(r) == []


# --- The client API --------------------------------------------------------------------


def patch(client, token: str, data: dict, files: dict | None = None):
    """PATCH update_credentials as multipart (as Mastodon.py sends it)."""
    body = encode_multipart(BOUNDARY, {**data, **(files or {})})
    return client.generic(
        "PATCH", PATCH, body, content_type=MULTIPART_CONTENT,
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )  # fmt: skip


def test_update_credentials_takes_multipart_and_answers_the_account(client, alice, repo, r):
    token = token_for(repo, alice)
    avatar = io.BytesIO(picture("PNG", (300, 300)))
    avatar.name = "me.png"

    texts = {"display_name": "Alice A.", "note": "#tea"}
    response = patch(client, token, texts, {"avatar": avatar})

    assert response.status_code == 200, response.content
    assert "/media/avatars/" not in response.json()["avatar"]  # the worker's: not yet
    assert r.hget(keys.user(alice.id), "avatar_pending")
    work.run_pending("media")
    account = Api(token).get("/api/v1/accounts/verify_credentials").json()
    token_avatar = r.hget(keys.user(alice.id), "avatar")
    assert account["display_name"] == "Alice A."
    assert account["note"] == '<p><a class="tag" href="http://testserver/tag/tea/">#tea</a></p>'
    assert account["avatar"] == f"http://testserver/media/avatars/{token_avatar}-400.webp"
    assert account["avatar_static"] == account["avatar"] and account["header"] == ""
    assert account["source"]["note"] == "#tea"


@pytest.mark.parametrize(
    "data, files, message",
    [
        ({"display_name": "   "}, {}, "display_name: A display name needs something"),
        ({"display_name": "x" * 51}, {}, "display_name: Keep it to 50"),
        ({"note": "n" * 501}, {}, "note: Keep it to 500"),
        ({}, {"avatar": ("a.png", b"GIF89a nonsense")}, "avatar: This is not a PNG"),
        ({}, {"header": ("b.png", png_claiming(50_000, 50_000))}, "header: The picture has"),
    ],
)
def test_update_credentials_refuses_bad_input_with_422_and_stores_nothing(
    client, alice, repo, r, data, files, message
):
    token = token_for(repo, alice)
    before = r.hgetall(keys.user(alice.id))
    handles = {}
    for field, (name, content) in files.items():
        handles[field] = io.BytesIO(content)
        handles[field].name = name

    response = patch(client, token, {"display_name": "fine", **data}, handles)

    assert response.status_code == 422
    assert response.json()["error"].startswith("Validation failed: " + message)
    assert r.hgetall(keys.user(alice.id)) == before
    assert image_keys(r) == [] and stored_files() == []


def test_update_credentials_needs_the_write_accounts_scope(client, alice, repo, r):
    token = token_for(repo, alice, "read")
    response = patch(client, token, {"display_name": "No"})
    assert response.status_code == 403
    assert r.hget(keys.user(alice.id), "display_name") is None


def test_a_json_patch_changes_only_what_it_names(client, alice, repo, r):
    repo.profiles.update(alice.id, display_name="Keep", note="old")
    token = token_for(repo, alice)
    response = client.patch(
        PATCH, '{"note": "new"}', content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )  # fmt: skip
    assert response.status_code == 200
    assert r.hget(keys.user(alice.id), "display_name") == "Keep"
    assert r.hget(keys.user(alice.id), "note") == "new"


def test_accounts_without_a_profile_keep_reading_as_before(client, repo, r):
    """A user hash the reference Retwis wrote (no profile fields) shows its @name and a
    generated avatar."""
    user = make_user(repo, "legacy")
    PROCESS_CACHE.clear()
    page = client.get("/u/legacy/").content.decode()
    assert "<h1>@legacy</h1>" in page and "avatar-initial" in page
    assert user.display_name == "" and b"display_name" not in repo.r.hgetall(keys.user(user.id))


def test_atom_feeds_name_authors_by_display_name_and_handle(client, alice, repo):
    import xml.etree.ElementTree as ET

    atom = "{http://www.w3.org/2005/Atom}"
    repo.profiles.update(alice.id, display_name="Alice <& Co>")
    repo.posts.create_post(alice.id, "hello feed")

    for path in ("/u/alice/feed/", "/timeline/feed/"):
        root = ET.fromstring(client.get(path).content)
        entry = root.find(f"{atom}entry")
        assert entry is not None
        assert entry.findtext(f"{atom}author/{atom}name") == "Alice <& Co> (@alice)"


# --- Leftovers: links in bios, the rate limit on profile saves ------------------------


def test_bare_addresses_in_a_bio_are_linked_as_in_posts(client, alice, repo):
    repo.profiles.update(alice.id, note='See https://example.com/a?b=1&c=2. Or "http://x.y/#z"')
    page = client.get(reverse("social:profile", args=["alice"])).content.decode()

    assert (
        'See <a class="url" href="https://example.com/a?b=1&amp;c=2" '
        'rel="nofollow noopener noreferrer">https://example.com/a?b=1&amp;c=2</a>. Or &#34;'
        '<a class="url" href="http://x.y/#z" rel="nofollow noopener noreferrer">http://x.y/#z</a>'
        "&#34;"
    ) in page
    repo.posts.create_post(alice.id, "read https://example.org/ now")
    assert 'href="https://example.org/" rel="nofollow' in client.get("/u/alice/").content.decode()


def test_addresses_that_are_not_web_links_stay_text(client, alice, repo):
    repo.profiles.update(alice.id, note="javascript://x ftp://a.b https://<b>x</b>")
    page = client.get(reverse("social:profile", args=["alice"])).content.decode()

    assert 'class="url"' not in page and "&lt;b&gt;x&lt;/b&gt;" in page


def test_profile_saves_are_limited_per_user_on_the_page_and_in_the_api(
    client, alice_client, alice, repo, r, settings
):
    settings.RETWIS_LIMIT_PROFILE = (2, 3600)

    answers = [alice_client.post(SETTINGS, {"display_name": f"A{i}"}) for i in range(3)]

    assert [a.status_code for a in answers] == [302, 302, 429]
    assert "Too many changes" in answers[2].content.decode()
    assert 'value="A2"' in answers[2].content.decode()  # what was typed is kept
    assert r.hget(keys.user(alice.id), "display_name") == "A1"
    assert r.get(keys.rate_limit("profile_user", str(alice.id))) == "2"  # refused: given back
    refused = patch(client, token_for(repo, alice), {"display_name": "A3"})
    assert refused.status_code == 429 and "error" in refused.json()
    assert r.hget(keys.user(alice.id), "display_name") == "A1"
    nothing = patch(client, token_for(repo, alice), {"locked": "false"})  # changes nothing
    assert nothing.status_code == 200  # not counted, so not refused


def test_a_full_media_queue_is_a_503_with_retry_after_and_nothing_is_saved(
    alice_client, alice, client, repo, r, monkeypatch
):
    full = dataclasses.replace(queues.QUEUES["media"], limit=0)
    monkeypatch.setitem(queues.QUEUES, "media", full)

    busy = alice_client.post(SETTINGS, {"display_name": "A", "avatar": upload(picture())})
    api = patch(client, token_for(repo, alice), {}, {"avatar": io.BytesIO(picture())})

    assert busy.status_code == 503 and busy["Retry-After"] == "60"
    assert "try again in a minute" in busy.content.decode()
    assert 'value="A"' in busy.content.decode()  # what was typed is kept
    assert api.status_code == 503 and api["Retry-After"] == "60"
    assert r.hget(keys.user(alice.id), "display_name") is None
    assert r.hget(keys.user(alice.id), "avatar_pending") is None
    assert image_keys(r) == [] and stored_files() == []


def test_the_worker_refusing_a_picture_tells_its_owner_and_keeps_the_old_one(
    alice_client, alice, r
):
    alice_client.post(SETTINGS, {"display_name": "", "note": "", "avatar": upload(picture())})
    work.run_pending("media")
    old = r.hget(keys.user(alice.id), "avatar")
    cut = noisy_png()[:3000]  # a good header, cut short after it: only decoding tells

    assert alice_client.post(SETTINGS, {"avatar": upload(cut)}).status_code == 302
    work.run_pending("media")

    assert r.hget(keys.user(alice.id), "avatar") == old
    assert r.hget(keys.user(alice.id), "avatar_pending") is None
    assert image_keys(r) == [keys.image(old)]
    assert stored_files() == [f"avatars/{old}-400.webp", f"avatars/{old}-96.webp"]
    html = alice_client.get("/").content.decode()
    assert "Your new avatar could not be used: The picture is damaged or cut short." in html


def test_a_newer_upload_or_a_removal_wins_over_a_picture_still_processing(alice_client, alice, r):
    alice_client.post(SETTINGS, {"display_name": "", "note": "", "avatar": upload(picture())})
    first = r.hget(keys.user(alice.id), "avatar_pending")
    alice_client.post(SETTINGS, {"display_name": "", "note": "", "avatar": upload(picture())})
    second = r.hget(keys.user(alice.id), "avatar_pending")

    work.run_pending("media")

    assert r.hget(keys.user(alice.id), "avatar") == second != first
    assert image_keys(r) == [keys.image(second)] and len(stored_files()) == 2
    alice_client.post(SETTINGS, {"display_name": "", "note": "", "avatar": upload(picture())})
    alice_client.post(SETTINGS, {"display_name": "", "note": "", "remove_avatar": "on"})
    work.run_pending("media")
    assert r.hget(keys.user(alice.id), "avatar") is None
    assert image_keys(r) == [] and stored_files() == []


# --- Changed in one process, shown by every other (issue 34, part 3) ----------------------
# A name or avatar change is numbered (accounts/profile_changes.py); each web process
# checks that author's remembered posts again on its next page, and no one else's.


def elsewhere(r) -> Repository:
    """Another web process on the same Redis: a repository with a cache of its own."""
    return Repository(r, cache=ProcessCache())


@pytest.fixture
def bobs_post(repo, alice, bob) -> int:
    repo.graph.follow(alice.id, bob.id)
    return repo.posts.create_post(bob.id, "hello #redis from bob")


def new_face() -> Picture:
    return Picture("avatar", process(picture(), AVATAR_SIZES))


@pytest.mark.parametrize("url", ["/", "/timeline/", "/u/bob/", "/p/{post}/", "/tag/redis/"])
def test_a_name_and_avatar_changed_in_another_process_show_on_the_next_page(
    alice_client, r, bob, bobs_post, url
):
    url = url.format(post=bobs_post)
    alice_client.get(url)
    assert "Bob Renamed" not in alice_client.get(url).content.decode()  # remembered now
    version = r.get(keys.visibility_version())

    elsewhere(r).profiles.update(bob.id, display_name="Bob Renamed", pictures=[new_face()])
    html = alice_client.get(url).content.decode()

    assert '<bdi class="display-name">Bob Renamed</bdi>' in html
    assert f"/avatars/{r.hget(keys.user(bob.id), 'avatar')}-" in html
    assert r.get(keys.visibility_version()) == version


def test_a_bio_changed_in_another_process_shows_on_the_profile_at_once(alice_client, r, bob):
    alice_client.get("/u/bob/")

    elsewhere(r).profiles.update(bob.id, note="Now about #python")

    assert 'href="/tag/python/">#python</a>' in alice_client.get("/u/bob/").content.decode()


def test_only_the_changed_authors_cards_are_rendered_again(
    alice_client, repo, r, alice, bob, charlie, monkeypatch
):
    for author in (alice, bob, charlie):
        repo.posts.create_post(author.id, f"a post by {author.username}")
    cards = engines["jinja2"].env.globals["post_cards"].__self__  # templating/cards.py
    rendered: list[str] = []
    render = cards._render

    def counted(post, *rest):
        rendered.append(post.author_name)
        return render(post, *rest)

    monkeypatch.setattr(cards, "_render", counted)
    alice_client.get("/timeline/")
    rendered.clear()
    version = r.get(keys.visibility_version())

    elsewhere(r).profiles.update(bob.id, display_name="Bob Renamed")
    html = alice_client.get("/timeline/").content.decode()

    assert rendered == ["bob"]
    assert '<bdi class="display-name">Bob Renamed</bdi>' in html
    assert r.get(keys.visibility_version()) == version


def test_the_api_answers_a_name_changed_in_another_process(repo, r, alice, bob, bobs_post):
    api = Api(token_for(repo, alice))
    api.get("/api/v1/timelines/home")
    assert api.get("/api/v1/timelines/home").json()[0]["account"]["display_name"] == ""

    elsewhere(r).profiles.update(bob.id, display_name="Bob Renamed")

    assert api.get("/api/v1/timelines/home").json()[0]["account"]["display_name"] == "Bob Renamed"
    assert api.get(f"/api/v1/statuses/{bobs_post}").json()["account"]["display_name"] == (
        "Bob Renamed"
    )


def test_the_streaming_api_tells_a_name_changed_since_it_read_the_post(
    repo, r, alice, bob, charlie, bobs_post
):
    repo.graph.follow(charlie.id, alice.id)
    listener = Audience(1, Listener(charlie, ("read",)), Stream("user"), "http://testserver")
    repo.pages.timeline()  # this process remembers bob's post

    elsewhere(r).profiles.update(bob.id, display_name="Bob Renamed")
    repost_id, _ = repo.reposts.repost(alice.id, bobs_post)
    event = next(e for e in events(r) if e.post_id == repost_id)
    told = [json.loads(payload) for _, _, payload in tell(repo, event, [listener]).messages]

    assert [status["reblog"]["account"]["display_name"] for status in told] == ["Bob Renamed"]
