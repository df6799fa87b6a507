"""The Atom feeds (social/feeds.py): /timeline/feed/, /u/<name>/feed/, /tag/<tag>/feed/.

Each feed is parsed as XML (xml.etree.ElementTree, in the Atom namespace): its entries,
their order, links, dates and authors; what it hides (deleted posts, suspended and deleted
accounts) as the HTML pages do; escaping and the characters XML cannot carry; its headers;
its round trips; and the <link rel="alternate"> each HTML page's head gives it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.utils.http import http_date

from social.repository.moderation.actions import SYSTEM_ACTOR
from tests.conftest import login
from tests.test_round_trips import BUDGET, costs, pin

T0 = 1_700_000_000
ATOM = "{http://www.w3.org/2005/Atom}"
FEEDS = ("/timeline/feed/", "/u/alice/feed/", "/tag/redis/feed/")


@dataclass(frozen=True)
class Entry:
    """What a feed says of one post."""

    title: str
    link: str
    id: str
    published: str
    updated: str
    author: str
    summary: str
    summary_type: str
    categories: tuple[str, ...]


def parse(response) -> ET.Element:
    """Return the <feed> element of an Atom response (a 200 of the Atom type)."""
    assert response.status_code == 200
    assert response["Content-Type"] == "application/atom+xml; charset=utf-8"
    root = ET.fromstring(response.content)  # raises on anything not well-formed
    assert root.tag == f"{ATOM}feed"
    return root


def links(element: ET.Element) -> dict[str, str]:
    """Return element's <link> hrefs by rel."""
    return {link.get("rel"): link.get("href") for link in element.findall(f"{ATOM}link")}


def entries(root: ET.Element) -> list[Entry]:
    found = []
    for entry in root.findall(f"{ATOM}entry"):
        summary = entry.find(f"{ATOM}summary")
        (link,) = entry.findall(f"{ATOM}link")
        assert link.get("rel") == "alternate"
        found.append(
            Entry(
                title=entry.findtext(f"{ATOM}title"),
                link=link.get("href"),
                id=entry.findtext(f"{ATOM}id"),
                published=entry.findtext(f"{ATOM}published"),
                updated=entry.findtext(f"{ATOM}updated"),
                author=entry.findtext(f"{ATOM}author/{ATOM}name"),
                summary=summary.text or "",
                summary_type=summary.get("type"),
                categories=tuple(c.get("term") for c in entry.findall(f"{ATOM}category")),
            )
        )
    return found


def feed(client: Client, url: str) -> list[Entry]:
    return entries(parse(client.get(url)))


def rfc3339(ts: int) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat()


def permalink(post_id: int) -> str:
    return f"http://testserver/p/{post_id}/"


# --- What each feed lists -------------------------------------------------------------


def test_the_timeline_feed_lists_the_20_newest_posts_newest_first_with_permalinks(
    repo, r, alice, bob, client
):
    ids = [
        repo.posts.create_post((alice, bob)[i % 2].id, f"post number {i}", at=T0 + i)
        for i in range(25)
    ]

    root = parse(client.get("/timeline/feed/"))
    got = entries(root)

    newest = list(reversed(ids))[:20]
    assert [e.link for e in got] == [permalink(i) for i in newest]
    assert [e.id for e in got] == [permalink(i) for i in newest]
    assert [e.title for e in got] == [
        f"@{('alice', 'bob')[i % 2]}: post number {i}" for i in range(24, 4, -1)
    ]
    assert [e.author for e in got] == [("alice", "bob")[i % 2] for i in range(24, 4, -1)]
    assert [e.published for e in got] == [rfc3339(T0 + i) for i in range(24, 4, -1)]
    assert [e.updated for e in got] == [e.published for e in got]
    assert got[0].summary == "post number 24" and got[0].summary_type == "html"
    assert root.findtext(f"{ATOM}title") == "Retwis: everyone's latest posts"
    assert root.findtext(f"{ATOM}updated") == rfc3339(T0 + 24)
    assert links(root) == {
        "alternate": "http://testserver/timeline/",
        "self": "http://testserver/timeline/feed/",
    }
    assert r.llen("timeline") == 25  # read, not trimmed: the feed shows the newest 20


