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
from collections.abc import Callable, Iterable, MutableMapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.contrib.humanize.templatetags import humanize
from django.http import HttpRequest, QueryDict
from django.templatetags.static import static
from django.urls import get_script_prefix, reverse
from django.utils import dateformat, timezone
from django.utils.text import Truncator
from django.utils.timesince import timesince
from django.utils.translation import get_language, gettext, ngettext, pgettext, trans_real
from jinja2 import Environment, pass_context
from jinja2.runtime import Context
from markupsafe import Markup, escape

from social.forms import PostForm
from social.repository.cache import BoundedCache
from social.repository.models import PostCounts
from social.repository.users import name_has_url
from social.staff.nav import open_report_count
from social.text import MENTION_RE, TAG_RE, normal_tag

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
    their profiles and its #tags linked to their pages.

    Only what the repository found when the post was written is linked (post.mentions,
    matched ignoring case, and post.tags), so rendering looks nothing up. Every piece of
    text, a name or tag included, goes through escaping: nothing typed can become markup.
    """
    body = post.body
    if not (post.mentions or post.tags):
        return escape(body)
    mentioned = {name.lower() for name, _ in post.mentions}
    tags = set(post.tags)
    links = [
        (m.start(), m.end(), at_link(m.group(1), profile_url(m.group(1)), "mention"))
        for m in MENTION_RE.finditer(body)
        if m.group(1).lower() in mentioned
    ]
    links += [
        (m.start(), m.end(), Markup('<a class="tag" href="{}">#{}</a>').format(tag_url(t), t))
        for m in TAG_RE.finditer(body)
        if normal_tag(t := m.group(1)) in tags
    ]
    parts, done = [], 0
    for start, end, html in sorted(links, key=lambda link: link[0]):
        if start < done:  # overlapping matches (none today): the first one wins
            continue
        parts += [escape(body[done:start]), html]
        done = end
    parts.append(escape(body[done:]))
    return Markup("").join(parts)


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
def _page_href(path: str, query: str, number: int) -> str:
    """querystring(request, page=number) after path, remembered by the raw query string."""
    return path + _changed(QueryDict(query), {"page": number})


def intcomma(value) -> str:
    """1234567 -> "1,234,567" (Django's humanize intcomma for anything but a plain int)."""
    if type(value) is int:
        return f"{value:,}"
    return humanize.intcomma(value)


@lru_cache(maxsize=100_000)
def _date(value: datetime, fmt: str, tz, language: str | None) -> str:
    local = value.astimezone(tz) if value.tzinfo is not None else value
    return local.isoformat() if fmt == "c" else dateformat.format(local, fmt)


def date(value: datetime | None, fmt: str = "N j, Y") -> str:
    """Format a datetime in the current time zone with a Django date format string.

    Memoised: the same posts are shown on page after page, and their times never change.
    The language is part of the key: month and day names are translated.
    """
    if value is None or value == "":
        return ""
    return _date(value, fmt, timezone.get_current_timezone(), get_language())


@lru_cache(maxsize=100_000)
def _naturaltime(value: datetime, now_second: int, language: str | None) -> str:
    return humanize.naturaltime(value)


def naturaltime(value: datetime | None) -> str:
    """Django's humanize naturaltime: "5 minutes ago", "2 days, 3 hours ago".

    Memoised within the current second (the finest step it shows) and language, so a
    post's age is worked out once a second however many pages show it.
    """
    return "" if value is None else _naturaltime(value, int(time.time()), get_language())


@lru_cache(maxsize=100_000)
def _day(value: datetime, year: int, tz, language: str | None) -> str:
    local = value.astimezone(tz)
    if local.year == year:
        # Translators: a post's date in the current year, as a Django date format ("Nov 19").
        return dateformat.format(local, pgettext("short date, this year", "M j"))
    # Translators: a post's date in an earlier year, as a Django date format ("Nov 19, 2025").
    return dateformat.format(local, pgettext("short date, other year", "M j, Y"))


def age(value: datetime | None, now: float | None = None) -> str:
    """A post's age as feeds show it: "now", "5m", "3h", then its date: "Nov 19" within
    the current year, "Nov 19, 2025" before (the exact time goes in <time datetime> and a
    title). `now` is a unix time (the current one when not given).

    Cheap, since a feed shows 50 and every card's cache key holds one (PostCards): plain
    arithmetic for the last day, and dates memoised per year, time zone and language.
    """
    if value is None:
        return ""
    return age_at(value.timestamp(), value, time.time() if now is None else now, get_language())


# The ages of the last day as shown ("now", "5m", "3h"), by (seconds bucket, language):
# a feed's cards each need one for their cache key, and Django's ngettext costs microseconds.
_recent_ages: dict[tuple[int, str | None], str] = {}


def age_at(ts: float, value: datetime, now: float, language: str | None) -> str:
    """age() of a post written at unix time ts (value: the same as a datetime), in the
    given language (the active one)."""
    seconds = now - ts
    if seconds < 86400:
        bucket = (
            0 if seconds < 60 else int(seconds // 60) if seconds < 3600 else -int(seconds // 3600)
        )
        shown = _recent_ages.get((bucket, language))
        if shown is None:
            shown = _recent_ages[(bucket, language)] = _recent_age(bucket)
        return shown
    tz = timezone.get_current_timezone()
    return _day(value, datetime.fromtimestamp(now, tz).year, tz, language)


def _recent_age(bucket: int) -> str:
    """The shown age of a bucket: 0 "now", minutes (positive), hours (negative)."""
    if bucket == 0:  # a clock a little ahead of the post's author included
        # Translators: the age of a post written less than a minute ago.
        return gettext("now")
    if bucket > 0:
        # Translators: the age of a post in minutes, as short as possible ("5m").
        return ngettext("%(count)dm", "%(count)dm", bucket) % {"count": bucket}
    # Translators: the age of a post in hours, as short as possible ("3h").
    return ngettext("%(count)dh", "%(count)dh", -bucket) % {"count": -bucket}


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


def with_auto_id(form, auto_id: str):
    """Give form's fields ids of the shape auto_id ("login_%s") and return the form: two
    forms on one page with fields of the same names (the welcome page's sign-up and log-in)
    would otherwise both say id="id_username", and a label would point at the other form's
    input. The labels, help, errors and aria-describedby of _field.html follow the new ids.
    """
    form.auto_id = auto_id
    return form


_blank_fields: BoundedCache[tuple, Markup] = BoundedCache(256)


def widget(bound) -> Markup:
    """Render a form field's widget ({{ widget(form.status) }}), remembering blank ones.

    A field of a form that was not submitted and has no per-request initial data renders
    the same HTML every time (the welcome page's sign-up and log-in forms, the composer),
    so it is rendered once per process and language (labels, placeholders and the
    composer's counter texts are translated); fields with data or errors render as usual.
    """
    return _remembered_blank("widget", bound, lambda: Markup(str(bound)))


def _remembered_blank(kind: str, bound, render: Callable[[], Markup]) -> Markup:
    """Return render(), remembered per process and language when bound's form is blank."""
    form = bound.form
    if form.is_bound or form.initial or form.prefix:
        return render()
    key = (kind, type(form), form.auto_id, bound.name, get_language())
    html = _blank_fields.get(key)
    if html is None:
        html = render()
        _blank_fields.put(key, html)
    return html


class FieldRows:
    """field_row(field): a form field with its label, help and errors (the macro `row` of
    social/_field.html), remembered for a blank form's field as widget() remembers its
    widget: the log-in, sign-up and settings forms render their rows once per language."""

    TEMPLATE, MACRO = "social/_field.html", "row"

    def __init__(self, env: Environment) -> None:
        self.env = env

    def __call__(self, bound) -> Markup:
        def render() -> Markup:
            module = self.env.get_template(self.TEMPLATE).module
            return Markup(getattr(module, self.MACRO)(bound))

        if self.env.auto_reload:
            return render()
        return _remembered_blank("row", bound, render)


NO_COUNTS = PostCounts()
# Set on the request when its page shows a reader cards (whose buttons need #card-actions):
# on the request, not in the template's context, which a block may render in a copy of.
CARDS_SHOWN = "card_actions_wanted"


def _cards_shown(context: Context) -> None:
    request = context.get("request")
    if request is not None:
        setattr(request, CARDS_SHOWN, True)


@pass_context
def card_actions(context: Context) -> Markup:
    """Return the form the cards' buttons submit (form="card-actions"): the page's CSRF
    field and `next`, the page itself (or context["page_url"], the page's own URL when it is
    shown at another, as the home page re-shown at /post/ after a bad post). Only on a page
    that showed a reader cards: another page's own URL is not echoed (a login page's
    off-site `next`)."""
    request = context.get("request")
    if not getattr(request, CARDS_SHOWN, False):
        return Markup("")
    back = context.get("page_url") or (request.get_full_path() if request else "")
    return Markup(
        '<form id="card-actions" method="post" hidden>{}'
        '<input type="hidden" name="next" value="{}"></form>'
    ).format(context.get("csrf_input", ""), back)


class PostCards:
    """post_card(post, user, counts, report_form=None, exact_time=False) and
    post_cards(posts, user, counts): the macro of social/_post.html, remembered. `counts` is
    the page's {post id: PostCounts} (Page.counts): replies, likes and whether this reader
    likes the post. `exact_time` shows the post's date and time instead of its age (the
    permalink's own post).

    A feed renders the same posts for request after request; what one card shows depends
    only on the post, its counts, whether the reader is logged in and is its author,
    whether a report form is open, the post's age as shown ("3h", age()) or its exact
    time, the language and the script prefix. Those are the key, so a card is rendered
    once per distinct key (bounded, oldest let go); the age in the key is the one the card
    shows. A card holds nothing of one reader's page: its buttons submit the page's own
    #card-actions form (base.html: the CSRF token and `next`). Not remembered while
    templates auto-reload (DEBUG), so edits show at once.
    """

    def __init__(self, env: Environment, size: int = 10_000) -> None:
        self.env = env
        self.cards: BoundedCache[tuple, Markup] = BoundedCache(size)
        self._macro = None

    def macro(self):
        if self._macro is None or self.env.auto_reload:
            module = self.env.get_template("social/_post.html").module
            # A template's macros are attributes Jinja2 sets on its module when it runs it.
            self._macro = module.post_card  # type: ignore[attr-defined]
        return self._macro

    @pass_context
    def one(
        self, context: Context, post, user, counts=None, report_form=None, exact_time=False
    ) -> Markup:
        """post_card(post, user, counts, report_form=None, exact_time=False): one card."""
        if user.is_authenticated:
            _cards_shown(context)
        return self.card(post, user, counts, report_form, exact_time)

    @pass_context
    def many(self, context: Context, posts, user, counts) -> Markup:
        """post_cards(posts, user, counts): the cards of a feed, in one call (one per post
        costs a template function call each, which a 50-post timeline feels)."""
        if user.is_authenticated and posts:
            _cards_shown(context)
        return self.cards_of(posts, user, counts)

    def card(self, post, user, counts=None, report_form=None, exact_time=False) -> Markup:
        """Return one card."""
        now = time.time()
        return self._card(
            post, user, self._counts(post, counts), report_form, now, get_language(), exact_time
        )

    def cards_of(self, posts, user, counts) -> Markup:
        """Return the cards of posts."""
        now, language = time.time(), get_language()  # once per feed, not per card
        return Markup("").join(
            [self._card(p, user, self._counts(p, counts), None, now, language) for p in posts]
        )

    @staticmethod
    def _counts(post, counts) -> PostCounts:
        # A repost's card shows the post it shares, with that post's counts.
        shown = post.original or post
        return (counts or {}).get(shown.id) or NO_COUNTS

    def _card(
        self,
        post,
        user,
        counts: PostCounts,
        report_form,
        now: float,
        language: str | None = None,
        exact_time=False,
    ) -> Markup:
        # A repost (reader.py gives it the post it shares as `original`): that post's
        # card, "reposted by" the repost's author.
        reposter = post.author_name if post.original is not None else ""
        post = post.original or post
        shown = "" if exact_time else age_at(post.time, post.created, now, language)
        if self.env.auto_reload:
            return self.macro()(post, user, counts, report_form, shown, exact_time, reposter)
        key = (
            post,
            reposter,
            counts,
            user.is_authenticated,
            user.id == post.author_id,
            bool(report_form),
            shown,
            exact_time,
            language or get_language(),
            getattr(_local, "prefix", "/"),
        )
        card = self.cards.get(key)
        if card is None:
            card = self.macro()(post, user, counts, report_form, shown, exact_time, reposter)
            self.cards.put(key, card)
        return card


# Where a remembered part's forms take the page's own CSRF field: no text a page shows
# contains it, since every text is escaped.
CSRF_SLOT = Markup("<!--csrf-field-->")
NAV_ITEMS = {"social:home": "home", "social:timeline": "timeline"}
ACCOUNT_NAV_ITEMS = {"social:mentions": "mentions", "social:notifications": "notifications"}


class Layout:
    """site_head(), site_nav() and site_footer(): the parts of base.html, remembered.

    The head's links, the header and the footer are the same on every page in a language
    (the footer's selected language included), except for the few things that are the key:
    which nav item is the current page, and for a logged-in reader their name, unread
    counts and staff link. So each part is rendered (a macro of _layout.html, in a module
    made for the page's language) once per key, bounded, oldest let go; the page's CSRF
    field goes into CSRF_SLOT afterwards. Not remembered while templates auto-reload.
    """

    def __init__(self, env: Environment, size: int = 4096) -> None:
        self.env = env
        self.parts: BoundedCache[tuple, Markup] = BoundedCache(size)
        self.modules: dict[tuple[str, str], object] = {}
        self.current: dict[str, dict[str, str]] = {}  # prefix -> {path: nav item}

    def part(self, name: str, language: str, *args, template: str = "_layout.html") -> Markup:
        """Return the macro `name` of template rendered with args in language."""
        key = (template, name, language, getattr(_local, "prefix", "/"), args)
        html = None if self.env.auto_reload else self.parts.get(key)
        if html is None:
            module = self.modules.get((template, language))
            if module is None or self.env.auto_reload:
                made = self.env.get_template(template).make_module({"LANGUAGE_CODE": language})
                self.modules[(template, language)] = module = made
            html = getattr(module, name)(*args)
            if not self.env.auto_reload:
                self.parts.put(key, html)
        return html

    @pass_context
    def page_part(self, context: Context, template: str, name: str, *args) -> Markup:
        """page_part(template, name, *args): a part of one page remembered like the
        layout's (the macro `name` of template, called with args and CSRF_SLOT where its
        forms take the page's CSRF field): the args, all hashable, are everything it
        shows."""
        html = self.part(name, _page_language(context), *args, CSRF_SLOT, template=template)
        return with_csrf(html, context)

    @pass_context
    def head(self, context: Context) -> Markup:
        """The head's links: color scheme, icon, style sheet, script."""
        return self.part("head_links", _page_language(context))

    @pass_context
    def nav(self, context: Context) -> Markup:
        """The header: the site's links, and the reader's (or a visitor's log-in links)."""
        user = context.get("user")
        if user is None or not user.is_authenticated:
            account = None
        else:
            unread = 0 if context.get("mentions_seen") else user.unread_mentions
            fresh = 0 if context.get("notifications_seen") else user.unread_notifications
            reports = open_report_count() if user.is_staff else 0
            account = (user.username, unread, fresh, user.is_staff, reports)
        html = self.part("nav", _page_language(context), self.item(context), account, CSRF_SLOT)
        return with_csrf(html, context) if account else html

    @pass_context
    def footer(self, context: Context) -> Markup:
        """The footer: the site's links and the language switch (a form)."""
        return with_csrf(self.part("footer", _page_language(context), CSRF_SLOT), context)

    @pass_context
    def pager(
        self, context: Context, request: HttpRequest, page, url: str | None = None,
        prev_label: str | None = None, next_label: str | None = None,
    ) -> Markup:  # fmt: skip
        """pager(request, page): the links to a Page's neighbours (_pager.html pager_page),
        remembered per language and everything they show. The other query parameters
        (filters) are kept; url: the list's own address when it is shown at another one."""
        here = url or request.path
        query = request.META.get("QUERY_STRING", "")
        prev_href = _page_href(here, query, page.previous_number) if page.has_previous else None
        next_href = _page_href(here, query, page.next_number) if page.has_next else None
        return self.part(
            "pager_page", _page_language(context), prev_href, next_href, page.number,
            page.num_pages, prev_label, next_label, template="_pager.html",
        )  # fmt: skip

    def item(self, context: Context) -> str:
        """Return the nav item of the page shown ("home"...), or "" for any other page."""
        request = context.get("request")
        if request is None:
            return ""
        prefix = getattr(_local, "prefix", "/")
        items = self.current.get(prefix)
        if items is None:
            named = NAV_ITEMS | ACCOUNT_NAV_ITEMS
            items = self.current[prefix] = {url(name): item for name, item in named.items()}
        return items.get(request.path, "")


def with_csrf(html: Markup, context: Context) -> Markup:
    """Return html with the page's CSRF field in CSRF_SLOT (nothing on a page without one)."""
    return Markup(html.replace(CSRF_SLOT, escape(context.get("csrf_input", ""))))


# Where a remembered form (the home page's blank composer) takes a fresh submission token.
SUBMISSION_TOKEN_SLOT = Markup("<!--submission-token-->")


def with_submission_token(html: Markup) -> Markup:
    """Return html with a fresh submission_token() in SUBMISSION_TOKEN_SLOT."""
    return Markup(html.replace(SUBMISSION_TOKEN_SLOT, submission_token()))


def submission_token() -> Markup:
    """A hidden input with a one-off token for a form whose submission must take effect
    once: a retried POST (a reload after a timeout or a 503) sends the same token, and the
    repository returns the first result instead of doing it again (PostStore.create_post).
    """
    return Markup('<input type="hidden" name="token" value="%s">') % secrets.token_urlsafe(16)


def language_code() -> str:
    """The active language as <html lang> and the footer's switch name it ("zh-hans")."""
    return get_language() or settings.LANGUAGE_CODE


# The templates' messages, translated once per language: (language, context, message) ->
# text. Messages in templates are literals, so this holds at most the catalogue per language.
_messages: dict[tuple[str, str, str], str] = {}


CONTEXT_SEPARATOR = "\x04"  # gettext's: msgctxt, then the message


def in_context(msgctxt: str, message: str) -> str:
    """The catalogue key of a message with a context (as pgettext looks it up)."""
    return msgctxt + CONTEXT_SEPARATOR + message


def _page_language(context: Context) -> str:
    return context.get("LANGUAGE_CODE") or get_language() or settings.LANGUAGE_CODE


def _translated(language: str, msgctxt: str, message: str) -> str:
    if not message:  # gettext("") would be the catalogue's header
        return message
    key = (language, msgctxt, message)
    found = _messages.get(key)
    if found is None:
        catalogue = trans_real.translation(language)
        if msgctxt:
            found = catalogue.gettext(in_context(msgctxt, message))
            if CONTEXT_SEPARATOR in found:  # no translation in that context
                found = message
        else:
            found = catalogue.gettext(message)
        if len(_messages) < 20_000:
            _messages[key] = found
    return found


@pass_context
def page_gettext(context: Context, message: str) -> str:
    """gettext for templates: the page's language from its context (LANGUAGE_CODE, set
    once per page by a context processor) and each message translated once per process.
    Django's own gettext looks the active language up on every call, which a page with
    thirty messages felt (docs/benchmarks.md)."""
    return _translated(_page_language(context), "", message)


@pass_context
def page_pgettext(context: Context, msgctxt: str, message: str) -> str:
    """pgettext for templates (see page_gettext)."""
    return _translated(_page_language(context), msgctxt, message)


@pass_context
def page_ngettext(context: Context, singular: str, plural: str, number: int) -> str:
    """ngettext for templates: the page's language's catalogue, no look-up of the active
    language (plural forms depend on the number, so they are not remembered)."""
    return trans_real.translation(_page_language(context)).ngettext(singular, plural, number)


@pass_context
def page_npgettext(context: Context, msgctxt: str, singular: str, plural: str, number: int) -> str:
    """npgettext for templates (see page_ngettext)."""
    catalogue = trans_real.translation(_page_language(context))
    found = catalogue.ngettext(in_context(msgctxt, singular), in_context(msgctxt, plural), number)
    if CONTEXT_SEPARATOR in found:
        return singular if number == 1 else plural
    return found


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


class SiteEnvironment(Environment):
    """Jinja2's Environment, except that a template's globals are a plain dict (the
    environment's, the template's own over them) rather than a ChainMap of the two.

    Every render copies the globals into the page's context and every {% from %} or
    {% import %} compares their names, which over a ChainMap of the ~45 site globals runs in
    Python: ~25 us a page. A copy is right as long as the globals are set before templates
    load, as Jinja2 asks; environment() sets them all at once.
    """

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        return {**self.globals, **(d or {})}


def environment(**options) -> Environment:
    """Build the Jinja2 environment (settings.TEMPLATES names this function).

    Templates are translated with Jinja2's i18n extension calling Django's gettext:
    {{ _("Text") }}, {{ _("Hello %(name)s", name=x) }} (variables escaped), and
    {{ ngettext("%(num)d post", "%(num)d posts", n) }}. Newstyle: every message is a
    %-format, so a literal percent sign is written %%. scripts/messages extracts them.
    """
    options["extensions"] = [*options.get("extensions", ()), "jinja2.ext.i18n"]
    env = SiteEnvironment(**options)
    env.install_gettext_callables(  # type: ignore[attr-defined]
        page_gettext,
        page_ngettext,
        newstyle=True,
        pgettext=page_pgettext,
        npgettext=page_npgettext,
    )
    env.globals.update(language_code=language_code, languages=settings.LANGUAGES)
    env.globals.update(url=url, static=static_url, querystring=querystring, widget=widget)
    env.globals.update(profile_url=profile_url, staff_user_url=staff_user_url, at_link=at_link)
    env.globals.update(submission_token=submission_token, post_text=post_text, tag_url=tag_url)
    env.globals.update(with_auto_id=with_auto_id, field_row=FieldRows(env))
    env.globals.update(
        blank_post_form=PostForm,
        submission_token_slot=SUBMISSION_TOKEN_SLOT,
        with_submission_token=with_submission_token,
    )
    cards = PostCards(env, settings.RETWIS_CARD_CACHE_SIZE)
    env.globals.update(post_card=cards.one, post_cards=cards.many, card_actions=card_actions)
    env.globals.update(open_report_count=open_report_count)
    layout = Layout(env, settings.RETWIS_PART_CACHE_SIZE)
    env.globals.update(
        site_head=layout.head,
        site_nav=layout.nav,
        site_footer=layout.footer,
        page_part=layout.page_part,
        pager=layout.pager,
    )
    env.filters.update(
        intcomma=intcomma,
        date=date,
        naturaltime=naturaltime,
        age=age,
        timesince=since,
        pluralize=pluralize,
        truncatechars=truncatechars,
        linebreaksbr=linebreaksbr,
    )
    return env
