"""The template vocabulary (social/templating.py): Django-compatible helpers, and what is
remembered between pages never shows one reader what belongs to another."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.http import QueryDict
from django.template import engines
from django.test import RequestFactory
from django.utils import timezone

from social import templating
from social.forms import LoginForm, PostForm
from social.repository import AnonymousUser, Post, User

T0 = 1_700_000_000


def render(source: str, **context) -> str:
    return engines["jinja2"].from_string(source).render(context)


def test_url_reverses_and_keeps_the_script_prefix():
    templating.set_script_prefix("/")
    assert templating.url("social:profile", "bob") == "/u/bob/"
    templating.set_script_prefix("/social/")
    try:
        assert templating.url("social:profile", "bob") == "/social/u/bob/"
        assert templating.url("social:post_detail", 7) == "/social/p/7/"
    finally:
        templating.set_script_prefix("/")


def test_querystring_keeps_filters_and_changes_the_page():
    request = RequestFactory().get("/staff/users/", {"q": "al", "page": "2"})

    assert QueryDict(templating.querystring(request, page=3)[1:]) == QueryDict("q=al&page=3")
    assert templating.querystring(request, page=None) == "?q=al"
    assert templating.querystring(RequestFactory().get("/")) == ""


def test_filters_say_what_djangos_say():
    when = datetime.fromtimestamp(T0, tz=UTC)  # 2023-11-14 22:13:20 UTC

    assert templating.intcomma(1234567) == "1,234,567"
    assert templating.date(when, "j M Y, H:i") == "14 Nov 2023, 22:13"
    assert templating.date(when, "c") == "2023-11-14T22:13:20+00:00"
    assert templating.date(None, "c") == ""
    assert templating.pluralize(1) == "" and templating.pluralize(2) == "s"
    assert templating.pluralize([1, 2], "y,ies") == "ies"
    assert templating.truncatechars("x" * 50, 10) == "x" * 9 + "…"
    assert templating.naturaltime(timezone.now() - timedelta(hours=3)) == "3\xa0hours ago"


def test_linebreaksbr_escapes_before_breaking_lines():
    html = templating.linebreaksbr("<b>one</b>\r\ntwo\rthree\nfour")

    assert html == "&lt;b&gt;one&lt;/b&gt;<br>two<br>three<br>four"


def test_templates_escape_what_they_show():
    assert render("{{ x }}", x="<script>") == "&lt;script&gt;"


def test_a_blank_field_is_rendered_once_and_a_submitted_one_every_time():
    first = templating.widget(PostForm()["status"])
    assert 'name="status"' in first and "maxlength" in first
    assert templating.widget(PostForm()["status"]) is first

    typed = templating.widget(PostForm(data={"status": "hello <you>"})["status"])

    assert "hello &lt;you&gt;" in typed
    assert templating.widget(LoginForm()["username"]) != first


def test_a_remembered_card_never_shows_a_reader_the_report_link_of_their_own_post():
    cards = engines["jinja2"].env.globals["post_card"]
    post = Post(id=1, author_id=1, author_name="alice", time=T0, body="hi")
    alice = User(id=1, username="alice")
    bob = User(id=2, username="bob")

    as_bob = cards(post, bob)
    as_alice = cards(post, alice)
    as_visitor = cards(post, AnonymousUser())

    assert "Report" in as_bob
    assert "Report" not in as_alice
    assert "Report" not in as_visitor
    assert cards(post, bob) is as_bob  # remembered


def test_a_remembered_card_follows_a_deletion():
    cards = engines["jinja2"].env.globals["post_card"]
    post = Post(id=2, author_id=1, author_name="alice", time=T0, body="hi")
    deleted = Post(id=2, author_id=1, author_name="alice", time=T0, body="hi", is_deleted=True)
    bob = User(id=2, username="bob")

    assert "removed by moderators" not in cards(post, bob)
    assert "removed by moderators" in cards(deleted, bob)


def test_post_cards_renders_a_feed_in_order_as_the_single_cards_would():
    env = engines["jinja2"].env
    posts = [Post(id=i, author_id=9, author_name="zed", time=T0 + i, body=f"b{i}") for i in (5, 4)]
    bob = User(id=2, username="bob")

    html = env.globals["post_cards"](posts, bob)

    assert html == env.globals["post_card"](posts[0], bob) + env.globals["post_card"](posts[1], bob)
    assert html.index(">b5<") < html.index(">b4<")
