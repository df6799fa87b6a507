"""The Jinja2 environment every template renders in (through Django's own Jinja2 backend).

Jinja2 compiles templates to Python functions, so a page of 50 posts renders several times
faster than with Django's template engine (docs/benchmarks.md has the figures). The
modules here are the template vocabulary, registered as globals and filters by
environment(): `links` (url(), static(), querystring(), post_text()...), `filters` (Django's
built-in filters of the same names, tuned for feeds, and age()), `fields` (form rows),
`cards` (post_card(), post_cards()), `remote` (another server's posts' HTML, remote_html()),
`layout` (the layout's parts, pagers, page_part()), `translation` (_() and kin, once per
language) and `ascii` (pages kept in ASCII, and encoded piece by piece where not).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from django.conf import settings
from jinja2 import Environment

from social import media
from social.post_forms import PostForm
from social.staff.nav import open_report_count
from social.templating.ascii import AsciiTemplateText, SiteTemplate, charrefs
from social.templating.cards import PostCards, card_actions
from social.templating.faces import (
    avatar,
    bio,
    display_name,
    header_url,
    person,
    user_avatar,
)
from social.templating.fields import (
    SUBMISSION_TOKEN_SLOT,
    FieldRows,
    submission_token,
    widget,
    with_auto_id,
    with_submission_token,
)
from social.templating.filters import (
    age,
    date,
    intcomma,
    linebreaksbr,
    naturaltime,
    pluralize,
    since,
    truncatechars,
)
from social.templating.layout import Layout
from social.templating.links import (
    at_link,
    post_text,
    profile_url,
    querystring,
    staff_user_url,
    static_url,
    tag_url,
    url,
)
from social.templating.remote import remote_domain, remote_html
from social.templating.translation import (
    language_code,
    page_gettext,
    page_ngettext,
    page_npgettext,
    page_pgettext,
)


class SiteEnvironment(Environment):
    """Jinja2's Environment, except that a template's globals are a plain dict (the
    environment's, the template's own over them) rather than a ChainMap of the two.

    Every render copies the globals into the page's context and every {% from %} or
    {% import %} compares their names, which over a ChainMap of the ~45 site globals runs in
    Python: ~25 us a page. A copy is right as long as the globals are set before templates
    load, as Jinja2 asks; environment() sets them all at once.
    """

    template_class = SiteTemplate  # a page keeps its pieces for encoding (ascii.py)

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        return {**self.globals, **(d or {})}


def live_url() -> str:
    """Where a reader's pages listen to the streaming API (settings.RETWIS_LIVE_URL)."""
    return settings.RETWIS_LIVE_URL


def environment(**options) -> Environment:
    """Build the Jinja2 environment (settings.TEMPLATES names this function).

    Templates are translated with Jinja2's i18n extension's syntax and Django's catalogues,
    through translation.py's callables: {{ _("Text") }}, {{ _("Hello %(name)s", name=x) }}
    (variables escaped), and
    {{ ngettext("%(num)d post", "%(num)d posts", n) }}. Newstyle: every message is a
    %-format, so a literal percent sign is written %%. scripts/messages extracts them.
    """
    options["extensions"] = [*options.get("extensions", ()), "jinja2.ext.i18n", AsciiTemplateText]
    env = SiteEnvironment(**options)
    # The i18n extension's newstyle calling convention ({% trans %} passes its variables),
    # with callables that format the message themselves (translation.py).
    env.newstyle_gettext = True  # type: ignore[attr-defined]
    env.globals.update(
        _=page_gettext,
        gettext=page_gettext,
        ngettext=page_ngettext,
        pgettext=page_pgettext,
        npgettext=page_npgettext,
    )
    env.globals.update(language_code=language_code, languages=settings.LANGUAGES)
    env.globals.update(url=url, static=static_url, querystring=querystring, widget=widget)
    env.globals.update(profile_url=profile_url, staff_user_url=staff_user_url, at_link=at_link)
    env.globals.update(submission_token=submission_token, post_text=post_text, tag_url=tag_url)
    env.globals.update(remote_html=remote_html, remote_domain=remote_domain)
    env.globals.update(with_auto_id=with_auto_id, field_row=FieldRows(env))
    env.globals.update(
        blank_post_form=PostForm,
        submission_token_slot=SUBMISSION_TOKEN_SLOT,
        with_submission_token=with_submission_token,
    )
    cards = PostCards(env, settings.RETWIS_CARD_CACHE_SIZE)
    env.globals.update(post_card=cards.one, post_cards=cards.many, card_actions=card_actions)
    env.globals.update(open_report_count=open_report_count, live_url=live_url)
    env.globals.update(
        avatar=avatar, user_avatar=user_avatar, bio=bio, display_name=display_name,
        header_url=header_url, person=person, media_url=media.url,
    )  # fmt: skip
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
        charrefs=charrefs,
    )
    return env