def test_the_profile_feed_lists_only_that_accounts_posts(repo, alice, bob, client):
    first = repo.posts.create_post(alice.id, "alice one", at=T0)
    repo.posts.create_post(bob.id, "bob one", at=T0 + 1)
    second = repo.posts.create_post(alice.id, "alice two", at=T0 + 2)

    root = parse(client.get("/u/alice/feed/"))

    assert [(e.link, e.title, e.author) for e in entries(root)] == [
        (permalink(second), "@alice: alice two", "alice"),
        (permalink(first), "@alice: alice one", "alice"),
    ]
    assert root.findtext(f"{ATOM}title") == "Retwis: @alice"
    assert root.findtext(f"{ATOM}author/{ATOM}name") == "alice"
    assert links(root) == {
        "alternate": "http://testserver/u/alice/",
        "self": "http://testserver/u/alice/feed/",
    }


def test_an_account_with_no_posts_has_an_empty_feed(alice, client):
    root = parse(client.get("/u/alice/feed/"))

    assert entries(root) == []


def test_the_tag_feed_lists_the_posts_with_the_tag_whatever_its_case(repo, alice, bob, client):
    older = repo.posts.create_post(alice.id, "#Redis is fast", at=T0)
    repo.posts.create_post(bob.id, "no tag here", at=T0 + 1)
    repo.posts.create_post(bob.id, "#django only", at=T0 + 2)
    newer = repo.posts.create_post(bob.id, "more #redis and #django", at=T0 + 3)

    root = parse(client.get("/tag/redis/feed/"))
    same = parse(client.get("/tag/REDIS/feed/"))

    got = entries(root)
    assert [(e.link, e.author) for e in got] == [
        (permalink(newer), "bob"),
        (permalink(older), "alice"),
    ]
    assert [e.categories for e in got] == [("redis", "django"), ("redis",)]
    assert entries(same) == got
    assert root.findtext(f"{ATOM}title") == same.findtext(f"{ATOM}title") == "Retwis: #redis"
    assert links(root)["alternate"] == links(same)["alternate"] == "http://testserver/tag/redis/"


def test_a_feed_is_the_same_for_every_reader_staff_included(repo, alice, bob, sam, client):
    repo.posts.create_post(alice.id, "hello #redis", at=T0)
    hidden = repo.posts.create_post(bob.id, "spam #redis", at=T0 + 1)
    repo.moderation.suspend(bob.id, SYSTEM_ACTOR, "spam")
    staff = login(Client(), repo, sam)

    for url in ("/timeline/feed/", "/tag/redis/feed/", "/u/alice/feed/"):
        seen_by_staff = staff.get(url)
        assert seen_by_staff.content == client.get(url).content, url
        assert permalink(hidden) not in [e.link for e in entries(parse(seen_by_staff))], url
    assert staff.get("/u/bob/feed/").status_code == 404  # the profile shows staff; not this


# --- What each feed hides, as the pages do --------------------------------------------


def test_a_post_its_author_deleted_leaves_every_feed(repo, r, alice, client):
    kept = repo.posts.create_post(alice.id, "kept #redis", at=T0)
    gone = repo.posts.create_post(alice.id, "oops #redis", at=T0 + 1)
    for url in FEEDS:  # seen first: the process remembers the post as visible
        assert permalink(gone) in [e.link for e in feed(client, url)], url

    repo.posts.delete_own_post(alice.id, gone)

    assert r.hget(f"post:{gone}", "deleted") == "1"
    for url in FEEDS:
        assert [e.link for e in feed(client, url)] == [permalink(kept)], url


def test_a_post_removed_by_moderators_leaves_every_feed(repo, r, alice, sam, client):
    kept = repo.posts.create_post(alice.id, "kept #redis", at=T0)
    removed = repo.posts.create_post(alice.id, "rude #redis", at=T0 + 1)
    for url in FEEDS:
        assert len(feed(client, url)) == 2, url

    assert repo.moderation.delete_posts([removed], sam, "rude") == [removed]

    assert r.hget(f"post:{removed}", "deleted") == "1"
    assert r.lrange("tag:redis", 0, -1) == [str(removed), str(kept)]  # listed, skipped
    for url in FEEDS:
        assert [e.link for e in feed(client, url)] == [permalink(kept)], url


