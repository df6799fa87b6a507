"""Full pages (issue 37): a page of `limit` posts (and of the site's page size) holds that
many whenever the reader may see that many, however many of the newest are hidden from
them (muted, blocked, filtered, suspended, removed, or a post the page shows already
through a repost); the API's cursors and Link headers and the site's pager still lead
through the whole list with no post skipped or shown twice (reader.py's fill)."""

from __future__ import annotations

import re

import pytest

from social import keys
from social.repository import HOME, PROFILE, HomeFeed, OwnPosts, Viewer
from social.repository.read.reader import FILL_GROWTH, FILL_ROUNDS, PageAt
from tests.api import Api, token_for
from tests.conftest import make_user

T0 = 1_700_000_000


def ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [int(s["id"]) for s in response.json()]


def link(response, rel: str) -> dict[str, str] | None:
    """The query of the Link header's `rel` link, as a dict (None: no such link)."""
    found = re.search(r'<[^>?]*\?([^>]*)>; rel="' + rel + '"', response.get("Link", ""))
    return dict(pair.split("=", 1) for pair in found[1].split("&")) if found else None


@pytest.fixture
def crowded(repo, alice, bob, charlie, sam):
    """bob's home feed: alice's twelve posts "visible 0".."visible 11", and after each
    (newer) one that bob may not see, in turn: by charlie (muted), frank's repost of
    dave's (blocked), alice's "spoilers" (filtered), by erin (suspended), alice's removed
    by staff, and frank's repost of the post just before it (shown in its place: the
    post's own entry is then one the page shows already). Returns the entries a page
    shows, newest first (a repost's own id where it stands for the post)."""
    dave, erin, frank = (make_user(repo, name) for name in ("dave", "erin", "frank"))
    for author in (charlie, erin, frank):
        repo.graph.follow(bob.id, author.id, at=T0)
    at = iter(range(T0 + 1, T0 + 100))
    shown, removed = [], []
    for i in range(12):
        mine = repo.posts.create_post(alice.id, f"visible {i}", at=next(at))
        shown.append(mine)
        kind = i % 6
        if kind == 0:
            repo.posts.create_post(charlie.id, f"muted {i}", at=next(at))
        elif kind == 1:
            theirs = repo.posts.create_post(dave.id, f"blocked {i}", at=next(at))
            repo.reposts.repost(frank.id, theirs, at=next(at))
        elif kind == 2:
            repo.posts.create_post(alice.id, f"spoilers {i}", at=next(at))
        elif kind == 3:
            repo.posts.create_post(erin.id, f"suspended {i}", at=next(at))
        elif kind == 4:
            removed.append(repo.posts.create_post(alice.id, f"removed {i}", at=next(at)))
        else:  # bob follows alice after: her posts are merged in
            shown[-1] = repo.reposts.repost(frank.id, mine, at=next(at))[0]
    repo.graph.follow(bob.id, alice.id, at=T0 + 200)
    repo.relations.mute(bob.id, charlie.id)
    repo.relations.block(bob.id, dave.id)
    repo.filters.add(bob.id, "spoilers", "never")
    repo.moderation.suspend(erin.id, sam, "spam")
    repo.moderation.delete_posts(removed, sam, "rude")
    feed = [int(i) for i in repo.r.lrange(keys.home_feed(bob.id), 0, -1)]
    assert len(feed) == 24 and feed == sorted(feed, reverse=True)  # each one in the feed
    return shown[::-1]


def test_the_api_home_timeline_holds_limit_posts_when_that_many_are_visible(repo, bob, crowded):
    api = Api(token_for(repo, bob))

    first = api.get("/api/v1/timelines/home", {"limit": 5})

    assert ids(first) == crowded[:5]
    assert first.json()[0]["reblog"]["content"] == "<p>visible 11</p>"
    for limit in (1, 3, 12, 40):
        assert ids(api.get("/api/v1/timelines/home", {"limit": limit})) == crowded[:limit]


def test_paging_by_max_id_sees_every_visible_post_once(repo, bob, crowded):
    api = Api(token_for(repo, bob))
    seen, pages, params = [], [], {"limit": "5"}
    while True:
        page = api.get("/api/v1/timelines/home", params)
        seen += ids(page)
        pages.append(len(ids(page)))
        older = link(page, "next")
        if older is None:
            break
        assert older["limit"] == "5"
        params = older

    assert seen == crowded
    assert pages == [5, 5, 2]


