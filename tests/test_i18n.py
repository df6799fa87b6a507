"""Two languages: English (the default) and Simplified Chinese (zh-hans), issue 11.

The catalogue (locale/zh_Hans/LC_MESSAGES/django.po) is complete, none of it fuzzy, its
compiled .mo matches it and it holds every string the code marks; pages asked for in Chinese
show none of the site's English words; the language comes from the cookie, else
Accept-Language; the footer's switch sets the cookie; plurals and relative times follow the
language; caches of rendered text keep one copy per language.
"""

from __future__ import annotations

import ast
import gettext as gnu_gettext
import re
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.utils import translation

from social.repository.moderation.limits import wait_phrase
from social.templating import filters
from tests.conftest import login, make_staff, make_user

ROOT = Path(__file__).resolve().parent.parent
PO = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


# --- The catalogue ---------------------------------------------------------------------------


def parse_po(text: str) -> list[dict]:
    """Return the entries of a .po file: msgctxt, msgid, msgid_plural, msgstr ({index:
    text}), flags. Obsolete (#~) entries are left out; the header is the entry with msgid ""."""
    entries: list[dict] = []
    entry: dict | None = None
    field: tuple | str | None = None
    for line in [*text.splitlines(), ""]:
        line = line.strip()
        if not line:
            if entry and "msgid" in entry:
                entries.append(entry)
            entry, field = None, None
            continue
        if line.startswith("#~"):
            continue
        if entry is None:
            entry = {"flags": set(), "msgstr": {}}
        if line.startswith("#,"):
            entry["flags"] |= {flag.strip() for flag in line[2:].split(",")}
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            value = ast.literal_eval(line)
            if isinstance(field, tuple):
                entry["msgstr"][field[1]] += value
            else:
                entry[field] += value
        else:
            keyword, _, rest = line.partition(" ")
            value = ast.literal_eval(rest)
            if keyword.startswith("msgstr"):
                index = int(keyword[7:-1]) if keyword != "msgstr" else 0
                field = ("msgstr", index)
                entry["msgstr"][index] = value
            else:
                field = keyword
                entry[keyword] = value
    return entries


def messages(entries: list[dict]) -> list[dict]:
    return [e for e in entries if e["msgid"] != ""]


def key(entry: dict) -> tuple:
    return entry.get("msgctxt"), entry["msgid"], entry.get("msgid_plural")


@pytest.fixture(scope="module")
def catalogue() -> list[dict]:
    return parse_po(PO.read_text(encoding="utf-8"))


def test_every_message_is_translated_and_none_is_fuzzy(catalogue):
    header = next(e for e in catalogue if e["msgid"] == "")["msgstr"][0]
    assert "Plural-Forms: nplurals=1; plural=0;" in header  # Chinese has one form
    assert "charset=UTF-8" in header
    found = messages(catalogue)
    assert len(found) > 400  # the whole site, not a sample

    untranslated = [key(e) for e in found if not all(s.strip() for s in e["msgstr"].values())]
    fuzzy = [key(e) for e in found if "fuzzy" in e["flags"]]
    plural_without_form = [key(e) for e in found if "msgid_plural" in e and 0 not in e["msgstr"]]

    assert untranslated == []
    assert fuzzy == []
    assert plural_without_form == []


def test_placeholders_survive_translation(catalogue):
    """A translation keeps every %(name)s of its message: a lost one would raise (or print
    nothing) at render time. (msgfmt --check checks python-format entries too.)"""
    placeholder = re.compile(r"%\((\w+)\)[sd]")
    wrong = []
    for entry in messages(catalogue):
        wanted = set(placeholder.findall(entry["msgid"] + entry.get("msgid_plural", "")))
        for text in entry["msgstr"].values():
            if set(placeholder.findall(text)) != wanted:
                wrong.append((entry["msgid"], text))
    assert wrong == []


def test_the_compiled_catalogue_is_the_po_file(catalogue):
    with MO.open("rb") as handle:
        compiled = gnu_gettext.GNUTranslations(handle)
    expected = {}
    for entry in messages(catalogue):
        msgid = entry["msgid"]
        if "msgctxt" in entry:
            msgid = f"{entry['msgctxt']}\x04{msgid}"
        if "msgid_plural" in entry:
            for index, text in entry["msgstr"].items():
                expected[(msgid, index)] = text
        else:
            expected[msgid] = entry["msgstr"][0]
    actual = {k: v for k, v in compiled._catalog.items() if k != ""}  # "" is the header

    assert actual == expected, "run scripts/messages to compile the .mo"


