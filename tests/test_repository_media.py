"""Pictures in posts, the repository's side (issue 26): uploads, claiming them for a post,
the post hash's `media` field read with the post, content warnings. On real Redis and
on the cluster (RETWIS_TEST_CLUSTER=1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from social import images, keys
from social.repository import PROCESS_CACHE, MediaNotFound, Timeline
from social.repository.read.sources import PUBLIC
from social.repository.read.visibility import ANONYMOUS
from tests.conftest import make_user
from tests.test_images import picture


def stored_files() -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def uploaded(repo, user, alt: str = "", size=(200, 100)):
    variants, blurhash = images.process_with_blurhash(picture(size=size), images.POST_SIZES)
    return repo.attachments.upload(user.id, variants, alt=alt, blurhash=blurhash, at=1000)


def test_an_upload_is_stored_unattached_with_its_files_and_lists(repo, alice, r):
    upload = uploaded(repo, alice, alt="A red square")
    assert r.hgetall(keys.image(upload.id)) == {
        "owner": str(alice.id), "kind": "post", "state": "unattached",
        "sizes": "1600:200x100 640:200x100", "bytes": str(upload.bytes), "time": "1000",
        "alt": "A red square", "blurhash": upload.attachment.blurhash,
        "full_bytes": str(upload.attachment.size),
    }  # fmt: skip
    assert 0 < upload.attachment.size < upload.bytes
    assert len(upload.attachment.blurhash) == 28  # 4 x 3 components
    assert r.zrange(keys.media_unattached(), 0, -1, withscores=True) == [(upload.id, 1000.0)]
    assert r.zrange(keys.user_media(alice.id), 0, -1) == [upload.id]
    assert stored_files() == [f"posts/{upload.id}-1600.webp", f"posts/{upload.id}-640.webp"]


def test_a_post_claims_its_pictures_and_cards_read_them_with_the_post(repo, alice, r):
    first, second = uploaded(repo, alice, "one"), uploaded(repo, alice, "", size=(50, 90))
    post_id = repo.posts.create_post(
        alice.id, "look", media=[first.id, second.id], spoiler_text="eyes", at=2000
    )
    h = r.hgetall(keys.post(post_id))
    assert h["spoiler_text"] == "eyes" and h["sensitive"] == "1"
    assert r.hget(keys.image(first.id), "state") == "attached"
    assert r.hget(keys.image(first.id), "post") == str(post_id)
    assert r.zcard(keys.media_unattached()) == 0
    assert r.zcard(keys.user_media(alice.id)) == 2
    for remembered in (False, True):  # read whole, then from what the process remembers
        if not remembered:
            PROCESS_CACHE.clear()
        page = repo.reader.page(Timeline(), ANONYMOUS, shows=PUBLIC).page
        (post,) = page.items
        assert [(a.id, a.width, a.height, a.alt) for a in post.media] == [
            (first.id, 200, 100, "one"),
            (second.id, 50, 90, ""),
        ]
        assert post.spoiler_text == "eyes" and post.sensitive


def test_a_post_without_pictures_writes_no_new_field(repo, alice, r):
    post_id = repo.posts.create_post(alice.id, "plain")
    assert set(r.hgetall(keys.post(post_id))) == {"user_id", "time", "body"}


@pytest.mark.parametrize("whose", ["someone_elses", "attached", "unknown", "junk"])
def test_a_picture_not_the_authors_to_attach_refuses_the_post_and_keeps_the_rest(
    repo, alice, r, whose
):
    bob = make_user(repo, "bob")
    mine = uploaded(repo, alice)
    if whose == "someone_elses":
        bad = uploaded(repo, bob).id
    elif whose == "attached":
        bad = uploaded(repo, alice).id
        repo.posts.create_post(alice.id, "first", media=[bad])
    else:
        bad = "0123456789abcdef" if whose == "unknown" else "../etc"
    posts_before = r.get(keys.next_post_id())
    with pytest.raises(MediaNotFound) as refused:
        repo.posts.create_post(alice.id, "second", media=[mine.id, bad], token="t1")
    assert refused.value.ids == [bad]
    assert r.hget(keys.image(mine.id), "state") == "unattached"  # given back
    assert r.hget(keys.image(mine.id), "post") is None
    assert mine.id in r.zrange(keys.media_unattached(), 0, -1)
    assert r.get(keys.post_token(alice.id, "t1")) is None  # a retry may post
    new_id = int(r.get(keys.next_post_id()) or 0)
    assert not r.exists(keys.post(new_id)) or int(posts_before or 0) == new_id
    assert repo.posts.create_post(alice.id, "again", media=[mine.id], token="t1") > 0


def test_describe_changes_only_the_owners_unattached_picture(repo, alice, r):
    bob = make_user(repo, "bob")
    upload = uploaded(repo, alice)
    assert repo.attachments.describe(bob.id, upload.id, "mine now") is None
    assert repo.attachments.describe(alice.id, upload.id, "x" * 2000).attachment.alt == "x" * 1500
    repo.posts.create_post(alice.id, "p", media=[upload.id])
    assert repo.attachments.describe(alice.id, upload.id, "later") is None
    assert r.hget(keys.image(upload.id), "alt") == "x" * 1500
    assert repo.attachments.own_unattached(alice.id, upload.id) is None


def test_discard_deletes_an_unattached_upload_and_its_files(repo, alice, r):
    upload = uploaded(repo, alice)
    repo.attachments.discard(alice.id, [upload.id])
    assert not r.exists(keys.image(upload.id))
    assert r.zcard(keys.media_unattached()) == 0 and r.zcard(keys.user_media(alice.id)) == 0
    assert stored_files() == []


def test_deleting_a_post_hands_its_file_names_to_the_media_hook(repo, alice):
    upload = uploaded(repo, alice)
    post_id = repo.posts.create_post(alice.id, "p", media=[upload.id])
    names = repo.posts.delete_own_post(alice.id, post_id)
    assert names == [f"posts/{upload.id}-1600.webp", f"posts/{upload.id}-640.webp"]
