"""Word filters: keywords a reader never wants to read, grouped in filters (Mastodon's
shape: a title, its keywords, the contexts it acts in, warn or hide, an expiry).

A keyword matches a post case-insensitively, as a whole word where the script separates
words by spaces and anywhere in a run of Chinese or Japanese (hashtags included), or
anywhere when it is not `whole_word`. In each of its contexts (keys.FILTER_CONTEXTS) a
filter that hides leaves the post out of the reader's lists, and one that warns folds it
with the keyword named; in a conversation either folds it (visibility.py). The client API
also names every matching filter in a status's `filtered`. The filters ride on the read
path's first pipeline with the reader's blocks and mutes (reader.py): a reader with none
reads nothing more. An expired filter stops acting when read, and is dropped when the set
is next written.

Stored one member per filter in keys.filters, scored by expiry: the first, compact form
"<id>|<phrase>" where it says all (one whole-word phrase, hiding in LEGACY_CONTEXT, as the
site made them before apps could), else a JSON object. Filter and keyword ids share one
sequence per user (a filter's first keyword has the filter's id: the first form needs it).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property, lru_cache
from typing import TypeVar, cast

import redis
from django.utils.translation import gettext_noop

from social import keys

from ..base import WATCH_RETRIES, RepositoryBase, Scored, now, s
from ..errors import NotAllowed
from ..live.bus import FILTERS_CHANGED, queue_event
from ..models import as_datetime

T = TypeVar("T")

# Expiry choices of the site's page: seconds (None: never).
EXPIRIES = {"1h": 3600, "1d": 86400, "7d": 7 * 86400, "30d": 30 * 86400, "never": None}
ACTIONS = ("warn", "hide")
# Where the filters the site made before contexts existed act (they hide in lists and
# fold in a conversation): they keep doing so.
LEGACY_CONTEXT = keys.FILTER_CONTEXTS[:4]
TOO_MANY = gettext_noop("You have %(cap)s filters, the most there can be. Delete one first.")
TOO_MANY_KEYWORDS = gettext_noop(
    "Your filters have %(cap)s words in all, the most there can be. Delete one first."
)
DUPLICATE = gettext_noop("You already filter “%(phrase)s”.")

# Scripts written without spaces between words: a phrase in them matches anywhere.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


@dataclass(frozen=True)
class Keyword:
    """One keyword of a filter: its id (unique for its owner), the text, and whether it
    matches only as a whole word."""

    id: int
    keyword: str
    whole_word: bool = True

    @cached_property
    def normal(self) -> str:  # remembered: a page matches it against every post
        return normal_phrase(self.keyword)


@dataclass(frozen=True)
class WordFilter:
    """One filter: its id, title, keywords, where it acts, "warn" or "hide", when it
    expires (None: never)."""

    id: int
    title: str
    keywords: tuple[Keyword, ...] = ()
    context: tuple[str, ...] = LEGACY_CONTEXT
    action: str = "hide"
    expires: int | None = None

    @property
    def expires_at(self) -> datetime | None:
        return as_datetime(self.expires)

    @property
    def phrase(self) -> str:
        """The filter as one phrase (its title): the site's page and /api/v1/filters."""
        return self.title

    def acts_in(self, context: str) -> bool:
        return context in self.context

    def match(self, text: str) -> tuple[str, ...]:
        """The keywords of this filter (as typed) that text, a post's body as
        normal_phrase() gives it, contains."""
        return tuple(k.keyword for k in self.keywords if _contains(text, k.normal, k.whole_word))


class FilterSet(tuple[WordFilter, ...]):
    """A reader's filters (a tuple), with one regex that finds any of their keywords: most
    posts match none, and one search tells so (remembered with the set: _decoded)."""

    @cached_property
    def screen(self) -> re.Pattern[str] | None:
        words = {k.normal for f in self for k in f.keywords if k.normal}
        return re.compile("|".join(map(re.escape, sorted(words)))) if words else None

    def may_match(self, text: str) -> bool:
        """Whether text (normal_phrase) may hold a keyword: False means none."""
        return self.screen is not None and self.screen.search(text) is not None

    @cached_property
    def hiding(self) -> dict[str, tuple[WordFilter, ...]]:
        """The filters that hide, by context."""
        return {c: tuple(f for f in self if f.action == "hide" and f.acts_in(c))
                for c in keys.FILTER_CONTEXTS}  # fmt: skip


