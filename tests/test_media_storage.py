"""Pictures (avatars, headers, posts') in an S3-compatible bucket (MEDIA_STORAGE=s3,
django-storages) against a real S3 endpoint: moto's standalone server, started here on a
free port (tests/s3_server.py). The site's own settings module is run with the S3
environment, so what is tested is what a deployment gets (docs/deploy.md)."""

from __future__ import annotations

import json
import runpy
import urllib.request
from io import StringIO
from pathlib import Path

import boto3
import pytest
from django.core.management import call_command

from social import keys, work
from tests.api import Api, token_for
from tests.s3_server import S3Server
from tests.test_images import picture
from tests.test_profiles import SETTINGS, upload
from tests.test_repository_media import uploaded

BUCKET = "retwis-media"
PUBLIC_READ = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": "*",
            "Action": "s3:GetObject",
            "Resource": f"arn:aws:s3:::{BUCKET}/*",
        }
    ],
}
SETTINGS_MODULE = Path(__file__).resolve().parent.parent / "retwis_site" / "settings.py"


@pytest.fixture(scope="module")
def s3_server():
    server = S3Server().start()
    yield server
    server.stop()


@pytest.fixture
def bucket(s3_server, settings, monkeypatch):
    """The site's settings as MEDIA_STORAGE=s3 makes them, pointed at a fresh bucket."""
    env = {
        "MEDIA_STORAGE": "s3",
        "S3_BUCKET": BUCKET,
        "S3_ENDPOINT_URL": s3_server.url,
        "S3_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    made = runpy.run_path(str(SETTINGS_MODULE))
    for name in [n for n in made if n.startswith("AWS_")] + ["MEDIA_STORAGE"]:
        setattr(settings, name, made[name])
    settings.STORAGES = {**settings.STORAGES, "default": made["STORAGES"]["default"]}
    client = boto3.client(
        "s3", endpoint_url=s3_server.url, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
    )  # fmt: skip
    client.create_bucket(Bucket=BUCKET)
    # What docs/deploy.md asks of an operator: anyone may read the objects (never list).
    client.put_bucket_policy(Bucket=BUCKET, Policy=json.dumps(PUBLIC_READ))
    yield client
    for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        client.delete_object(Bucket=BUCKET, Key=item["Key"])
    client.delete_bucket(Bucket=BUCKET)


def objects(client) -> list[str]:
    return sorted(item["Key"] for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []))


def fetch(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.headers, response.read()  # any case of names


def test_an_avatar_goes_to_the_bucket_and_is_read_back_at_the_url_the_site_gives(
    bucket, s3_server, alice_client, alice, client, r
):
    saved = alice_client.post(SETTINGS, {"avatar": upload(picture("PNG", (500, 300)))})

    assert saved.status_code == 302
    assert [name.split("-")[0] for name in objects(bucket)] == [
        "uploads/" + r.hget(keys.user(alice.id), "avatar_pending")
    ]  # kept as sent, for the worker
    work.run_pending("media")
    token = r.hget(keys.user(alice.id), "avatar")
    assert objects(bucket) == [f"avatars/{token}-400.webp", f"avatars/{token}-96.webp"]
    assert r.hget(keys.image(token), "state") == "live"
    page = client.get("/u/alice/").content.decode()
    url = f"{s3_server.url}/{BUCKET}/avatars/{token}-400.webp"
    assert f'src="{url}"' in page  # the bucket's URL, not the site's /media/
    status, headers, body = fetch(url)
    assert status == 200 and body[:4] == b"RIFF" and body[8:12] == b"WEBP"
    assert headers["Content-Type"] == "image/webp"
    assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert headers["Content-Disposition"] == "inline"
    assert client.get(f"/media/avatars/{token}-96.webp").status_code == 404  # not local


def test_replacing_and_removing_pictures_deletes_their_objects(bucket, alice_client, alice, r):
    alice_client.post(SETTINGS, {"avatar": upload(picture()), "header": upload(picture())})
    work.run_pending("media")
    first = r.hget(keys.user(alice.id), "avatar")
    header = r.hget(keys.user(alice.id), "header")
    assert len(objects(bucket)) == 3

    alice_client.post(SETTINGS, {"avatar": upload(picture("JPEG"), "b.jpg", "image/jpeg")})
    work.run_pending("media")
    second = r.hget(keys.user(alice.id), "avatar")
    assert objects(bucket) == sorted(
        [f"avatars/{second}-400.webp", f"avatars/{second}-96.webp", f"headers/{header}-1500.webp"]
    )
    assert not r.exists(keys.image(first))

    alice_client.post(SETTINGS, {"remove_avatar": "on", "remove_header": "on"})
    assert objects(bucket) == [] and not r.exists(keys.image(second), keys.image(header))


def test_a_post_picture_in_the_bucket_is_read_back_and_goes_with_its_post(
    bucket, s3_server, alice, repo, r
):
    api = Api(token_for(repo, alice))
    media_id = api.post("/api/v2/media", {"file": upload(picture("PNG", (800, 600)))}).json()["id"]
    (original,) = objects(bucket)  # kept as sent until the worker has processed it
    assert original == r.hget(keys.image(media_id), "original")
    kept = bucket.head_object(Bucket=BUCKET, Key=original)
    assert kept["ContentType"] in ("application/octet-stream", "binary/octet-stream")
    work.run_pending("media")
    names = [f"posts/{media_id}-1600.webp", f"posts/{media_id}-640.webp"]
    assert objects(bucket) == names
    status = api.post("/api/v1/statuses", {"status": "look", "media_ids[]": [media_id]}).json()
    (shown,) = status["media_attachments"]
    assert shown["url"] == f"{s3_server.url}/{BUCKET}/{names[0]}"  # the bucket's, not /media/
    assert shown["preview_url"] == f"{s3_server.url}/{BUCKET}/{names[1]}"
    code, headers, body = fetch(shown["url"])
    assert code == 200 and headers["Content-Type"] == "image/webp" and body[:4] == b"RIFF"
    assert headers["Cache-Control"] == "public, max-age=31536000, immutable"

    assert api.delete(f"/api/v1/statuses/{status['id']}").status_code == 200

    assert objects(bucket) == [] and not r.exists(keys.image(media_id))


def test_repair_finds_orphans_in_the_bucket(bucket, alice, repo, r):
    upload, lost = uploaded(repo, alice), uploaded(repo, alice)
    repo.posts.create_post(alice.id, "p", media=[lost.id])  # attached: not swept
    r.delete(keys.image(upload.id))  # its objects: named by nothing
    for size in ("1600", "640"):
        bucket.delete_object(Bucket=BUCKET, Key=f"posts/{lost.id}-{size}.webp")
    out = StringIO()

    call_command("repair", "--file-grace", "0", "--grace", "0", stdout=out)

    assert "2 orphan picture file(s), 1 picture(s) without files" in out.getvalue()
    assert objects(bucket) == [] and not r.exists(keys.image(lost.id))
    assert r.zcard(keys.media_unattached()) == 0
    # A hash deleted by hand leaves its owner's list entry (harmless: the purge skips it).
    assert r.zrange(keys.user_media(alice.id), 0, -1) == [upload.id]
