"""Atom feeds of the global timeline, of each profile and of each tag (issue 11).

Django's syndication framework writes them (`Feed` with `Atom1Feed`); their posts come
from the same repository reads as the HTML pages (PageStore's `timeline`,
`profile_for_name`, `tag`), so deleted posts and suspended or deleted authors drop out
exactly as there.
A feed is the same for everyone: it never looks at the reader (no staff view of hidden
posts, no per-reader counts), so a shared cache may keep it for a minute.

Post text is the reader's input: an entry's summary is its HTML-escaped text (a feed
reader shows `<script>` as text, never runs it), and every string is stripped of the
characters XML 1.0 forbids (control characters, lone surrogates), which Django's XML writer
refuses and no parser accepts.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib.sites.shortcuts import get_current_site
from django.contrib.syndication.views import Feed, add_domain
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.feedgenerator import Atom1Feed, Enclosure
from django.utils.html import escape
from django.utils.translation import gettext, gettext_lazy, override

from social import media
from social.forms import is_tag
from social.repository import ANONYMOUS, Page, Post, Profile, UserNotFound, get_repository
from social.repository.models import TimelinePage
from social.repository.posts.attachments import FULL, KIND
from social.text import normal_tag

FEED_ITEMS = 20  # the newest posts a feed lists
FEED_MAX_AGE = 60  # seconds a shared cache (and a feed reader) may keep a feed
TITLE_CHARS = 60  # of a post's text, in its entry's title

# Everything outside XML 1.0's Char production: C0 controls but tab, LF and CR; lone
# surrogates; U+FFFE and U+FFFF.
XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
WHITESPACE = re.compile(r"\s+")


def xml_safe(text: str) -> str:
    """Return text without the characters XML 1.0 cannot carry."""
    return XML_FORBIDDEN.sub("", text)


def named(display_name: str, username: str) -> str:
    """Return how a feed names an author: "Display (@name)", or the name alone."""
    return f"{display_name} (@{username})" if display_name else username


def entry_title(post: Post) -> str:
    """Return "@author: " and the first TITLE_CHARS characters of the post's text on one
    line (runs of whitespace, newlines included, become one space), "…" when cut; for a
    repost, "@reposter RT " and the title of the post it shares."""
    if post.original is not None:
        return f"@{xml_safe(post.author_name)} RT {entry_title(post.original)}"
    text = WHITESPACE.sub(" ", xml_safe(post.body)).strip()
    if len(text) > TITLE_CHARS:
        text = text[:TITLE_CHARS].rstrip() + "…"
    return f"@{xml_safe(post.author_name)}: {text}"


class PostFeed(Feed):
    """An Atom feed of posts: what the three feeds share (entries, headers, methods).

    One instance serves every request (the URLconf builds it once): nothing per request is
    kept on self; get_object returns all a request needs.
    """

    feed_type = Atom1Feed

    def __call__(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        # One feed for every reader, in the site's language (LANGUAGE_CODE): a feed reader
        # rarely says which it wants, and a shared cache keeps a single copy (no Vary).
        with override(settings.LANGUAGE_CODE):
            response = super().__call__(request, *args, **kwargs)
        # A mark for social.middleware.LocaleMiddleware (read with getattr), which
        # HttpResponse does not declare.
        response.same_in_every_language = True  # type: ignore[attr-defined]
        # The same for everyone. A request with an `auth` cookie still gets `private` from
        # RedisAuthMiddleware (its rule for every response): stricter, and harmless.
        patch_cache_control(response, public=True, max_age=FEED_MAX_AGE)
        return response

    def item_title(self, post: Post) -> str:
        # Atom titles are text (no type="html"): the XML writer escapes them, so no
        # double escaping as Django's RSS default does.
        return entry_title(post)

    # A repost's entry is the post it shares (its text, author and tags), listed when
    # reposted; its title says who reposted it.

    def item_description(self, post: Post) -> str:
        # Atom1Feed writes it as <summary type="html">: escaped here, the text reads as text.
        return escape(xml_safe((post.original or post).body))

    def item_link(self, post: Post) -> str:
        # Made absolute by Feed; also the entry's id. A repost's own permalink leads to the
        # post it shares (PostDetailView), and keeps the two entries' ids apart.
        return reverse("social:post_detail", args=[post.id])

    def item_pubdate(self, post: Post):
        return post.created  # aware, UTC (a repost: when reposted)

    def item_updateddate(self, post: Post):
        return post.created  # a post is never edited

    def item_author_name(self, post: Post) -> str:
        """The display name and @name ("Alice (@alice)"), or the @name alone."""
        shown = post.original or post
        return xml_safe(named(shown.author_display, shown.author_name))

    def item_categories(self, post: Post) -> tuple[str, ...]:
        return (post.original or post).tags

    def item_enclosures(self, post: Post) -> list[Enclosure]:
        """The post's pictures at full size (Atom: <link rel="enclosure">); get_feed makes
        their URLs absolute."""
        return [
            Enclosure(media.url(KIND, item.id, FULL), str(item.size), "image/webp")
            for item in (post.original or post).media
        ]

    def get_feed(self, obj, request: HttpRequest):
        feed = super().get_feed(obj, request)
        domain = get_current_site(request).domain
        for item in feed.items:
            for enclosure in item.get("enclosures") or ():
                enclosure.url = add_domain(domain, enclosure.url, request.is_secure())
        return feed


class TimelineFeed(PostFeed):
    """/timeline/feed/: the newest posts of everyone, as /timeline/ shows them."""

    title = gettext_lazy("Retwis: everyone's latest posts")
    subtitle = gettext_lazy("The newest posts on Retwis, newest first.")

    def link(self) -> str:
        return reverse("social:timeline")

    def get_object(self, request: HttpRequest) -> TimelinePage:
        # latest_users=1: the page also reads the newest sign-ups, which a feed never shows
        # (0 would mean "every user" to its ZREVRANGE). A feed never looks at its reader.
        return get_repository().pages.timeline(ANONYMOUS, 1, FEED_ITEMS, latest_users=1)

    def items(self, page: TimelinePage) -> list[Post]:
        return page.posts.items


class ProfileFeed(PostFeed):
    """/u/<username>/feed/: one account's posts; 404 where its profile is 404 to the
    public (no such account, suspended, deleted by its owner)."""

    def get_object(self, request: HttpRequest, username: str) -> Profile:
        try:  # as a visitor sees it: suspended and deleted accounts are not found
            return get_repository().pages.profile_for_name(username, ANONYMOUS, 1, FEED_ITEMS)
        except UserNotFound:
            raise Http404("No such user.") from None

    def title(self, profile: Profile) -> str:
        return gettext("Retwis: @%(name)s") % {"name": xml_safe(profile.user.username)}

    def subtitle(self, profile: Profile) -> str:
        return gettext("The newest posts of @%(name)s on Retwis.") % {
            "name": xml_safe(profile.user.username)
        }

    def link(self, profile: Profile) -> str:
        return reverse("social:profile", args=[profile.user.username])

    def author_name(self, profile: Profile) -> str:
        return xml_safe(named(profile.user.display_name, profile.user.username))

    def items(self, profile: Profile) -> list[Post]:
        return profile.posts.items


class TagFeed(PostFeed):
    """/tag/<tag>/feed/: the newest posts with #tag, whatever its case; 404 when it has
    none to show (a tag nobody used, or whose posts are all gone). The URL's converter
    refuses non-tags; the object is (the tag's normal form, its page)."""

    def get_object(self, request: HttpRequest, tag: str) -> tuple[str, Page[Post]]:
        folded = normal_tag(tag)
        if not is_tag(folded):  # "İ" folds to "i" and a combining dot: nothing filed there
            raise Http404("No posts with this tag.")
        page = get_repository().pages.tag(folded, ANONYMOUS, 1, FEED_ITEMS)
        if not page.items and not page.has_next:
            raise Http404("No posts with this tag.")
        return folded, page

    def title(self, obj: tuple[str, Page[Post]]) -> str:
        return gettext("Retwis: #%(tag)s") % {"tag": obj[0]}

    def subtitle(self, obj: tuple[str, Page[Post]]) -> str:
        return gettext("The newest posts with #%(tag)s on Retwis.") % {"tag": obj[0]}

    def link(self, obj: tuple[str, Page[Post]]) -> str:
        return reverse("social:tag", args=[obj[0]])

    def items(self, obj: tuple[str, Page[Post]]) -> list[Post]:
        return obj[1].items
