"""The pictures' lifecycle (social/repository/posts/media_files.py): deleting a post (by its
author or staff) or purging an account deletes its pictures' hashes and files; day-old
unattached uploads go; `manage.py repair` finds orphans both ways (--dry-run honoured);
`export`/`import --with-files` carry the files. Redis state and files asserted; on real
Redis and on the cluster (RETWIS_TEST_CLUSTER=1)."""

from __future__ import annotations

import os
import time
from io import StringIO
from pathlib import Path

from django.conf import settings
from django.core.management import call_command

from social import keys
from social.images import AVATAR_SIZES, process
from social.repository.accounts.profiles import Picture
from social.repository.posts.media_files import UNATTACHED_MAX_AGE
from tests.test_images import picture
from tests.test_repository_media import stored_files, uploaded

DAY = UNATTACHED_MAX_AGE


def files_of(token: str) -> list[str]:
    return [f"posts/{token}-1600.webp", f"posts/{token}-640.webp"]


def repair(*args: str) -> str:
    out = StringIO()
    call_command("repair", *args, "--grace", "0", stdout=out)
    return out.getvalue()


def test_an_authors_deleted_post_takes_its_pictures_and_files(repo, alice, r):
    first, second, kept = uploaded(repo, alice), uploaded(repo, alice), uploaded(repo, alice)
    post_id = repo.posts.create_post(alice.id, "two", media=[first.id, second.id])

    repo.posts.delete_own_post(alice.id, post_id)

    assert not r.exists(keys.image(first.id)) and not r.exists(keys.image(second.id))
    assert r.zrange(keys.user_media(alice.id), 0, -1) == [kept.id]
    assert stored_files() == files_of(kept.id)
    assert r.hget(keys.post(post_id), "media")  # the post hash keeps it, for the record


def test_a_post_staff_delete_takes_its_pictures_and_files(repo, alice, sam, r):
    upload = uploaded(repo, alice)
    post_id = repo.posts.create_post(alice.id, "rude", media=[upload.id])

    assert repo.moderation.delete_posts([post_id], sam, "rules") == [post_id]

    assert not r.exists(keys.image(upload.id)) and r.zcard(keys.user_media(alice.id)) == 0
    assert stored_files() == []


def test_purging_an_account_takes_every_picture_it_uploaded(repo, alice, bob, r):
    attached, loose, bobs = uploaded(repo, alice), uploaded(repo, alice), uploaded(repo, bob)
    repo.posts.create_post(alice.id, "p", media=[attached.id])
    repo.profiles.update(alice.id, pictures=[Picture("avatar", process(picture(), AVATAR_SIZES))])
    repo.accounts.delete_account(alice, at=1)

    repo.accounts.purge_deleted_accounts(at=10**10)

    assert not r.exists(keys.user_media(alice.id))
    assert not any(r.exists(keys.image(u.id)) for u in (attached, loose))
    assert r.zrange(keys.media_unattached(), 0, -1) == [bobs.id]
    assert stored_files() == files_of(bobs.id)  # the avatar's went too


def test_unattached_uploads_go_after_a_day_and_attached_ones_stay(repo, alice, r):
    old, young = uploaded(repo, alice), uploaded(repo, alice)  # both at t=1000
    r.zadd(keys.media_unattached(), {young.id: 1000 + DAY})
    posted = uploaded(repo, alice)
    repo.posts.create_post(alice.id, "p", media=[posted.id])
    r.zadd(keys.media_unattached(), {posted.id: 1})  # a stale entry: the post took it

    assert repo.media_files.unattached_due(at=1001 + DAY) == [posted.id, old.id]
    assert repo.media_files.sweep_unattached(at=1001 + DAY) == [old.id]

    assert not r.exists(keys.image(old.id))
    assert r.hget(keys.image(posted.id), "state") == "attached"
    assert r.zrange(keys.media_unattached(), 0, -1) == [young.id]
    assert sorted(r.zrange(keys.user_media(alice.id), 0, -1)) == sorted([young.id, posted.id])
    assert stored_files() == sorted(files_of(young.id) + files_of(posted.id))
    assert repo.media_files.sweep_unattached(at=1001 + DAY) == []  # a second run: nothing


