"""Word filters: phrases a reader never wants to read, each with an expiry.

A post containing a filtered phrase (case-insensitively, as a whole word where the script
separates words by spaces, anywhere in a run of Chinese or Japanese; hashtags included) is
left out of the reader's home, timeline, tags and mentions, and folded with the phrase
named in replies and on its permalink (visibility.py). The filters ride on the read path's
first pipeline with the reader's blocks and mutes (reader.py): a reader with none reads
nothing more.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import cast

from django.utils.translation import gettext_noop

from social import keys

from .base import Members, RepositoryBase, Scored, now, s
from .errors import NotAllowed
from .models import as_datetime

# Expiry choices: seconds (None: never).
EXPIRIES = {"1h": 3600, "1d": 86400, "7d": 7 * 86400, "30d": 30 * 86400, "never": None}
TOO_MANY = gettext_noop("You have %(cap)s filters, the most there can be. Delete one first.")
DUPLICATE = gettext_noop("You already filter “%(phrase)s”.")

# Scripts written without spaces between words: a phrase in them matches anywhere.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


@dataclass(frozen=True)
class WordFilter:
    """One filter: its id (unique for its owner), the phrase, when it expires (None: never)."""

    id: int
    phrase: str
    expires: int | None

    @property
    def expires_at(self) -> datetime | None:
        return as_datetime(self.expires)


def normal_phrase(text: str) -> str:
    """The phrase as filters compare it: spaces collapsed, case-folded."""
    return " ".join(text.split()).casefold()


@lru_cache(maxsize=4096)
def _pattern(phrase: str) -> re.Pattern[str]:
    """The regex that finds phrase as a word (see the module docstring)."""
    head = "" if _UNSPACED.match(phrase[:1]) or not phrase[:1].isalnum() else r"(?<!\w)"
    tail = "" if _UNSPACED.match(phrase[-1:]) or not phrase[-1:].isalnum() else r"(?!\w)"
    return re.compile(head + re.escape(phrase) + tail)


def matching(phrases: tuple[str, ...], body: str) -> str:
    """Return the first of phrases that body contains, or ""."""
    if not phrases:
        return ""
    text = " ".join(body.split()).casefold()
    for phrase in phrases:
        if phrase in text and _pattern(phrase).search(text):
            return phrase
    return ""


def active_phrases(raw: Scored, at: float) -> tuple[str, ...]:
    """The phrases of a ZRANGE ... WITHSCORES of keys.filters that have not expired."""
    return tuple(s(member).partition("|")[2] for member, expires in raw if expires > at)


class FilterStore(RepositoryBase):
    """A reader's word filters."""

    def filters(self, user_id: int, *, at: int | None = None) -> list[WordFilter]:
        """The reader's filters that still act, newest first."""
        clock = now() if at is None else at
        raw = cast(
            Scored,
            self.r.zrangebyscore(keys.filters(user_id), f"({clock}", "+inf", withscores=True),
        )
        found = []
        for member, expires in raw:
            ident, _, phrase = s(member).partition("|")
            found.append(
                WordFilter(int(ident), phrase, None if math.isinf(expires) else int(expires))
            )
        return sorted(found, key=lambda f: -f.id)

    def add(self, user_id: int, phrase: str, expiry: str, *, at: int | None = None) -> WordFilter:
        """Add a filter (phrase already validated); raise NotAllowed for a duplicate or past
        FILTERS_CAP. Expired filters are dropped first. Two round trips."""
        clock = now() if at is None else at
        normal = normal_phrase(phrase)
        key = keys.filters(user_id)
        pipe = self._pipe()
        pipe.zremrangebyscore(key, "-inf", clock)
        pipe.zrange(key, 0, -1)
        _, members = pipe.execute()
        held = [s(m).partition("|") for m in members]
        if any(p == normal for _, _, p in held):
            raise NotAllowed(DUPLICATE)
        if len(held) >= keys.FILTERS_CAP:
            raise NotAllowed(TOO_MANY)
        ident = max((int(i) for i, _, _ in held), default=0) + 1
        seconds = EXPIRIES[expiry]
        expires = None if seconds is None else clock + seconds
        pipe = self._pipe()
        pipe.hset(keys.user(user_id), "relations", 1)  # the read path reads them from now
        pipe.zadd(key, {f"{ident}|{normal}": "+inf" if expires is None else expires})
        pipe.execute()
        return WordFilter(ident, normal, expires)

    def delete(self, user_id: int, filter_id: int) -> bool:
        """Delete one filter by its id; False when there is none."""
        key = keys.filters(user_id)
        for member in cast(Members, self.r.zrange(key, 0, -1)):
            if s(member).partition("|")[0] == str(filter_id):
                return bool(self.r.zrem(key, member))
        return False
