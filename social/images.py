"""The one image pipeline: uploaded bytes in, clean re-encoded pictures out, or ImageRefused.

Every picture the site keeps (avatars and headers now; pictures in posts later) goes
through process(): the kind is told by the bytes (Pillow's decoders for PNG, JPEG, WebP and
GIF only: never the file's name or the type the client claims, so SVG, HTML and anything
else is refused), the size is read from the header and checked before a pixel is decoded
(a 50,000 x 50,000 PNG of a few hundred bytes is refused without allocating 7 GB), the
orientation the camera wrote is applied and then every piece of metadata (EXIF, GPS, ICC
comments, text chunks) dropped by re-encoding only the pixels, and each wanted size is
made from that. A GIF keeps its first frame only. Nothing is written anywhere: the caller
stores the Variants (social/media.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import blurhash as blurhash_codec
from django.conf import settings
from django.utils.translation import gettext_lazy as _
from PIL import Image, ImageOps, UnidentifiedImageError

MAX_BYTES = 10 * 1024 * 1024  # an upload's size
MAX_PIXELS = 40_000_000  # width x height, checked from the header before decoding
# Only these decoders are ever tried: Pillow would otherwise guess among dozens of formats
# (some of them with a history of decoder bugs) from the first bytes.
FORMATS = ("PNG", "JPEG", "WEBP", "GIF")
MIME_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")  # the same, as types
# Pillow's own guard (DecompressionBombError past twice this) as a second line behind ours.
Image.MAX_IMAGE_PIXELS = MAX_PIXELS
OUTPUT_FORMAT = "WEBP"
OUTPUT_EXTENSION = "webp"
OUTPUT_QUALITY = 85


class ImageRefused(ValueError):
    """The upload is not a picture the site keeps; str() is the message to show."""


@dataclass(frozen=True)
class Size:
    """One wanted variant: its name, the box it fits in, and whether it is cropped to fill
    the box exactly (an avatar: square) or only shrunk to fit inside it."""

    name: str
    width: int
    height: int
    crop: bool = False


@dataclass(frozen=True)
class Variant:
    """One re-encoded picture: the Size's name, its pixel size and its bytes (WebP)."""

    name: str
    width: int
    height: int
    data: bytes
    content_type: str = "image/webp"
    extension: str = OUTPUT_EXTENSION


# The sizes each kind of picture is kept in.
AVATAR_SIZES = (Size("400", 400, 400, crop=True), Size("96", 96, 96, crop=True))
HEADER_SIZES = (Size("1500", 1500, 500, crop=True),)
# A post's picture: fitted into 1,600 px (the full size) and 640 px (the card's preview).
POST_SIZES = (Size("1600", 1600, 1600), Size("640", 640, 640))
SIZES = {"avatar": AVATAR_SIZES, "header": HEADER_SIZES, "post": POST_SIZES}
BLURHASH_COMPONENTS = (4, 3)  # Mastodon's


def refuse(message) -> ImageRefused:
    return ImageRefused(str(message))


def open_checked(data: bytes) -> Image.Image:
    """Return the image in data, header read but no pixel decoded yet; raise ImageRefused
    when it is too big, not a picture of FORMATS, or claims too many pixels."""
    if len(data) > MAX_BYTES:
        raise refuse(_("The picture is over 10 MB."))
    if not data:
        raise refuse(_("The file is empty."))
    try:
        with warnings.catch_warnings():
            # Between MAX_PIXELS and twice it Pillow only warns: we refuse below instead.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=FORMATS)
    except Image.DecompressionBombError:
        raise refuse(_("The picture has too many pixels (at most 40 megapixels).")) from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        raise refuse(_("This is not a PNG, JPEG, WebP or GIF picture.")) from None
    width, height = image.size
    if width < 1 or height < 1 or width * height > MAX_PIXELS:
        raise refuse(_("The picture has too many pixels (at most 40 megapixels)."))
    return image


def decode(data: bytes, fit: int | None = None) -> Image.Image:
    """Return the picture in data decoded (its first frame), upright, in RGB or RGBA, with
    nothing of its metadata; raise ImageRefused for anything else (see open_checked).
    fit: the largest side wanted after, so a JPEG may be decoded at 1/2, 1/4 or 1/8 of its
    size (its decoder's own scaling: a 35-megapixel photo decodes in a fraction of the
    time and memory)."""
    image = open_checked(data)
    try:
        if fit is not None and image.format == "JPEG":
            image.draft("RGB", (fit, fit))
        image.seek(0)  # a GIF's (or animated WebP's) first frame
        image.load()  # decodes every pixel: a truncated file fails here
        upright = ImageOps.exif_transpose(image)
    except Image.DecompressionBombError:
        raise refuse(_("The picture has too many pixels (at most 40 megapixels).")) from None
    except (OSError, ValueError, SyntaxError, EOFError, IndexError):
        raise refuse(_("The picture is damaged or cut short.")) from None
    if upright is None:  # exif_transpose returns None only with in_place=True
        upright = image
    mode = (
        "RGBA" if upright.mode in ("RGBA", "LA", "PA") or "transparency" in upright.info else "RGB"
    )
    # A new image of the pixels alone: no EXIF, GPS, ICC, comments or text chunks survive.
    clean = Image.new(mode, upright.size)
    clean.paste(upright.convert(mode))
    return clean


