"""Another server's posts on our pages: remote_html(post), the post's HTML as its card
shows it, and remote_domain(url), the server a link goes to ("View on <domain>").

A remote post's HTML was sanitised when it was stored (social/federation/sanitise.py:
Mastodon's allowed tags, classes and schemes, by nh3), so it is shown as it is, and only
for a post whose author is another server's account (loading.py builds Post.remote for
no other); a local post's text is escaped and linked by links.post_text. Re-sanitising on
every render would cost a parse per card for nothing: nothing but the inbox writes the
field, always through sanitise().

Two kinds of link are made ours, using only what the post holds (nothing is looked up):
a hashtag whose tag the post carries (post.tags) goes to our tag page, and a link to this
site (a mention of a local account, which its server links to our profile) loses the
new-tab target the sanitiser gives links elsewhere. A mention of another server's account
keeps its link there, as Mastodon's HTML does.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape, unescape
from urllib.parse import urlsplit

from django.conf import settings
from markupsafe import Markup

from social.federation.names import url_domain
from social.text import normal_tag

from .links import profile_url, script_prefix, tag_url

# In nh3's output every "<" and ">" inside an attribute value is escaped and links do not
# nest, so a link is this (attribute values in double quotes, `"` written &quot;).
_LINK = re.compile(r"<a ([^>]*)>(.*?)</a>", re.DOTALL)
_HREF = re.compile(r'(?:^| )href="([^"]*)"')
_CLASS = re.compile(r'(?:^| )class="([^"]*)"')
_TAG = re.compile(r"<[^>]*>")
_ACTOR_PATH = re.compile(r"/ap/users/([0-9]{1,19})")  # our actor's address (documents.py)


def remote_html(post) -> Markup:
    """Return post's stored HTML (post.remote.html, sanitised when stored) with its links
    to us made ours (the module docstring); "" for a post of this site."""
    note = post.remote
    if note is None or not note.html:
        return Markup("")
    if "<a " not in note.html:
        return Markup(note.html)
    return _with_our_links(note.html, post.tags, post.mentions, settings.SITE_URL, script_prefix())


# Few: a card is remembered whole (cards.py), so this is asked again only when a card is
# rendered anew (its age as shown moved), and a note's HTML may be 100 KiB.
@lru_cache(maxsize=2_048)
def _with_our_links(
    html: str, tags: tuple[str, ...], mentions: tuple[tuple[str, int], ...], site: str, prefix: str
) -> Markup:
    """Remembered by everything the result depends on (the prefix: url()'s)."""
    ours = site.rstrip("/") + "/"
    origin = len(ours) - len(urlsplit(ours).path)  # where a path of ours starts in a link
    names = {str(user_id): name for name, user_id in mentions}

    def link(found: re.Match) -> str:
        attributes, inner = found.group(1), found.group(2)
        href = unescape(m.group(1)) if (m := _HREF.search(attributes)) else ""
        css = m.group(1) if (m := _CLASS.search(attributes)) else ""
        if "hashtag" in css.split():
            tag = normal_tag(unescape(_TAG.sub("", inner)).strip().removeprefix("#"))
            if tag in tags:
                return f'<a class="tag" href="{escape(tag_url(tag))}">{inner}</a>'
        path = href[origin:]
        # Elsewhere, or a path a browser reads as another host's ("//host", "/\\host").
        if not href.startswith(ours) or path[1:2] in ("/", "\\"):
            return found.group(0)
        # A mention linked to the account's actor (Pleroma, Akkoma): its profile instead.
        actor = _ACTOR_PATH.fullmatch(href[len(ours) - 1 :])
        if actor is not None and (name := names.get(actor.group(1))):
            path = profile_url(name) or path
        css_attribute = f' class="{css}"' if css else ""  # nh3's, escaped already
        return f'<a{css_attribute} href="{escape(path)}">{inner}</a>'

    return Markup(_LINK.sub(link, html))


@lru_cache(maxsize=1_000)
def remote_domain(url: str) -> str:
    """Return the domain a remote link is on, as names.url_domain spells it ("" for none)."""
    return url_domain(url) or ""
