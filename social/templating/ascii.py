"""Pages kept in ASCII where the site's own words allow, and encoded piece by piece where not.

CPython keeps a str of ASCII characters one byte a character and encodes it to UTF-8 with a
copy. One character beyond ASCII anywhere in a page (a ♡ on a card, the footer's 简体中文,
an emoji in one post) makes the whole page a two-byte string encoded a character at a time:
0.25 ms for the 26 KB home page on the bench machine, a tenth of its cost, and 0.9 ms for
the timeline (docs/benchmarks.md). So:

- the templates' own text writes its symbols as character references (AsciiTemplateText:
  `♡` is sent as `&#9825;`, which a browser shows as the same character), and the
  footer names each language with references (`charrefs`); people's words (a post, a name,
  a Chinese message) are sent as they are, so no page grows;
- a page whose text is not all ASCII keeps the pieces its template yielded (SiteTemplate,
  Page) and is encoded one piece at a time: only the pieces holding such characters (a
  card with an emoji, each card being a piece of its own) pay for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from jinja2 import Template
from jinja2.ext import Extension
from jinja2.lexer import Token, TokenStream
from markupsafe import Markup, escape


def references(text: str) -> str:
    """text with every character beyond ASCII written as an HTML character reference."""
    return text if text.isascii() else text.encode("ascii", "xmlcharrefreplace").decode()


def charrefs(value: object) -> Markup:
    """The filter `charrefs`: value escaped, its characters beyond ASCII as references (a
    language's own name in the footer of every page)."""
    return Markup(references(str(escape(value))))


class AsciiTemplateText(Extension):
    """Write the templates' own text (not their expressions) in ASCII, as it is compiled:
    characters beyond ASCII become references. Only for HTML: a template's text is HTML."""

    def filter_stream(self, stream: TokenStream) -> Iterator[Token]:
        for token in stream:
            if token.type == "data" and not token.value.isascii():
                token = Token(token.lineno, "data", references(token.value))
            yield token


class Page(str):
    """A rendered page that is not all ASCII, with the pieces it was joined from: its UTF-8
    (what HttpResponse asks for with encode) is made piece by piece, so an ASCII piece costs
    a copy and only the others are encoded a character at a time."""

    pieces: list[str]

    def __new__(cls, text: str, pieces: list[str]) -> Page:
        page = super().__new__(cls, text)
        page.pieces = pieces
        return page

    def __reduce__(self) -> tuple:
        return str, (str(self),)  # pickled (a cached email, say) as the plain text it is

    def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        if errors == "strict" and encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
            return b"".join([piece.encode() for piece in self.pieces])
        return super().encode(encoding, errors)


def page_text(pieces: Iterable[str]) -> str:
    """Join a page's pieces: a plain str when all ASCII, else a Page."""
    pieces = list(pieces)
    text = "".join(pieces)
    return text if text.isascii() else Page(text, pieces)


class SiteTemplate(Template):
    """Jinja2's Template, whose render() keeps a page's pieces (page_text)."""

    def render(self, *args, **kwargs) -> str:
        if self.environment.is_async:
            return super().render(*args, **kwargs)
        context = self.new_context(dict(*args, **kwargs))
        try:
            return page_text(self.root_render_func(context))
        except Exception:
            self.environment.handle_exception()