@pytest.mark.skipif(
    not (shutil.which("xgettext") and shutil.which("msgcat")),
    reason="GNU gettext (xgettext, msgcat) is not installed: sudo apt-get install gettext",
)
def test_the_catalogue_holds_every_message_the_code_marks(catalogue, tmp_path):
    pot = tmp_path / "django.pot"
    subprocess.run([str(ROOT / "scripts" / "messages"), "--pot", str(pot)], check=True)
    marked = {key(e) for e in messages(parse_po(pot.read_text(encoding="utf-8")))}
    translated = {key(e) for e in messages(catalogue)}

    assert sorted(marked - translated, key=str) == [], "run scripts/messages, then translate"
    assert sorted(translated - marked, key=str) == [], "run scripts/messages to drop these"


# --- Pages in Chinese ------------------------------------------------------------------------

# The site's own words: none may show on a page asked for in Chinese (user content here is
# Chinese, and names never hold these words).
ENGLISH = [
    "Log in",
    "Log out",
    "Sign up",
    "Follow",
    "Unfollow",
    "Follows you",
    "Timeline",
    "Home",
    "Mentions",
    "Reply",
    "Replies",
    "Like",
    "Liked",
    "likes",
    "followers",
    "following",
    "Followers",
    "Following",
    "ago",
    "minutes",
    "hours",
    "days",
    "Report",
    "Reported",
    "Reports",
    "Staff",
    "Delete",
    "Cancel",
    "Page",
    "Posts",
    "posts",
    "post",
    "Newer",
    "Older",
    "Previous",
    "Next",
    "Settings",
    "Password",
    "Username",
    "Dashboard",
    "Users",
    "Audit",
    "Search",
    "Dismiss",
    "Suspend",
    "suspended",
    "open",
    "never",
    "Status",
    "Joined",
    "Trending",
    "Notices",
    "Welcome",
    "Skip",
    "Language",
    "Change",
    "Not found",
    "Slow down",
    "Try again",
    "the",
    "and",
    "you",
    "your",
    "by",
    "with",
    "of",
    "to",
    "is",
    "no",
    "No",
]
ENGLISH_RE = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in ENGLISH) + r")\b")
SHOWN_ATTRIBUTES = {
    "title",
    "aria-label",
    "placeholder",
    "alt",
    "data-label",
    "content",
    "data-left-one",
    "data-left-other",
    "data-over-one",
    "data-over-other",
}


