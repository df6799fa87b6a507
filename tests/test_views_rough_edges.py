"""The rough edges a new user hit (issue 27), as pages: each test failed before its fix,
and asserts the page and, where state is involved, the Redis state."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

from django.test import Client

from tests.conftest import login, make_user

T0 = 1_700_000_000


def reply_box(html: str) -> str:
    """Return the text the reply form's textarea starts with."""
    start = html.index('<form class="card compose reply" id="reply"')
    form = html[start : html.index("</form>", start)]
    return re.search(r"<textarea[^>]*>\n?(.*?)</textarea>", form, re.S).group(1)


# --- 5. The reply box starts with the author and the post's other mentions --------------


def test_the_reply_box_starts_with_the_author_and_the_others_mentioned(
    repo, alice, bob, charlie, bob_client
):
    dave = make_user(repo, "dave")
    post = repo.posts.create_post(alice.id, "lunch with @bob and @charlie and @dave? @charlie")

    html = bob_client.get(f"/p/{post}/").content.decode()

    assert reply_box(html) == f"@alice @charlie @{dave.username} "  # not bob, the replier


def test_replying_to_ones_own_post_starts_with_the_others_only(repo, alice, bob, alice_client):
    mine = repo.posts.create_post(alice.id, "hi @bob")
    alone = repo.posts.create_post(alice.id, "just me")

    assert reply_box(alice_client.get(f"/p/{mine}/").content.decode()) == "@bob "
    assert reply_box(alice_client.get(f"/p/{alone}/").content.decode()) == ""


def test_the_prefilled_reply_posts_as_a_reply_mentioning_them(repo, r, alice, bob, bob_client):
    post = repo.posts.create_post(alice.id, "hello")
    typed = reply_box(bob_client.get(f"/p/{post}/").content.decode()) + "hi!"

    bob_client.post("/post/", {"status": typed, "reply_to": str(post)})

    reply = int(r.get("next_post_id"))
    assert r.hget(f"post:{reply}", "body") == "@alice hi!"
    assert r.zscore(f"mentions:{alice.id}", reply) is not None


# --- 7. Unmute on a muted author's cards; Block asks first --------------------------------


def test_a_muted_authors_cards_offer_unmute_and_it_unmutes(repo, r, alice, bob, alice_client):
    repo.posts.create_post(bob.id, "bob's words")
    repo.posts.create_post(alice.id, "alice's own")
    repo.relations.mute(alice.id, bob.id)

    html = alice_client.get("/u/bob/").content.decode()

    assert 'formaction="/u/bob/unmute/"' in html and ">Unmute</button>" in html
    assert 'formaction="/u/bob/mute/"' not in html
    response = alice_client.post("/u/bob/unmute/", {"next": "/u/bob/"})
    assert response["Location"] == "/u/bob/"
    assert r.zscore(f"mutes:{alice.id}", bob.id) is None
    again = alice_client.get("/u/bob/").content.decode()
    assert 'formaction="/u/bob/mute/"' in again and "/unmute/" not in again


def test_block_on_a_profile_asks_first_and_writes_nothing(repo, r, alice, bob, alice_client):
    profile = alice_client.get("/u/bob/").content.decode()
    assert (
        '<a class="danger" href="/u/bob/block/" rel="nofollow" data-confirm="Block @bob? '
        in profile
    )
    assert 'rel="nofollow" data-confirm="Block @bob? Neither of you sees' in profile  # site.js asks
    assert ">Block @bob</a>" in profile
    assert 'action="/u/bob/block/"' not in profile  # no one-click block

    page = alice_client.get("/u/bob/block/")

    html = page.content.decode()
    assert page.status_code == 200 and "Block @bob?" in html
    assert '<form method="post" action="/u/bob/block/">' in html
    assert 'name="csrfmiddlewaretoken"' in html and '<a class="cancel" href="/u/bob/">' in html
    assert not r.exists(f"blocks:{alice.id}") and not r.exists(f"blocked_by:{bob.id}")


