"""Links in templates: url() and static() memoised, profile, staff and tag URLs, "@name"
links, a post's text with its mentions and tags linked, and query strings for filters and
pagers."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, QueryDict
from django.templatetags.static import static
from django.urls import get_script_prefix, reverse
from markupsafe import Markup, escape

from social.repository.accounts.users import name_has_url
from social.text import MENTION_RE, TAG_RE, URL_MAX, URL_RE, mention_key, normal_tag

_local = threading.local()


def set_script_prefix(prefix: str) -> None:
    """Note this thread's script prefix for url() (the context processor calls it per page)."""
    _local.prefix = prefix


@lru_cache(maxsize=50_000)
def _reverse(prefix: str, name: str, args: tuple) -> str:
    path = reverse(name, args=args or None)  # under Django's prefix for this thread
    return prefix + path.removeprefix(get_script_prefix())


def url(name: str, *args) -> str:
    """Return the path of URL pattern `name` (Django's reverse()), memoised.

    Feeds link every post and author: a dict look-up instead of a reverse() per link. The
    script prefix is part of the key, so a site mounted under a sub-path stays right; it is
    read from a plain thread-local set once per page (Django's own is several times slower).
    """
    return _reverse(getattr(_local, "prefix", "/"), name, args)


def profile_url(name: str, view: str = "social:profile") -> str | None:
    """Return the URL of name's profile (or of its `view`: followers, following), or None
    when no URL leads to that name (a legacy name with a "/", an empty one: name_has_url)."""
    return url(view, name) if name_has_url(name) else None


def staff_user_url(name: str, user_id: int | None = None, action: str = "") -> str | None:
    """Return the staff page of an account, or the URL of one of its actions ("suspend").

    By name when a URL leads to it (the address staff read and type), else by id; None for
    a name no URL leads to when the id is not known either (a list of names only).
    """
    suffix = f"_{action}" if action else ""
    if name_has_url(name):
        return url(f"staff:user{suffix}", name)
    if user_id is not None:
        return url(f"staff:user_by_id{suffix}", user_id)
    return None


@lru_cache(maxsize=20_000)
def at_link(name: str, href: str | None, css: str = "") -> Markup:
    """Return "@name" linked to href, or as plain text when there is no URL (profile_url).

    Memoised, and built with escape() rather than Markup.format (Python's string.Formatter,
    several times slower): the timeline's sidebar alone names ten people per page."""
    attrs = f' class="{escape(css)}"' if css else ""
    if href is None:
        return Markup(f"<span{attrs}>@{escape(name)}</span>")
    return Markup(f'<a{attrs} href="{escape(href)}">@{escape(name)}</a>')


def tag_url(tag: str) -> str:
    """Return the URL of the page listing the posts with #tag (by its normal form)."""
    return url("social:tag", normal_tag(tag))


def post_text(post) -> Markup:
    """Return post's body as HTML: escaped, with its @mentions of existing users linked to
    their profiles, its #tags linked to their pages and its bare http(s) addresses linked
    (rel="nofollow noopener noreferrer": a link someone typed is not the site's word).

    Only what the repository found when the post was written is linked (post.mentions,
    matched ignoring case, an address `@name@domain` in any spelling of its domain, to our
    page of that remote account; and post.tags), so rendering looks nothing up. Every piece of
    text, a name or tag included, goes through escaping: nothing typed can become markup.
    """
    body = post.body
    if not (post.mentions or post.tags or "://" in body):
        return escape(body)
    mentioned = {key: name for name, _ in post.mentions if (key := mention_key(name))}
    tags = set(post.tags)
    links = [
        (m.start(), m.end(), web_link(m.group(0)))
        for m in URL_RE.finditer(body)
        if len(m.group(0)) <= URL_MAX
    ]
    links += [
        (m.start(), m.end(), at_link(typed, profile_url(mention_href(typed, name)), "mention"))
        for m in MENTION_RE.finditer(body)
        if (name := mentioned.get(mention_key(typed := m.group(1)) or "")) is not None
    ]
    links += [
        (m.start(), m.end(), Markup('<a class="tag" href="{}">#{}</a>').format(tag_url(t), t))
        for m in TAG_RE.finditer(body)
        if normal_tag(t := m.group(1)) in tags
    ]
    parts, done = [], 0
    for start, end, html in sorted(links, key=lambda link: link[0]):
        if start < done:  # overlapping matches (a #fragment in an address): the first wins
            continue
        parts += [escape(body[done:start]), html]
        done = end
    parts.append(escape(body[done:]))
    return Markup("").join(parts)


def mention_href(typed: str, stored: str) -> str:
    """The name whose profile a mention links to: a local name as typed (name look-ups
    ignore case), an address as stored (the account's `name@domain`: typed, its domain may
    be spelt another way, "Beta.Test" or in Unicode)."""
    return stored if "@" in typed else typed


def web_link(address: str) -> Markup:
    """Return a typed web address as a link to itself (escaped: it is only ever text)."""
    return Markup('<a class="url" href="{}" rel="nofollow noopener noreferrer">{}</a>').format(
        address, address
    )


def querystring(request: HttpRequest, **changes) -> str:
    """Return "?" + the request's query string with `changes` applied (None removes a key).

    The same as Django's {% querystring %} tag: filters survive paging.
    """
    return _changed(request.GET, changes)


def _changed(query: QueryDict, changes: dict) -> str:
    """Return "?" + query with changes applied (None removes a key), or "" for none."""
    params = query.copy()
    for key, value in changes.items():
        if value is None:
            params.pop(key, None)
        elif isinstance(value, Iterable) and not isinstance(value, str):
            params.setlist(key, list(value))
        else:
            params[key] = value
    if not params and not query:
        return ""
    return f"?{params.urlencode()}"


@lru_cache(maxsize=4096)
def page_href(
    path: str, query: str, number: int, start: int | None = None, before: int | None = None
) -> str:
    """querystring(request, page=number) after path, remembered by the raw query string;
    with the list position the page starts at (`from`) or ends before (`before`) when
    not its number's own (a list of posts that read past hidden ones: Page.next_from)."""
    return path + _changed(QueryDict(query), {"page": number, "from": start, "before": before})


def script_prefix() -> str:
    """This thread's script prefix, as set_script_prefix noted it ("/" before any): part of
    the key of everything remembered that holds a link."""
    return getattr(_local, "prefix", "/")


_static_urls: dict[str, str] = {}


def static_url(path: str) -> str:
    """Django's static(), remembered per path: the hashed manifest never changes while
    the process runs (collectstatic runs before it starts)."""
    found = _static_urls.get(path)
    if found is None:
        found = static(path)
        if not settings.DEBUG:
            _static_urls[path] = found
    return found
