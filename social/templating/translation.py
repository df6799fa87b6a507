"""Translation in templates: each message translated once per language and process, the
page's language read from its context (page_gettext and kin)."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from django.conf import settings
from django.utils.translation import get_language, trans_real
from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup

from social.templating.ascii import references


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


def page_language(context: Context) -> str:
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


@lru_cache(maxsize=4096)
def _punctuation_as_references(text: str) -> str:
    """text with its characters beyond ASCII as references when none of them is a letter or
    a digit (an English message's ’ — “ ”: social/templating/ascii.py); else as it is (a
    Chinese message: references would only make it longer)."""
    if any(unicodedata.category(c)[0] in "LN" for c in text if not c.isascii()):
        return text
    return references(text)


def _for_page(context: Context, text: str) -> str:
    """A translated message as an HTML page shows it (see _punctuation_as_references)."""
    if text.isascii() or not context.eval_ctx.autoescape:
        return text
    return _punctuation_as_references(text)


# A message without variables as a page shows it: (language, context, message, autoescape).
_shown: dict[tuple[str, str, str, bool], str] = {}


def _show(context: Context, found: str, variables: dict) -> str:
    """found (message translated) as Jinja2's newstyle gettext returns it: Markup on an
    autoescaped page, always %-formatted (variables escaped; "%%" is "%")."""
    autoescape = context.eval_ctx.autoescape
    text = _for_page(context, found)
    return (Markup(text) if autoescape else text) % variables


@pass_context
def page_gettext(context: Context, message: str, **variables: object) -> str:
    """_() and gettext() in templates, as Jinja2's newstyle gettext ({{ _("Hi %(name)s",
    name=x) }}) in one call where its glue makes three: the page's language from its context
    (LANGUAGE_CODE, set once per page by a context processor), each message translated once
    per process, a message without variables formatted once. Django's own gettext looks
    the active language up on every call, which a page with thirty messages felt
    (docs/benchmarks.md)."""
    return _message(context, "", message, variables)


@pass_context
def page_pgettext(context: Context, msgctxt: str, message: str, **variables: object) -> str:
    """pgettext in templates (see page_gettext)."""
    return _message(context, msgctxt, message, variables)


def _message(context: Context, msgctxt: str, message: str, variables: dict) -> str:
    """A message as _show formats it; one without variables formatted once per language,
    autoescaping and process (_shown, bounded like _messages)."""
    language = page_language(context)
    if variables:
        return _show(context, _translated(language, msgctxt, message), variables)
    key = (language, msgctxt, message, context.eval_ctx.autoescape)
    shown = _shown.get(key)
    if shown is None:
        shown = _show(context, _translated(language, msgctxt, message), {})
        if len(_shown) < 20_000:
            _shown[key] = shown
    return shown


@pass_context
def page_ngettext(
    context: Context, singular: str, plural: str, number: int, **variables: object
) -> str:
    """ngettext in templates (as Jinja2's newstyle: `num` is the number unless given): the
    page's language's catalogue, no look-up of the active language (plural forms depend on
    the number, so they are not remembered)."""
    variables.setdefault("num", number)
    catalogue = trans_real.translation(page_language(context))
    return _show(context, catalogue.ngettext(singular, plural, number), variables)


@pass_context
def page_npgettext(
    context: Context, msgctxt: str, singular: str, plural: str, number: int, **variables: object
) -> str:
    """npgettext in templates (see page_ngettext)."""
    variables.setdefault("num", number)
    catalogue = trans_real.translation(page_language(context))
    found = catalogue.ngettext(in_context(msgctxt, singular), in_context(msgctxt, plural), number)
    if CONTEXT_SEPARATOR in found:
        found = singular if number == 1 else plural
    return _show(context, found, variables)
