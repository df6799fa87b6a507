"""Pictures and ports the upload benches share (bench/media_jobs.py, bench/attack.py)."""

from __future__ import annotations

import io
import random
import sys
from pathlib import Path

from PIL import Image, ImageFilter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.redis_server import port_is_free  # noqa: E402

MAX_BYTES = 10 * 1024 * 1024


def quiet_port() -> int:
    """Return a free port below the ephemeral range whose next port is free too: a port
    free_port() picks can be taken as an outgoing connection's own before the site binds
    it (the streaming server on PORT + 1 then fails, and scripts/launch.py stops the
    site: seen on this busy machine)."""
    while True:
        port = random.randrange(20000, 32000)
        if port_is_free(port) and port_is_free(port + 1):
            return port


def noise_png() -> bytes:
    """A PNG of random pixels just under 10 MB (noise does not compress)."""
    width, height = 1900, 1830
    data = Image.frombytes("RGB", (width, height), random.randbytes(width * height * 3))
    out = io.BytesIO()
    data.save(out, "PNG", compress_level=1)
    return out.getvalue()


def big_jpeg() -> bytes:
    """A JPEG of 36 megapixels, photo-like (smooth shapes and grain), just under 10 MB."""
    width, height = 7200, 5000
    small = Image.frombytes("RGB", (180, 125), random.randbytes(180 * 125 * 3))
    image = small.resize((width, height), Image.Resampling.BICUBIC).filter(
        ImageFilter.GaussianBlur(2)
    )
    grain = Image.frombytes("L", (width, height), random.randbytes(width * height))
    image = Image.blend(image, Image.merge("RGB", (grain, grain, grain)), 0.11)
    best = b""
    for quality in (95, 90, 85, 80, 75, 70, 60, 50):
        out = io.BytesIO()
        image.save(out, "JPEG", quality=quality)
        best = out.getvalue()
        if len(best) <= MAX_BYTES - 64 * 1024:
            break
    return best
