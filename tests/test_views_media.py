"""Pictures and content warnings on the site's pages (issue 26): the composer's files and
descriptions, cards' grids, permalinks, content warnings and sensitive pictures, and every
bad upload refused on the form with the rest kept and nothing stored. Pictures are
processed by the worker (issue 33): the post is written once they are, by the worker
(work.run_pending("media") here), or the person is told why not, with their text."""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import translation

from social import keys, work
from social.work import queues
from social.work_handlers.media import process_picture
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
    assert "Your post will appear once its pictures are ready" in response.content.decode()
    assert "Next time, describe each picture" not in response.content.decode()
    assert work.run_pending("media") == 2
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
    assert "Next time, describe each picture" in response.content.decode()
    work.run_pending("media")
    html = alice_client.get(HOME).content.decode()
    assert 'alt="A picture its author did not describe"' in html
    (post_id,) = r.lrange(keys.own_posts(alice.id), 0, -1)
    assert r.hget(keys.post(int(post_id)), "body") == ""


def test_a_content_warning_folds_the_body_and_pictures(alice_client, r, alice):
    alice_client.post(
        HOME,
        {"status": "The end", "spoiler_text": "  Book   spoilers ",
         "picture_1": upload(picture()), "alt_1": "Cover"},
    )  # fmt: skip
    work.run_pending("media")
    (post_id,) = r.lrange(keys.own_posts(alice.id), 0, -1)
    assert r.hget(keys.post(int(post_id)), "spoiler_text") == "Book spoilers"
    html = alice_client.get("/timeline/").content.decode()
    folded = re.search(r'<details class="cw"><summary>(.*?)</summary>(.*?)</details>', html, re.S)
    assert folded and "Book spoilers" in folded[1]
    assert "The end" in folded[2] and 'alt="Cover"' in folded[2]


def test_sensitive_pictures_are_blurred_until_opened(alice_client, r):
    alice_client.post(HOME, {"status": "Look", "sensitive": "on", "picture_1": upload(picture())})
    work.run_pending("media")
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
    "cut short": ({"picture_1": upload(noisy_png()[:200])}, "damaged or cut short"),
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
    work.run_pending("media")
    (post_id,) = r.lrange(keys.own_posts(alice.id), 0, -1)
    (token,) = re.findall(r"[0-9a-f]{16}", r.hget(keys.post(int(post_id)), "media"))
    size = Path(settings.MEDIA_ROOT, f"posts/{token}-1600.webp").stat().st_size
    atom = client.get("/timeline/feed/").content.decode()
    assert (
        f'<link href="http://testserver/media/posts/{token}-1600.webp" length="{size}" '
        f'rel="enclosure" type="image/webp"/>' in atom
    )


def originals() -> list[str]:
    return [name for name in stored_files() if name.startswith("uploads/")]


def test_the_composer_keeps_pictures_as_sent_and_the_worker_writes_the_post(
    alice_client, alice, bob, repo, r
):
    repo.graph.follow(bob.id, alice.id)
    response = alice_client.post(
        HOME,
        {"status": "Slow pictures", "picture_1": upload(picture()), "alt_1": "Red",
         "picture_2": upload(picture("GIF")), "alt_2": "A GIF", "token": "t" * 20},
    )  # fmt: skip

    assert response.status_code == 302  # nothing decoded, no post yet
    assert r.llen(keys.own_posts(alice.id)) == 0 and r.llen(keys.home_feed(bob.id)) == 0
    (draft_key,) = all_keys(r, "post_draft:*")
    assert 0 < r.ttl(draft_key) <= keys.POST_DRAFT_TTL
    tokens = sorted(r.zrange(keys.user_media(alice.id), 0, -1))
    for token in tokens:
        h = r.hgetall(keys.image(token))
        assert h["state"] == "processing" and h["original"].startswith(f"uploads/{token}-")
        assert "sizes" not in h and h["draft"] == draft_key.split(":")[1]
    assert stored_files() == originals() and len(originals()) == 2

    assert work.run_pending("media") == 2

    (post_id,) = r.lrange(keys.own_posts(alice.id), 0, -1)
    assert r.lrange(keys.home_feed(bob.id), 0, -1) == [post_id]  # fanned out as any post
    post = r.hgetall(keys.post(int(post_id)))
    assert post["body"] == "Slow pictures" and '"Red"' in post["media"]
    assert r.get(keys.post_token(alice.id, "t" * 20)) == post_id
    assert [r.hget(keys.image(t), "state") for t in tokens] == ["attached", "attached"]
    assert all(not r.hexists(keys.image(t), "original") for t in tokens)
    assert all_keys(r, "post_draft:*") == [] and r.zcard(keys.media_unattached()) == 0
    assert originals() == [] and len(stored_files()) == 4


