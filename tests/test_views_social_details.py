"""Social details (issue 11): follow buttons and "Follows you" in lists and on profiles,
"Reported" on posts the reader reported, people to follow on an empty home page, the
follow messages, and pages past the end of a list. Each asserts the page and, where
something changes, the resulting Redis state."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from social.repository import PROCESS_CACHE
from social.repository.read.suggestions import SUGGESTION_REFRESH, SUGGESTIONS_SHOWN
from tests.conftest import CLUSTER, login, make_user

T0 = 1_700_000_000


def pin(server, cluster):
    """The single-server count, or the cluster's under RETWIS_TEST_CLUSTER=1."""
    return cluster if CLUSTER else server


def rows(html: str) -> dict[str, str]:
    """Return each row of a follow list by the name it links to."""
    found = re.findall(
        r'<li class="entry"><span class="entry-text">(?:<span class="person">[^\n]*?)?'
        r'<a href="/u/([^/]+)/">@[^<]+</a>'
        r"(?:</span></span>)?(.*?)</li>",
        html,
        flags=re.S,
    )  # a row starts with the person: avatar, display name, @name (issue 26)
    return dict(found)


def csrf_token_of(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)


# --- 1. Follow and Unfollow in follower and following lists ---------------------------


def test_a_follow_list_offers_the_reader_follow_or_unfollow_on_every_row_but_their_own(
    repo, alice, bob, charlie, alice_client
):
    dave = make_user(repo, "dave")
    for fan in (alice, charlie, dave):
        repo.graph.follow(fan.id, bob.id, at=T0)
    repo.graph.follow(alice.id, charlie.id, at=T0)

    html = alice_client.get("/u/bob/followers/").content.decode()

    listed = rows(html)
    assert set(listed) == {"alice", "charlie", "dave"}
    assert "<form" not in listed["alice"]
    assert 'action="/u/charlie/unfollow/"' in listed["charlie"]
    assert ">Unfollow</button>" in listed["charlie"]
    assert 'action="/u/dave/follow/"' in listed["dave"] and ">Follow</button>" in listed["dave"]
    for name in ("charlie", "dave"):
        assert 'name="csrfmiddlewaretoken"' in listed[name]
        assert 'name="next" value="/u/bob/followers/"' in listed[name]
        assert 'method="post"' in listed[name]


def test_a_visitor_sees_follow_lists_without_buttons(repo, alice, bob, client):
    repo.graph.follow(alice.id, bob.id, at=T0)

    html = client.get("/u/bob/followers/").content.decode()

    assert "@alice" in html and "<form" not in rows(html)["alice"]
    assert "Follows you" not in html


def test_following_from_a_list_page_comes_back_to_that_page(
    settings, repo, r, alice, bob, alice_client
):
    settings.RETWIS_LIST_PAGE_SIZE = 2
    fans = [make_user(repo, f"fan{i}") for i in range(3)]
    for i, fan in enumerate(fans):
        repo.graph.follow(fan.id, bob.id, at=T0 + i)
    page_two = alice_client.get("/u/bob/followers/?page=2").content.decode()
    assert 'name="next" value="/u/bob/followers/?page=2"' in page_two  # fan0, the oldest

    response = alice_client.post(
        "/u/fan0/follow/", {"next": "/u/bob/followers/?page=2"}, follow=True
    )

    assert response.redirect_chain == [("/u/bob/followers/?page=2", 302)]
    html = response.content.decode()
    assert "You are now following @fan0." in html
    assert 'action="/u/fan0/unfollow/"' in rows(html)["fan0"]
    assert r.zrange(f"following:{alice.id}", 0, -1) == [str(fans[0].id)]
    assert r.zrange(f"followers:{fans[0].id}", 0, -1) == [str(alice.id)]


def test_unfollowing_from_a_following_list_comes_back_to_it(repo, r, alice, bob, alice_client):
    repo.graph.follow(alice.id, bob.id, at=T0)

    response = alice_client.post("/u/bob/unfollow/", {"next": "/u/alice/following/"})

    assert response.status_code == 302 and response["Location"] == "/u/alice/following/"
    assert not r.exists(f"following:{alice.id}", f"followers:{bob.id}")
    html = alice_client.get("/u/alice/following/").content.decode()
    assert "You unfollowed @bob." in html and "Not following anyone yet." in html


