"""What a post's text means: its @mentions and #hashtags, found once when it is written.

Pure functions, no Redis: the repository calls them when a post is written and stores what
they found in the post hash (who was mentioned, which tags), so showing a post never looks
a name up again (social/templating/links.py links them from what was stored).
"""

from __future__ import annotations

import re
import unicodedata

# @name: letters, digits, underscore (today's username rule, any case; a legacy name with
# other characters cannot be mentioned). Not inside a word or an address (a@b.c).
MENTION_RE = re.compile(r"(?<![\w@/.])@([A-Za-z0-9_]{1,30})(?![\w@])")
# #tag: letters (any script), digits, underscore. Not inside a word or after "&" (&#39;).
TAG_RE = re.compile(r"(?<![\w&#/])#(\w{1,50})(?!\w)")
# A bare web address (http or https), linked where shown; trailing punctuation is the
# sentence's, not the address's ("see https://example.com." links https://example.com).
URL_RE = re.compile(r"(?<![\w/])https?://[^\s<>\"'`]+[^\s<>\"'`.,;:!?)\]}]")
URL_MAX = 500  # characters of one address that are linked; a longer one stays text
MAX_MENTIONS = 10  # per post: the first ten distinct names are mentions, the rest text
MAX_TAGS = 10


def mentioned_names(body: str) -> list[str]:
    """Return the distinct names after "@" in body (first spelling kept, case ignored),
    at most MAX_MENTIONS, in order of appearance."""
    seen: dict[str, str] = {}
    for match in MENTION_RE.finditer(body):
        seen.setdefault(match.group(1).lower(), match.group(1))
        if len(seen) == MAX_MENTIONS:
            break
    return list(seen.values())


def normal_tag(tag: str) -> str:
    """Return the form a tag is filed under: case-folded ("Redis" and "REDIS" are one),
    NFKC-normalised, and kept to what a tag may hold (letters, digits, underscore; at most
    50). Case-folding can add what a tag may not: "İstanbul" folds to "i" + a combining
    dot above, which is dropped ("istanbul"), and "ß" folds to "ss", which can make a
    50-letter tag longer. "" when nothing is left (the caller skips such a tag)."""
    folded = unicodedata.normalize("NFKC", tag.casefold())
    return "".join(c for c in folded if c.isalnum() or c == "_")[:50]


def hashtags(body: str) -> list[str]:
    """Return the distinct normalised tags in body, at most MAX_TAGS, in order."""
    found: dict[str, None] = {}
    for match in TAG_RE.finditer(body):
        tag = match.group(1)
        if tag.isdigit():
            continue  # "#1" is a number, not a tag
        normal = normal_tag(tag)
        if not normal or normal.isdigit():
            continue
        found.setdefault(normal, None)
        if len(found) == MAX_TAGS:
            break
    return list(found)


def encode_mentions(mentions: dict[str, int]) -> str:
    """Encode {name: user id} for the post hash's `mentions` field: "id:name id:name"."""
    return " ".join(f"{user_id}:{name}" for name, user_id in mentions.items())


def decode_mentions(raw: str | None) -> tuple[tuple[str, int], ...]:
    """Decode the `mentions` field into ((name, id), ...); junk entries are skipped."""
    pairs = []
    for item in (raw or "").split():
        user_id, _, name = item.partition(":")
        if user_id.isdigit() and name:
            pairs.append((name, int(user_id)))
    return tuple(pairs)