class ShownText(HTMLParser):
    """Collect what a reader sees or hears of a page: text (not scripts or styles) and the
    attributes that are shown or read out."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.hidden += 1
        is_url = tag == "meta" and dict(attrs).get("property") == "og:url"
        for name, value in attrs:
            if name in SHOWN_ATTRIBUTES and value and not is_url:
                self.parts.append(value)

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.hidden -= 1

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def english_words(html: str) -> list[str]:
    parser = ShownText()
    parser.feed(html)
    # Not the site's words: its name, the time zone, server facts, the other language's
    # name in the switch, the words of a Redis server's own INFO.
    text = " ".join(parser.parts)
    for allowed in ("Retwis", "English", "UTC", "Redis", "INFO", "AOF", "RDB"):
        text = text.replace(allowed, "")
    return sorted(set(ENGLISH_RE.findall(text)))


@pytest.fixture
def scene(repo, settings):
    """A small site with Chinese content: posts, a reply, a mention, a tag, likes, follows,
    an open and a resolved report, a staff note, a suspension in the log."""
    settings.RETWIS_LIMIT_POSTS = (100, 600)
    alice, bob = make_user(repo, "alice"), make_user(repo, "bob")
    carol = make_user(repo, "carol")
    sam = make_staff(repo, "sam")
    first = repo.posts.create_post(alice.id, "今天天气很好 #散步 @bob")
    reply = repo.posts.create_post(bob.id, "是啊，出去走走", reply_to=first)
    other = repo.posts.create_post(alice.id, "第二条帖子")
    repo.posts.create_post(carol.id, "大家好")
    repo.graph.follow(bob.id, alice.id)
    repo.graph.follow(alice.id, bob.id)
    repo.likes.like(bob.id, first)
    repo.reports.report_post(bob, first, "spam", "看起来像广告")
    closed = repo.reports.report_post(carol, other, "other", "")
    repo.reports.resolve_report(closed, sam, "dismissed", "")
    repo.moderation.add_note(alice.id, sam, "第一次提醒")
    repo.moderation.suspend(carol.id, sam, "垃圾信息")
    return {"alice": alice, "bob": bob, "sam": sam, "post": first, "reply": reply}


def zh_client(repo, user=None) -> Client:
    client = Client(**ZH)
    return login(client, repo, user) if user is not None else client


def test_the_public_pages_in_chinese_show_no_english(repo, scene):
    alice, bob, post = scene["alice"], scene["bob"], scene["post"]
    visitor, reader = zh_client(repo), zh_client(repo, bob)
    pages = {
        "welcome": visitor.get("/"),
        "home": reader.get("/"),
        "timeline": visitor.get("/timeline/"),
        "profile": reader.get("/u/alice/"),
        "followers": reader.get("/u/alice/followers/"),
        "likes": reader.get("/u/bob/likes/"),
        "permalink": reader.get(f"/p/{post}/"),
        "permalink, visitor": visitor.get(f"/p/{post}/"),
        "report form": zh_client(repo, alice).get(f"/p/{scene['reply']}/report/"),
        "mentions": reader.get("/mentions/"),
        "tag": visitor.get("/tag/散步/"),
        "password": reader.get("/settings/password/"),
        "delete account": reader.get("/settings/delete/"),
        "delete post": zh_client(repo, alice).get(f"/p/{post}/delete/"),
        "login errors": visitor.post("/login/", {"username": "alice", "password": "wrong"}),
        "register errors": visitor.post(
            "/register/", {"username": "x", "password": "1", "password2": "2"}
        ),
        "404": visitor.get("/u/nobody/"),
    }
    assert pages["login errors"].status_code == 400
    assert "用户名和密码不匹配任何账号。" in pages["login errors"].content.decode()
    assert "两次输入的密码不一致。" in pages["register errors"].content.decode()
    assert pages["404"].status_code == 404
    for name, response in pages.items():
        html = response.content.decode()
        assert '<html lang="zh-hans">' in html, name
        assert english_words(html) == [], name


def test_the_429_page_in_chinese(repo, scene, settings):
    settings.RETWIS_LIMIT_POSTS = (1, 600)
    client = zh_client(repo, scene["bob"])
    assert client.post("/post/", {"status": "第一条"}).status_code == 302

    response = client.post("/post/", {"status": "第二条"})

    html = response.content.decode()
    assert response.status_code == 429
    assert "你在短时间内发布了太多帖子。" in html and "分钟" in html
    assert english_words(html) == []


def test_the_staff_pages_in_chinese_show_no_english(repo, scene):
    staff = zh_client(repo, scene["sam"])
    pages = {
        "dashboard": staff.get("/staff/"),
        "users": staff.get("/staff/users/"),
        "user search": staff.get("/staff/users/?q=a&match=contains"),
        "user": staff.get("/staff/users/alice/"),
        "posts": staff.get("/staff/posts/"),
        "delete posts": staff.get(f"/staff/posts/delete/?id={scene['post']}"),
        "reports": staff.get("/staff/reports/"),
        "resolved": staff.get("/staff/reports/resolved/"),
        "log": staff.get("/staff/log/"),
    }
    for name, response in pages.items():
        html = response.content.decode()
        assert response.status_code == 200, name
        assert english_words(html) == [], name
    assert "垃圾信息或诈骗" in pages["reports"].content.decode()  # a report's reason
    assert "封禁了账号" in pages["log"].content.decode()  # an audit action


# --- Choosing the language -------------------------------------------------------------------


def test_english_is_the_default_and_accept_language_chooses_chinese(repo, scene):
    english = Client().get("/timeline/")
    chinese = Client(HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9,en;q=0.5").get("/timeline/")
    unknown = Client(HTTP_ACCEPT_LANGUAGE="fr-FR").get("/timeline/")

    assert '<html lang="en">' in english.content.decode() and "Timeline" in english.content.decode()
    assert '<html lang="zh-hans">' in chinese.content.decode()
    assert "时间线" in chinese.content.decode()
    assert '<html lang="en">' in unknown.content.decode()
    assert chinese["Content-Language"] == "zh-hans"
    assert "Accept-Language" in chinese["Vary"]


def test_the_cookie_chooses_the_language_over_accept_language(repo, scene):
    client = Client(**ZH)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    assert '<html lang="en">' in client.get("/timeline/").content.decode()

    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    assert '<html lang="zh-hans">' in client.get("/timeline/").content.decode()


def test_the_footer_switch_sets_the_cookie_and_goes_back(repo, scene):
    client = Client(enforce_csrf_checks=True)
    page = client.get("/timeline/?page=1").content.decode()
    form = re.search(
        r'<form class="language" method="post" action="([^"]+)">(.*?)</form>', page, re.S
    )
    assert form and form[1] == "/i18n/setlang/"
    assert '<option value="en" lang="en" selected>English</option>' in form[2]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form[2])[1]

    refused = client.post("/i18n/setlang/", {"language": "zh-hans"})
    assert refused.status_code == 403  # no CSRF token
    assert settings.LANGUAGE_COOKIE_NAME not in client.cookies

    response = client.post(
        "/i18n/setlang/",
        {"language": "zh-hans", "csrfmiddlewaretoken": token},
        HTTP_REFERER="http://testserver/timeline/?page=1",
    )

    assert response.status_code == 302
    assert response["Location"] == "http://testserver/timeline/?page=1"  # the page it was on
    cookie = response.cookies[settings.LANGUAGE_COOKIE_NAME]
    assert cookie.value == "zh-hans"
    assert cookie["max-age"] == 365 * 24 * 3600
    assert cookie["samesite"] == "Lax" and cookie["httponly"]
    chinese = client.get("/timeline/").content.decode()
    assert '<html lang="zh-hans">' in chinese
    # Each language named in itself, in references (social/templating/ascii.py).
    option = '<option value="zh-hans" lang="zh-hans" selected>简体中文</option>'
    assert option in unescape(chinese)


@pytest.mark.parametrize("next_url", ["https://evil.example/", "//evil.example/x"])
def test_the_switch_never_sends_anyone_off_the_site(repo, next_url):
    response = Client().post("/i18n/setlang/", {"language": "zh-hans", "next": next_url})

    assert response.status_code == 302 and response["Location"] == "/"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"


def test_the_switch_answers_post_only_and_refuses_unknown_languages(repo):
    client = Client()
    got = client.get("/i18n/setlang/?language=zh-hans")  # only a POST changes the language
    assert settings.LANGUAGE_COOKIE_NAME not in got.cookies
    response = client.post("/i18n/setlang/", {"language": "xx", "next": "/timeline/"})
    assert response["Location"] == "/timeline/"
    assert settings.LANGUAGE_COOKIE_NAME not in response.cookies


def test_feeds_stay_in_the_sites_language_with_no_vary(repo, scene):
    response = Client(**ZH).get("/timeline/feed/")

    assert response.status_code == 200
    assert b"Retwis: everyone&#x27;s latest posts" in response.content or (
        b"Retwis: everyone's latest posts" in response.content
    )
    assert "Vary" not in response and "Content-Language" not in response


# --- Plurals, relative times, caches ---------------------------------------------------------


def test_plural_forms_in_english(repo, alice, client):
    repo.posts.create_post(alice.id, "one")
    one = client.get("/u/alice/").content.decode()
    repo.posts.create_post(alice.id, "two")
    two = client.get("/u/alice/").content.decode()

    assert "Posts by @alice on Retwis: 1 post, 0 followers." in one
    assert "Posts by @alice on Retwis: 2 posts, 0 followers." in two
    assert wait_phrase(1) == "1 second" and wait_phrase(120) == "2 minutes"
    with translation.override("zh-hans"):
        assert wait_phrase(1) == "1 秒" and wait_phrase(120) == "2 分钟"


def test_relative_times_in_both_languages():
    now = datetime(2025, 11, 19, 12, 0, tzinfo=UTC)
    stamp = now.timestamp()
    cases = {
        "en": ["now", "5m", "3h", "Nov 17", "Nov 19, 2024"],
        "zh-hans": ["刚刚", "5分钟", "3小时", "11月17日", "2024年11月19日"],
    }
    for language, expected in cases.items():
        with translation.override(language):
            shown = [
                filters.age(now - timedelta(seconds=10), stamp),
                filters.age(now - timedelta(minutes=5), stamp),
                filters.age(now - timedelta(hours=3), stamp),
                filters.age(now - timedelta(days=2), stamp),
                filters.age(now - timedelta(days=365), stamp),
            ]
        assert shown == expected, language
    with translation.override("en"):
        assert filters.naturaltime(datetime.now(UTC) - timedelta(minutes=5)) == ("5\xa0minutes ago")
    with translation.override("zh-hans"):
        assert "分钟" in filters.naturaltime(datetime.now(UTC) - timedelta(minutes=5))


def test_remembered_cards_dates_and_widgets_keep_one_copy_per_language(repo, alice, bob):
    """PostCards, the date filter's memo and the blank-widget cache key on the language: a
    page in English then in Chinese shows each language, and English again after."""
    repo.posts.create_post(bob.id, "你好")
    repo.graph.follow(alice.id, bob.id)
    client = login(Client(), repo, alice)

    english = client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    chinese = client.get("/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    again = client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    timeline_en = Client(HTTP_ACCEPT_LANGUAGE="en").get("/u/bob/").content.decode()
    timeline_zh = Client(**ZH).get("/u/bob/").content.decode()

    for html in (english, again):
        assert ">Reply</a>" in html and 'placeholder="What are you doing?"' in html
        assert "回复" not in html
    assert ">回复</a>" in chinese and 'placeholder="你在做什么？"' in chinese
    assert ">Reply</a>" not in chinese
    assert 'data-left-other="%(num)s characters left"' in english
    assert 'data-left-other="还可输入 %(num)s 个字符"' in chinese
    joined = datetime.now(UTC)
    assert f"Joined {joined:%B %Y}" in timeline_en
    assert f"{joined.year}年{joined.month}月加入" in timeline_zh
