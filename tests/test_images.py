"""The image pipeline (social/images.py): what it refuses by content, and what it makes."""

from __future__ import annotations

import io
import struct
import time
import zlib

import pytest
from django.utils import translation
from PIL import Image, ImageFile

from social import images


@pytest.fixture(autouse=True)
def in_english():
    """The refusals are translated: these tests read them in English, whatever ran before."""
    with translation.override("en"):
        yield


def picture(fmt: str = "PNG", size=(64, 48), colour=(200, 30, 30), **save) -> bytes:
    out = io.BytesIO()
    mode = "P" if fmt == "GIF" else "RGB"
    image = Image.new("RGB", size, colour)
    if mode == "P":
        image = image.convert("P")
    image.save(out, fmt, **save)
    return out.getvalue()


def png_claiming(
    width: int, height: int, *, bits: int = 8, colour: int = 2, body: int = 0
) -> bytes:
    """A PNG whose header claims width x height (bits a sample, IHDR's colour type: 2 is
    RGB, 6 RGBA) and whose IDAT is `body` bytes of junk (none: a few dozen bytes in all)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        whole = kind + data
        return struct.pack(">I", len(data)) + whole + struct.pack(">I", zlib.crc32(whole))

    header = struct.pack(">IIBBBBB", width, height, bits, colour, 0, 0, 0)
    idat = chunk(b"IDAT", bytes(body)) if body else b""
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + idat + chunk(b"IEND", b"")


def jpeg_claiming(width: int, height: int, length: int) -> bytes:
    """A JPEG cut to `length` bytes whose frame header (SOF0) says width x height: a small
    JPEG's, rewritten, so a decoder would allocate the whole claimed picture."""
    data = bytearray(picture("JPEG", (64, 48)))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    return bytes(data[:length])


def jpeg_with_exif(size=(60, 30), orientation: int = 6) -> bytes:
    """A JPEG whose EXIF says 'rotate 90' and carries GPS coordinates."""
    exif = Image.Exif()
    exif[0x0112] = orientation  # Orientation
    exif[0x8825] = {1: "N", 2: (51.0, 30.0, 0.0), 3: "W", 4: (0.0, 7.0, 0.0)}  # GPSInfo
    exif[0x010F] = "SecretCam"  # Make
    return picture("JPEG", size, exif=exif.tobytes())


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP", "GIF"])
def test_it_keeps_each_format_it_accepts_as_webp_in_every_size(fmt):
    variants = images.process(picture(fmt, (800, 600)), images.AVATAR_SIZES)

    assert [(v.name, v.width, v.height) for v in variants] == [("400", 400, 400), ("96", 96, 96)]
    for variant in variants:
        assert Image.open(io.BytesIO(variant.data)).format == "WEBP"


def test_it_crops_a_header_to_three_by_one_and_never_enlarges_a_shrunk_fit():
    (header,) = images.process(picture("PNG", (3000, 2000)), images.HEADER_SIZES)
    assert (header.width, header.height) == (1500, 500)
    (small,) = images.process(picture("PNG", (100, 50)), (images.Size("big", 1600, 1600),))
    assert (small.width, small.height) == (100, 50)


def test_it_applies_the_orientation_and_drops_exif_and_gps():
    (variant,) = images.process(jpeg_with_exif((60, 30)), (images.Size("big", 1600, 1600),))

    out = Image.open(io.BytesIO(variant.data))
    assert out.size == (30, 60)  # turned upright, then the tag dropped
    assert not out.getexif()
    assert b"SecretCam" not in variant.data and b"Exif" not in variant.data


def test_it_keeps_a_gifs_first_frame_only():
    frames = [Image.new("P", (20, 20), i * 60) for i in range(3)]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:])

    (variant,) = images.process(out.getvalue(), (images.Size("big", 100, 100),))

    assert getattr(Image.open(io.BytesIO(variant.data)), "n_frames", 1) == 1


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "empty"),
        (b"just some text, not a picture", "not a PNG"),
        (b"<html><script>alert(1)</script></html>", "not a PNG"),
        (
            b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
            "not a PNG",
        ),
        (b"%PDF-1.4 a document", "not a PNG"),
        (b"GIF89a" + b"\x00" * 5, "not a PNG"),  # a GIF's magic and nothing after
    ],
    ids=["empty", "text", "html", "svg", "pdf", "gif-magic-only"],
)
def test_it_refuses_what_is_not_a_picture_by_its_content(data, message):
    with pytest.raises(images.ImageRefused, match=message):
        images.process(data, images.AVATAR_SIZES)


def test_it_refuses_a_format_outside_the_four_even_when_pillow_reads_it():
    out = io.BytesIO()
    Image.new("RGB", (10, 10)).save(out, "BMP")
    with pytest.raises(images.ImageRefused, match="not a PNG"):
        images.process(out.getvalue(), images.AVATAR_SIZES)


