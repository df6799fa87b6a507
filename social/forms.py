"""Search, tag and word-filter forms. Every input is validated and normalised in a form,
never in a view: social.post_forms (posts), social.account_forms (accounts),
social.profile_forms (profile)."""

from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_lazy

from social.federation.resolve import URL_QUERY_MAX, remote_query
from social.keys import FILTER_CONTEXTS, FILTER_MAX
from social.post_forms import lazy_text, too_long
from social.repository.read.search import QUERY_MAX
from social.repository.relations.filters import LEGACY_CONTEXT
from social.text import normal_tag

# A tag as /tag/<tag>/ and the staff search take it: what social.text.TAG_RE finds after "#"
# (letters of any script, digits, underscore; not digits alone, which are numbers).
TAG_NAME_RE = re.compile(r"\w{1,50}")


def is_tag(value: str) -> bool:
    """Return whether value can be a hashtag (without its "#")."""
    return bool(TAG_NAME_RE.fullmatch(value)) and not value.isdigit()


SEARCH_TOO_LONG = gettext_lazy(
    "A search is at most %(limit_value)d characters; this one has "
    "%(show_value)d. Shorten it and search again."
)


class SearchForm(forms.Form):
    """/search/'s query: people ("@name" or a name), tags ("#tag") and the reader's posts
    (words), and an account of another server ("@name@domain", its profile's or a post's
    URL: social/federation/resolve.py). A longer one than the search reads is refused with
    its length named rather than searched cut short (a URL or an address may be longer);
    a NUL is refused by the field; other control characters are left out by the search
    (search.Query)."""

    q = forms.CharField(
        required=False,
        max_length=URL_QUERY_MAX,
        error_messages={"max_length": SEARCH_TOO_LONG},
    )

    def clean_q(self) -> str:
        query = self.cleaned_data["q"]
        if len(query) > QUERY_MAX and remote_query(query) is None:
            raise ValidationError(
                SEARCH_TOO_LONG,
                code="max_length",
                params={"limit_value": QUERY_MAX, "show_value": len(query)},
            )
        return query


class TagSearchForm(forms.Form):
    """A tag to list posts by (the staff's posts list): "#Redis" or "redis", normalised."""

    tag = forms.CharField(
        label=gettext_lazy("Tag"),
        required=False,
        max_length=60,
        widget=forms.TextInput(attrs={"placeholder": "#tag", "spellcheck": "false"}),
    )

    def clean_tag(self) -> str:
        tag = self.cleaned_data["tag"].strip().removeprefix("#")
        if tag and not is_tag(tag):
            raise ValidationError(
                gettext("A tag is up to 50 letters, digits or underscores, not only digits."),
                code="invalid",
            )
        return normal_tag(tag)


FILTER_PLACES = {
    "home": gettext_lazy("Home"),
    "notifications": gettext_lazy("Mentions and notifications"),
    "public": gettext_lazy("The timeline and tags"),
    "thread": gettext_lazy("Conversations (always folded)"),
    "account": gettext_lazy("Profiles"),
}


class FilterForm(forms.Form):
    """A word filter: a word or phrase (hashtags too), whether it hides or folds posts,
    where, and how long it acts."""

    phrase = forms.CharField(
        label=gettext_lazy("Word or phrase"),
        # No maxlength: a browser would silently cut a longer paste (clean_phrase says).
        strip=True,
        error_messages={"required": gettext_lazy("Type a word or a phrase to filter.")},
        help_text=lazy_text(
            lambda: (
                gettext(
                    "Case does not matter; whole words only; #tags too. Up to %(num)s characters."
                )
                % {"num": FILTER_MAX}
            )
        ),
    )
    action = forms.ChoiceField(
        label=gettext_lazy("What happens to a post with it"),
        choices=[
            ("hide", gettext_lazy("Hide it")),
            ("warn", gettext_lazy("Fold it, with the word named")),
        ],
        widget=forms.RadioSelect,
        initial="hide",
        error_messages={"required": gettext_lazy("Pick what happens to a post.")},
    )
    context = forms.MultipleChoiceField(
        label=gettext_lazy("Where"),
        choices=list(FILTER_PLACES.items()),
        widget=forms.CheckboxSelectMultiple,
        initial=list(LEGACY_CONTEXT),
        error_messages={"required": gettext_lazy("Pick at least one place.")},
    )
    expiry = forms.ChoiceField(
        label=gettext_lazy("For"),
        choices=[
            ("1h", gettext_lazy("1 hour")),
            ("1d", gettext_lazy("1 day")),
            ("7d", gettext_lazy("7 days")),
            ("30d", gettext_lazy("30 days")),
            ("never", gettext_lazy("Until I delete it")),
        ],
        initial="never",
    )

    def clean_phrase(self) -> str:
        phrase = " ".join(self.cleaned_data["phrase"].split())
        if not phrase.strip("#"):
            raise ValidationError(gettext("Type a word or a phrase to filter."), code="required")
        if len(phrase) > FILTER_MAX:
            raise ValidationError(too_long(len(phrase), FILTER_MAX), code="max_length")
        return phrase

    def clean_context(self) -> tuple[str, ...]:
        return tuple(c for c in FILTER_CONTEXTS if c in self.cleaned_data["context"])
