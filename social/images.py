"""The one image pipeline: uploaded bytes in, clean re-encoded pictures out, or ImageRefused.

Two steps. inspect() reads the header only (cheap: what a page request may do once the
upload is counted): the kind is told by the bytes (Pillow's decoders for PNG, JPEG, WebP and
GIF only: never the file's name or the type the client claims, so SVG, HTML and anything
else is refused), then the pixels (MAX_PIXELS), the bytes they take decoded
(MAX_DECODED_BYTES: 16-bit samples count double) and whether the file is big enough to
hold them (PIXELS_A_BYTE: a truncated or forged file) are checked before a pixel is
decoded. process() (the worker's: social/work_handlers/media.py) checks again, decodes,
applies the orientation the camera wrote, drops every piece of metadata (EXIF, GPS, ICC,
comments, text chunks) by re-encoding only the pixels, and makes each wanted size. A GIF
keeps its first frame only. Nothing is written anywhere: the caller stores the Variants
(social/media.py).
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

import blurhash as blurhash_codec
from django.utils.translation import gettext_lazy as _
from PIL import Image, ImageOps, PngImagePlugin, UnidentifiedImageError

MAX_BYTES = 10 * 1024 * 1024  # an upload's size
MAX_PIXELS = 40_000_000  # width x height, checked from the header before decoding
# What decoding may cost, from the header: width x height x bands x bytes a sample. Any
# 8-bit picture within MAX_PIXELS fits (RGBA: 4 bytes a pixel); 16-bit samples count double,
# so a 6,300 x 6,300 16-bit RGB PNG (238 MB decoded, from a 309 KB file) is refused unread.
MAX_DECODED_BYTES = MAX_PIXELS * 4
# The fewest pixels one byte of a well-formed file can hold, per format (a file smaller than
# its pixels allow is cut short or forged: refused before a decoder allocates the picture):
# - PNG: deflate expands at most 1032 to 1 (a 258-byte match in 2 bits), so the file holds
#   at least its raw rows (one filter byte each) / 1032: PNG_RATIO, applied to the rows.
# - JPEG: Huffman coding spends at least one bit on every 8 x 8 block (its DC code), and the
#   fullest component has a block per 64 pixels: at most 512 pixels a byte. (Arithmetic
#   coding can do better; no camera or browser writes it, so such a file is refused.)
# - WebP, lossy: each 16 x 16 macroblock codes its modes with a key frame's fixed
#   probabilities, about 2.8 bits (about 740 pixels a byte): 2,048 leaves room. Lossless
#   WebP has no such floor (a one-colour picture is a few hundred bytes whatever its size):
#   only MAX_DECODED_BYTES bounds it.
# - GIF: LZW codes are at most 12 bits and stand for at most 4,096 pixels: 4,096 (the
#   logical screen counts: a tiny frame on a huge screen is refused too).
PNG_RATIO = 1032
PIXELS_A_BYTE = {"JPEG": 512, "WEBP": 2048, "GIF": 4096}
# Only these decoders are ever tried: Pillow would otherwise guess among dozens of formats
# (some of them with a history of decoder bugs) from the first bytes.
FORMATS = ("PNG", "JPEG", "WEBP", "GIF")
MIME_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")  # the same, as types
# Pillow's own guard (DecompressionBombError past twice this) as a second line behind ours.
Image.MAX_IMAGE_PIXELS = MAX_PIXELS
# Reading a PNG's header inflates its text chunks (up to 64 MiB by default): metadata we
# drop anyway, so a page request reading the header pays for 2 MiB of it at most.
PngImagePlugin.MAX_TEXT_MEMORY = 2 * 1024 * 1024
OUTPUT_FORMAT = "WEBP"
OUTPUT_EXTENSION = "webp"
OUTPUT_QUALITY = 85
TOO_BIG_TO_DECODE = _("The picture is too big to process (40 megapixels; fewer at 16 bits).")
PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # IHDR colour type: samples a pixel


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


@dataclass(frozen=True)
class Header:
    """What a picture's header says, before any pixel is decoded: its format, size, bands
    (samples a pixel) and bits a sample."""

    format: str
    width: int
    height: int
    bands: int
    bits: int = 8

    @property
    def decoded_bytes(self) -> int:
        """The bytes its pixels take decoded (16-bit samples: two bytes each)."""
        return self.width * self.height * self.bands * (2 if self.bits > 8 else 1)


def opened(data: bytes) -> tuple[Image.Image, Header]:
    """Return the image in data, header read but no pixel decoded, and its Header; raise
    ImageRefused when the file is too big or empty, not a picture of FORMATS, claims too
    many pixels or decoded bytes, or is smaller than its pixels allow (cut short)."""
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
    header = header_of(image, data)
    if header.decoded_bytes > MAX_DECODED_BYTES:
        raise refuse(TOO_BIG_TO_DECODE)
    if len(data) < least_bytes(header, data):
        raise refuse(_("The picture is damaged or cut short."))
    return image, header


def inspect(data: bytes) -> Header:
    """Return the Header of the picture in data, decoding nothing; raise ImageRefused as
    opened() does. Cheap (the header only): what a page request may do with an upload."""
    return opened(data)[1]


def open_checked(data: bytes) -> Image.Image:
    """Return the image in data, header read but no pixel decoded yet (see opened)."""
    return opened(data)[0]


def header_of(image: Image.Image, data: bytes) -> Header:
    """Return the Header of an opened image: a PNG's bands and bits from its IHDR (Pillow
    reads 16-bit RGB as 8-bit "RGB"), the others' from Pillow's mode (8 bits a sample)."""
    assert image.format is not None  # opened with one of FORMATS
    width, height = image.size
    if image.format == "PNG" and data[12:16] == b"IHDR":
        bits, colour = data[24], data[25]
        return Header("PNG", width, height, PNG_CHANNELS.get(colour, 4), max(1, bits))
    return Header(image.format, width, height, len(image.getbands()))


def least_bytes(header: Header, data: bytes) -> int:
    """Return the fewest bytes a well-formed file of header's pixels can take (see
    PIXELS_A_BYTE; 0 where the format has no floor)."""
    if header.format == "PNG":
        row = 1 + -(-header.width * header.bands * header.bits // 8)
        return header.height * row // PNG_RATIO
    if header.format == "WEBP" and webp_codec(data) != b"VP8 ":
        return 0  # lossless, or an animation's frame: no floor
    return header.width * header.height // PIXELS_A_BYTE.get(header.format, MAX_PIXELS)


def webp_codec(data: bytes) -> bytes:
    """Return the kind of a WebP's first image chunk: b"VP8 " (lossy), b"VP8L" (lossless),
    b"ANMF" (an animation's frame), or b"" when there is none."""
    at = 12
    while at + 8 <= len(data):
        kind = data[at : at + 4]
        if kind in (b"VP8 ", b"VP8L", b"ANMF"):
            return kind
        size = int.from_bytes(data[at + 4 : at + 8], "little")
        at += 8 + size + (size & 1)
    return b""


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


def process(data: bytes, sizes: tuple[Size, ...]) -> list[Variant]:
    """Return the picture in data in each of sizes; raise ImageRefused (its message is for
    the person who sent it) for what is not a picture the site keeps. Decodes: the
    worker's to call (social/work_handlers/media.py), never a page request's."""
    return variants_of(decode(data, fit=max(max(s.width, s.height) for s in sizes)), sizes)


def process_with_blurhash(data: bytes, sizes: tuple[Size, ...]) -> tuple[list[Variant], str]:
    """Return what process() returns and the picture's blurhash (from a 32 px copy: the
    pure-Python encoder costs a few milliseconds there). sizes: shrunk to fit, largest
    first: each is made from the one before (cheaper than from the original)."""
    image = decode(data, fit=max(max(size.width, size.height) for size in sizes))
    variants: list[Variant] = []
    for size in sizes:
        image = resized(image, size)
        if variants and (variants[-1].width, variants[-1].height) == image.size:
            encoded = variants[-1].data  # a picture smaller than both: encoded once
        else:
            encoded = encode(image)
        variants.append(Variant(size.name, image.width, image.height, encoded))
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