def test_a_suspended_authors_posts_leave_the_feeds_and_their_feed_is_404(
    repo, r, alice, bob, client
):
    mine = repo.posts.create_post(alice.id, "mine #redis", at=T0)
    theirs = repo.posts.create_post(bob.id, "theirs #redis", at=T0 + 1)
    for url in ("/timeline/feed/", "/tag/redis/feed/", "/u/bob/feed/"):
        assert permalink(theirs) in [e.link for e in feed(client, url)], url

    repo.moderation.suspend(bob.id, SYSTEM_ACTOR, "spam")

    assert r.hget(f"user:{bob.id}", "status") == "suspended"
    for url in ("/timeline/feed/", "/tag/redis/feed/"):
        assert [e.link for e in feed(client, url)] == [permalink(mine)], url
    assert client.get("/u/bob/feed/").status_code == 404
    assert client.get("/u/bob/").status_code == 404  # as the profile

    repo.moderation.unsuspend(bob.id, SYSTEM_ACTOR, "appeal")

    assert [e.link for e in feed(client, "/timeline/feed/")] == [permalink(theirs), permalink(mine)]
    assert [e.link for e in feed(client, "/u/bob/feed/")] == [permalink(theirs)]


def test_a_deleted_accounts_posts_leave_the_feeds_and_their_feed_is_404(
    repo, r, alice, bob, client
):
    mine = repo.posts.create_post(alice.id, "mine #redis", at=T0)
    repo.posts.create_post(bob.id, "theirs #redis", at=T0 + 1)
    assert len(feed(client, "/u/bob/feed/")) == 1

    repo.accounts.delete_account(bob)

    assert r.hget(f"user:{bob.id}", "status") == "deleted"
    for url in ("/timeline/feed/", "/tag/redis/feed/"):
        assert [e.link for e in feed(client, url)] == [permalink(mine)], url
    assert client.get("/u/bob/feed/").status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        "/u/nobody/feed/",  # no such account
        "/tag/neverused/feed/",  # a tag nobody used
        "/tag/123/feed/",  # not a tag: the URL's converter refuses it
        "/tag/a-b/feed/",
        "/tag/%C4%B0/feed/",  # "İ": a tag, but its case-folded form is not
    ],
)
def test_an_unknown_account_or_tag_is_404(alice, client, url):
    response = client.get(url)

    assert response.status_code == 404
    assert "Cache-Control" not in response  # a 404 is not kept for a minute


def test_a_tag_whose_only_post_was_deleted_is_404(repo, r, alice, client):
    post_id = repo.posts.create_post(alice.id, "once #gone", at=T0)
    assert len(feed(client, "/tag/gone/feed/")) == 1

    repo.posts.delete_own_post(alice.id, post_id)

    assert not r.exists("tag:gone")
    assert client.get("/tag/gone/feed/").status_code == 404


# --- Text: escaping, control characters, titles -----------------------------------------


def test_a_post_with_markup_is_escaped_never_raw_html(repo, alice, client):
    body = '<script>alert("x")</script> & <b>bold</b> #redis'
    repo.posts.create_post(alice.id, body, at=T0)

    for url in FEEDS:
        response = client.get(url)
        (entry,) = entries(parse(response))
        assert b"<script" not in response.content and b"<b>" not in response.content, url
        # The summary is HTML (type="html") holding the escaped text: a reader shows it as
        # text. The title is Atom text: the XML escaping alone makes it text.
        assert entry.summary_type == "html"
        assert entry.summary == (
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt; #redis"
        )
        assert entry.title == f"@alice: {body}"


def test_characters_xml_forbids_are_stripped_and_the_feed_stays_well_formed(repo, r, alice, client):
    body = "bell\x07 null\x00 tab\there\x0b formfeed\x0c escape\x1b end\ufffe #redis"
    post_id = repo.posts.create_post(alice.id, body, at=T0)
    assert r.hget(f"post:{post_id}", "body") == body  # stored as typed

    for url in FEEDS:
        (entry,) = feed(client, url)  # parse() fails on anything not well-formed
        assert entry.summary == "bell null tab\there formfeed escape end #redis", url
        assert entry.title == "@alice: bell null tab here formfeed escape end #redis", url


def test_a_title_is_the_first_60_characters_on_one_line(repo, alice, client):
    body = "line one\n\nline two " + "x" * 80
    repo.posts.create_post(alice.id, body, at=T0)

    (entry,) = feed(client, "/u/alice/feed/")

    assert entry.title == "@alice: " + ("line one line two " + "x" * 80)[:60] + "…"
    assert entry.summary == body  # the whole text, as written


# --- Headers and methods -------------------------------------------------------------------


def test_every_feed_may_be_kept_a_minute_by_any_cache(repo, alice, client):
    repo.posts.create_post(alice.id, "older #redis", at=T0)
    repo.posts.create_post(alice.id, "newer #redis", at=T0 + 60)

    for url in FEEDS:
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Cache-Control"] == "public, max-age=60", url
        assert response["Last-Modified"] == http_date(T0 + 60), url
        assert "Set-Cookie" not in response and "Vary" not in response, url