def test_the_confirmed_block_blocks_and_goes_back(repo, r, alice, bob, alice_client):
    repo.graph.follow(alice.id, bob.id)

    response = alice_client.post("/u/bob/block/", {"next": "/u/bob/"})

    assert response.status_code == 302 and response["Location"] == "/u/bob/"
    assert r.zscore(f"blocks:{alice.id}", bob.id) is not None
    assert r.zscore(f"following:{alice.id}", bob.id) is None


def test_the_block_page_keeps_a_safe_next_and_asks_visitors_to_log_in(
    repo, alice, bob, alice_client
):
    html = alice_client.get("/u/bob/block/?next=/timeline/").content.decode()
    assert '<input type="hidden" name="next" value="/timeline/">' in html
    off = alice_client.get("/u/bob/block/?next=https://evil.example/").content.decode()
    assert "evil.example" not in off
    assert alice_client.get("/u/nobody/block/").status_code == 404
    visitor = Client().get("/u/bob/block/")
    assert visitor.status_code == 302 and "next=/u/bob/block/" in visitor["Location"]


# --- 4. A refused post is shown once, on the page it was written on -----------------------


def test_the_composer_posts_to_home_and_a_refused_post_comes_back_there_once(
    repo, alice, r, alice_client
):
    repo.posts.create_post(alice.id, "an earlier post")
    home = alice_client.get("/").content.decode()
    assert (
        '<form class="card compose" method="post" action="/" enctype="multipart/form-data">' in home
    )
    long = "x" * 999 + "\ny"

    response = alice_client.post("/", {"status": long})

    html = response.content.decode()
    assert response.status_code == 400
    assert html.count("Keep it to 280 characters (this one has 1,001).") == 1
    assert f">\n{long}</textarea>" in html  # the text kept
    assert '<input type="hidden" name="next" value="/">' in html  # the cards' form: here
    assert r.get("next_post_id") == "1" and r.lrange("timeline", 0, -1) == ["1"]


def test_the_composer_at_home_publishes_and_goes_home(alice, r, alice_client):
    response = alice_client.post("/", {"status": "from the composer"})

    assert response.status_code == 302 and response["Location"] == "/"
    assert r.hget("post:1", "body") == "from the composer"
    assert r.lrange(f"user_posts:{alice.id}", 0, -1) == ["1"]


def test_a_refused_reply_comes_back_on_its_permalink_once(repo, r, alice, bob_client):
    parent = repo.posts.create_post(alice.id, "the parent")

    response = bob_client.post(f"/p/{parent}/", {"status": "y" * 300, "reply_to": parent})

    html = response.content.decode()
    assert response.status_code == 400 and "the parent" in html
    assert html.count("Keep it to 280 characters (this one has 300).") == 1
    assert f'action="/p/{parent}/"' in html and f">\n{'y' * 300}</textarea>" in html
    assert r.get("next_post_id") == "1" and not r.exists(f"replies:{parent}")


def test_a_visitor_posting_at_home_is_asked_to_log_in_and_nothing_is_written(r):
    response = Client().post("/", {"status": "hello"})

    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert not r.exists("next_post_id")


# --- 1. The pager shows only what the reader may see --------------------------------------


def many_posts(repo, user, n: int, at: int = T0) -> list[int]:
    return [repo.posts.create_post(user.id, f"post {i}", at=at + i) for i in range(n)]


def test_a_blocked_profile_has_no_pager_and_no_second_page(repo, r, alice, bob, alice_client):
    many_posts(repo, bob, 25)
    repo.relations.block(alice.id, bob.id)

    html = alice_client.get("/u/bob/").content.decode()

    assert "You block @bob" in html and "post 24" not in html
    assert 'class="pager"' not in html and "Page 1 of" not in html
    assert alice_client.get("/u/bob/?page=2").status_code == 404
    assert (
        r.zscore(f"blocks:{alice.id}", bob.id) is not None and r.llen(f"user_posts:{bob.id}") == 25
    )