def test_a_picture_the_worker_refuses_is_told_with_the_text_and_nothing_is_kept(
    alice_client, alice, r
):
    response = alice_client.post(
        HOME,
        {"status": "Keep my words", "picture_1": upload(picture()),
         "picture_2": upload(noisy_png()[:3000])},  # a good header, cut short after it
    )  # fmt: skip
    assert response.status_code == 302

    work.run_pending("media")

    assert r.llen(keys.own_posts(alice.id)) == 0
    assert all_keys(r, "image:*") == [] and all_keys(r, "post_draft:*") == []
    assert stored_files() == [] and r.zcard(keys.user_media(alice.id)) == 0
    (notice,) = r.lrange(keys.notices(alice.id), 0, -1)
    assert '"kind": "post_unpublished"' in notice and "Keep my words" in notice
    html = alice_client.get(HOME).content.decode()
    assert "Your post could not be published: The picture is damaged or cut short." in html
    assert '<q class="unpublished">Keep my words</q>' in html
    chinese = alice_client.get(HOME, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "你的帖子未能发布：图片已损坏或不完整。" in chinese  # the reason translated too


def test_a_reply_whose_post_goes_before_its_pictures_are_ready_is_told(
    alice_client, bob_client, alice, bob, repo, r
):
    parent = repo.posts.create_post(bob.id, "Reply to me")
    sent = alice_client.post(
        f"/p/{parent}/", {"status": "@bob yes", "reply_to": parent, "picture_1": upload(picture())}
    )
    assert sent.status_code == 302
    repo.posts.delete_own_post(bob.id, parent)

    work.run_pending("media")

    assert r.llen(keys.own_posts(alice.id)) == 0 and stored_files() == []
    html = alice_client.get(HOME).content.decode()
    assert "The post you replied to is gone." in html and "@bob yes" in html


def test_a_full_media_queue_is_a_503_with_retry_after_and_keeps_nothing(
    alice_client, alice, r, monkeypatch
):
    full = dataclasses.replace(queues.QUEUES["media"], limit=1)
    monkeypatch.setitem(queues.QUEUES, "media", full)
    data = {"status": "Busy?", "picture_1": upload(picture()), "picture_2": upload(picture())}

    response = alice_client.post(HOME, data)

    assert response.status_code == 503 and response["Retry-After"] == "60"
    assert "try again in a minute" in response.content.decode()
    assert "Busy?</textarea>" in response.content.decode()
    assert all_keys(r, "image:*") == [] and all_keys(r, "post_draft:*") == []
    assert stored_files() == []
    assert work.run_pending("media") == 1  # the job queued before the refusal: nothing to do
    assert r.llen(keys.own_posts(alice.id)) == 0 and stored_files() == []


def test_a_picture_job_run_again_after_its_worker_died_posts_once(
    alice_client, alice, repo, r, monkeypatch
):
    alice_client.post(HOME, {"status": "Twice", "picture_1": upload(picture())})
    (token,) = r.zrange(keys.user_media(alice.id), 0, -1)

    def dies(*args, **kwargs):  # the worker dies after writing the sizes
        raise SystemExit("killed")

    monkeypatch.setattr(type(repo.media_files), "finish", dies)
    with pytest.raises(SystemExit):
        process_picture({"token": token})
    assert len(stored_files()) == 3 and r.hget(keys.image(token), "state") == "processing"
    monkeypatch.undo()

    process_picture({"token": token})  # taken over: run again
    process_picture({"token": token})  # and once more, after it was done

    (post_id,) = r.lrange(keys.own_posts(alice.id), 0, -1)
    assert r.hget(keys.image(token), "post") == post_id
    assert stored_files() == [f"posts/{token}-1600.webp", f"posts/{token}-640.webp"]
    assert all_keys(r, "post_draft:*") == []


def test_a_picture_is_processed_without_lock_files_in_the_temp_directory(
    alice_client, alice, r, monkeypatch, tmp_path
):
    # The lock-file slots (/tmp/retwis-image-slots/<site>-<n>.lock, names anyone on the
    # machine could predict) are gone: the media queue's concurrency bounds decoding.
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))

    alice_client.post(HOME, {"status": "No locks", "picture_1": upload(picture())})
    work.run_pending("media")

    assert r.llen(keys.own_posts(alice.id)) == 1
    assert list(temp.iterdir()) == []


def test_a_picture_whose_job_keeps_killing_its_worker_is_refused_and_its_author_told(
    alice_client, alice, repo, r
):
    """The job is taken over from dead workers until it has used its attempts: then it is
    a dead letter, the picture refused, and the author gets their text back."""
    from social.work.runner import run_job

    alice_client.post(HOME, {"status": "Never decoded", "picture_1": upload(picture())})
    (token,) = r.zrange(keys.user_media(alice.id), 0, -1)
    repo.jobs.ensure_group("media")
    for number in range(work.QUEUES["media"].attempts + 1):  # each worker dies holding it
        [job] = repo.jobs.reclaim("media", f"dying-{number}", idle_ms=0) or [
            repo.jobs.take("media", f"dying-{number}")
        ]

    assert run_job(repo.jobs, job, "survivor") == "dead"

    assert r.llen(keys.job_dead("media")) == 1
    assert r.llen(keys.own_posts(alice.id)) == 0
    assert all_keys(r, "image:*") == [] and all_keys(r, "post_draft:*") == []
    assert stored_files() == []
    (notice,) = r.lrange(keys.notices(alice.id), 0, -1)
    assert '"kind": "post_unpublished"' in notice and "Never decoded" in notice
    assert "The picture could not be processed." in alice_client.get(HOME).content.decode()
