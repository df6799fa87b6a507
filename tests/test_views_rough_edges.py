"""The rough edges a new user hit (issue 27), as pages: each test failed before its fix,
and asserts the page and, where state is involved, the Redis state."""

from __future__ import annotations

import re

from tests.conftest import make_user

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