def test_a_profile_of_someone_who_blocks_the_reader_has_no_pager(repo, alice, bob, bob_client):
    many_posts(repo, alice, 25)
    repo.relations.block(alice.id, bob.id)

    html = bob_client.get("/u/alice/").content.decode()

    assert "@alice blocks you" in html and 'class="pager"' not in html
    assert bob_client.get("/u/alice/?page=2").status_code == 404


def test_a_suspended_profile_is_paged_for_staff_and_absent_for_others(
    repo, r, sam, sam_client, alice, bob, alice_client
):
    many_posts(repo, bob, 25)
    repo.moderation.suspend(bob.id, sam, "spam")

    staff = sam_client.get("/u/bob/").content.decode()

    assert "Page 1 of 3" in staff and "post 24" in staff
    assert "post 4" in sam_client.get("/u/bob/?page=3").content.decode()
    assert alice_client.get("/u/bob/").status_code == 404
    assert alice_client.get("/u/bob/?page=2").status_code == 404
    assert r.hget(f"user:{bob.id}", "status") == "suspended"


def test_a_home_page_of_muted_posts_fills_with_older_ones(
    repo, r, alice, bob, charlie, alice_client
):
    """Ten muted posts at the head of the feed: the page reads past them (full pages,
    issue 37) instead of saying "nothing on this page is shown to you"."""
    repo.graph.follow(alice.id, bob.id)
    repo.graph.follow(alice.id, charlie.id)
    repo.posts.create_post(charlie.id, "charlie's older words", at=T0 - 100)
    many_posts(repo, bob, 10)
    repo.relations.mute(alice.id, bob.id)

    html = alice_client.get("/").content.decode()

    assert "charlie&#39;s older words" in html and "post 9" not in html
    assert "Nothing on this page is shown to you" not in html and "No posts yet" not in html
    assert r.zscore(f"mutes:{alice.id}", bob.id) is not None


# --- 2. A repost is placed, and says, when it was reposted --------------------------------


def reposted_by_line(html: str) -> str:
    start = html.index('<p class="reposted-by">')
    return html[start : html.index("</p>", start)]


def test_a_repost_says_who_reposted_it_and_when(repo, r, alice, bob, charlie):
    now = int(time.time())
    post = repo.posts.create_post(alice.id, "an old thought", at=now - 3 * 86400)
    repo.graph.follow(charlie.id, bob.id)
    repost_id, _ = repo.reposts.repost(bob.id, post, at=now - 300)
    client = login(Client(), repo, charlie)

    html = client.get("/").content.decode()

    line = reposted_by_line(html)
    assert "reposted by" in line and 'href="/u/bob/"' in line
    when = datetime.fromtimestamp(now - 300, UTC).isoformat()  # TIME_ZONE is UTC
    assert f'<time datetime="{when}"' in line and ">5m</span>" in line
    assert r.hget(f"post:{repost_id}", "time") == str(now - 300)
    assert r.lrange(f"posts:{charlie.id}", 0, -1) == [str(repost_id)]


def test_a_repost_sits_by_when_it_was_reposted_in_feed_and_profile(repo, r, alice, bob, charlie):
    now = int(time.time())
    old = repo.posts.create_post(alice.id, "days old", at=now - 5 * 86400)
    repo.graph.follow(charlie.id, bob.id)
    before = repo.posts.create_post(bob.id, "bob before", at=now - 7200)
    repost_id, _ = repo.reposts.repost(bob.id, old, at=now - 3600)
    after = repo.posts.create_post(bob.id, "bob after", at=now - 60)
    client = login(Client(), repo, charlie)

    for page in ("/", "/u/bob/"):
        html = client.get(page).content.decode()
        assert html.index("bob after") < html.index("days old") < html.index("bob before"), page
    assert r.lrange(f"posts:{charlie.id}", 0, -1) == [str(after), str(repost_id), str(before)]


