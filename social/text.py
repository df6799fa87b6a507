"""What a post's text means: its @mentions and #hashtags, found once when it is written.

Pure functions, no Redis: the repository calls them when a post is written and stores what
they found in the post hash (who was mentioned, which tags), so showing a post never looks
a name up again (social/templating/links.py links them from what was stored). A mention
is a local account's @name or another server's account's @name@domain (an address, checked
by social/federation/names.py); posting looks the names up among local accounts and the
addresses among the remote accounts known here.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator

from social.federation.names import InvalidAddress, parse_address

# @name: letters, digits, underscore (today's username rule, any case; a legacy name with
# other characters cannot be mentioned). Or @name@domain, an account of another server as
# the fediverse writes it (Mastodon's mention syntax; here with a port too, as a test
# instance's domain has one): the name by the remote rule ("." and "-" inside), the domain
# dotted labels of letters (any script), digits, "-" and "_" (names.py judges it: a
# domain with a "_" or a bad port is no mention, and no shorter one either). Not inside a
# word or an address (a@b.c). Group 1: what follows the "@". The address is one atomic
# group, so an address that is not followed by a space or punctuation ("@a@b.c@d",
# "@a@b.c:80x") is no mention at all rather than a shorter one.
MENTION_RE = re.compile(
    r"(?<![\w@/.])@("
    r"(?>[A-Za-z0-9_]+(?:[.-]+[A-Za-z0-9_]+)*@[\w-]+(?:\.[\w-]+)*(?::[0-9]+)?)"
    r"|[A-Za-z0-9_]{1,30})(?![\w@])"
)
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
    at most MAX_MENTIONS, in order of appearance; addresses (@name@domain) are left out."""
    return _distinct(name for name in _each_mention(body) if "@" not in name)


def mentions_of(body: str) -> list[str]:
    """Return the distinct mentions in body, at most MAX_MENTIONS, in order of
    appearance: a name after "@" (first spelling kept, case ignored), or an address as
    name@domain, the domain in its one spelling (names.parse_address; an address that is
    none is no mention)."""
    return _distinct(_each_mention(body))


def mention_key(mention: str) -> str | None:
    """Return what two spellings of one mention share: a name lower-cased, an address
    `name@domain` in its one spelling lower-cased; None for an address that is none."""
    if "@" not in mention:
        return mention.lower()
    try:
        return str(parse_address(mention)).lower()
    except InvalidAddress:
        return None


def _each_mention(body: str) -> Iterator[str]:
    """Each mention after "@" in body: a name as typed, an address in its one spelling."""
    for match in MENTION_RE.finditer(body):
        found = match.group(1)
        if "@" not in found:
            yield found
            continue
        try:
            yield str(parse_address(found))
        except InvalidAddress:
            continue


def _distinct(found: Iterable[str]) -> list[str]:
    """The first MAX_MENTIONS distinct of found (first spelling kept: mention_key)."""
    seen: dict[str, str] = {}
    for mention in found:
        seen.setdefault(mention.lower(), mention)  # an address is in its one spelling
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
