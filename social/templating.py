"""The Jinja2 environment every template renders in (through Django's own Jinja2 backend).

Jinja2 compiles templates to Python functions, so a page of 50 posts renders several times
faster than with Django's template engine (docs/benchmarks.md has the figures). The helpers
here are the template vocabulary: `url()`, `static()`, `querystring()` and a few filters that
behave like Django's built-ins of the same name, tuned for the hot loops of feeds.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache

from django.contrib.humanize.templatetags import humanize
from django.http import HttpRequest
from django.templatetags.static import static
from django.urls import get_script_prefix, reverse
from django.utils import dateformat, timezone
from django.utils.text import Truncator
from django.utils.timesince import timesince
from jinja2 import Environment
from markupsafe import Markup, escape

from social.repository.cache import BoundedCache
from social.repository.users import name_has_url

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


def at_link(name: str, href: str | None, css: str = "") -> Markup:
    """Return "@name" linked to href, or as plain text when there is no URL (profile_url)."""
    attrs = Markup(' class="{}"').format(css) if css else Markup("")
    if href is None:
        return Markup("<span{}>@{}</span>").format(attrs, name)
    return Markup('<a{} href="{}">@{}</a>').format(attrs, href, name)


def querystring(request: HttpRequest, **changes) -> str:
    """Return "?" + the request's query string with `changes` applied (None removes a key).

    The same as Django's {% querystring %} tag: filters survive paging.
    """
    params = request.GET.copy()
    for key, value in changes.items():
        if value is None:
            params.pop(key, None)
        elif isinstance(value, Iterable) and not isinstance(value, str):
            params.setlist(key, list(value))
        else:
            params[key] = value
    if not params and not request.GET:
        return ""
    return f"?{params.urlencode()}"


def intcomma(value) -> str:
    """1234567 -> "1,234,567" (Django's humanize intcomma for anything but a plain int)."""
    if type(value) is int:
        return f"{value:,}"
    return humanize.intcomma(value)


@lru_cache(maxsize=100_000)
def _date(value: datetime, fmt: str, tz) -> str:
    local = value.astimezone(tz) if value.tzinfo is not None else value
    return local.isoformat() if fmt == "c" else dateformat.format(local, fmt)


def date(value: datetime | None, fmt: str = "N j, Y") -> str:
    """Format a datetime in the current time zone with a Django date format string.

    Memoised: the same posts are shown on page after page, and their times never change.
    """
    if value is None or value == "":
        return ""
    return _date(value, fmt, timezone.get_current_timezone())


@lru_cache(maxsize=100_000)
def _naturaltime(value: datetime, now_second: int) -> str:
    return humanize.naturaltime(value)


def naturaltime(value: datetime | None) -> str:
    """Django's humanize naturaltime: "5 minutes ago", "2 days, 3 hours ago".

    Memoised within the current second (the finest step it shows), so a post's age is
    worked out once a second however many pages show it.
    """
    return "" if value is None else _naturaltime(value, int(time.time()))


def since(value: datetime | None) -> str:
    """Django's timesince filter: "3 days, 2 hours"."""
    return "" if value is None else timesince(value)


def pluralize(value, suffix: str = "s") -> str:
    """Django's pluralize: "" for 1, suffix otherwise ("y,ies" gives both forms)."""
    singular, _, plural = suffix.rpartition(",") if "," in suffix else ("", "", suffix)
    try:
        count = len(value) if hasattr(value, "__len__") else float(value)
    except (TypeError, ValueError):
        return ""
    return singular if count == 1 else plural


def truncatechars(value, length: int) -> str:
    """Django's truncatechars: at most `length` characters, ending in "…" when cut."""
    return Truncator(value).chars(length)


def linebreaksbr(value) -> Markup:
    """Escape, then turn newlines into <br>."""
    text = str(escape(value)).replace("\r\n", "\n").replace("\r", "\n")
    return Markup(text.replace("\n", "<br>"))


_blank_fields: BoundedCache[tuple, Markup] = BoundedCache(256)


def widget(bound) -> Markup:
    """Render a form field's widget ({{ widget(form.status) }}), remembering blank ones.

    A field of a form that was not submitted and has no per-request initial data renders
    the same HTML every time (the welcome page's sign-up and log-in forms, the composer),
    so it is rendered once per process; fields with data or errors render as usual.
    """
    form = bound.form
    if form.is_bound or form.initial or form.prefix:
        return Markup(str(bound))
    key = (type(form), form.auto_id, bound.name)
    html = _blank_fields.get(key)
    if html is None:
        html = Markup(str(bound))
        _blank_fields.put(key, html)
    return html


class PostCards:
    """post_card(post, user, report_form=None) and post_cards(posts, user): the macro of
    social/_post.html, remembered.

    A feed renders the same posts for request after request; what one card shows depends
    only on the post, whether the reader is logged in and is its author, whether a report
    form is open, the post's age as shown ("3 hours ago") and the script prefix. Those are
    the key, so a card is rendered once per distinct key (bounded, oldest let go). Not
    remembered while templates auto-reload (DEBUG), so edits show at once.
    """

    def __init__(self, env: Environment, size: int = 10_000) -> None:
        self.env = env
        self.cards: BoundedCache[tuple, Markup] = BoundedCache(size)
        self._macro = None

    def macro(self):
        if self._macro is None or self.env.auto_reload:
            self._macro = self.env.get_template("social/_post.html").module.post_card
        return self._macro

    def __call__(self, post, user, report_form=None) -> Markup:
        if self.env.auto_reload:
            return self.macro()(post, user, report_form)
        return self._card(post, user, report_form, int(time.time()))

    def many(self, posts, user) -> Markup:
        """post_cards(posts, user): the cards of a feed, in one call (one per post costs a
        template function call each, which a 50-post timeline feels)."""
        if self.env.auto_reload:
            return Markup("").join(self.macro()(post, user) for post in posts)
        now_second = int(time.time())
        return Markup("").join([self._card(post, user, None, now_second) for post in posts])

    def _card(self, post, user, report_form, now_second: int) -> Markup:
        key = (
            post,
            user.is_authenticated,
            user.id == post.author_id,
            bool(report_form),
            _naturaltime(post.created, now_second),
            getattr(_local, "prefix", "/"),
        )
        card = self.cards.get(key)
        if card is None:
            card = self.macro()(post, user, report_form)
            self.cards.put(key, card)
        return card


def submission_token() -> Markup:
    """A hidden input with a one-off token for a form whose submission must take effect
    once: a retried POST (a reload after a timeout or a 503) sends the same token, and the
    repository returns the first result instead of doing it again (PostStore.create_post).
    """
    return Markup('<input type="hidden" name="token" value="%s">') % secrets.token_urlsafe(16)


def environment(**options) -> Environment:
    """Build the Jinja2 environment (settings.TEMPLATES names this function)."""
    env = Environment(**options)
    env.globals.update(url=url, static=static, querystring=querystring, widget=widget)
    env.globals.update(profile_url=profile_url, staff_user_url=staff_user_url, at_link=at_link)
    env.globals.update(submission_token=submission_token)
    cards = PostCards(env)
    env.globals.update(post_card=cards, post_cards=cards.many)
    env.filters.update(
        intcomma=intcomma,
        date=date,
        naturaltime=naturaltime,
        timesince=since,
        pluralize=pluralize,
        truncatechars=truncatechars,
        linebreaksbr=linebreaksbr,
    )
    return env