def test_a_follow_button_in_a_list_is_refused_without_its_csrf_token(repo, r, alice, bob):
    strict = login(Client(enforce_csrf_checks=True), repo, alice)
    repo.graph.follow(bob.id, alice.id, at=T0)
    html = strict.get("/u/alice/followers/").content.decode()

    refused = strict.post("/u/bob/follow/", {"next": "/u/alice/followers/"})

    assert refused.status_code == 403
    assert not r.exists(f"following:{alice.id}")
    accepted = strict.post(
        "/u/bob/follow/",
        {"next": "/u/alice/followers/", "csrfmiddlewaretoken": csrf_token_of(html)},
    )
    assert accepted.status_code == 302 and accepted["Location"] == "/u/alice/followers/"
    assert r.zrange(f"following:{alice.id}", 0, -1) == [str(bob.id)]


# --- 2. "Follows you" ------------------------------------------------------------------


def test_a_profile_says_follows_you_when_that_user_follows_the_reader(
    repo, alice, bob, charlie, alice_client
):
    repo.graph.follow(bob.id, alice.id, at=T0)

    assert "Follows you" in alice_client.get("/u/bob/").content.decode()
    assert "Follows you" not in alice_client.get("/u/charlie/").content.decode()
    assert "Follows you" not in alice_client.get("/u/alice/").content.decode()


def test_a_profile_says_nothing_of_following_to_a_visitor(repo, alice, bob, client):
    repo.graph.follow(bob.id, alice.id, at=T0)

    assert "Follows you" not in client.get("/u/bob/").content.decode()


def test_follow_lists_mark_the_people_who_follow_the_reader(
    repo, alice, bob, charlie, alice_client
):
    repo.graph.follow(charlie.id, bob.id, at=T0)
    repo.graph.follow(charlie.id, alice.id, at=T0)
    repo.graph.follow(bob.id, alice.id, at=T0)
    repo.graph.follow(alice.id, bob.id, at=T0)

    following = rows(alice_client.get("/u/charlie/following/").content.decode())
    own_followers = alice_client.get("/u/alice/followers/").content.decode()
    own_following = rows(alice_client.get("/u/alice/following/").content.decode())

    assert "Follows you" in following["bob"]
    assert "Follows you" not in following["alice"]  # the reader's own row
    assert set(rows(own_followers)) == {"bob", "charlie"}
    assert "Follows you" not in own_followers  # every row would say it
    assert "Follows you" in own_following["bob"]


def test_a_profile_with_follows_you_costs_no_round_trip_more(
    repo, alice, bob, alice_client, round_trips
):
    repo.posts.create_post(bob.id, "hello", at=T0)
    alice_client.get("/u/bob/")
    round_trips.reset()
    alice_client.get("/u/bob/")
    without = round_trips.count
    repo.graph.follow(bob.id, alice.id, at=T0)
    alice_client.get("/u/bob/")  # warm, as `without` was

    round_trips.reset()
    html = alice_client.get("/u/bob/").content.decode()

    assert "Follows you" in html
    # the page, with the reader's own hash (checked there), "Follows you" and the counts of
    # the posts it showed last
    assert round_trips.count == without == pin(1, 3)


def test_a_logged_in_follow_list_costs_the_same_for_2_rows_as_for_20(
    repo, alice, alice_client, round_trips
):
    star = make_user(repo, "star")
    fans = [make_user(repo, f"fan{i}") for i in range(20)]

    def cost() -> int:
        alice_client.get("/u/star/followers/")  # the cookie's id is remembered from here on
        round_trips.reset()
        response = alice_client.get("/u/star/followers/")
        assert response.status_code == 200
        return round_trips.count

    for fan in fans[:2]:
        repo.graph.follow(fan.id, star.id, at=T0)
        repo.graph.follow(alice.id, fan.id, at=T0)
    with_2 = cost()
    for fan in fans[2:]:
        repo.graph.follow(fan.id, star.id, at=T0)
        repo.graph.follow(fan.id, alice.id, at=T0)
    with_20 = cost()

    # user hash (the cookie's id remembered); name -> id; the owner's hash; the page of ids;
    # the accounts with the reader's follows both ways. On the cluster, once per node reached.
    assert (with_2, with_20) == pin((5, 5), (6, 7))  # the cluster: 20 rows reach one node more
    assert with_20 <= pin(5, 12)


