"""Where pictures' bytes live: Django's storage API (STORAGES["default"]: files under
MEDIA_ROOT, or an S3-compatible bucket with MEDIA_STORAGE=s3; docs/deploy.md), and the view
that serves the local files.

A picture is a token (16 random hex digits) and one file per size, named
`<kind>s/<token>-<size>.webp`: names are never reused, so a file never changes and is served
with far-future caching. Only the re-encoded output of social/images.py is ever stored
(WebP), and only names of that shape are ever served, always as image/webp with `nosniff`:
nothing a person uploads can come back as HTML or script. What each picture is (owner,
kind, sizes) is in Redis (keys.image, repository/accounts/profiles.py).

An upload is kept as sent under `uploads/` (save_original) until the worker has made its
sizes (social/work_handlers/media.py); page requests never decode a picture.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.http import FileResponse, Http404, HttpRequest

from social import keys
from social.images import SIZES, Variant

KINDS = ("avatar", "header")  # a profile's pictures; a post's are of kind "post"
NAME_RE = re.compile(rf"(avatar|header|post)s/({keys.IMAGE_TOKEN_RE})-(\d{{1,4}})\.webp")
ORIGINALS = "uploads"  # uploads as sent, until processed (save_original)
ORIGINAL_RE = re.compile(rf"{ORIGINALS}/({keys.IMAGE_TOKEN_RE})-[0-9a-f]{{16}}")


def new_token() -> str:
    """Return a fresh picture token (64 random bits: names are never guessed or reused)."""
    return secrets.token_hex(8)


def file_name(kind: str, token: str, size: str) -> str:
    """Return the storage name of one size of a picture."""
    return f"{kind}s/{token}-{size}.webp"


def file_names(kind: str, token: str) -> list[str]:
    """Return the storage names of every size of a picture of kind."""
    return [file_name(kind, token, size.name) for size in SIZES[kind]]


def save(kind: str, token: str, variants: Iterable[Variant], *, replace: bool = False) -> list[str]:
    """Store each variant of a picture; return the names written. On a failure part way,
    delete what was written and raise (nothing is left behind). replace: a file of the
    same name is deleted first (a job run again after its worker died part way: the picture
    is not ready, so nothing shows that file yet)."""
    storage = storages["default"]
    written: list[str] = []
    try:
        for variant in variants:
            name = file_name(kind, token, variant.name)
            if replace and storage.exists(name):
                storage.delete(name)
            saved = storage.save(name, ContentFile(variant.data))
            written.append(saved)
            if saved != name:  # a name taken (never, with random tokens): not ours to serve
                raise OSError(f"storage renamed {name} to {saved}")
    except Exception:
        delete_names(written)
        raise
    return written


def delete(kind: str, token: str) -> None:
    """Delete every file of a picture (those already gone are skipped)."""
    delete_names(file_names(kind, token))


def delete_names(names: Iterable[str]) -> None:
    storage = storages["default"]
    for name in names:
        storage.delete(name)


def exists(kind: str, token: str) -> bool:
    """Return whether any file of a picture is stored."""
    storage = storages["default"]
    return any(storage.exists(name) for name in file_names(kind, token))


def save_original(token: str, data: bytes) -> str:
    """Store an upload's bytes as sent, for the worker to process; return its name,
    `uploads/<token>-<16 random hex digits>`. Never served (NAME_RE), and not guessable
    from the picture's token (its uploader knows that): a public bucket does not hand it
    out either. Deleted once the picture is processed (or refused)."""
    name = f"{ORIGINALS}/{token}-{secrets.token_hex(8)}"
    saved = storages["default"].save(name, ContentFile(data))
    if saved != name:  # a name taken (never, with random names): not ours to read
        storages["default"].delete(saved)
        raise OSError(f"storage renamed {name} to {saved}")
    return name


def read_original(name: str, most: int) -> bytes:
    """Return the bytes of a stored upload (at most `most` + 1: the caller refuses more);
    raise FileNotFoundError when it is gone."""
    if not ORIGINAL_RE.fullmatch(name):
        raise FileNotFoundError(name)
    with storages["default"].open(name, "rb") as handle:
        return handle.read(most + 1)


def url(kind: str, token: str, size: str) -> str:
    """Return the URL of one size of a picture (the storage's: MEDIA_URL, or the bucket's)."""
    return storages["default"].url(file_name(kind, token, size))


def serve(request: HttpRequest, name: str) -> FileResponse:
    """Serve a stored picture from local storage: only names of our own shape, as WebP,
    cached for a year, never sniffed into something else."""
    if not NAME_RE.fullmatch(name) or settings.MEDIA_STORAGE != "local":
        raise Http404
    storage = storages["default"]
    try:
        handle = storage.open(name, "rb")
    except (FileNotFoundError, IsADirectoryError):
        raise Http404 from None
    response = FileResponse(handle, content_type="image/webp")
    response["Cache-Control"] = settings.MEDIA_CACHE_CONTROL
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Disposition"] = "inline"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    # One file for every reader: no `Vary: Accept-Language` (LocaleMiddleware), which would
    # make a CDN keep a copy of an immutable file per language asked for.
    response.same_in_every_language = True  # type: ignore[attr-defined]
    return response
