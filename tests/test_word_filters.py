"""Word filters (issue 17, part 3): posts with a filtered word leave the reader's feeds and
fold in conversations, in any case and script, until the filter expires."""

from __future__ import annotations

import html
import time

import pytest
from django.test import Client

from social import keys
from social.repository import NotAllowed, Viewer
from social.repository.relations.filters import (
    FilterSet,
    Keyword,
    WordFilter,
    hides,
    hits,
    matching,
)
from tests.conftest import login, make_user

T0 = 1_700_000_000
# What the filters page sends by default: hide, where the site's first filters acted.
HIDE = {"action": "hide", "context": ["home", "notifications", "public", "thread"]}


@pytest.mark.parametrize(
    ("phrase", "body", "found"),
    [
        ("redis", "I love #Redis!", True),  # a hashtag, any case
        ("redis", "redisson is a client", False),  # whole words only
        ("new york", "New   York rocks", True),  # spaces as typed do not matter
        ("#deals", "cheap #deals now", True),
        ("strasse", "Die STRASSE", True),
        ("你好", "你好吗，朋友", True),  # no spaces between words: anywhere in the run
        ("привет", "Привет, мир", True),
        ("cat", "concatenate", False),
    ],
)
def test_a_phrase_matches_as_a_reader_would_expect(phrase, body, found):
    assert bool(matching((phrase,), body)) is found


@pytest.fixture
def reader(repo):
    """alice follows bob; bob posted about #redis and about lunch, and replied to himself."""
    alice, bob = make_user(repo, "alice"), make_user(repo, "bob")
    repo.graph.follow(alice.id, bob.id, at=T0)
    spoiler = repo.posts.create_post(bob.id, "The #Redis talk spoiler: it wins", at=T0 + 1)
    lunch = repo.posts.create_post(bob.id, "lunch time", at=T0 + 2)
    reply = repo.posts.create_post(bob.id, "more REDIS spoilers", reply_to=lunch, at=T0 + 3)
    return alice, bob, spoiler, lunch, reply


def test_a_filtered_post_leaves_the_feeds_and_folds_in_conversations(repo, r, reader):
    alice, bob, spoiler, lunch, reply = reader
    repo.filters.add(alice.id, "  Redis ", "never")
    me = Viewer(alice.id)

    assert [p.id for p in repo.pages.home(alice.id).feed.items] == [lunch]
    assert [p.id for p in repo.pages.timeline(me).posts.items] == [lunch]
    assert repo.pages.tag("redis", me).items == []
    talk = repo.pages.conversation(lunch, me)
    assert [p.id for p in talk.replies.items] == [reply] and talk.counts[reply].folded == "redis"
    assert repo.pages.conversation(spoiler, me).counts[spoiler].folded == "redis"  # permalink
    assert [p.id for p in repo.pages.timeline(Viewer(bob.id)).posts.items] == [
        reply,
        lunch,
        spoiler,
    ]  # others: as before
    assert [m.partition("|")[2] for m in r.zrange(keys.filters(alice.id), 0, -1)] == ["redis"]


def test_an_expired_filter_stops_acting_by_itself(repo, r, reader):
    alice, bob, spoiler, *_ = reader
    repo.filters.add(alice.id, "spoiler", "1h", at=int(time.time()) - 3601)

    assert spoiler in [p.id for p in repo.pages.timeline(Viewer(alice.id)).posts.items]
    assert repo.filters.filters(alice.id) == []


def test_filters_refuse_duplicates_and_past_the_cap(repo, r, reader):
    alice, *_ = reader
    repo.filters.add(alice.id, "Redis", "never")
    with pytest.raises(NotAllowed):
        repo.filters.add(alice.id, "REDIS", "1d")
    for i in range(keys.FILTERS_CAP - 1):
        repo.filters.add(alice.id, f"word{i}", "never")
    with pytest.raises(NotAllowed):
        repo.filters.add(alice.id, "one too many", "never")
    assert r.zcard(keys.filters(alice.id)) == keys.FILTERS_CAP


def test_the_settings_page_adds_lists_and_deletes_filters(repo, r, reader):
    alice, *_ = reader
    client = login(Client(), repo, alice)

    added = client.post(
        "/settings/filters/", {"phrase": "Spoiler", "expiry": "7d", **HIDE}, follow=True
    )
    page = added.content.decode()

    assert "Posts with “Spoiler” stay out of your feeds now." in page
    assert "<strong>spoiler</strong>" in page
    ((member, expires),) = r.zrange(keys.filters(alice.id), 0, -1, withscores=True)
    assert member.startswith("1|") and expires > time.time() + 6 * 86400
    client.post("/settings/filters/1/delete/")
    assert r.zcard(keys.filters(alice.id)) == 0
    assert "No filters yet." in client.get("/settings/filters/").content.decode()