# --- 3. "Reported" ----------------------------------------------------------------------


def test_the_report_link_turns_into_reported_once_the_reader_reported_the_post(
    repo, r, alice, bob, alice_client, sam
):
    post_id = repo.posts.create_post(bob.id, "buy cheap pills", at=T0)
    before = alice_client.get(f"/p/{post_id}/").content.decode()
    assert f'href="/p/{post_id}/report/"' in before

    response = alice_client.post(f"/p/{post_id}/report/", {"reason": "spam", "text": ""})

    assert response.status_code == 302 and response["Location"] == f"/p/{post_id}/"
    report_id = int(r.hget(f"post_reports:{post_id}", str(alice.id)))
    assert r.hget(f"report:{report_id}", "status") == "open"
    assert r.zrange(f"user_reported:{alice.id}", 0, -1) == [str(post_id)]
    permalink = alice_client.get(f"/p/{post_id}/").content.decode()
    assert ">Reported</span>" in permalink
    assert f'href="/p/{post_id}/report/"' not in permalink
    assert ">Reported</span>" in alice_client.get("/timeline/").content.decode()

    repo.reports.resolve_report(report_id, sam, "dismissed")

    assert not r.hexists(f"post_reports:{post_id}", str(alice.id))
    assert r.zcard(f"user_reported:{alice.id}") == 0
    again = alice_client.get(f"/p/{post_id}/").content.decode()
    assert ">Reported</span>" not in again and f'href="/p/{post_id}/report/"' in again


def test_reported_is_the_readers_own(repo, r, alice, bob, charlie, alice_client):
    post_id = repo.posts.create_post(bob.id, "something rude", at=T0)
    repo.reports.report_post(charlie, post_id, "abuse")
    charlie_client = login(Client(), repo, charlie)

    as_charlie = charlie_client.get(f"/p/{post_id}/").content.decode()
    as_alice = alice_client.get(f"/p/{post_id}/").content.decode()  # after charlie's card

    assert ">Reported</span>" in as_charlie
    assert ">Reported</span>" not in as_alice and f'href="/p/{post_id}/report/"' in as_alice
    assert list(r.hgetall(f"post_reports:{post_id}")) == [str(charlie.id)]
    assert r.zcard(f"user_reported:{alice.id}") == 0
    assert r.zrange(f"user_reported:{charlie.id}", 0, -1) == [str(post_id)]


def test_a_reported_permalink_costs_what_an_unreported_one_does(
    repo, alice, bob, alice_client, round_trips
):
    post_id = repo.posts.create_post(bob.id, "first", at=T0)
    for i in range(3):
        repo.posts.create_post(bob.id, f"reply {i}", reply_to=post_id, at=T0 + 1 + i)

    def warm_cost() -> int:
        alice_client.get(f"/p/{post_id}/")
        round_trips.reset()
        alice_client.get(f"/p/{post_id}/")
        return round_trips.count

    before = warm_cost()
    repo.reports.report_post(alice, post_id, "spam")
    after = warm_cost()

    assert before == after == pin(1, 3)


# --- 4. People to follow on an empty home page ------------------------------------------


@pytest.fixture
def posters(repo, bob, charlie, sam):
    """bob posts twice, charlie once, erin once and is then suspended; alice nothing."""
    erin = make_user(repo, "erin")
    repo.posts.create_post(bob.id, "bob one", at=T0)
    repo.posts.create_post(charlie.id, "charlie one", at=T0 + 1)
    repo.posts.create_post(erin.id, "erin one", at=T0 + 2)
    repo.posts.create_post(bob.id, "bob two", at=T0 + 3)
    repo.moderation.suspend(erin.id, sam, "spam")
    return {"bob": bob, "charlie": charlie, "erin": erin}


def suggested(html: str) -> list[str]:
    section = re.search(r'<section class="card suggestions".*?</section>', html, flags=re.S)
    return re.findall(r'action="/u/([^/]+)/follow/"', section.group(0)) if section else []


def test_an_empty_home_feed_suggests_active_people_with_follow_buttons(
    repo, posters, alice, alice_client
):
    html = alice_client.get("/").content.decode()

    assert suggested(html) == ["bob", "charlie"]  # most posts first; erin is suspended
    section = re.search(r'<section class="card suggestions".*?</section>', html, flags=re.S)
    assert section.group(0).count('name="csrfmiddlewaretoken"') == 2
    assert section.group(0).count('name="next" value="/"') == 2


