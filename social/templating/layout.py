"""The layout's parts (head links, header, footer), the pager and a page's own parts
(page_part), each rendered once per language and what it shows (Layout), with the page's
CSRF field put in afterwards (with_csrf)."""

from __future__ import annotations

from django.http import HttpRequest
from jinja2 import Environment, pass_context
from jinja2.runtime import Context
from markupsafe import Markup, escape

from social.repository.cache import BoundedCache
from social.staff.nav import open_report_count
from social.templating.links import page_href, script_prefix, url
from social.templating.translation import page_language

# Where a remembered part's forms take the page's own CSRF field: no text a page shows
# contains it, since every text is escaped.
CSRF_SLOT = Markup("<!--csrf-field-->")
# Where the search page's navigation box takes the query (the page's `search_query`).
QUERY_SLOT = Markup("<!--search-query-->")
NAV_ITEMS = {"social:home": "home", "social:timeline": "timeline", "social:search": "search"}
ACCOUNT_NAV_ITEMS = {
    "social:mentions": "mentions",
    "social:notifications": "notifications",
    "social:settings": "settings",
}


class Layout:
    """site_head(), site_nav() and site_footer(): the parts of base.html, remembered.

    The head's links, the header and the footer are the same on every page in a language
    (the footer's selected language included), except for the few things that are the key:
    which nav item is the current page, and for a logged-in reader their name, unread
    count and staff link. So each part is rendered (a macro of _layout.html, in a module
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
        key = (template, name, language, script_prefix(), args)
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
        html = self.part(name, page_language(context), *args, CSRF_SLOT, template=template)
        return with_csrf(html, context)

    @pass_context
    def head(self, context: Context) -> Markup:
        """The head's links: color scheme, icon, style sheet, script."""
        return self.part("head_links", page_language(context))

    @pass_context
    def nav(self, context: Context) -> Markup:
        """The header: the site's links, and the reader's (or a visitor's log-in links)."""
        user = context.get("user")
        if user is None or not user.is_authenticated:
            account = None
        else:
            # The page's own count when it changed it (notifications, mentions seen).
            fresh = context.get("notifications_unread", user.unread_notifications)
            reports = open_report_count() if user.is_staff else 0
            account = (user.username, fresh, user.is_staff, reports)
        item = self.item(context)
        html = self.part("nav", page_language(context), item, account, CSRF_SLOT, QUERY_SLOT)
        if item == "search":
            query = escape(context.get("search_query", ""))
            html = Markup(html.replace(QUERY_SLOT, query))
        return with_csrf(html, context) if account else html

    @pass_context
    def footer(self, context: Context) -> Markup:
        """The footer: the site's links and the language switch (a form)."""
        return with_csrf(self.part("footer", page_language(context), CSRF_SLOT), context)

    @pass_context
    def pager(
        self, context: Context, request: HttpRequest, page, url: str | None = None,
        prev_label: str | None = None, next_label: str | None = None,
    ) -> Markup:  # fmt: skip
        """pager(request, page): the links to a Page's neighbours (_pager.html pager_page),
        remembered per language and everything they show. The other query parameters
        (filters) are kept; url: the list's own address when it is shown at another one.
        A page of posts that read past hidden ones says where its neighbours lie
        (Page.next_from, previous_before): the links carry it, but to page 1, the head."""
        here = url or request.path
        query = request.META.get("QUERY_STRING", "")
        prev_href = next_href = None
        if page.has_previous:
            number = page.previous_number
            before = page.previous_before if number > 1 else None
            prev_href = page_href(here, query, number, before=before)
        if page.has_next:
            next_href = page_href(here, query, page.next_number, start=page.next_from)
        return self.part(
            "pager_page", page_language(context), prev_href, next_href, page.number,
            page.num_pages, prev_label, next_label, template="_pager.html",
        )  # fmt: skip

    def item(self, context: Context) -> str:
        """Return the nav item of the page shown ("home"...), or "" for any other page.
        Every page under /settings/ is the item "settings"."""
        request = context.get("request")
        if request is None:
            return ""
        prefix = script_prefix()
        items = self.current.get(prefix)
        if items is None:
            named = NAV_ITEMS | ACCOUNT_NAV_ITEMS
            items = self.current[prefix] = {url(name): item for name, item in named.items()}
        path = request.path
        found = items.get(path)
        if found is None:
            found = "settings" if path.startswith(url("social:settings")) else ""
        return found


def with_csrf(html: Markup, context: Context) -> Markup:
    """Return html with the page's CSRF field in CSRF_SLOT (nothing on a page without one)."""
    return Markup(html.replace(CSRF_SLOT, escape(context.get("csrf_input", ""))))
