"""Translation in templates: each message translated once per language and process, the
page's language read from its context (page_gettext and kin)."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from django.conf import settings
from django.utils.translation import get_language, trans_real
from jinja2 import pass_context
from jinja2.runtime import Context

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


@pass_context
def page_gettext(context: Context, message: str) -> str:
    """gettext for templates: the page's language from its context (LANGUAGE_CODE, set
    once per page by a context processor) and each message translated once per process.
    Django's own gettext looks the active language up on every call, which a page with
    thirty messages felt (docs/benchmarks.md)."""
    return _for_page(context, _translated(page_language(context), "", message))


@pass_context
def page_pgettext(context: Context, msgctxt: str, message: str) -> str:
    """pgettext for templates (see page_gettext)."""
    return _for_page(context, _translated(page_language(context), msgctxt, message))


@pass_context
def page_ngettext(context: Context, singular: str, plural: str, number: int) -> str:
    """ngettext for templates: the page's language's catalogue, no look-up of the active
    language (plural forms depend on the number, so they are not remembered)."""
    catalogue = trans_real.translation(page_language(context))
    return _for_page(context, catalogue.ngettext(singular, plural, number))


@pass_context
def page_npgettext(context: Context, msgctxt: str, singular: str, plural: str, number: int) -> str:
    """npgettext for templates (see page_ngettext)."""
    catalogue = trans_real.translation(page_language(context))
    found = catalogue.ngettext(in_context(msgctxt, singular), in_context(msgctxt, plural), number)
    if CONTEXT_SEPARATOR in found:
        found = singular if number == 1 else plural
    return _for_page(context, found)