def may_match(filters: Sequence[WordFilter], text: str) -> bool:
    return filters.may_match(text) if isinstance(filters, FilterSet) else bool(filters)


@dataclass(frozen=True)
class FilterHit:
    """A filter that matches a post, and which of its keywords do (Mastodon's
    FilterResult)."""

    filter: WordFilter
    keywords: tuple[str, ...]


@dataclass(frozen=True)
class FilterDraft:
    """A filter to create, or the changes to one (None: unchanged). `keywords`: new
    (keyword, whole_word); `edits`: keyword id -> (keyword or None, whole_word or None);
    `drop`: keyword ids to delete."""

    title: str | None = None
    context: tuple[str, ...] | None = None
    action: str | None = None
    expires_in: int | None = None
    expiry_given: bool = False  # expires_in was sent (None then means: never)
    keywords: tuple[tuple[str, bool], ...] = ()
    edits: tuple[tuple[int, str | None, bool | None], ...] = ()
    drop: tuple[int, ...] = field(default=())


def normal_phrase(text: str) -> str:
    """The phrase as filters compare it: spaces collapsed, case-folded."""
    return " ".join(text.split()).casefold()


@lru_cache(maxsize=4096)
def _pattern(phrase: str) -> re.Pattern[str]:
    """The regex that finds phrase as a word (see the module docstring)."""
    head = "" if _UNSPACED.match(phrase[:1]) or not phrase[:1].isalnum() else r"(?<!\w)"
    tail = "" if _UNSPACED.match(phrase[-1:]) or not phrase[-1:].isalnum() else r"(?!\w)"
    return re.compile(head + re.escape(phrase) + tail)


def _contains(text: str, phrase: str, whole_word: bool) -> bool:
    """Whether text (normalised) holds phrase (normalised)."""
    if not phrase or phrase not in text:
        return False
    return not whole_word or bool(_pattern(phrase).search(text))


def matching(phrases: tuple[str, ...], body: str) -> str:
    """Return the first of phrases (normalised) that body contains as words, or ""."""
    text = normal_phrase(body)
    return next((p for p in phrases if _contains(text, p, True)), "")


def hits(filters: Sequence[WordFilter], body: str) -> tuple[FilterHit, ...]:
    """Every filter that matches body, whatever its context, with its matching keywords."""
    text = normal_phrase(body)
    if not may_match(filters, text):
        return ()
    found = []
    for f in filters:
        matched = f.match(text)
        if matched:
            found.append(FilterHit(f, matched))
    return tuple(found)


def hides(filters: Sequence[WordFilter], body: str, context: str) -> bool:
    """Whether a filter that hides in context matches body."""
    if isinstance(filters, FilterSet):
        acting = filters.hiding.get(context, ())
    else:
        acting = tuple(f for f in filters if f.action == "hide" and f.acts_in(context))
    if not acting:
        return False
    text = normal_phrase(body)
    return may_match(filters, text) and any(f.match(text) for f in acting)


def decode(member: bytes | str, score: float) -> WordFilter | None:
    """The filter a member of keys.filters holds (None: not one of ours)."""
    text = s(member)
    expires = None if math.isinf(score) else int(score)
    if text.startswith("{"):
        try:
            data = json.loads(text)
            keywords = tuple(Keyword(int(i), str(k), bool(w)) for i, k, w in data["keywords"])
            context = tuple(c for c in keys.FILTER_CONTEXTS if c in data["context"])
            action = data["action"] if data["action"] in ACTIONS else "warn"
            return WordFilter(int(data["id"]), str(data["title"]), keywords, context, action,
                              expires)  # fmt: skip
        except (ValueError, KeyError, TypeError):
            return None
    ident, _, phrase = text.partition("|")
    if not ident.isdecimal() or not ident.isascii() or len(ident) > 19 or not phrase:
        return None
    return WordFilter(int(ident), phrase, (Keyword(int(ident), phrase, True),), expires=expires)


