"""Another server's HTML made safe to show: Mastodon's rules (MASTODON_STRICT), kept by nh3.

Pure functions, no Redis. A remote post's `content` (and a profile's `summary`) passes
through sanitise() once, when it is stored; plain_text() gives the words alone for search,
notifications and summaries.

What Mastodon keeps (lib/sanitize_ext/sanitize_config.rb) and how it is kept here:
- Elements: ALLOWED_TAGS. Any other element is unwrapped (its text stays), except those
  whose content is dropped with them (DROPPED_WITH_CONTENT, Sanitize's default list).
- Attributes: `lang` everywhere; `href`, `class` on `a`; `class` on `span` and `p`;
  `translate` only as `translate="no"`; `start`, `reversed` on `ol`; `value` on `li`.
- Classes: microformats (`h-`, `p-`, `u-`, `dt-`, `e-` prefixes), `mention`, `hashtag`,
  `ellipsis`, `invisible` and `quote-inline`; every other class is dropped.
- Links: an `href` with a scheme of LINK_SCHEMES, else the link becomes its plain text
  (relative links too); every link gets `rel="nofollow noopener"` and `target="_blank"`.
- Headings `h1`-`h6` become `<p><strong>`; a block element that goes (`div`, `section`...)
  leaves a space either side so words do not run together; MathML becomes its TeX (FEP-dc88
  `$...$`) or plain-text annotation.

nh3 (ammonia) does the first two directly. The rewrites it cannot do (headings, a link with
no `href` left, block spacing, MathML) are made on nh3's own output, which is well formed,
by a small rewriter; that output then goes through nh3 again with the strict rules, so what
leaves this module is always nh3's work, never the rewriter's.

Bounds, counted before any parsing: HTML_MAX characters and TAGS_MAX "<" (html5ever's
time grows with the square of deep nesting: 16,000 nested lists take seconds).
"""

from __future__ import annotations

import re
from html import escape
from html.parser import HTMLParser

import nh3

HTML_MAX = 100 * 1024  # characters of remote HTML parsed; the rest is cut off
TAGS_MAX = 4096  # "<" parsed: the input is cut before the next one

ALLOWED_TAGS = frozenset(
    {"p", "br", "span", "a", "del", "s", "pre", "blockquote", "code", "b", "strong", "u", "i"}
    | {"em", "ul", "ol", "li", "ruby", "rt", "rp"}
)
# Dropped with everything inside them (Sanitize's `remove_contents` default, which Mastodon
# keeps): their text is code or fallback, not words of the post.
DROPPED_WITH_CONTENT = frozenset({"script", "style", "iframe", "noembed", "noframes", "noscript"})
LINK_SCHEMES = frozenset(
    {"http", "https", "dat", "dweb", "ipfs", "ipns", "ssb", "gopher", "xmpp", "magnet", "gemini"}
)
LINK_REL = "nofollow noopener"

HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Blocks that, when unwrapped, leave a space either side (Sanitize's `whitespace_elements`
# less those kept or made into something else).
SPACED = frozenset(
    {"address", "article", "aside", "dd", "div", "dl", "dt", "footer", "header", "hgroup"}
    | {"hr", "nav", "section"}
)
MATH = frozenset({"math", "semantics", "annotation"})

_ATTRIBUTES = {
    "*": {"lang"},
    "a": {"href", "class"},
    "span": {"class"},
    "p": {"class"},
    "ol": {"start", "reversed"},
    "li": {"value"},
}
_MATH_ATTRIBUTES = {"math": {"display"}, "annotation": {"encoding"}}
_FIRST_ATTRIBUTES = _ATTRIBUTES | _MATH_ATTRIBUTES
_TRANSLATE_NO = {"a": {"translate": {"no"}}, "span": {"translate": {"no"}}}
# A class Mastodon keeps: microformats, mentions and tags, its link formatting, quotes.
_KEPT_CLASS = re.compile(r"(?:h|p|u|dt|e)-.*|mention|hashtag|ellipsis|invisible|quote-inline")
# A list's number: what a browser reads as one (ASCII digits, a sign, at most nine digits).
_LIST_NUMBER = re.compile(r"-?[0-9]{1,9}")
# In nh3's output every "<" opens a tag (text and attribute values have theirs escaped), so
# this finds the elements the rewriter has work on: the extra ones the first pass keeps, and
# a link whose href was refused. (A `lang` value holding " href=" hides such a link: it then
# stays a link to nowhere, rel and target its only attributes. Harmless, so not worth a parse.)
_NEEDS_REWRITE = re.compile(
    r"<(?:h[1-6]|math|semantics|annotation|address|article|aside|dd|div|dl|dt|footer|header"
    r"|hgroup|hr|nav|section)[ >]|<a(?![^>]* href=)[ >]"
)
_VOID = frozenset({"br", "hr"})


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    """Return the value an allowed attribute keeps, or None to drop it (nh3's filter)."""
    if attribute == "class":
        kept = " ".join(name for name in value.split() if _KEPT_CLASS.fullmatch(name))
        return kept or None
    if attribute in ("start", "value"):
        return value if _LIST_NUMBER.fullmatch(value.strip()) else None
    return value


def _clean(html: str, tags: frozenset[str], attributes: dict[str, set[str]]) -> str:
    """Run nh3 with Mastodon's rules over html, keeping tags."""
    return nh3.clean(
        html,
        tags=set(tags),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes=attributes,
        attribute_filter=_keep_attribute,
        tag_attribute_values=_TRANSLATE_NO,
        set_tag_attribute_values={"a": {"target": "_blank"}},
        url_schemes=set(LINK_SCHEMES),
        url_relative="deny",
        link_rel=LINK_REL,
        strip_comments=True,
    )


def bounded(html: str) -> str:
    """Return html cut to HTML_MAX characters and before its (TAGS_MAX + 1)th "<"."""
    html = html[:HTML_MAX]
    if html.count("<") <= TAGS_MAX:
        return html
    at = -1
    for _ in range(TAGS_MAX + 1):
        at = html.find("<", at + 1)
    return html[:at]


def sanitise(html: str) -> str:
    """Return remote html reduced to what Mastodon shows (see the module docstring); the
    input is bounded first (bounded())."""
    first = _clean(bounded(html), ALLOWED_TAGS | HEADINGS | SPACED | MATH, _FIRST_ATTRIBUTES)
    if not _NEEDS_REWRITE.search(first):
        return first
    rewriter = _Rewriter()
    rewriter.feed(first)
    rewriter.close()
    return _clean("".join(rewriter.out), ALLOWED_TAGS, _ATTRIBUTES)


class _Rewriter(HTMLParser):
    """Rewrite nh3's first-pass output the way Mastodon's transformers do: headings to
    `<p><strong>`, a link without href to its text, spaces for unwrapped blocks, MathML to
    its annotation. Its output is sanitised again, so a mistake here costs looks, not
    safety."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.link_text_only = False  # inside an <a> whose href was refused
        self.math: _Math | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.math is not None:
            self.math.start(tag, dict(attrs))
        elif self.link_text_only or tag in ("semantics", "annotation"):
            return
        elif tag == "math":
            self.math = _Math(block=dict(attrs).get("display") == "block")
        elif tag in HEADINGS:
            self.out.append("<p><strong>")
        elif tag in SPACED:
            self.out.append(" ")
        elif tag == "a" and not any(name == "href" for name, _ in attrs):
            self.link_text_only = True
        else:
            self.out.append(f"<{tag}{_attributes(attrs)}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.math is not None:
            if self.math.end(tag):
                self.out.append(escape(self.math.text(), quote=False))
                self.math = None
        elif tag == "a" and self.link_text_only:
            self.link_text_only = False
        elif self.link_text_only or tag in ("semantics", "annotation") or tag in _VOID:
            return
        elif tag in HEADINGS:
            self.out.append("</strong></p>")
        elif tag in SPACED:
            self.out.append(" ")
        else:
            self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if self.math is not None:
            self.math.data(data)
        else:
            self.out.append(escape(data, quote=False))


class _Math:
    """One <math> element being read: its annotations by encoding, and all its text."""

    def __init__(self, *, block: bool) -> None:
        self.block = block
        self.depth = 1
        self.encoding: str | None = None  # of the annotation being read
        self.annotations: dict[str, list[str]] = {}
        self.all_text: list[str] = []

    def start(self, tag: str, attrs: dict[str, str | None]) -> None:
        if tag == "math":
            self.depth += 1
        elif tag == "annotation":
            self.encoding = attrs.get("encoding") or ""
            self.annotations.setdefault(self.encoding, [])

    def end(self, tag: str) -> bool:
        """Note an end tag; return whether it closes this math element."""
        if tag == "annotation":
            self.encoding = None
        elif tag == "math":
            self.depth -= 1
        return self.depth == 0

    def data(self, data: str) -> None:
        self.all_text.append(data)
        if self.encoding is not None:
            self.annotations[self.encoding].append(data)

    def text(self) -> str:
        """Return what stands for the formula: its TeX between dollars, else its plain-text
        annotation, else all its text (what Mastodon's unwrapping leaves)."""
        if "application/x-tex" in self.annotations:
            tex = "".join(self.annotations["application/x-tex"])
            return f"$${tex}$$" if self.block else f"${tex}$"
        if "text/plain" in self.annotations:
            return "".join(self.annotations["text/plain"])
        return "".join(self.all_text)


def _attributes(attrs: list[tuple[str, str | None]]) -> str:
    """Return attrs written back as HTML (the next nh3 pass checks them again)."""
    return "".join(
        f" {name}" if value is None else f' {name}="{escape(value, quote=True)}"'
        for name, value in attrs
    )


# --- Plain text --------------------------------------------------------------------------

_BLOCKS = frozenset({"p", "pre", "blockquote", "ul", "ol"})
_BLANK_LINES = re.compile(r"\n{3,}")


def plain_text(html: str, limit: int | None = None) -> str:
    """Return the words of remote html without markup: tags dropped, entities decoded, a
    paragraph break between paragraphs, a line break for <br> and after each list item;
    cut to limit characters (ending in "…") when given. The input is sanitised first, so
    script and style text never shows and the work is bounded."""
    extractor = _TextExtractor()
    extractor.feed(sanitise(html))
    extractor.close()
    # Lines trimmed one by one, then runs of blank lines made one: no backtracking regex
    # over a long run of spaces (quadratic time).
    text = "\n".join(line.strip(" \t") for line in "".join(extractor.out).split("\n"))
    text = _BLANK_LINES.sub("\n\n", text).strip()
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    return text


class _TextExtractor(HTMLParser):
    """Collect the text of sanitised HTML, with line and paragraph breaks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.out.append("\n")
        elif tag in _BLOCKS:
            self.out.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCKS:
            self.out.append("\n\n")
        elif tag == "li":
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        self.out.append(data)
