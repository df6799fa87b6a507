"""The templates' filters: Django's built-ins of the same names (date, naturaltime,
intcomma, pluralize, truncatechars, linebreaksbr, timesince), memoised for the hot loops of
feeds, and age(), a post's age as a card shows it."""

from __future__ import annotations

import time
from datetime import datetime
from functools import lru_cache

from django.contrib.humanize.templatetags import humanize
from django.utils import dateformat, timezone
from django.utils.text import Truncator
from django.utils.timesince import timesince
from django.utils.translation import get_language, gettext, ngettext, pgettext
from markupsafe import Markup, escape


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


def age_at(ts: float, value: datetime, now: float, language: str | None, tz=None) -> str:
    """age() of a post written at unix time ts (value: the same as a datetime), in the
    given language (the active one) and time zone (the current one when not given: a feed
    looks it up once for all its cards)."""
    seconds = now - ts
    if seconds < 86400:
        bucket = (
            0 if seconds < 60 else int(seconds // 60) if seconds < 3600 else -int(seconds // 3600)
        )
        shown = _recent_ages.get((bucket, language))
        if shown is None:
            shown = _recent_ages[(bucket, language)] = _recent_age(bucket)
        return shown
    tz = tz or timezone.get_current_timezone()
    return _day(value, datetime.fromtimestamp(now, tz).year, tz, language)


def age_changes_at(ts: float, now: float) -> float:
    """The first unix time after now when age_at() of a post written at ts may show
    something else: the next minute or hour it shows, a day after ts (its date from then),
    or within a quarter of an hour for a date (which changes only when the local year
    does, at a quarter hour in every time zone)."""
    seconds = now - ts
    if seconds < 60:
        return ts + 60
    if seconds < 3600:
        return ts + 60 * (seconds // 60 + 1)
    if seconds < 86400:
        return ts + 3600 * (seconds // 3600 + 1)
    return now + 900 - now % 900


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
