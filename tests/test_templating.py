"""The template vocabulary (social/templating/): Django-compatible helpers, and what is
remembered between pages never shows one reader what belongs to another."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from django.http import QueryDict
from django.template import engines
from django.test import RequestFactory
from django.utils import timezone
from markupsafe import Markup

from social.account_forms import LoginForm
from social.post_forms import PostForm, ReplyForm
from social.repository import AnonymousUser, Post, User
from social.repository.models import PostCounts
from social.templating import cards, fields, filters, links

T0 = 1_700_000_000


def render(source: str, **context) -> str:
    return engines["jinja2"].from_string(source).render(context)


def test_url_reverses_and_keeps_the_script_prefix():
    links.set_script_prefix("/")
    assert links.url("social:profile", "bob") == "/u/bob/"
    links.set_script_prefix("/social/")
    try:
        assert links.url("social:profile", "bob") == "/social/u/bob/"
        assert links.url("social:post_detail", 7) == "/social/p/7/"
    finally:
        links.set_script_prefix("/")


def test_querystring_keeps_filters_and_changes_the_page():
    request = RequestFactory().get("/staff/users/", {"q": "al", "page": "2"})

    assert QueryDict(links.querystring(request, page=3)[1:]) == QueryDict("q=al&page=3")
    assert links.querystring(request, page=None) == "?q=al"
    assert links.querystring(RequestFactory().get("/")) == ""


def test_filters_say_what_djangos_say():
    when = datetime.fromtimestamp(T0, tz=UTC)  # 2023-11-14 22:13:20 UTC

    assert filters.intcomma(1234567) == "1,234,567"
    assert filters.date(when, "j M Y, H:i") == "14 Nov 2023, 22:13"
    assert filters.date(when, "c") == "2023-11-14T22:13:20+00:00"
    assert filters.date(None, "c") == ""
    assert filters.pluralize(1) == "" and filters.pluralize(2) == "s"
    assert filters.pluralize([1, 2], "y,ies") == "ies"
    assert filters.truncatechars("x" * 50, 10) == "x" * 9 + "…"
    assert filters.naturaltime(timezone.now() - timedelta(hours=3)) == "3\xa0hours ago"


def test_linebreaksbr_escapes_before_breaking_lines():
    html = filters.linebreaksbr("<b>one</b>\r\ntwo\rthree\nfour")

    assert html == "&lt;b&gt;one&lt;/b&gt;<br>two<br>three<br>four"


def test_templates_escape_what_they_show():
    assert render("{{ x }}", x="<script>") == "&lt;script&gt;"


def test_a_blank_field_is_rendered_once_and_a_submitted_one_every_time():
    first = fields.widget(PostForm()["status"])
    assert 'name="status"' in first and 'data-maxchars="280"' in first
    assert fields.widget(PostForm()["status"]) is first

    typed = fields.widget(PostForm(data={"status": "hello <you>"})["status"])

    assert "hello &lt;you&gt;" in typed
    assert fields.widget(LoginForm()["username"]) != first


def site_cards() -> cards.PostCards:
    """The site's PostCards (what post_card and post_cards are bound to)."""
    return engines["jinja2"].env.globals["post_card"].__self__


class Token:
    """A page's CSRF input that records whether the page asked for it."""

    def __init__(self, value: str) -> None:
        self.value, self.used = value, False

    def __html__(self) -> Markup:
        self.used = True
        return Markup('<input type="hidden" name="csrfmiddlewaretoken" value="{}">').format(
            self.value
        )


def page_card(post, user, counts=None, *, path="/timeline/?page=2", token=None, **context):
    """Render post_card(post, user, counts) as a page at path would, with its CSRF input."""
    return render(
        "{{ post_card(post, user, counts) }}",
        post=post,
        user=user,
        counts=counts or {},
        request=RequestFactory().get(path),
        csrf_input=token or Token("t0"),
        **context,
    )


def test_a_remembered_card_never_shows_a_reader_the_report_link_of_their_own_post():
    post = Post(id=1, author_id=1, author_name="alice", time=T0, body="hi")
    alice = User(id=1, username="alice")
    bob = User(id=2, username="bob")

    as_bob = site_cards().card(post, bob)
    as_alice = site_cards().card(post, alice)
    as_visitor = site_cards().card(post, AnonymousUser())

    assert "Report" in as_bob
    assert "Report" not in as_alice
    assert "Report" not in as_visitor
    assert site_cards().card(post, bob) is as_bob  # remembered