def test_following_a_suggestion_fills_the_feed(repo, r, posters, alice, bob, alice_client):
    alice_client.get("/")

    response = alice_client.post("/u/bob/follow/", {"next": "/"}, follow=True)

    assert response.redirect_chain == [("/", 302)]
    html = response.content.decode()
    assert "You are now following @bob." in html
    assert "bob two" in html and "bob one" in html
    assert suggested(html) == []
    assert r.zrange(f"following:{alice.id}", 0, -1) == [str(bob.id)]
    assert len(r.lrange(f"posts:{alice.id}", 0, -1)) == 2


def test_a_feed_with_posts_suggests_no_one(repo, posters, alice, alice_client):
    repo.posts.create_post(alice.id, "my own first post", at=T0 + 10)

    assert suggested(alice_client.get("/").content.decode()) == []


def test_suggestions_leave_out_the_reader_and_whom_they_follow(
    repo, r, posters, alice, bob, charlie
):
    repo.posts.create_post(alice.id, "alice too", at=T0 + 5)
    repo.graph.follow(alice.id, charlie.id, at=T0 + 6)
    r.delete(f"posts:{alice.id}")  # an empty feed all the same (a feed lost, say)

    home = repo.pages.home(alice.id, at=T0)

    assert home.feed.items == []
    assert [u.username for u in home.suggestions] == ["bob"]


def test_suggestions_are_remembered_for_a_minute_and_rechecked_on_each_page(
    repo, posters, alice, bob, sam, round_trips
):
    first = repo.pages.home(alice.id, at=T0)
    newcomer = make_user(repo, "newcomer")
    repo.posts.create_post(newcomer.id, "hello all", at=T0 + 20)
    repo.posts.create_post(newcomer.id, "hello again", at=T0 + 21)
    repo.posts.create_post(newcomer.id, "and again", at=T0 + 22)

    round_trips.reset()
    within = repo.pages.home(alice.id, at=T0 + SUGGESTION_REFRESH - 1)
    cost_within = round_trips.count
    repo.moderation.suspend(bob.id, sam, "spam")
    after_suspension = repo.pages.home(alice.id, at=T0 + SUGGESTION_REFRESH - 1)
    later = repo.pages.home(alice.id, at=T0 + SUGGESTION_REFRESH + 1)

    assert [u.username for u in first.suggestions] == ["bob", "charlie"]
    assert [u.username for u in within.suggestions] == ["bob", "charlie"]
    assert cost_within == pin(1, 3)  # the home page's own first pipeline only
    assert [u.username for u in after_suspension.suggestions] == ["charlie"]
    assert [u.username for u in later.suggestions] == ["newcomer", "charlie"]


def test_suggestions_are_bounded(repo, alice):
    for i in range(SUGGESTIONS_SHOWN + 3):
        author = make_user(repo, f"poster{i}")
        repo.posts.create_post(author.id, f"post {i}", at=T0 + i)

    home = repo.pages.home(alice.id, at=T0)

    assert len(home.suggestions) == SUGGESTIONS_SHOWN


def test_an_empty_home_page_with_suggestions_stays_within_the_home_pages_budget(
    repo, posters, alice, alice_client, round_trips
):
    alice_client.get("/healthz")
    PROCESS_CACHE.clear()
    round_trips.reset()
    cold = alice_client.get("/")
    cold_count = round_trips.count
    round_trips.reset()
    warm = alice_client.get("/")
    warm_count = round_trips.count

    assert (
        suggested(cold.content.decode()) == suggested(warm.content.decode()) == ["bob", "charlie"]
    )
    # cold: secret -> id, user hash, the home pipeline (with the timeline's ids), the posts
    # and their authors; warm: user hash, the home pipeline (with the checks). As a home
    # page with posts (tests/test_round_trips.py HOME).
    assert (cold_count, warm_count) == pin((5, 1), (10, 3))
    assert warm_count <= cold_count <= pin(5, 10)


# --- 5. The follow messages keep the "@" ---------------------------------------------------


def test_the_follow_and_unfollow_messages_name_the_account_with_its_at(
    repo, alice, bob, alice_client
):
    followed = alice_client.post("/u/BOB/follow/", follow=True).content.decode()
    unfollowed = alice_client.post("/u/bob/unfollow/", follow=True).content.decode()

    assert "You are now following @bob." in followed
    assert "You unfollowed @bob." in unfollowed