@pytest.mark.parametrize(
    ("phrase", "says"),
    [
        ("   ", "Type a word or a phrase to filter."),
        ("x" * 101, "Keep it to 100 characters"),
        ("spoiler", "You already filter “spoiler”."),
    ],
)
def test_a_bad_filter_says_why_keeps_the_text_and_stores_nothing_new(repo, r, reader, phrase, says):
    alice, *_ = reader
    repo.filters.add(alice.id, "spoiler", "never")
    client = login(Client(), repo, alice)

    response = client.post("/settings/filters/", {"phrase": phrase, "expiry": "never", **HIDE})

    assert response.status_code == 400
    html = response.content.decode()
    assert says in html
    if phrase.strip():
        assert f'value="{phrase}"' in html  # what was typed is kept
    assert r.zcard(keys.filters(alice.id)) == 1


def test_a_filter_that_warns_folds_the_post_on_the_home_page_naming_the_word(repo, r, reader):
    alice, bob, spoiler, lunch, reply = reader
    client = login(Client(), repo, alice)

    added = client.post(
        "/settings/filters/",
        {"phrase": "Redis", "expiry": "never", "action": "warn", "context": ["home"]},
        follow=True,
    )

    assert "Posts with “Redis” are folded now, with the word named." in added.content.decode()
    ((member, expires),) = r.zrange(keys.filters(alice.id), 0, -1, withscores=True)
    assert member == (
        '{"id":1,"title":"redis","context":["home"],"action":"warn","keywords":[[1,"redis",true]]}'
    )
    assert expires == float("inf")
    home = client.get("/").content.decode()
    assert "Hidden: it contains “redis”, which you filter. Show it" in html.unescape(home)
    assert home.count('<details class="folded">') == 2
    assert "more REDIS spoilers" in home  # one click away, not gone
    feed = repo.pages.home(alice.id).feed
    assert [p.id for p in feed.items] == [reply, lunch, spoiler]
    assert [feed.counts[i].folded for i in (reply, lunch, spoiler)] == ["redis", "", "redis"]
    # Only where it was told: the timeline lists it unfolded.
    assert repo.pages.timeline(Viewer(alice.id)).posts.counts[spoiler].folded == ""
    listed = client.get("/settings/filters/").content.decode()
    assert "Folded in: Home ·" in html.unescape(listed)


def test_a_filter_for_profiles_hides_there_and_not_in_the_timeline(repo, reader):
    alice, bob, spoiler, *_ = reader
    repo.filters.add(alice.id, "redis", "never", context=("account",))
    me = Viewer(alice.id)

    assert spoiler not in [p.id for p in repo.pages.profile(bob.id, me).posts.items]
    assert spoiler in [p.id for p in repo.pages.timeline(me).posts.items]
    assert spoiler in [p.id for p in repo.pages.home(alice.id).feed.items]


def test_the_page_refuses_a_filter_for_no_place_or_no_action(repo, r, reader):
    alice, *_ = reader
    client = login(Client(), repo, alice)

    nowhere = client.post(
        "/settings/filters/", {"phrase": "x", "expiry": "never", "action": "hide"}
    )
    odd = client.post(
        "/settings/filters/",
        {"phrase": "x", "expiry": "never", "action": "blur", "context": ["home", "moon"]},
    )

    assert nowhere.status_code == 400 and "Pick at least one place." in nowhere.content.decode()
    assert odd.status_code == 400
    assert r.exists(keys.filters(alice.id)) == 0


@pytest.mark.parametrize(
    ("keyword", "whole_word", "body", "found"),
    [
        ("Redis", True, "I love #REDIS!", True),
        ("red", True, "redis rocks", False),
        ("red", False, "redis rocks", True),  # not a whole word: anywhere
        ("new  York", True, "in New\nYork", True),
        ("你好", True, "朋友你好吗", True),
        ("a.b", False, "axb", False),  # a keyword is text, never a pattern
    ],
)
def test_a_keyword_matches_the_same_with_the_remembered_screen_or_without(
    keyword, whole_word, body, found
):
    f = WordFilter(1, "t", (Keyword(1, keyword, whole_word), Keyword(2, "zzz", True)))
    screened = FilterSet([f])

    assert bool(hits(screened, body)) is found
    assert bool(hits((f,), body)) is found
    assert hides(screened, body, "home") is found  # hides in LEGACY_CONTEXT by default
    assert hides(screened, body, "account") is False