def encode(f: WordFilter) -> str:
    """The member that holds f: the first form when it says all (see the module)."""
    if (
        len(f.keywords) == 1
        and f.keywords[0].id == f.id
        and f.keywords[0].whole_word
        and f.keywords[0].keyword == f.title == normal_phrase(f.title)
        and f.context == LEGACY_CONTEXT
        and f.action == "hide"
    ):
        return f"{f.id}|{f.title}"
    data = {
        "id": f.id,
        "title": f.title,
        "context": list(f.context),
        "action": f.action,
        "keywords": [[k.id, k.keyword, k.whole_word] for k in f.keywords],
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def active(raw: Scored, at: float) -> FilterSet:
    """The filters of a ZRANGE ... WITHSCORES of keys.filters that have not expired."""
    found = _decoded(tuple(raw))
    if all(f.expires is None or f.expires > at for f in found):
        return found
    return FilterSet(f for f in found if f.expires is None or f.expires > at)


@lru_cache(maxsize=256)  # repository/cache.py lists it
def _decoded(raw: tuple[tuple[bytes | str, float], ...]) -> FilterSet:
    """The filters of a reply, remembered by the reply: a reader's pages read the same
    set again and again, and its filters keep their keywords' normal forms and screen."""
    found = (decode(member, expires) for member, expires in raw)
    return FilterSet(f for f in found if f is not None)


class FilterStore(RepositoryBase):
    """A reader's word filters."""

    def filters(self, user_id: int, *, at: int | None = None) -> list[WordFilter]:
        """The reader's filters that still act, newest first. One round trip."""
        clock = now() if at is None else at
        raw = cast(
            Scored,
            self.r.zrangebyscore(keys.filters(user_id), f"({clock}", "+inf", withscores=True),
        )
        return sorted(active(raw, clock), key=lambda f: -f.id)

    def get(self, user_id: int, filter_id: int, *, at: int | None = None) -> WordFilter | None:
        """One of the reader's filters that still acts, or None. One round trip."""
        return next((f for f in self.filters(user_id, at=at) if f.id == filter_id), None)

    def add(
        self, user_id: int, phrase: str, expiry: str, *, at: int | None = None,
        action: str = "hide", context: tuple[str, ...] = LEGACY_CONTEXT,
    ) -> WordFilter:  # fmt: skip
        """Add a filter of one whole-word phrase (already validated), as the site's page
        does; raise NotAllowed for a phrase already filtered or past the caps."""
        normal = normal_phrase(phrase)
        draft = FilterDraft(normal, context, action, EXPIRIES[expiry], True, ((normal, True),))

        def refuse_duplicate(held: list[WordFilter]) -> None:
            if any(k.normal == normal for f in held for k in f.keywords):
                raise NotAllowed(DUPLICATE)

        return self.create(user_id, draft, at=at, check=refuse_duplicate)

    def create(
        self, user_id: int, draft: FilterDraft, *, at: int | None = None,
        check: Callable[[list[WordFilter]], None] | None = None,
    ) -> WordFilter:  # fmt: skip
        """Create a filter from a validated draft; raise NotAllowed past the caps."""
        clock = now() if at is None else at

        def edit(held: list[WordFilter]) -> tuple[list[WordFilter], WordFilter]:
            if check is not None:
                check(held)
            if len(held) >= keys.FILTERS_CAP:
                raise NotAllowed(TOO_MANY)
            ids = _ids(held)
            ident = next(ids)  # its first keyword's too (the first form needs it)
            made = WordFilter(
                ident,
                draft.title or "",
                tuple(
                    Keyword(next(ids) if n else ident, k, w)
                    for n, (k, w) in enumerate(draft.keywords)
                ),  # fmt: skip
                draft.context or LEGACY_CONTEXT,
                draft.action or "warn",
                _expires(draft.expires_in, clock),
            )
            return [*held, made], made

        made = self._change(user_id, edit, clock)
        assert made is not None
        return made

    def update(
        self, user_id: int, filter_id: int, draft: FilterDraft, *, at: int | None = None
    ) -> WordFilter | None:
        """Change one filter as draft says (keywords added, edited, dropped: ids not its
        own are ignored, as Mastodon ignores them); None when there is no such filter."""
        clock = now() if at is None else at

        def edit(held: list[WordFilter]) -> tuple[list[WordFilter], WordFilter | None]:
            old = next((f for f in held if f.id == filter_id), None)
            if old is None:
                return held, None
            ids = _ids(held)
            edits = {i: (k, w) for i, k, w in draft.edits}
            kept = tuple(
                replace(
                    k,
                    keyword=k.keyword if edits[k.id][0] is None else cast(str, edits[k.id][0]),
                    whole_word=k.whole_word if edits[k.id][1] is None else bool(edits[k.id][1]),
                )
                if k.id in edits
                else k
                for k in old.keywords
                if k.id not in draft.drop
            )
            new = replace(
                old,
                title=old.title if draft.title is None else draft.title,
                context=old.context if draft.context is None else draft.context,
                action=old.action if draft.action is None else draft.action,
                expires=_expires(draft.expires_in, clock) if draft.expiry_given else old.expires,
                keywords=kept + tuple(Keyword(next(ids), k, w) for k, w in draft.keywords),
            )
            return [new if f.id == filter_id else f for f in held], new

        return self._change(user_id, edit, clock)

    def delete(self, user_id: int, filter_id: int) -> bool:
        """Delete one filter by its id; False when there is none."""

        def edit(held: list[WordFilter]) -> tuple[list[WordFilter], bool | None]:
            kept = [f for f in held if f.id != filter_id]
            return kept, True if len(kept) < len(held) else None

        return bool(self._change(user_id, edit, now()))

    def keyword(self, user_id: int, keyword_id: int) -> tuple[WordFilter, Keyword] | None:
        """The reader's keyword of that id and its filter, or None. One round trip."""
        for f in self.filters(user_id):
            for k in f.keywords:
                if k.id == keyword_id:
                    return f, k
        return None

    def delete_keyword(self, user_id: int, keyword_id: int, *, last_takes_filter: bool) -> bool:
        """Delete one keyword; its filter too when it was the last and last_takes_filter
        (a /api/v1/filters filter is one keyword). False when there is none."""

        def edit(held: list[WordFilter]) -> tuple[list[WordFilter], bool | None]:
            owner = next((f for f in held if any(k.id == keyword_id for k in f.keywords)), None)
            if owner is None:
                return held, None
            kept = tuple(k for k in owner.keywords if k.id != keyword_id)
            if not kept and last_takes_filter:
                return [f for f in held if f.id != owner.id], True
            return [replace(f, keywords=kept) if f is owner else f for f in held], True

        return bool(self._change(user_id, edit, now()))

    def _change(
        self, user_id: int, edit: Callable[[list[WordFilter]], tuple[list[WordFilter], T | None]],
        clock: int,
    ) -> T | None:  # fmt: skip
        """Rewrite the user's filters as edit(the ones still acting) says, atomically
        (WATCH/MULTI on the one key; expired ones are dropped); return edit's result. No
        write when that is None (nothing to change). Raise NotAllowed (edit's, or past
        FILTER_KEYWORDS_CAP) having written nothing."""
        key = keys.filters(user_id)
        for _ in range(WATCH_RETRIES):
            with self.r.pipeline(transaction=True) as pipe:
                try:
                    pipe.watch(key)
                    raw = cast(Scored, pipe.zrange(key, 0, -1, withscores=True))
                    new, result = edit(list(active(raw, clock)))
                    if result is None:
                        return None
                    if sum(len(f.keywords) for f in new) > keys.FILTER_KEYWORDS_CAP:
                        raise NotAllowed(TOO_MANY_KEYWORDS)
                    # The read path reads the filters from now on (never cleared: a
                    # field of another key, so outside the MULTI, and first).
                    self.r.hset(keys.user(user_id), "relations", 1)
                    pipe.multi()
                    pipe.delete(key)
                    if new:
                        pipe.zadd(key, {encode(f): _score(f) for f in new})
                    pipe.execute()
                    self._tell(user_id)
                    return result
                except redis.WatchError:
                    continue
        raise RuntimeError(f"{key} kept changing; gave up")

    def _tell(self, user_id: int) -> None:
        """Tell the user's streaming listeners their filters changed (the live bus): one
        round trip after the MULTI, whose one key the bus's may not share on a cluster."""
        pipe = self._pipe()
        queue_event(pipe, FILTERS_CHANGED, user_id=user_id)
        self.send(pipe)


def _ids(held: Iterable[WordFilter]) -> Iterator[int]:
    """The next free ids of a user's filters and keywords (one sequence)."""
    top = max((i for f in held for i in (f.id, *(k.id for k in f.keywords))), default=0)
    while True:
        top += 1
        yield top


def _expires(seconds: int | None, clock: int) -> int | None:
    return None if seconds is None else clock + seconds


def _score(f: WordFilter) -> float | str:
    return "+inf" if f.expires is None else f.expires