def test_a_remembered_card_follows_a_deletion():
    post = Post(id=2, author_id=1, author_name="alice", time=T0, body="hi")
    deleted = Post(id=2, author_id=1, author_name="alice", time=T0, body="hi", is_deleted=True)
    bob = User(id=2, username="bob")

    assert "removed by moderators" not in site_cards().card(post, bob)
    # The repository's policy says a hidden post offers no actions (visibility.may_act).
    closed = {2: PostCounts(actionable=False)}
    assert "removed by moderators" in site_cards().card(deleted, bob, closed)
    # Nothing to do with a removed post:
    assert "Like" not in site_cards().card(deleted, bob, closed)


def test_post_cards_renders_a_feed_in_order_as_the_single_cards_would():
    posts = [Post(id=i, author_id=9, author_name="zed", time=T0 + i, body=f"b{i}") for i in (5, 4)]
    bob = User(id=2, username="bob")
    counts = {5: PostCounts(replies=2, likes=1), 4: PostCounts(likes=7, liked=True)}

    html = render(
        "{% for card in post_cards(posts, user, counts) %}{{ card }}{% endfor %}",
        posts=posts,
        user=bob,
        counts=counts,
        request=RequestFactory().get("/"),
        csrf_input=Token("t1"),
    )

    single = [page_card(p, bob, counts, path="/", token=Token("t1")) for p in posts]
    assert html == single[0] + single[1]
    assert html.index(">b5<") < html.index(">b4<")
    assert "2 replies" in single[0] and 'title="7 likes">7<' in single[1]


def test_a_card_holds_no_readers_token_its_buttons_submit_the_pages_one_form():
    post = Post(id=3, author_id=9, author_name="zed", time=T0, body="hello")
    alice = User(id=1, username="alice")
    bob = User(id=2, username="bob")
    tokens = [Token("AAA"), Token("BBB")]

    as_alice = page_card(post, alice, {3: PostCounts(likes=1, liked=True)}, token=tokens[0])
    as_bob = page_card(post, bob, {3: PostCounts(likes=1, liked=False)}, token=tokens[1])

    assert 'form="card-actions" formaction="/p/3/unlike/"' in as_alice and "Liked" in as_alice
    assert 'form="card-actions" formaction="/p/3/like/"' in as_bob and "Liked" not in as_bob
    assert 'form="card-actions" formaction="/u/zed/mute/"' in as_bob
    assert "<form" not in as_bob and "csrfmiddlewaretoken" not in as_alice + as_bob
    assert not any(token.used for token in tokens)


def page_as(user, path: str, posts=(), **context) -> str:
    """Render a page extending base.html with posts' cards for user at path, with a CSRF
    field "t9"."""
    template = engines["jinja2"].env.from_string(
        '{% extends "base.html" %}{% block content %}'
        "{% for card in post_cards(posts, user, {}) %}{{ card }}{% endfor %}"
        "{% endblock %}"
    )
    request = RequestFactory().get(path)
    return template.render(
        user=user, request=request, csrf_input=Token("t9"), posts=list(posts), **context
    )


def test_a_page_of_cards_has_one_card_actions_form_that_comes_back_to_the_page():
    bob = User(id=2, username="bob")
    posts = [Post(id=i, author_id=9, author_name="zed", time=T0, body="hi") for i in (8, 9)]

    on_page_two = page_as(bob, "/timeline/?page=2", posts)
    shown_elsewhere = page_as(bob, "/post/", posts, page_url="/p/4/")

    form = (
        '<form id="card-actions" method="post" hidden><input type="hidden" '
        'name="csrfmiddlewaretoken" value="t9"><input type="hidden" name="next" value="{}"></form>'
    )
    assert form.format("/timeline/?page=2") in on_page_two
    assert form.format("/p/4/") in shown_elsewhere
    assert on_page_two.count('id="card-actions"') == 1
    assert on_page_two.count('form="card-actions" formaction="/p/9/like/"') == 1


def test_a_page_without_a_readers_cards_has_no_card_actions_form_nor_echoes_its_url():
    posts = [Post(id=8, author_id=9, author_name="zed", time=T0, body="hi")]

    no_cards = page_as(User(id=2, username="bob"), "/login/?next=https://evil.example/")
    a_visitors = page_as(AnonymousUser(), "/timeline/?x=evil.example", posts)

    assert 'id="card-actions"' not in no_cards + a_visitors
    assert "evil.example" not in no_cards + a_visitors