def test_min_id_pages_hold_the_limit_just_newer_than_it(repo, bob, crowded):
    api = Api(token_for(repo, bob))
    oldest = crowded[-1]

    newer = api.get("/api/v1/timelines/home", {"limit": 4, "min_id": oldest})

    assert ids(newer) == crowded[-5:-1]  # the four just newer, newest first
    back = link(newer, "prev")
    assert back is not None and back["min_id"] == str(crowded[-5])
    assert ids(api.get("/api/v1/timelines/home", back | {"limit": "4"})) == crowded[-9:-5]
    since = api.get("/api/v1/timelines/home", {"limit": 4, "since_id": crowded[3]})
    assert ids(since) == crowded[:3]  # the newest, down to since_id


def test_exclude_replies_is_applied_as_the_page_is_filled(repo, alice, bob):
    api = Api(token_for(repo, bob))
    root = repo.posts.create_post(bob.id, "root", at=T0)
    plain = []
    for i in range(6):
        plain.append(repo.posts.create_post(alice.id, f"plain {i}", at=T0 + 10 * i + 1))
        for j in range(3):
            at = T0 + 10 * i + 2 + j
            repo.posts.create_post(alice.id, f"reply {i}.{j}", reply_to=root, at=at)
    statuses = f"/api/v1/accounts/{alice.id}/statuses"

    page = api.get(statuses, {"limit": 4, "exclude_replies": "true"})

    assert ids(page) == plain[::-1][:4]
    rest = api.get(statuses, link(page, "next"))
    assert ids(rest) == plain[::-1][4:]
    assert link(rest, "next") is None or ids(api.get(statuses, link(rest, "next"))) == []


def home_posts(html: str) -> list[int]:
    return [int(n) for n in re.findall(r"visible (\d+)</", html)]


def test_the_home_page_shows_a_full_page_and_its_pager_walks_the_feed_both_ways(
    settings, repo, bob, bob_client, crowded
):
    settings.RETWIS_FEED_PAGE_SIZE = 5
    url, pages, urls = "/", [], []
    while url:
        html = bob_client.get(url).content.decode()
        urls.append(url)
        pages.append(home_posts(html))
        older = re.search(r'<a href="([^"]+)" rel="next">', html)
        url = older[1].replace("&amp;", "&") if older else None

    assert pages == [[11, 10, 9, 8, 7], [6, 5, 4, 3, 2], [1, 0]]
    assert urls[1].startswith("/?page=2&from=")  # page 1 read past 5 hidden posts
    back = []
    while url := (newer[1].replace("&amp;", "&") if (newer := re.search(
        r'<a href="([^"]+)" rel="prev">', html
    )) else None):  # fmt: skip
        html = bob_client.get(url).content.decode()
        back.append(home_posts(html))
    assert back == pages[-2::-1]  # the same pages, newest last


def test_a_numbered_page_without_the_pagers_place_starts_at_its_number(
    settings, repo, bob, bob_client, crowded
):
    settings.RETWIS_FEED_PAGE_SIZE = 5

    html = bob_client.get("/?page=2").content.decode()  # the 6th entry on: still a full page

    assert home_posts(html) == [9, 8, 7, 6, 5]
    assert bob_client.get("/?page=2&from=x&before=").status_code == 200  # junk: ignored


def test_a_page_whose_hidden_posts_outnumber_the_bound_is_short_and_the_next_goes_on(
    repo, alice, bob, charlie
):
    """More hidden posts than FILL_ROUNDS further loads reach: the page is shown short,
    says more follow, and the next one starts where it stopped."""
    repo.graph.follow(bob.id, alice.id, at=T0)
    repo.graph.follow(bob.id, charlie.id, at=T0)
    old = [repo.posts.create_post(alice.id, f"old {i}", at=T0 + i) for i in range(3)]
    muted = 2 + FILL_GROWTH * 2 * 2 + 5  # the margin, two further reads of ids, and more
    for i in range(muted):
        repo.posts.create_post(charlie.id, f"muted {i}", at=T0 + 10 + i)
    newest = repo.posts.create_post(alice.id, "newest", at=T0 + 1000)
    repo.relations.mute(bob.id, charlie.id)
    me = Viewer(bob.id)

    first = repo.reader.page(HomeFeed(bob.id), me, 1, 2, shows=HOME, fill=True).page

    assert [p.id for p in first.items] == [newest] and first.has_next
    assert FILL_ROUNDS == 2 and first.next_from is not None
    second = repo.reader.page(
        HomeFeed(bob.id), me, 2, 2, shows=HOME, fill=True, at=PageAt(start=first.next_from)
    ).page
    assert [p.id for p in second.items] == old[::-1][:2] and second.has_next
    assert second.previous_before == first.next_from


def test_a_profile_blocked_either_way_reads_no_further(repo, alice, bob):
    for i in range(30):
        repo.posts.create_post(alice.id, f"post {i}", at=T0 + i)
    repo.relations.block(alice.id, bob.id)

    page = repo.reader.page(OwnPosts(alice.id), Viewer(bob.id), shows=PROFILE, fill=True).page

    assert page.items == [] and not page.has_next
