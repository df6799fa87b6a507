"""avatar(), bio() and display_name(): how a person's face and name show on every page.

An account with no avatar gets a generated one for nothing: its initial on one of
HUES colour classes chosen by its id (static/css: `.avatar.hue-N`), a span with text, so no
picture is made or fetched per request and no two neighbours need look alike. A picture's
URL comes from the storage (social/media.py).
"""

from __future__ import annotations

import functools
import re
from types import SimpleNamespace

from markupsafe import Markup, escape

from social import media
from social.templating.links import post_text

HUES = 12
# Characters beyond the Basic Multilingual Plane: most emoji.
ASTRAL = re.compile("[\U00010000-\U0010ffff]")
# Each size a page shows an avatar at (CSS pixels), and the stored size that serves it.
SIZES = {"small": (48, "96"), "large": (120, "400")}


def initial(shown_name: str, username: str) -> str:
    """Return the letter a generated avatar shows: the name's first letter or digit (of
    the display name when it starts with one, else of the username), upper-cased."""
    for text in (shown_name, username):
        for ch in text[:8]:
            if ch.isalnum():
                return ch.upper()
    return "?"


@functools.lru_cache(maxsize=4096)
def avatar(
    user_id: int, username: str, display_name: str = "", token: str = "", size: str = "small"
) -> Markup:
    """Return the avatar of an account: its picture, or its generated initial. Decorative
    (the name is always beside it): empty alt, hidden from screen readers."""
    px, stored = SIZES.get(size, SIZES["small"])
    if token:
        src = media.url("avatar", token, stored)
        return Markup(
            f'<img class="avatar avatar-{size}" src="{escape(src)}" alt="" width="{px}" '
            f'height="{px}" loading="lazy" decoding="async">'
        )
    hue = int(user_id or 0) % HUES
    letter = escape(initial(display_name, username))
    # The letter is drawn by CSS (::before): not part of the page's text, so copying a
    # card or reading a list's text gives the names alone.
    return Markup(
        f'<span class="avatar avatar-{size} avatar-initial hue-{hue}" data-initial="{letter}" '
        'aria-hidden="true"></span>'
    )


def user_avatar(user, size: str = "small") -> Markup:
    """avatar() of a User."""
    return avatar(user.id, user.username, user.display_name, user.avatar, size)


def header_url(user) -> str:
    """Return the URL of user's header picture, or ""."""
    return media.url("header", user.header, "1500") if user.header else ""


def narrow(html: Markup) -> Markup:
    """Return html with its characters beyond the Basic Multilingual Plane (most emoji) as
    character references, which show the same. One such character makes Python hold the
    whole page at 4 bytes a character instead of 2 (or 1): every copy of the page and its
    encoding then cost twice as much (docs/benchmarks.md). For what is rendered once and
    remembered: cards, names."""
    if html.isascii() or not ASTRAL.search(html):
        return html
    return Markup(ASTRAL.sub(lambda found: f"&#{ord(found.group())};", html))


def display_name(name: str) -> Markup:
    """Return a display name as the pages show it (escaped; isolated from the text around
    it, so a right-to-left name does not reorder its neighbours; emoji as references)."""
    return narrow(Markup('<bdi class="display-name">{}</bdi>').format(name)) if name else Markup("")


def bio(user) -> Markup:
    """Return user's bio as HTML: escaped, @mentions and #tags linked as a post's
    (post_text), line breaks kept."""
    if not user.note:
        return Markup("")
    shown = SimpleNamespace(body=user.note, mentions=user.note_mentions, tags=user.note_tags)
    return Markup("<br>").join(post_text(shown).split("\n"))


def person(user, href: str | None = None) -> Markup:
    """Return an account as lists show it: its avatar, display name and @name (linked to
    href, its profile by default)."""
    from social.templating.links import at_link, profile_url

    link = at_link(user.username, profile_url(user.username) if href is None else href)
    shown = display_name(user.display_name)
    if shown:
        shown += Markup(" ")
    return Markup('<span class="person">{}<span class="person-names">{}{}</span></span>').format(
        user_avatar(user), shown, link
    )