def test_a_visitor_sees_the_counts_and_no_form_and_no_token_is_made():
    post = Post(id=5, author_id=9, author_name="zed", time=T0, body="hello")
    token = Token("never")

    html = page_card(post, AnonymousUser(), {5: PostCounts(replies=1, likes=3)}, token=token)

    assert "3 likes" in html and "1 reply" in html
    assert "<form" not in html and "card-actions" not in html and not token.used


def test_only_the_author_gets_the_delete_link():
    post = Post(id=6, author_id=1, author_name="alice", time=T0, body="mine")
    link = 'href="/p/6/delete/"'

    assert link in page_card(post, User(id=1, username="alice"))
    assert link not in page_card(post, User(id=2, username="bob"))
    assert link not in page_card(post, AnonymousUser())


def test_a_reply_says_whom_it_answers_and_links_the_parent():
    post = Post(
        id=7, author_id=2, author_name="bob", time=T0, body="yes", reply_to=3,
        reply_to_name="<alice>",
    )  # fmt: skip

    html = page_card(post, AnonymousUser())

    assert '<a class="replying" href="/p/3/">replying to @&lt;alice&gt;</a>' in html


def text_of(body: str, mentions=(), tags=()) -> str:
    return str(
        links.post_text(
            Post(
                id=1, author_id=1, author_name="a", time=T0, body=body, mentions=mentions, tags=tags
            )
        )
    )


def test_post_text_links_the_mentions_the_post_was_written_with_ignoring_case():
    html = text_of("hi @Bob and @bob, not @nobody or bob@example.com", mentions=(("Bob", 2),))

    assert html == (
        'hi <a class="mention" href="/u/Bob/">@Bob</a> and '
        '<a class="mention" href="/u/bob/">@bob</a>, not @nobody or bob@example.com'
    )


def test_post_text_links_tags_to_their_pages_in_any_script():
    html = text_of("#Redis is fast, #café #日本 #42 x#no", tags=("redis", "café", "日本"))

    assert html == (
        '<a class="tag" href="/tag/redis/">#Redis</a> is fast, '
        '<a class="tag" href="/tag/caf%C3%A9/">#café</a> '
        '<a class="tag" href="/tag/%E6%97%A5%E6%9C%AC/">#日本</a> #42 x#no'
    )


def test_post_text_escapes_everything_around_the_links():
    html = text_of(
        '<script>alert(1)</script> @bob "x" & #tag<b>', mentions=(("bob", 2),), tags=("tag",)
    )

    assert html == (
        "&lt;script&gt;alert(1)&lt;/script&gt; "
        '<a class="mention" href="/u/bob/">@bob</a> &#34;x&#34; &amp; '
        '<a class="tag" href="/tag/tag/">#tag</a>&lt;b&gt;'
    )


def test_post_text_never_lets_a_stored_name_or_tag_break_out_of_markup():
    # A tampered post hash: what was stored is only linked where the text itself matches,
    # and the text is what gets shown, escaped.
    html = text_of(
        '@x"><script> #t"onclick=alert(1)',
        mentions=(('x"><script>', 2), ("x", 3)),
        tags=('t"onclick=alert(1)', "t"),
    )

    assert "<script>" not in html and 'onclick="' not in html and '"onclick' not in html
    assert html == (
        '<a class="mention" href="/u/x/">@x</a>&#34;&gt;&lt;script&gt; '
        '<a class="tag" href="/tag/t/">#t</a>&#34;onclick=alert(1)'
    )


def test_post_text_of_a_plain_post_is_just_escaped():
    assert text_of("a < b & c") == "a &lt; b &amp; c"
    assert text_of("@bob #tag") == "@bob #tag"  # nobody mentioned, no tags stored


def test_a_reply_form_remembers_its_blank_widget_apart_from_the_composer():
    composer = fields.widget(PostForm()["status"])
    reply = fields.widget(ReplyForm()["status"])

    assert 'placeholder="What are you doing?"' in composer
    assert 'placeholder="Write your reply"' in reply


# Ages as feeds show them (issue 11): short, translatable, cheap enough for a card's key.

NOW = datetime(2025, 11, 20, 12, 0, tzinfo=UTC).timestamp()