def test_a_reposted_card_is_remembered_apart_from_the_original(repo, alice, bob, charlie):
    now = int(time.time())
    post = repo.posts.create_post(alice.id, "shared words", at=now - 86400)
    dave = make_user(repo, "dave")
    repo.graph.follow(dave.id, alice.id)  # sees the post itself
    repo.graph.follow(charlie.id, bob.id)  # sees bob's repost
    repo.reposts.repost(bob.id, post, at=now - 120)
    as_dave, as_charlie = login(Client(), repo, dave), login(Client(), repo, charlie)

    for _ in range(2):  # the second time from the remembered cards
        assert "reposted by" not in as_dave.get("/").content.decode()
        assert ">2m</span>" in reposted_by_line(as_charlie.get("/").content.decode())
    repo.reposts.unrepost(bob.id, post)
    repo.reposts.repost(bob.id, post, at=now - 60)  # again, later: its own time shown
    assert ">1m</span>" in reposted_by_line(as_charlie.get("/").content.decode())


# --- 6. "…and 15 more" leads to the list of them ------------------------------------------


def mutual_fans(repo, alice, bob, n: int) -> list:
    """n accounts alice follows (in order, one a second) that follow bob."""
    fans = [make_user(repo, f"fan{i}") for i in range(n)]
    for i, fan in enumerate(fans):
        repo.graph.follow(alice.id, fan.id, at=T0 + i)
        repo.graph.follow(fan.id, bob.id, at=T0 + 100 + i)
    return fans


def listed_names(html: str) -> list[str]:
    people = html[html.index('<ul class="people">') :]
    # The reader follows each of them: every row offers Unfollow, named.
    return re.findall(r'aria-label="Unfollow @(\w+)"', people[: people.index("</ul>")])


def test_and_n_more_links_to_the_people_you_follow_who_follow_them(
    repo, r, alice, bob, alice_client
):
    mutual_fans(repo, alice, bob, 5)
    other = make_user(repo, "other")
    repo.graph.follow(alice.id, other.id, at=T0 + 50)  # followed, does not follow bob

    profile = alice_client.get("/u/bob/").content.decode()
    assert '<a href="/u/bob/followers/you-follow/">and 2 more</a>' in profile

    html = alice_client.get("/u/bob/followers/you-follow/").content.decode()

    assert "People you follow who follow @bob" in html and "5 in all" in html
    assert listed_names(html) == ["fan4", "fan3", "fan2", "fan1", "fan0"]
    assert r.zcard(f"following:{alice.id}") == 6 and r.zcard(f"followers:{bob.id}") == 5


def test_the_list_of_mutuals_is_paged_and_leaves_out_hidden_accounts(
    repo, alice, bob, sam, alice_client, settings
):
    settings.RETWIS_LIST_PAGE_SIZE = 2
    fans = mutual_fans(repo, alice, bob, 6)
    repo.moderation.suspend(fans[5].id, sam, "spam")
    repo.relations.block(fans[4].id, alice.id)  # unfollows alice's side too

    first = alice_client.get("/u/bob/followers/you-follow/").content.decode()
    second = alice_client.get("/u/bob/followers/you-follow/?page=2").content.decode()

    assert listed_names(first) == ["fan3"]  # fan5 suspended: left out of its page
    assert 'href="/u/bob/followers/you-follow/?page=2" rel="next"' in first
    assert listed_names(second) == ["fan2", "fan1"]
    assert alice_client.get("/u/bob/followers/you-follow/?page=4").status_code == 404


def test_the_list_of_mutuals_needs_a_login_and_an_account(alice_client):
    visitor = Client().get("/u/alice/followers/you-follow/")
    assert (
        visitor.status_code == 302 and "next=/u/alice/followers/you-follow/" in visitor["Location"]
    )
    assert alice_client.get("/u/nobody/followers/you-follow/").status_code == 404
    assert (
        "No one you follow follows @alice."
        in alice_client.get("/u/alice/followers/you-follow/").content.decode()
    )