def test_repair_sweeps_day_old_uploads_unless_dry_run(repo, alice, r):
    upload = uploaded(repo, alice)  # at t=1000: long over a day ago

    assert "1 upload(s) unattached for over a day" in repair("--dry-run")
    assert r.exists(keys.image(upload.id)) and stored_files() == files_of(upload.id)
    assert "1 upload(s) unattached for over a day" in repair()
    assert not r.exists(keys.image(upload.id)) and stored_files() == []
    assert r.zcard(keys.media_unattached()) == 0 and r.zcard(keys.user_media(alice.id)) == 0


def make_old(name: str) -> None:
    path = Path(settings.MEDIA_ROOT) / name
    os.utime(path, (time.time() - 7200, time.time() - 7200))


def test_repair_finds_orphans_both_ways_and_mends_them_unless_dry_run(repo, alice, r):
    repo.profiles.update(alice.id, pictures=[Picture("avatar", process(picture(), AVATAR_SIZES))])
    avatar = r.hget(keys.user(alice.id), "avatar")
    lost_files = repo.posts.create_post(alice.id, "p", media=[uploaded(repo, alice).id])
    lost = r.zrange(keys.user_media(alice.id), 0, -1)[0]
    no_hash, young = uploaded(repo, alice), uploaded(repo, alice)
    r.delete(keys.image(no_hash.id), keys.image(young.id))  # files nothing names
    for name in files_of(no_hash.id):
        make_old(name)
    for name in files_of(lost) + [f"avatars/{avatar}-400.webp", f"avatars/{avatar}-96.webp"]:
        (Path(settings.MEDIA_ROOT) / name).unlink()  # hashes whose files are gone
    before = stored_files()

    said = repair("--dry-run")

    for line in [f"file {n}: no image hash names it" for n in files_of(no_hash.id)] + [
        f"image:{lost}: its files are gone",
        f"image:{avatar}: its files are gone",
        "2 orphan picture file(s), 2 picture(s) without files",
    ]:
        assert line in said
    assert f"file posts/{young.id}" not in said  # younger than the grace: maybe in flight
    assert stored_files() == before and r.exists(keys.image(lost), keys.image(avatar)) == 2

    version = r.get(keys.visibility_version())
    numbered = r.zscore(keys.profile_changes(), alice.id)  # when the avatar was set
    repair()

    # Cards showed that avatar: alice's are checked again, no one else's (cache.py).
    assert r.zscore(keys.profile_changes(), alice.id) > numbered
    assert r.get(keys.visibility_version()) == version
    assert stored_files() == files_of(young.id)
    assert not r.exists(keys.image(lost)) and not r.exists(keys.image(avatar))
    assert r.hget(keys.user(alice.id), "avatar") is None  # no broken picture shown
    assert lost not in r.zrange(keys.user_media(alice.id), 0, -1)
    assert r.hget(keys.post(lost_files), "media")  # the post's record is left
    assert "2 orphan picture file(s), 0 picture(s) without files" in repair("--file-grace", "0")
    assert stored_files() == []  # with no grace the young orphan goes too


