"""Generated avatars for the client API: an account without an uploaded picture gets its
initial in white on its colour, the picture the site's pages draw with CSS for it
(social/templating/faces.py: the initial, and the hue by its id), as a PNG file, so an app
shows a page of distinct faces instead of one grey circle a row.

One picture per (hue, letter), made with Pillow the first time a process is asked for it
and kept (PICTURES_KEPT, a few KB each); its URL names both, so it never changes and is
served to be kept for a year by the browser and any cache on the way. Nothing is stored
and Redis is never asked: the URL is built from the account the response already read.

The letter is drawn with the first font here that has it (FONTS: DejaVu Sans Bold and the
CJK fonts Debian packages, when installed; else Pillow's own, ASCII only). A letter no
font has falls back to its base letter ("É": "E"), then to the username's initial, then
"?": the picture then differs from the page's, but is never a box for a missing glyph.
"""

from __future__ import annotations

import io
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from PIL import Image, ImageDraw, ImageFont

from social.templating.faces import HUES, initial

# The hues of static/css/site.css's `.hue-N` (tests/test_api_avatars.py holds them equal).
PALETTE = (
    "#b42318", "#9a4a05", "#1e6b3c", "#0f6570", "#1a56db", "#5b3fc4",
    "#9d174d", "#7a4a10", "#3f6212", "#155e75", "#4338ca", "#5d6678",
)  # fmt: skip
assert len(PALETTE) == HUES
SIZE = 400  # pixels a side: Mastodon's avatars are 400 x 400
LETTER = 0.45  # the letter's size, of the side (the pages' .avatar-large is 2.6rem on 96px)
PICTURES_KEPT = 512
FONTS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
)
CODE_RE = re.compile(r"[0-9a-f]{1,6}")
MAX_AGE = 365 * 24 * 3600


@lru_cache(maxsize=1)
def fonts() -> tuple[ImageFont.FreeTypeFont | ImageFont.ImageFont, ...]:
    """The fonts found here, in FONTS' order, then Pillow's own."""
    found: list[ImageFont.FreeTypeFont | ImageFont.ImageFont] = []
    size = int(SIZE * LETTER)
    for path in FONTS:
        if Path(path).is_file():
            try:
                found.append(ImageFont.truetype(path, size))
            except OSError:  # not a font Pillow reads: the next one
                continue
    found.append(ImageFont.load_default(size))
    return tuple(found)


def _shape(font, text: str) -> tuple[tuple[int, int], bytes]:
    mask = font.getmask(text)
    return mask.size, bytes(mask)


@lru_cache(maxsize=4096)
def font_for(letter: str) -> int | None:
    """The index in fonts() of the first font that has letter's glyph, or None. A glyph
    a font lacks is drawn as its "missing" box, the same as for a character no font has."""
    for n, font in enumerate(fonts()):
        if _shape(font, letter) != _shape(font, "\U0010fffd"):
            return n
    return None


def drawn_letter(display_name: str, username: str) -> str:
    """The letter the API's picture shows: the pages' initial (faces.initial; its first
    character, "ß" being "SS" upper-cased), else the first that some font can draw."""
    shown = initial(display_name, username)[:1]
    base = unicodedata.normalize("NFKD", shown)[:1].upper()
    for letter in (shown, base, initial("", username)[:1], "?"):
        if letter and font_for(letter) is not None:
            return letter
    return "?"


@lru_cache(maxsize=4096)
def avatar_path(user_id: int, display_name: str, username: str) -> str:
    """The path of an account's generated picture."""
    letter = drawn_letter(display_name, username)
    hue = int(user_id or 0) % HUES
    return reverse("api:initial_avatar", args=[f"{hue}-{ord(letter):x}"])


@lru_cache(maxsize=PICTURES_KEPT)
def picture(hue: int, letter: str) -> bytes:
    """The PNG of letter in white on PALETTE[hue], SIZE pixels square (apps crop it to
    their own shape)."""
    image = Image.new("RGB", (SIZE, SIZE), PALETTE[hue])
    draw = ImageDraw.Draw(image)
    n = font_for(letter)
    font = fonts()[n if n is not None else -1]
    bold = max(1, SIZE // 60) if n == len(fonts()) - 1 else 0  # Pillow's own is regular
    draw.text(
        (SIZE / 2, SIZE / 2), letter, fill="#ffffff", font=font, anchor="mm",
        stroke_width=bold, stroke_fill="#ffffff",
    )  # fmt: skip
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue()


def initial_avatar(request: HttpRequest, face: str) -> HttpResponse:
    """GET /avatars/initial/<hue>-<code>.png: the picture of the letter whose code point
    is `code` (hexadecimal) on colour `hue`; 404 for a hue or a letter no account shows."""
    if request.method not in ("GET", "HEAD"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD"})
    hue, _, code = face.partition("-")
    number = int(hue) if hue.isascii() and hue.isdigit() and len(hue) <= 2 else HUES
    point = int(code, 16) if CODE_RE.fullmatch(code) else -1
    if number >= HUES or not 0 < point < 0x110000 or 0xD800 <= point < 0xE000:
        raise Http404("No such picture.")
    letter = chr(point)
    if not (letter.isalnum() or letter == "?") or font_for(letter) is None:
        raise Http404("No such picture.")
    response = HttpResponse(picture(number, letter), content_type="image/png")
    response["Cache-Control"] = f"public, max-age={MAX_AGE}, immutable"
    response["Access-Control-Allow-Origin"] = "*"  # apps' web clients draw it elsewhere
    response["Cross-Origin-Resource-Policy"] = "cross-origin"
    return response