def resized(image: Image.Image, size: Size) -> Image.Image:
    """Return image fitted to size: cropped to fill it (centred), or shrunk to fit inside
    it (never enlarged)."""
    if size.crop:
        return ImageOps.fit(image, (size.width, size.height), Image.Resampling.LANCZOS)
    copy = image.copy()
    copy.thumbnail((size.width, size.height), Image.Resampling.LANCZOS)
    return copy


def encode(image: Image.Image) -> bytes:
    """Return image as WebP bytes (no metadata: the image carries none)."""
    out = io.BytesIO()
    image.save(out, OUTPUT_FORMAT, quality=OUTPUT_QUALITY, method=4)
    return out.getvalue()


class ImageBusy(ImageRefused):
    """Every processing slot of this machine is taken: try again in a moment."""


def slot_count() -> int:
    """Return how many pictures this machine processes at once: IMAGE_SLOTS, else one
    fewer than the web workers (WEB_WORKERS, else one per core), at least one, so that
    uploads never hold every worker and pages keep one (docs/benchmarks.md, Uploads)."""
    configured = settings.IMAGE_SLOTS
    if configured:
        return int(configured)
    workers = os.environ.get("WEB_WORKERS", "")
    count = int(workers) if workers.isdigit() and int(workers) > 0 else os.cpu_count() or 1
    return max(1, count - 1)


@contextmanager
def processing_slot() -> Iterator[None]:
    """Hold one of this machine's processing slots (an exclusive lock on one of
    slot_count() files, shared by every process serving the same MEDIA_ROOT) for the
    block; raise ImageBusy at once when all are held. A process that dies frees its lock."""
    folder = Path(tempfile.gettempdir()) / "retwis-image-slots"
    folder.mkdir(exist_ok=True)
    site = hashlib.sha256(str(settings.MEDIA_ROOT).encode()).hexdigest()[:12]
    for number in range(slot_count()):
        handle = open(folder / f"{site}-{number}.lock", "a+b")  # noqa: SIM115
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
        return
    raise ImageBusy(str(_("Many pictures are being processed right now: try again in a moment.")))


def process(data: bytes, sizes: tuple[Size, ...]) -> list[Variant]:
    """Return the picture in data in each of sizes; raise ImageRefused (its message is for
    the person who sent it) for what is not a picture the site keeps, ImageBusy when the
    machine's processing slots are all taken."""
    with processing_slot():
        return variants_of(decode(data), sizes)


def process_with_blurhash(data: bytes, sizes: tuple[Size, ...]) -> tuple[list[Variant], str]:
    """Return what process() returns and the picture's blurhash (from a 32 px copy: the
    pure-Python encoder costs a few milliseconds there). sizes: shrunk to fit, largest
    first: each is made from the one before (cheaper than from the original)."""
    with processing_slot():
        image = decode(data, fit=max(max(size.width, size.height) for size in sizes))
        variants = []
        for size in sizes:
            image = resized(image, size)
            variants.append(Variant(size.name, image.width, image.height, encode(image)))
        return variants, blurhash_of(image)


def variants_of(image: Image.Image, sizes: tuple[Size, ...]) -> list[Variant]:
    """Return image (decoded) re-encoded in each of sizes."""
    variants = []
    for size in sizes:
        made = resized(image, size)
        variants.append(Variant(size.name, made.width, made.height, encode(made)))
    return variants


def blurhash_of(image: Image.Image) -> str:
    """Return the blurhash of image (its colours only: alpha is dropped)."""
    small = image.convert("RGB")
    small.thumbnail((32, 32), Image.Resampling.BILINEAR)
    width, height = small.size
    raw = small.tobytes()
    rows = [
        [list(raw[(y * width + x) * 3 : (y * width + x) * 3 + 3]) for x in range(width)]
        for y in range(height)
    ]
    return str(blurhash_codec.encode(rows, *BLURHASH_COMPONENTS))


def read_upload(upload) -> bytes:
    """Return the bytes of an uploaded file (Django's UploadedFile), refusing one over
    MAX_BYTES before reading it whole."""
    if upload.size is None or upload.size > MAX_BYTES:
        raise refuse(_("The picture is over 10 MB."))
    upload.seek(0)
    return upload.read(MAX_BYTES + 1)
