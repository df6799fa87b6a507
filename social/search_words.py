"""What search compares: text folded and cut into words, the same way for what is indexed
(display names) or scanned (posts) and for the query.

Pure functions, no Redis. Folding makes a search ignore case, accents and compatibility
forms: NFKD, case-folded, nonspacing marks dropped ("Zoë" and "ZOE" are "zoe", "Ｋａｔｅ"
is "kate", "straße" is "strasse"), then NFC (Hangul syllables whole again). A word is a run
of letters, digits, underscores and spacing marks (the vowel signs of Devanagari and its
kin, which split a word if left out).

Scripts written without spaces (Chinese, Japanese kana) have no words to start: each
character there is indexed with the one after it (a bigram; the run's last alone), so
"王小明" is "王小", "小明", "明". A query of one such character finds every bigram it starts
(any name holding it); a longer run asks for each of its bigrams ("小明": "小明"), so it
finds names holding those pairs. Korean is written with spaces: its words are words.

A term of a query matches a text when it starts one of the text's words: every term must
(`matches`, `holds`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

TERMS_MAX = 8  # terms of one query looked for; the rest ignored (a query is 50 characters)
WORD_MAX = 50  # characters of one word kept: longer words are cut (a name is 50 at most)

# Chinese, Japanese kana, and their kin: written without spaces between words.
SPACELESS = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3040-\u30ff\u3100-\u312f"
    "\u31a0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
)
SPACELESS_RE = re.compile(f"[{SPACELESS}]")
ASCII_WORD_RE = re.compile(r"[a-z0-9_]+")


@cache
def _token_re() -> re.Pattern[str]:
    """Runs of spaceless characters, or of other word characters (spacing marks counted:
    re's \\w leaves them out). Built once, on first use: the marks are looked up in the
    Unicode database of this Python (some 20 ms)."""
    marks = [c for c in range(0x20000) if unicodedata.category(chr(c)) == "Mc"]
    spans: list[list[int]] = []
    for c in marks:
        if spans and spans[-1][1] == c - 1:
            spans[-1][1] = c
        else:
            spans.append([c, c])
    mc = "".join(f"{chr(a)}-{chr(b)}" if a != b else chr(a) for a, b in spans)
    return re.compile(f"[{SPACELESS}]+|(?:(?![{SPACELESS}])[\\w{mc}])+")


def fold(text: str) -> str:
    """Return text as search compares it (see the module docstring)."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())
    kept = "".join(c for c in text if unicodedata.category(c) != "Mn")
    return unicodedata.normalize("NFC", kept)


def _runs(text: str) -> list[str]:
    """The folded text's runs of word characters (spaceless runs apart)."""
    folded = fold(text)
    if folded.isascii():
        return ASCII_WORD_RE.findall(folded)
    return _token_re().findall(folded)


def words(text: str) -> list[str]:
    """Return the distinct words of text as they are indexed, in order of appearance: a
    spaceless run as its bigrams and its last character alone."""
    found: dict[str, None] = {}
    for run in _runs(text):
        if SPACELESS_RE.match(run):
            for i in range(len(run)):
                found.setdefault(run[i : i + 2], None)
        else:
            found.setdefault(run[:WORD_MAX], None)
    return list(found)


def terms(query: str) -> list[str]:
    """Return the distinct terms of a query, at most TERMS_MAX: its words, a spaceless run
    of one character as itself and a longer one as its bigrams."""
    found: dict[str, None] = {}
    for run in _runs(query):
        if SPACELESS_RE.match(run) and len(run) > 1:
            for i in range(len(run) - 1):
                found.setdefault(run[i : i + 2], None)
        else:
            found.setdefault(run[:WORD_MAX], None)
    return list(found)[:TERMS_MAX]


def haystack(text: str) -> str:
    """Return text's words joined as `matches` looks in them: " word word ..."."""
    return " " + " ".join(words(text))


def matches(wanted: list[str], text_words: str) -> bool:
    """Whether every term of wanted starts a word of text_words (a haystack)."""
    return all(f" {term}" in text_words for term in wanted)


def holds(wanted: list[str], text: str) -> bool:
    """Whether every term of wanted starts a word of text. Most texts hold none of the
    terms anywhere: they are turned down by a look at the folded text, before it is cut
    into words (a term that starts a word is somewhere in the text)."""
    folded = fold(text)
    if not all(term in folded for term in wanted):
        return False
    return matches(wanted, haystack(folded))
