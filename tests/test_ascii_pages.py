"""Pages in ASCII where the site's own words allow, encoded piece by piece where not
(social/templating/ascii.py): what a browser shows is unchanged, people's words are sent as
they are, and the bytes are the page's UTF-8 exactly."""

from __future__ import annotations

import pickle
from html import unescape

from django.template import engines
from django.test import Client
from markupsafe import Markup

from social.templating.ascii import Page, page_text
from tests.conftest import login


def render(source: str, **context) -> str:
    return engines["jinja2"].from_string(source).render(context)


def test_the_templates_own_symbols_are_sent_as_references_and_peoples_words_as_they_are():
    page = render("<p>♡ {{ body }} · {{ name }}</p>", body="咖啡 ☕", name="Zoë")

    assert page == "<p>&#9825; 咖啡 ☕ &#183; Zoë</p>"
    assert unescape(page) == "<p>♡ 咖啡 ☕ · Zoë</p>"


def test_english_punctuation_in_a_message_becomes_references_a_chinese_message_stays():
    english = render('{{ _("Your post “%(snippet)s” was removed", snippet=s) }}', s="<b>")
    chinese = render('{{ _("Home") }}', LANGUAGE_CODE="zh-hans")

    assert english == "Your post &#8220;&lt;b&gt;&#8221; was removed"
    assert chinese == "首页"


def test_a_page_that_is_not_all_ascii_is_encoded_piece_by_piece_to_the_same_bytes():
    ascii_page = page_text(["<p>", "plain", "</p>"])
    mixed = page_text(["<p>", Markup("咖啡 ☕ 😀"), "</p>", "x" * 1000])

    assert type(ascii_page) is str and ascii_page == "<p>plain</p>"
    assert isinstance(mixed, Page) and mixed == "<p>咖啡 ☕ 😀</p>" + "x" * 1000
    assert mixed.encode() == str(mixed).encode("utf-8")
    assert mixed.encode("utf-8") == mixed.encode("UTF8") == mixed.encode()
    assert mixed.encode("utf-16") == str(mixed).encode("utf-16")  # other codecs as str's
    assert mixed.encode("ascii", "xmlcharrefreplace").isascii()
    assert type(pickle.loads(pickle.dumps(mixed))) is str


def test_a_feed_page_is_all_ascii_unless_a_post_is_not_and_shows_the_same_text(repo, alice, bob):
    repo.graph.follow(alice.id, bob.id)
    repo.posts.create_post(bob.id, "Plain words")
    client = login(Client(), repo, alice)

    plain = client.get("/").content
    repo.posts.create_post(bob.id, "Coffee ☕ and 咖啡")
    mixed = client.get("/").content.decode()

    assert plain.isascii()  # the glyphs (♡ ⟲ ·), the footer's 简体中文: references
    assert "Coffee ☕ and 咖啡" in mixed  # a post's words as written
    assert '<option value="zh-hans" lang="zh-hans">简体中文</option>' in unescape(mixed)
    assert mixed.count('aria-hidden="true">&#9825;</span>') == 2  # each card's Like


def test_messages_are_formatted_as_jinjas_newstyle_gettext_would():
    page = (
        '{{ _("100%% sure") }}|{{ _("Hi %(name)s", name=who) }}|'
        '{{ ngettext("%(num)s post", "%(num)s posts", 3) }}|'
        '{{ pgettext("a button", "Follow") }}|'
        "{% trans %}Hello {{ who }}{% endtrans %}"
    )

    assert render(page, who="<b>") == "100% sure|Hi &lt;b&gt;|3 posts|Follow|Hello &lt;b&gt;"
    assert render(page, who="<b>") == render(page, who="<b>")  # remembered: the same again
    plain = engines["jinja2"].env.overlay(autoescape=False).from_string(page)
    assert plain.render(who="<b>") == "100% sure|Hi <b>|3 posts|Follow|Hello <b>"
