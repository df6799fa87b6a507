"""Replies, mentions, hashtags, likes and deleting one's own post, as pages: status,
redirects, escaping, CSRF, and the resulting Redis state."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from social.repository.moderation.actions import SYSTEM_ACTOR
from tests.conftest import login, make_user

T0 = 1_700_000_000


def count_badge(html: str) -> str | None:
    """Return the navigation's one unread badge (notifications, mentions among them), or
    None."""
    found = re.search(
        r'href="/notifications/"[^>]*>Notifications <span class="count-badge">(\d+)', html
    )
    return found.group(1) if found else None


def csrf_token_of(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)


# --- Replies ---------------------------------------------------------------------------


def test_a_reply_is_posted_filed_under_its_parent_and_goes_back_to_the_permalink(
    repo, r, alice, bob, bob_client, charlie
):
    repo.graph.follow(charlie.id, bob.id)
    parent = repo.posts.create_post(alice.id, "what do you think?")

    response = bob_client.post(
        "/post/", {"status": "a fine idea", "reply_to": str(parent), "next": f"/p/{parent}/"}
    )

    assert response.status_code == 302 and response["Location"] == f"/p/{parent}/"
    reply = int(r.get("next_post_id"))
    stored = r.hgetall(f"post:{reply}")
    assert (stored["body"], stored["reply_to"], stored["reply_to_name"]) == (
        "a fine idea",
        str(parent),
        "alice",
    )
    assert r.lrange(f"replies:{parent}", 0, -1) == [str(reply)]
    assert r.lrange(f"posts:{charlie.id}", 0, -1) == [str(reply)]  # fanned out as any post
    assert str(reply) in r.lrange("timeline", 0, -1)


def test_the_permalink_shows_the_chain_above_the_post_and_its_replies_below(
    repo, alice, bob, charlie, client
):
    first = repo.posts.create_post(alice.id, "first words", at=T0)
    second = repo.posts.create_post(bob.id, "second words", reply_to=first, at=T0 + 1)
    third = repo.posts.create_post(charlie.id, "third words", reply_to=second, at=T0 + 2)
    below = repo.posts.create_post(alice.id, "fourth words", reply_to=third, at=T0 + 3)

    html = client.get(f"/p/{third}/").content.decode().partition("<main")[2]

    order = [html.index(w) for w in ("first words", "second words", "third words", "fourth")]
    assert order == sorted(order)
    thread, _, rest = html.partition('<div class="permalink">')
    assert "first words" in thread and "second words" in thread
    assert rest.index("Replies") < rest.index("fourth words")
    assert f'<a class="replying" href="/p/{second}/">replying to @bob</a>' in html
    assert f'href="/p/{below}/"' in html
    assert 'href="/login/?next=/p/' in html  # a visitor is asked to log in to reply


def test_replies_are_paged_oldest_first(repo, alice, bob, client):
    parent = repo.posts.create_post(alice.id, "ask me anything", at=T0)
    for i in range(25):
        repo.posts.create_post(bob.id, f"answer {i:02}", reply_to=parent, at=T0 + 1 + i)

    first = client.get(f"/p/{parent}/").content.decode()
    second = client.get(f"/p/{parent}/?page=2").content.decode()

    assert first.index("answer 00") < first.index("answer 19")
    assert "answer 20" not in first and 'rel="next"' in first
    assert "answer 20" in second and "answer 24" in second and "answer 19" not in second
    assert "25 replies" in first  # the count on the post itself


def test_every_feed_shows_reply_counts_linking_to_the_permalink(repo, alice, bob, bob_client):
    repo.graph.follow(bob.id, alice.id)
    parent = repo.posts.create_post(alice.id, "hello")
    repo.posts.create_post(bob.id, "hi", reply_to=parent)
    repo.posts.create_post(bob.id, "hey", reply_to=parent)
    link = f'<a class="action count" href="/p/{parent}/#replies">2 replies</a>'

    for page in ("/", "/timeline/", "/u/alice/"):
        assert link in bob_client.get(page).content.decode(), page
    assert link in Client().get("/").content.decode()  # the welcome page's latest posts


def test_the_reply_form_posts_to_post_with_reply_to_a_token_and_the_permalink(
    repo, alice, bob_client
):
    parent = repo.posts.create_post(alice.id, "hello")

    html = bob_client.get(f"/p/{parent}/").content.decode()

    start = html.index('<form class="card compose reply" id="reply"')
    form = html[start : html.index("</form>", start)]
    assert f'method="post" action="/p/{parent}/"' in form  # a refused reply is shown there
    assert f'<input type="hidden" name="reply_to" value="{parent}">' in form
    assert f'<input type="hidden" name="next" value="/p/{parent}/">' in form
    assert 'name="token"' in form and 'name="csrfmiddlewaretoken"' in form


def test_a_retried_reply_with_the_same_token_posts_once(repo, r, alice, bob_client):
    parent = repo.posts.create_post(alice.id, "hello")
    data = {"status": "only once", "reply_to": str(parent), "token": "t" * 20}

    bob_client.post("/post/", data)
    bob_client.post("/post/", data)

    assert r.llen(f"replies:{parent}") == 1


def test_a_blank_reply_re_shows_the_permalink_with_the_error(repo, r, alice, bob_client):
    parent = repo.posts.create_post(alice.id, "the parent post")

    response = bob_client.post("/post/", {"status": "   ", "reply_to": str(parent)})

    html = response.content.decode()
    assert response.status_code == 400
    assert "Write something first." in html and "the parent post" in html
    assert "Reply to @alice" in html
    assert not r.exists(f"replies:{parent}") and r.llen("timeline") == 1


@pytest.mark.parametrize("how", ["missing", "deleted", "suspended"])
def test_replying_to_a_post_that_is_gone_keeps_the_typed_text(repo, r, alice, bob_client, sam, how):
    parent = repo.posts.create_post(alice.id, "soon gone")
    if how == "missing":
        parent = 999
    elif how == "deleted":
        repo.posts.delete_own_post(alice.id, parent)
    else:
        repo.moderation.suspend(alice.id, sam, "spam")
    before = r.lrange("timeline", 0, -1)

    response = bob_client.post("/post/", {"status": "my <careful> reply", "reply_to": parent})

    html = response.content.decode()
    assert response.status_code == 400
    assert "The post you replied to is gone" in html
    assert ">\nmy &lt;careful&gt; reply</textarea>" in html  # back in the home composer
    assert 'name="reply_to"' not in html  # posting again from there is a plain post
    assert r.lrange("timeline", 0, -1) == before and not r.exists(f"replies:{parent}")


@pytest.mark.parametrize("junk", ["abc", "0", "-4", "1.5", "9" * 30])
def test_a_tampered_reply_to_is_refused_with_a_message(bob_client, r, junk):
    response = bob_client.post("/post/", {"status": "hello", "reply_to": junk})

    assert response.status_code == 400
    assert b"This reply form is out of date." in response.content
    assert not r.exists("timeline") and not r.exists("next_post_id")


# --- The permalink and who sees it -------------------------------------------------------


def test_a_post_its_author_deleted_is_gone_for_everyone_but_staff(
    repo, alice, alice_client, bob_client, sam_client
):
    post_id = repo.posts.create_post(alice.id, "regrettable")
    repo.posts.delete_own_post(alice.id, post_id)

    assert alice_client.get(f"/p/{post_id}/").status_code == 404
    assert bob_client.get(f"/p/{post_id}/").status_code == 404
    staff_view = sam_client.get(f"/p/{post_id}/")
    assert staff_view.status_code == 200
    assert b"Its author deleted this post." in staff_view.content
    assert b'name="reply_to"' not in staff_view.content


def test_the_permalink_leaves_out_hidden_replies(repo, alice, bob, charlie, client, sam):
    parent = repo.posts.create_post(alice.id, "parent")
    repo.posts.create_post(bob.id, "by bob", reply_to=parent)
    repo.posts.create_post(charlie.id, "by charlie", reply_to=parent)
    repo.moderation.suspend(charlie.id, sam, "spam")

    html = client.get(f"/p/{parent}/").content.decode()

    assert "by bob" in html and "by charlie" not in html


# --- Mentions ----------------------------------------------------------------------------


def test_a_mention_links_the_profile_and_an_unknown_name_stays_text(repo, alice, bob, client):
    post_id = repo.posts.create_post(alice.id, "hi @BOB and @nobody, mail bob@example.com")

    html = client.get(f"/p/{post_id}/").content.decode()

    assert '<a class="mention" href="/u/BOB/">@BOB</a>' in html
    assert "@nobody" in html and 'href="/u/nobody/"' not in html
    assert client.get("/u/BOB/").status_code == 200  # the link leads to bob, any case


def test_the_unread_badge_counts_mentions_and_clears_when_they_are_read(
    repo, r, alice, bob, bob_client
):
    older = repo.posts.create_post(alice.id, "hello @bob")
    newer = repo.posts.create_post(alice.id, "again @bob")
    assert r.hget(f"user:{bob.id}", "unread_mentions") == "2"
    assert r.hget(f"user:{bob.id}", "unread_notifications") == "2"

    before = bob_client.get("/").content.decode()
    listed = bob_client.get("/mentions/").content.decode()
    seen = bob_client.get("/notifications/").content.decode()
    after = bob_client.get("/timeline/").content.decode()

    assert count_badge(before) == "2"  # one count, one place
    assert count_badge(listed) is None  # reading the Mentions tab takes its mentions off
    assert listed.index(f'id="post-{newer}"') < listed.index(f'id="post-{older}"')
    assert count_badge(seen) is None and count_badge(after) is None
    assert r.hget(f"user:{bob.id}", "unread_notifications") == "0"


def test_the_mentions_page_is_paged(repo, alice, bob, bob_client):
    for i in range(12):
        repo.posts.create_post(alice.id, f"@bob number {i:02}", at=T0 + i)

    first = bob_client.get("/mentions/").content.decode()
    second = bob_client.get("/mentions/?page=2").content.decode()

    assert "number 11" in first and "number 02" in first and "number 01" not in first
    assert "number 01" in second and "number 00" in second and 'rel="prev"' in second


def test_mentions_by_suspended_users_or_in_deleted_posts_do_not_show(
    repo, r, alice, bob, charlie, bob_client, sam
):
    deleted = repo.posts.create_post(alice.id, "deleted mention @bob")
    repo.posts.create_post(charlie.id, "suspended mention @bob")
    repo.posts.create_post(alice.id, "kept mention @bob")
    repo.posts.delete_own_post(alice.id, deleted)
    repo.moderation.suspend(charlie.id, sam, "spam")

    html = bob_client.get("/mentions/").content.decode()

    assert "kept mention" in html
    assert "deleted mention" not in html and "suspended mention" not in html
    assert str(deleted) not in r.zrange(f"mentions:{bob.id}", 0, -1)


def test_the_mentions_page_needs_a_login(client):
    response = client.get("/mentions/")

    assert response.status_code == 302 and response["Location"] == "/login/?next=/mentions/"


# --- Hashtags ----------------------------------------------------------------------------


def test_a_tag_links_to_its_page_which_lists_the_latest_posts_with_it(repo, r, alice, client):
    older = repo.posts.create_post(alice.id, "#Redis is fast", at=T0)
    repo.posts.create_post(alice.id, "no tag here", at=T0 + 1)
    newer = repo.posts.create_post(alice.id, "more #redis", at=T0 + 2)

    page = client.get("/tag/redis/").content.decode()
    same = client.get("/tag/REDIS/").content.decode()

    assert r.lrange("tag:redis", 0, -1) == [str(newer), str(older)]
    assert page.index("more ") < page.index(" is fast") and "no tag here" not in page
    assert '<a class="tag" href="/tag/redis/">#Redis</a>' in page
    assert "<h1>#redis</h1>" in page and "<h1>#redis</h1>" in same


def test_a_tag_in_another_script_has_its_page(repo, alice, client):
    repo.posts.create_post(alice.id, "#日本 trip")

    response = client.get("/tag/%E6%97%A5%E6%9C%AC/")

    html = response.content.decode()
    assert response.status_code == 200 and "<h1>#日本</h1>" in html
    assert '<a class="tag" href="/tag/%E6%97%A5%E6%9C%AC/">#日本</a> trip' in html


@pytest.mark.parametrize(
    "url", ["/tag/123/", "/tag/a-b/", "/tag/%3Cscript%3E/", "/tag/" + "x" * 51 + "/"]
)
def test_a_tag_that_cannot_exist_is_404(client, url):
    assert client.get(url).status_code == 404


def test_the_tag_page_is_paged(repo, alice, client):
    for i in range(12):
        repo.posts.create_post(alice.id, f"#paged number {i:02}", at=T0 + i)

    first = client.get("/tag/paged/").content.decode()
    second = client.get("/tag/paged/?page=2").content.decode()

    assert "number 11" in first and "number 01" not in first and 'rel="next"' in first
    assert "number 01" in second and "number 00" in second


def test_the_timeline_shows_the_tags_trending_today(repo, alice, bob, client):
    for body in ("#redis one", "#redis two", "#django three"):
        repo.posts.create_post(alice.id, body)
    # The store remembers the tags for a minute outside PROCESS_CACHE (which the suite
    # clears), and on a cluster the same repository serves every test: forget them here.

    html = client.get("/timeline/").content.decode()

    aside = html[html.index("Trending today") :]
    assert aside.index('href="/tag/redis/">#redis</a> <small class="muted">2 posts') < aside.index(
        'href="/tag/django/">#django</a> <small class="muted">1 post<'
    )


def test_mentions_and_tags_are_escaped_everywhere(repo, alice, bob, client):
    post_id = repo.posts.create_post(alice.id, "<b>@bob</b> #x<script>alert(1)</script>")

    for page in (f"/p/{post_id}/", "/timeline/", "/tag/x/", "/u/alice/"):
        html = client.get(page).content.decode()
        assert "<script>alert(1)" not in html and "<b>" not in html, page
        assert (
            '&lt;b&gt;<a class="mention" href="/u/bob/">@bob</a>&lt;/b&gt; '
            '<a class="tag" href="/tag/x/">#x</a>&lt;script&gt;'
        ) in html, page


# --- Likes -------------------------------------------------------------------------------


def test_liking_is_a_post_that_goes_back_to_the_post_on_its_page(repo, r, alice, bob, bob_client):
    post_id = repo.posts.create_post(alice.id, "like me")

    response = bob_client.post(f"/p/{post_id}/like/", {"next": "/timeline/?page=1"})

    assert response.status_code == 302
    assert response["Location"] == f"/timeline/?page=1#post-{post_id}"
    assert r.zscore(f"likes:{post_id}", bob.id) is not None
    assert r.zrange(f"user_likes:{bob.id}", 0, -1) == [str(post_id)]


def test_liking_twice_counts_once_and_unliking_twice_is_harmless(repo, r, alice, bob, bob_client):
    post_id = repo.posts.create_post(alice.id, "like me")

    bob_client.post(f"/p/{post_id}/like/")
    again = bob_client.post(f"/p/{post_id}/like/")

    assert again.status_code == 302 and r.zcard(f"likes:{post_id}") == 1
    for _ in range(2):
        response = bob_client.post(f"/p/{post_id}/unlike/")
        assert (
            response.status_code == 302 and response["Location"] == f"/p/{post_id}/#post-{post_id}"
        )
    assert not r.exists(f"likes:{post_id}") and not r.exists(f"user_likes:{bob.id}")


@pytest.mark.parametrize("action", ["like", "unlike"])
def test_a_get_changes_nothing(repo, r, alice, bob_client, action):
    post_id = repo.posts.create_post(alice.id, "like me")

    assert bob_client.get(f"/p/{post_id}/{action}/").status_code == 405
    assert not r.exists(f"likes:{post_id}")


def test_an_offsite_next_is_refused(repo, alice, bob_client):
    post_id = repo.posts.create_post(alice.id, "like me")

    response = bob_client.post(f"/p/{post_id}/like/", {"next": "https://evil.example/"})

    assert response["Location"] == f"/p/{post_id}/#post-{post_id}"


def test_a_visitor_is_sent_to_log_in_and_back_to_the_post(repo, r, alice, client):
    post_id = repo.posts.create_post(alice.id, "like me")

    response = client.post(f"/p/{post_id}/like/")

    assert response["Location"] == f"/login/?next=/p/{post_id}/"
    assert not r.exists(f"likes:{post_id}")


def test_liking_a_missing_or_hidden_post_is_404(repo, r, alice, bob, bob_client):
    gone = repo.posts.create_post(alice.id, "bye")
    repo.posts.delete_own_post(alice.id, gone)

    assert bob_client.post("/p/999/like/").status_code == 404
    assert bob_client.post(f"/p/{gone}/like/").status_code == 404
    assert not r.exists(f"user_likes:{bob.id}")


def test_the_like_form_needs_the_csrf_token_and_the_page_gives_a_working_one(repo, r, alice, bob):
    post_id = repo.posts.create_post(alice.id, "like me")
    strict = login(Client(enforce_csrf_checks=True), repo, bob)

    refused = strict.post(f"/p/{post_id}/like/")
    assert refused.status_code == 403 and not r.exists(f"likes:{post_id}")

    page = strict.get("/timeline/").content.decode()
    form = page[page.index(f'action="/p/{post_id}/like/"') :]
    token = csrf_token_of(form[: form.index("</form>")])
    accepted = strict.post(
        f"/p/{post_id}/like/", {"csrfmiddlewaretoken": token, "next": "/timeline/"}
    )

    assert accepted.status_code == 302 and r.zscore(f"likes:{post_id}", bob.id) is not None


def test_feeds_show_like_counts_and_the_readers_own_like(repo, alice, bob, charlie, bob_client):
    post_id = repo.posts.create_post(alice.id, "popular")
    repo.likes.like(bob.id, post_id)
    repo.likes.like(charlie.id, post_id)

    as_bob = bob_client.get("/timeline/").content.decode()
    as_alice = login(Client(), repo, alice).get("/timeline/").content.decode()
    as_visitor = Client().get("/timeline/").content.decode()

    assert f'action="/p/{post_id}/unlike/"' in as_bob and 'title="2 likes">2<' in as_bob
    assert f'action="/p/{post_id}/like/"' in as_alice and "Liked" not in as_alice
    assert (
        "♥</span> 2 likes" in html.unescape(as_visitor)
        and '<form class="inline like"' not in as_visitor
    )


def test_the_likes_tab_lists_what_the_user_liked_newest_first(repo, alice, bob, client):
    first = repo.posts.create_post(alice.id, "liked first", at=T0)
    second = repo.posts.create_post(alice.id, "liked second", at=T0 + 1)
    repo.posts.create_post(alice.id, "never liked", at=T0 + 2)
    repo.likes.like(bob.id, first, at=T0 + 10)
    repo.likes.like(bob.id, second, at=T0 + 20)

    html = client.get("/u/bob/likes/").content.decode()

    assert html.index("liked second") < html.index("liked first")
    assert "never liked" not in html
    assert '<a href="/u/bob/likes/" aria-current="page">Likes</a>' in html
    assert 'href="/u/bob/likes/"' in client.get("/u/bob/").content.decode()  # the tab
    assert client.get("/u/nobody/likes/").status_code == 404


# --- Deleting one's own post -------------------------------------------------------------


def test_the_author_confirms_then_deletes_and_the_post_leaves_every_feed(
    repo, r, alice, bob, alice_client
):
    repo.graph.follow(bob.id, alice.id)
    post_id = repo.posts.create_post(alice.id, "oops #tagged @bob")

    confirm = alice_client.get(f"/p/{post_id}/delete/")
    response = alice_client.post(f"/p/{post_id}/delete/", follow=True)

    assert confirm.status_code == 200 and b"Delete this post?" in confirm.content
    assert f'action="/p/{post_id}/delete/"'.encode() in confirm.content
    assert response.redirect_chain == [("/", 302)]
    assert b"Your post is deleted." in response.content
    assert r.hget(f"post:{post_id}", "deleted") == "1"
    assert r.hget(f"post:{post_id}", "deleted_by") == str(alice.id)
    assert str(post_id) not in r.lrange("timeline", 0, -1)
    assert not r.exists("tag:tagged") and not r.zcard(f"mentions:{bob.id}")
    for page in ("/timeline/", "/u/alice/", "/tag/tagged/"):
        assert b"oops" not in Client().get(page).content, page
    assert b"oops" not in login(Client(), repo, bob).get("/").content
    assert alice_client.get(f"/p/{post_id}/").status_code == 404


def test_someone_elses_post_cannot_be_deleted(repo, r, alice, bob_client):
    post_id = repo.posts.create_post(alice.id, "mine")

    assert bob_client.get(f"/p/{post_id}/delete/").status_code == 403
    assert bob_client.post(f"/p/{post_id}/delete/").status_code == 403
    assert r.hget(f"post:{post_id}", "deleted") is None
    assert r.lrange("timeline", 0, -1) == [str(post_id)]


def test_deleting_a_missing_post_is_404_and_a_visitor_must_log_in(
    repo, alice, alice_client, client
):
    post_id = repo.posts.create_post(alice.id, "mine")

    assert alice_client.get("/p/999/delete/").status_code == 404
    assert alice_client.post("/p/999/delete/").status_code == 404
    assert client.get(f"/p/{post_id}/delete/")["Location"] == f"/login/?next=/p/{post_id}/delete/"


def test_only_the_author_sees_the_delete_link(repo, alice, alice_client, bob_client):
    post_id = repo.posts.create_post(alice.id, "mine")
    link = f'href="/p/{post_id}/delete/"'.encode()

    assert link in alice_client.get("/timeline/").content
    assert link not in bob_client.get("/timeline/").content


# --- Staff -------------------------------------------------------------------------------


def test_staff_see_replies_mentions_and_tags_in_the_posts_list(repo, alice, bob, sam_client):
    parent = repo.posts.create_post(alice.id, "parent")
    reply = repo.posts.create_post(bob.id, "hey @alice #Redis", reply_to=parent)

    html = sam_client.get("/staff/posts/").content.decode()

    row = html[html.index("hey @alice") :]
    assert f'href="/p/{parent}/" title="The post this one replies to">reply to #{parent}</a>' in row
    assert f'<a class="mention" href="/staff/users/id/{alice.id}/"' in row
    assert '<a class="tag" href="/staff/posts/?tag=redis"' in row
    assert f"#{reply}" in row


def test_staff_search_posts_by_tag_removed_ones_included(repo, alice, bob, sam, sam_client):
    kept = repo.posts.create_post(alice.id, "about #redis")
    removed = repo.posts.create_post(bob.id, "spam #redis")
    repo.posts.create_post(alice.id, "about #django")
    repo.moderation.delete_posts([removed], sam, "spam")

    html = sam_client.get("/staff/posts/?tag=%23Redis").content.decode()

    assert "Posts with #redis" in html
    assert "about #redis" in html and "spam #redis" in html and "about #django" not in html
    assert f'value="{kept}"' in html and f'value="{removed}"' not in html  # removed: no box


def test_staff_tag_search_refuses_a_non_tag(sam_client):
    response = sam_client.get("/staff/posts/?tag=no+spaces")

    assert response.status_code == 200
    assert b"A tag is up to 50 letters, digits or underscores" in response.content


def test_the_staff_posts_list_is_staff_only(client, bob_client):
    assert client.get("/staff/posts/?tag=x").status_code == 302
    assert bob_client.get("/staff/posts/?tag=x").status_code == 403


def test_a_suspended_authors_mention_does_not_reach_the_badge_page(repo, alice, bob, bob_client):
    # Suspension happens after the mention was counted: the page hides the post.
    post_id = repo.posts.create_post(alice.id, "@bob hi")
    repo.moderation.suspend(alice.id, SYSTEM_ACTOR, "spam")

    html = bob_client.get("/mentions/").content.decode()

    assert f'id="post-{post_id}"' not in html and "No one has mentioned you yet." in html


def test_a_new_user_can_be_mentioned_once_they_exist(repo, alice, client):
    early = repo.posts.create_post(alice.id, "hi @dora")
    dora = make_user(repo, "dora")
    late = repo.posts.create_post(alice.id, "hi again @dora")

    early_html = client.get(f"/p/{early}/").content.decode()
    late_html = client.get(f"/p/{late}/").content.decode()

    assert 'href="/u/dora/"' not in early_html.split('class="body"')[1].split("</p>")[0]
    assert '<a class="mention" href="/u/dora/">@dora</a>' in late_html
    assert repo.r.hget(f"post:{late}", "mentions") == f"{dora.id}:dora".encode()


def test_a_like_on_a_later_page_of_replies_comes_back_to_that_page(repo, r, alice, bob, bob_client):
    parent = repo.posts.create_post(alice.id, "ask me", at=T0)
    replies = [
        repo.posts.create_post(alice.id, f"answer {i}", reply_to=parent, at=T0 + i)
        for i in range(1, 23)
    ]
    page = bob_client.get(f"/p/{parent}/?page=2").content.decode()
    form = page[page.index(f'action="/p/{replies[-1]}/like/"') :]
    back = re.search(r'name="next" value="([^"]+)"', form).group(1)

    response = bob_client.post(f"/p/{replies[-1]}/like/", {"next": back})

    assert back == f"/p/{parent}/?page=2"
    assert response["Location"] == f"/p/{parent}/?page=2#post-{replies[-1]}"
    assert r.zscore(f"likes:{replies[-1]}", bob.id) is not None


def test_a_refused_replys_page_sends_its_forms_back_to_the_permalink_not_to_post(
    repo, alice, bob_client
):
    parent = repo.posts.create_post(alice.id, "the parent")

    html = bob_client.post("/post/", {"status": "", "reply_to": parent}).content.decode()

    assert f'<input type="hidden" name="next" value="/p/{parent}/">' in html
    assert 'name="next" value="/post/"' not in html