def ago(seconds: float) -> datetime:
    return datetime.fromtimestamp(NOW - seconds, tz=UTC)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (ago(-30), "now"),  # a post from a clock a little ahead
        (ago(0), "now"),
        (ago(59), "now"),
        (ago(60), "1m"),
        (ago(5 * 60 + 59), "5m"),
        (ago(3599), "59m"),
        (ago(3600), "1h"),
        (ago(3 * 3600 + 10), "3h"),
        (ago(86399), "23h"),
        (datetime(2025, 11, 19, 11, 0, tzinfo=UTC), "Nov 19"),
        (datetime(2025, 1, 1, 0, 0, tzinfo=UTC), "Jan 1"),
        (datetime(2024, 12, 31, 23, 59, tzinfo=UTC), "Dec 31, 2024"),
        (datetime(2019, 5, 2, 8, 0, tzinfo=UTC), "May 2, 2019"),
    ],
)
def test_age_is_short_then_a_date(value, shown):
    assert filters.age(value, NOW) == shown
    assert render("{{ when|age }}", when=value) == filters.age(value)  # the filter, now


def test_age_of_nothing_is_nothing():
    assert filters.age(None) == ""


def test_age_reads_the_year_in_the_sites_time_zone():
    # 31 Dec 2025 23:30 UTC is already 2026 in Tokyo: a post from 2 Jan 2025 there is "last
    # year", so it shows its year.
    new_year = datetime(2025, 12, 31, 23, 30, tzinfo=UTC).timestamp()
    with timezone.override("Asia/Tokyo"):
        assert filters.age(datetime(2025, 1, 2, 3, 0, tzinfo=UTC), new_year) == "Jan 2, 2025"
    assert filters.age(datetime(2025, 1, 2, 3, 0, tzinfo=UTC), new_year) == "Jan 2"


def test_every_age_goes_through_gettext(monkeypatch):
    catalog = {"now": "刚刚", "%(count)dm": "%(count)d分钟", "%(count)dh": "%(count)d小时"}
    dates = {"M j": "n月j日", "M j, Y": "Y年n月j日"}
    monkeypatch.setattr(filters, "gettext", lambda s: catalog[s])
    monkeypatch.setattr(filters, "ngettext", lambda s, p, n: catalog[s if n == 1 else p])
    monkeypatch.setattr(filters, "pgettext", lambda context, s: dates[s])
    monkeypatch.setattr(filters, "get_language", lambda: "zh-hans")
    monkeypatch.setattr(filters, "_recent_ages", {})  # the shown ages it remembers

    assert filters.age(ago(1), NOW) == "刚刚"
    assert filters.age(ago(300), NOW) == "5分钟"
    assert filters.age(ago(3 * 3600), NOW) == "3小时"
    assert filters.age(datetime(2025, 11, 19, 11, 0, tzinfo=UTC), NOW) == "11月19日"
    assert filters.age(datetime(2024, 3, 4, 11, 0, tzinfo=UTC), NOW) == "2024年3月4日"


def test_a_card_shows_the_age_of_its_key_and_the_exact_time_for_readers_and_on_hover():
    post = Post(id=8, author_id=9, author_name="zed", time=int(time.time()) - 300, body="aged")
    bob = User(id=2, username="bob")
    exact = filters.date(post.created, "j M Y, H:i T")

    html = site_cards().card(post, bob)

    assert '<span aria-hidden="true">5m</span>' in html
    assert f'<span class="visually-hidden exact">{exact}</span>' in html
    assert f'title="{exact}"' in html
    # the same post an hour later is another card, not the remembered one
    later = site_cards()._card(post, bob, cards.NO_COUNTS, None, time.time() + 3600)
    assert '<span aria-hidden="true">1h</span>' in later


def test_the_permalinks_card_shows_its_exact_time_instead_of_its_age():
    post = Post(id=9, author_id=9, author_name="zed", time=T0, body="exact")

    html = site_cards().card(post, AnonymousUser(), exact_time=True)

    assert (
        '<time datetime="2023-11-14T22:13:20+00:00" class="exact">14 Nov 2023, 22:13 UTC</time>'
        in html
    )
    assert html.count("<time") == 1 and "visually-hidden exact" not in html
    assert html != site_cards().card(post, AnonymousUser())


def test_with_auto_id_gives_a_form_its_own_ids_and_its_own_remembered_widgets():
    login = fields.with_auto_id(LoginForm(), "login_%s")

    assert 'id="login_username"' in fields.widget(login["username"])
    assert login["password"].id_for_label == "login_password"
    assert 'id="id_username"' in fields.widget(LoginForm()["username"])


def test_a_templates_globals_are_the_sites_with_its_own_over_them_never_changing_the_sites():
    env = engines["jinja2"].env
    own = env.from_string("{{ url('social:home') }} {{ answer }}", globals={"answer": 42})

    assert type(env.get_template("base.html").globals) is dict  # no ChainMap to copy per page
    assert own.render() == "/ 42"
    assert "answer" not in env.globals and env.from_string("{{ answer }}").render() == ""