def test_a_feed_answers_get_and_head_only(repo, r, alice, client):
    repo.posts.create_post(alice.id, "hello #redis", at=T0)
    before = r.dbsize()

    for url in FEEDS:
        assert client.head(url).status_code == 200, url
        response = client.post(url)
        assert response.status_code == 405 and response["Allow"] == "GET, HEAD", url
    assert r.dbsize() == before


def test_reading_feeds_writes_nothing(repo, r, alice, bob, client):
    repo.posts.create_post(alice.id, "hello #redis @bob", at=T0)
    state = {key: r.type(key) for key in r.keys("*")}
    unread = r.hget(f"user:{bob.id}", "unread_mentions")

    for url in (*FEEDS, "/u/bob/feed/"):
        client.get(url)

    assert {key: r.type(key) for key in r.keys("*")} == state
    assert r.hget(f"user:{bob.id}", "unread_mentions") == unread == "1"


# --- Round trips ----------------------------------------------------------------------------

# (cold, warm): no `auth` cookie, so nothing for the reader. Cold: the page's ids (with
# the name -> id look-up first for a profile); the posts and their counts; their authors
# (a profile's owner comes with its ids). Warm: the ids and the visibility version, then
# the counts the page reads beside its posts (the timeline's come with its ids). On the
# cluster (RETWIS_TEST_CLUSTER=1), each of those once per node its keys reach.
FEED_ROUND_TRIPS = {
    "/timeline/feed/": pin((3, 1), (6, 3)),
    "/u/bob/feed/": pin((3, 1), (7, 3)),
    "/tag/redis/feed/": pin((3, 1), (5, 3)),
}


@pytest.mark.parametrize("url", list(FEED_ROUND_TRIPS))
def test_a_feed_costs_the_same_round_trips_for_5_posts_as_for_50(
    repo, alice, bob, client, round_trips, url
):
    def grow(n: int) -> None:
        start = int(repo.r.get("next_post_id") or 0)
        for i in range(start, start + n):
            author = bob if i % 3 else alice
            repo.posts.create_post(author.id, f"post {i} #redis", at=T0 + i)

    grow(5)
    with_5 = costs(client, url, round_trips)
    grow(45)
    with_50 = costs(client, url, round_trips)

    assert len(feed(client, url)) == 20
    assert with_5 == with_50 == FEED_ROUND_TRIPS[url]
    assert with_50[1] <= with_50[0] <= BUDGET


# --- The pages' heads link their feeds ------------------------------------------------------


class HeadLinks(HTMLParser):
    """Collect the attributes of every <link> inside <head>."""

    def __init__(self) -> None:
        super().__init__()
        self.in_head = False
        self.links: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "head":
            self.in_head = True
        elif tag == "link" and self.in_head:
            self.links.append(dict(attrs))

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.in_head = False


def atom_links(html: str) -> list[tuple[str, str]]:
    """Return (title, href) of each Atom <link rel="alternate"> in the page's head."""
    parser = HeadLinks()
    parser.feed(html)
    return [
        (link.get("title", ""), link.get("href", ""))
        for link in parser.links
        if link.get("rel") == "alternate" and link.get("type") == "application/atom+xml"
    ]


@pytest.mark.parametrize(
    ("page", "title", "href"),
    [
        ("/timeline/", "Retwis: everyone's latest posts", "/timeline/feed/"),
        ("/u/alice/", "Retwis: @alice", "/u/alice/feed/"),
        ("/tag/REDIS/", "Retwis: #redis", "/tag/redis/feed/"),
    ],
)
def test_each_page_links_its_feed_from_its_head(repo, alice, client, page, title, href):
    repo.posts.create_post(alice.id, "hello #Redis", at=T0)
    response = client.get(page)

    assert response.status_code == 200
    assert atom_links(response.content.decode()) == [(title, href)]
    assert client.get(href).status_code == 200  # the link leads to a feed


def test_a_page_whose_feed_is_404_links_no_feed(repo, alice, sam_client):
    # Staff still see a suspended account's profile; its feed is 404 to everyone. A tag
    # with no posts has a page and no feed.
    repo.moderation.suspend(alice.id, SYSTEM_ACTOR, "spam")

    for page in ("/u/alice/", "/tag/nothing/"):
        response = sam_client.get(page)
        assert response.status_code == 200, page
        assert atom_links(response.content.decode()) == [], page
    assert sam_client.get("/u/alice/feed/").status_code == 404
    assert sam_client.get("/tag/nothing/feed/").status_code == 404