def noisy_png() -> bytes:
    """A 300 x 300 PNG that compresses badly (so half of it is half its pixels)."""
    noise = bytes((i * 7919) % 251 for i in range(300 * 300 * 3))
    out = io.BytesIO()
    Image.frombytes("RGB", (300, 300), noise).save(out, "PNG")
    return out.getvalue()


def test_it_refuses_a_truncated_file():
    whole = noisy_png()

    with pytest.raises(images.ImageRefused, match="damaged or cut short"):
        images.process(whole[: len(whole) // 2], images.AVATAR_SIZES)


def test_it_refuses_a_decompression_bomb_from_its_header_quickly():
    bomb = png_claiming(50_000, 50_000)
    assert len(bomb) < 100

    started = time.monotonic()
    with pytest.raises(images.ImageRefused, match="too many pixels"):
        images.process(bomb, images.AVATAR_SIZES)
    assert time.monotonic() - started < 1


def test_it_refuses_just_over_forty_megapixels_and_a_file_over_ten_megabytes():
    with pytest.raises(images.ImageRefused, match="too many pixels"):
        images.open_checked(png_claiming(8000, 5001))
    exactly = png_claiming(8000, 5000, body=5000 * 24001 // 1032)  # 40 MP, as small as can be
    assert images.inspect(exactly) == images.Header("PNG", 8000, 5000, 3, 8)  # nothing decoded
    with pytest.raises(images.ImageRefused, match="over 10 MB"):
        images.process(b"\x89PNG" + b"\x00" * images.MAX_BYTES, images.AVATAR_SIZES)


def test_a_posts_large_jpeg_is_decoded_scaled_down_upright_and_without_exif():
    variants, blurhash = images.process_with_blurhash(
        jpeg_with_exif(size=(3400, 1000), orientation=6), images.POST_SIZES
    )
    assert [(v.name, v.width, v.height) for v in variants] == [
        ("1600", 471, 1600), ("640", 188, 640)
    ]  # fmt: skip
    assert len(blurhash) == 28
    for variant in variants:
        kept = Image.open(io.BytesIO(variant.data))
        assert kept.format == "WEBP" and not kept.getexif()


@pytest.fixture
def no_decoding(monkeypatch):
    """Make decoding any pixel fail the test: refusals must come from the header alone."""

    def load(self):
        raise AssertionError("a picture was decoded")

    monkeypatch.setattr(ImageFile.ImageFile, "load", load)


def test_a_16_bit_picture_within_the_pixel_limit_is_refused_by_its_decoded_bytes(no_decoding):
    # The attack: 6,300 x 6,300 (39.7 MP, under 40) 16-bit RGB, 309 KB: 238 MB
    # decoded. The same picture at 8 bits (119 MB) passes the header check.
    deep = png_claiming(6300, 6300, bits=16, body=309 * 1024)
    with pytest.raises(images.ImageRefused, match="too big to process"):
        images.process(deep, images.POST_SIZES)
    with pytest.raises(images.ImageRefused, match="too big to process"):
        images.inspect(png_claiming(5000, 4500, bits=16, colour=6, body=200_000))
    header = images.inspect(png_claiming(6300, 6300, bits=8, body=309 * 1024))
    assert header.decoded_bytes == 6300 * 6300 * 3 <= images.MAX_DECODED_BYTES


def test_a_file_smaller_than_its_pixels_allow_is_refused_before_decoding(no_decoding):
    # The 693-byte JPEG whose header says 6,300 x 6,300: decoded as 40 MP before.
    with pytest.raises(images.ImageRefused, match="damaged or cut short"):
        images.process(jpeg_claiming(6300, 6300, 693), images.POST_SIZES)
    with pytest.raises(images.ImageRefused, match="damaged or cut short"):
        images.inspect(png_claiming(6000, 6000, body=10_000))  # needs 104,657 bytes
    screen = bytearray(picture("GIF", (4, 4)))
    screen[6:10] = struct.pack("<HH", 6000, 6000)  # a 4 x 4 frame on a 36 MP screen
    with pytest.raises(images.ImageRefused, match="damaged or cut short"):
        images.inspect(bytes(screen))


def one_colour(fmt: str, **save) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (2000, 2000), (10, 120, 200)).save(out, fmt, **save)
    return out.getvalue()


@pytest.mark.parametrize(
    "fmt, save",
    [
        ("PNG", {"optimize": True}),
        ("JPEG", {"optimize": True, "progressive": True, "quality": 1}),
        ("WEBP", {"quality": 0, "method": 6}),
        ("WEBP", {"lossless": True, "method": 6}),
        ("GIF", {}),
    ],
    ids=["png", "jpeg", "webp-lossy", "webp-lossless", "gif"],
)
def test_the_smallest_files_encoders_write_pass_the_floor(fmt, save):
    data = one_colour(fmt, **save)  # one colour: as well as each format compresses
    header = images.inspect(data)
    assert (header.format, header.width, header.height) == (fmt, 2000, 2000)
    assert len(data) >= images.least_bytes(header, data)
