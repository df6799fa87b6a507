"""post_card() and post_cards(): the cards of posts, each rendered once per what it shows
(PostCards), and the one form a page's cards' buttons submit (card_actions)."""

from __future__ import annotations

import time

from django.utils import timezone
from django.utils.translation import get_language
from jinja2 import Environment, pass_context
from jinja2.runtime import Context
from markupsafe import Markup

from social.repository.cache import BoundedCache
from social.repository.models import PostCounts
from social.templating.faces import narrow
from social.templating.filters import age_at
from social.templating.links import script_prefix

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
    only on the post (and for a repost its reposter, time and age as shown), its counts,
    whether the reader is logged in and is its author, whether a report form is open, the
    post's age as shown ("3h", age()) or its exact time, the language and the script prefix.
    Those are the key, so a card is rendered once per distinct key (bounded, oldest let go);
    the age in the key is the one the card shows. The post holds its author's display name
    and avatar as its process last checked them: a profile change, once the process takes
    it in (repository/cache.py, profile_changes.py), makes that author's posts new keys, so
    their cards alone are rendered anew. A card holds nothing of one reader's page:
    its buttons submit the page's own #card-actions form (base.html: the CSRF token and
    `next`). Not remembered while templates auto-reload (DEBUG), so edits show at once.
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
    def many(self, context: Context, posts, user, counts) -> list[Markup]:
        """post_cards(posts, user, counts): the cards of a feed, in one call (one per post
        costs a template function call each, which a 50-post timeline feels). A list, which
        the page writes card by card: each card a piece of the page of its own, so one
        card's emoji does not make the others' text costly to encode (ascii.py)."""
        if user.is_authenticated and posts:
            _cards_shown(context)
        return self.cards_of(posts, user, counts)

    def card(self, post, user, counts=None, report_form=None, exact_time=False) -> Markup:
        """Return one card."""
        now = time.time()
        return self._card(
            post, user, self._counts(post, counts), report_form, now, get_language(), exact_time
        )

    def cards_of(self, posts, user, counts) -> list[Markup]:
        """Return the cards of posts."""
        # Once per feed, not per card (Django's time zone is a look-up in a context-local).
        now, language, tz = time.time(), get_language(), timezone.get_current_timezone()
        return [
            self._card(p, user, self._counts(p, counts), None, now, language, tz=tz) for p in posts
        ]

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
        tz=None,
    ) -> Markup:
        # A repost (reader.py gives it the post it shares as `original`): that post's
        # card, "reposted by" the repost's author, with when (its time exact, in a title;
        # its age as shown): in the key as one element, None for a post.
        repost, shared_by = None, None
        if post.original is not None:
            repost, post = post, post.original
            shared_by = (
                repost.author_name,
                repost.time,
                age_at(repost.time, repost.created, now, language, tz),
            )
        shown = "" if exact_time else age_at(post.time, post.created, now, language, tz)
        if self.env.auto_reload:
            return self._render(
                post, user, counts, report_form, shown, exact_time, repost, shared_by
            )
        key = (
            post,
            shared_by,
            counts,
            user.is_authenticated,
            user.id == post.author_id,
            bool(report_form),
            shown,
            exact_time,
            language or get_language(),
            script_prefix(),
        )
        card = self.cards.get(key)
        if card is None:
            card = self._render(
                post, user, counts, report_form, shown, exact_time, repost, shared_by
            )
            self.cards.put(key, card)
        return card

    def _render(
        self, post, user, counts, report_form, shown, exact_time, repost, shared_by
    ) -> Markup:
        reposter, _, repost_age = shared_by or ("", None, "")
        return narrow(
            self.macro()(
                post, user, counts, report_form, shown, exact_time, reposter, repost, repost_age
            )
        )