def test_export_and_import_with_files_carry_the_pictures(repo, alice, r, tmp_path, settings):
    upload = uploaded(repo, alice, alt="a cat")
    repo.profiles.update(alice.id, pictures=[Picture("avatar", process(picture(), AVATAR_SIZES))])
    before = stored_files()
    image_hashes = {k: r.hgetall(k) for k in r.scan_iter(keys.IMAGE_PATTERN)}
    err = StringIO()
    call_command(
        "export", str(tmp_path / "b.jsonl"), "--with-files", str(tmp_path / "f"), stderr=err
    )
    assert "Copied 4 picture file(s)" in err.getvalue()

    settings.MEDIA_ROOT = tmp_path / "new-media"  # a new server's empty storage
    for key in image_hashes:
        r.delete(key)
    out = StringIO()
    call_command(
        "import",
        str(tmp_path / "b.jsonl"),
        "--force",
        "--with-files",
        str(tmp_path / "f"),
        stdout=out,
    )

    assert "Stored 4 picture file(s)" in out.getvalue()
    assert stored_files() == before
    assert {k: r.hgetall(k) for k in r.scan_iter(keys.IMAGE_PATTERN)} == image_hashes
    assert r.hget(keys.image(upload.id), "alt") == "a cat"


def test_a_storage_that_fails_to_delete_leaves_orphans_for_repair_not_an_error(
    repo, alice, r, monkeypatch
):
    from social import media

    upload = uploaded(repo, alice)
    post_id = repo.posts.create_post(alice.id, "p", media=[upload.id])

    def broken(names):
        raise OSError("storage down")

    monkeypatch.setattr(media, "delete_names", broken)
    repo.posts.delete_own_post(alice.id, post_id)  # no exception: the post is gone

    assert r.hget(keys.post(post_id), "deleted") == "1" and not r.exists(keys.image(upload.id))
    monkeypatch.undo()
    assert "2 orphan picture file(s)" in repair("--file-grace", "0")
    assert stored_files() == []


def originals() -> list[str]:
    return [name for name in stored_files() if name.startswith("uploads/")]


def test_day_old_uploads_never_processed_or_refused_go_with_their_bytes_as_sent(repo, alice, r):
    stuck = repo.attachments.begin_upload(alice.id, picture(), at=1000)  # its job lost
    refused = repo.attachments.begin_upload(alice.id, picture(), at=1000)
    repo.media_files.fail(refused.id, "The picture is damaged or cut short.")
    young = repo.attachments.begin_upload(alice.id, picture(), at=1000 + DAY)
    assert len(originals()) == 3

    assert sorted(repo.media_files.sweep_unattached(at=1001 + DAY)) == sorted(
        [stuck.id, refused.id]
    )

    assert not r.exists(keys.image(stuck.id)) and not r.exists(keys.image(refused.id))
    assert originals() == [r.hget(keys.image(young.id), "original")]
    assert r.zrange(keys.user_media(alice.id), 0, -1) == [young.id]


def test_repair_deletes_uploads_kept_as_sent_that_no_picture_names(repo, alice, r):
    from social import media

    waiting = repo.attachments.begin_upload(alice.id, picture())
    stray = media.save_original("0123456789abcdef", picture())  # its hash never written
    for name in originals():
        make_old(name)

    said = repair("--dry-run")

    assert f"file {stray}: no image hash names it" in said
    assert "1 orphan picture file(s), 0 picture(s) without files, 0 picture(s) queued" in said
    assert f"image:{waiting.id}" not in said  # processing: no sizes yet, not an orphan
    repair()
    assert originals() == [r.hget(keys.image(waiting.id), "original")]


def test_repair_queues_again_a_picture_whose_job_was_lost(repo, alice, r):
    from social import work

    # Stored and hashed, but the web process died before queuing its job.
    lost = repo.attachments.begin_upload(alice.id, picture(), at=int(time.time()) - 3600)
    fresh = repo.attachments.begin_upload(alice.id, picture())  # its job may still come
    assert r.xlen(keys.job_stream("media")) == 0

    said = repair("--dry-run")
    assert "1 picture(s) queued again" in said
    assert r.xlen(keys.job_stream("media")) == 0  # a dry run queues nothing
    repair()

    [(_, fields)] = r.xrange(keys.job_stream("media"))
    assert f'"token":"{lost.id}"' in fields["job"]
    assert work.run_pending("media") == 1
    assert r.hget(keys.image(lost.id), "state") == "unattached"  # processed: ready for a post
    assert r.hget(keys.image(fresh.id), "state") == "processing"