# --- 6. Pages past the end: 404, the same on every paged list -----------------------------


@pytest.fixture
def lists(settings, repo, alice, bob):
    """Three or four entries on every paged list alice can read, two a page: page 2 is the
    last, page 3 is past the end (a permalink's replies, 20 a page: page 1 is the last)."""
    settings.RETWIS_FEED_PAGE_SIZE = 2
    settings.RETWIS_TIMELINE_PAGE_SIZE = 2
    settings.RETWIS_LIST_PAGE_SIZE = 2
    repo.graph.follow(alice.id, bob.id, at=T0)
    root = repo.posts.create_post(bob.id, "the root #redis", at=T0)
    for i in range(3):
        fan = make_user(repo, f"fan{i}")
        repo.graph.follow(fan.id, bob.id, at=T0 + i)
        repo.graph.follow(bob.id, fan.id, at=T0 + i)
        post = repo.posts.create_post(bob.id, f"@alice #redis {i}", reply_to=root, at=T0 + 10 + i)
        repo.likes.like(bob.id, post)
    return {
        "home": "/",
        "timeline": "/timeline/",
        "profile": "/u/bob/",
        "followers": "/u/bob/followers/",
        "following": "/u/bob/following/",
        "mentions": "/mentions/",
        "tag": "/tag/redis/",
        "likes": "/u/bob/likes/",
        "replies": f"/p/{root}/",
    }


LISTS = ["home", "timeline", "profile", "followers", "following", "mentions", "tag", "likes"]


@pytest.mark.parametrize("which", LISTS)
def test_a_page_past_the_end_of_any_list_is_the_sites_404(lists, alice_client, which):
    url = lists[which]

    last = alice_client.get(f"{url}?page=2")
    past = alice_client.get(f"{url}?page=3")
    far = alice_client.get(f"{url}?page=99999")

    assert last.status_code == 200, which
    assert 'rel="prev"' in last.content.decode(), which
    assert past.status_code == far.status_code == 404, which
    for response in (past, far):
        assert b"Not found" in response.content and b'class="brand"' in response.content
        assert b"Page 1000" not in response.content and b"Page 3" not in response.content


def test_the_replies_of_a_permalink_are_paged_the_same(lists, alice_client):
    url = lists["replies"]

    first = alice_client.get(url)

    assert first.status_code == 200
    assert first.content.count(b'<article class="post') == 4  # the root and its 3 replies
    assert alice_client.get(f"{url}?page=2").status_code == 404
    assert alice_client.get(f"{url}?page=99999").status_code == 404


@pytest.mark.parametrize("which", LISTS)
def test_the_last_page_links_to_no_older_one(lists, alice_client, which):
    html = alice_client.get(f"{lists[which]}?page=2").content.decode()

    assert 'rel="next"' not in html, which


def test_an_empty_list_still_shows_its_first_page(repo, alice, alice_client):
    for url in ("/", "/u/alice/", "/u/alice/followers/", "/mentions/", "/u/alice/likes/"):
        response = alice_client.get(f"{url}?page=1")
        assert response.status_code == 200, url
    assert alice_client.get("/?page=2").status_code == 404


@pytest.mark.parametrize("junk", ["abc", "-3", "0", "", "1e9"])
def test_a_junk_page_number_still_means_page_one(repo, alice, alice_client, junk):
    repo.posts.create_post(alice.id, "the only post")

    response = alice_client.get(f"/?page={junk}")

    assert response.status_code == 200 and b"the only post" in response.content


def test_a_page_number_above_the_cap_is_404_even_on_a_long_list(settings, repo, client):
    settings.RETWIS_LIST_PAGE_SIZE = 1
    star = make_user(repo, "star")
    for i in range(3):
        repo.graph.follow(make_user(repo, f"fan{i}").id, star.id, at=T0 + i)

    assert client.get("/u/star/followers/?page=3").status_code == 200
    assert client.get("/u/star/followers/?page=1001").status_code == 404


def test_a_visitor_gets_the_same_404_past_the_end(lists, client):
    assert client.get("/timeline/?page=99999").status_code == 404
    assert client.get("/u/bob/?page=3").status_code == 404
    assert client.get("/u/bob/?page=2").status_code == 200
