"""Another server's posts on our pages and in the client API (issue 35, part 5), on real Redis.

A remote account, zed@remote.test, is stored through the remote actor store, and its notes
are kept the way the inbox's job keeps them: a Mastodon-shaped Create (or Update) applied
by work_handlers/activities.apply as a verified activity of zed's. The pages are read
through the test client; what they must show: the note's HTML as sanitised when stored
(and only a remote author's post's HTML unescaped), its links made ours where we know
them, its pictures from their server with their sizes and descriptions, the link to the
original, the author as name@domain, and an edit once the inbox applied it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pytest
from django.test import Client

from social import keys
from social.federation.actor_documents import ActorDocument
from social.federation.signatures import generate_key_pair
from social.repository import Repository
from social.repository.federation.actors import RemoteActor
from social.work_handlers import activities
from tests.api import Api, token_for
from tests.federation_actors import mastodon_note

SITE = "http://testserver"
REMOTE = "https://remote.test"
ZED = f"{REMOTE}/users/zed"
PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
AS = "https://www.w3.org/ns/activitystreams"
PICTURE = {
    "type": "Document", "mediaType": "image/jpeg", "url": f"{REMOTE}/media/cat.jpg",
    "name": "A cat asleep on a keyboard", "blurhash": "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH",
    "width": 640, "height": 480,
}  # fmt: skip
VIDEO = {"type": "Video", "mediaType": "video/mp4", "url": f"{REMOTE}/media/clip.mp4"}


@cache
def public_pem() -> str:
    return generate_key_pair().public_pem


@pytest.fixture(autouse=True)
def site(settings):
    settings.SITE_URL = SITE


def store_actor(repo: Repository, name: str = "zed", host: str = "remote.test") -> RemoteActor:
    """name@host as the remote actor store keeps an account fetched before."""
    uri = f"https://{host}/users/{name}"
    document = ActorDocument(
        uri=uri, name=name, domain=host, actor_type="Person", inbox=f"{uri}/inbox",
        key_id=f"{uri}#main-key", public_key=public_pem(), shared_inbox=f"https://{host}/inbox",
        url=f"https://{host}/@{name}", display_name=name.capitalize(),
    )  # fmt: skip
    return repo.remote_actors.upsert(document)


@pytest.fixture
def zed(repo) -> RemoteActor:
    return store_actor(repo)


def mention_link(href: str, name: str) -> str:
    """A mention as Mastodon writes it in a note's content."""
    return (
        f'<span class="h-card" translate="no"><a href="{href}" class="u-url mention">'
        f"@<span>{name}</span></a></span>"
    )


def note(number: int, **changes: Any) -> dict:
    """A public Note of zed's, as Mastodon 4 writes one."""
    return mastodon_note(ZED, number, hashtag="Redis", **changes)


def keep(repo: Repository, actor: RemoteActor, data: dict) -> int:
    """Apply zed's Create of the note data as the inbox's job does; return our post id."""
    create = {
        "@context": AS, "id": f"{data['id']}/activity", "type": "Create", "actor": actor.uri,
        "to": data["to"], "cc": data["cc"], "object": data,
    }  # fmt: skip
    assert activities.apply(repo, actor, create) == "applied:Create"
    found = repo.remote_objects.find(data["id"])
    assert found is not None
    return found.post_id


def edit(repo: Repository, actor: RemoteActor, data: dict, number: int = 1) -> None:
    update = {
        "@context": AS, "id": f"{data['id']}#updates/{number}", "type": "Update",
        "actor": actor.uri, "to": [PUBLIC], "object": data,
    }  # fmt: skip
    assert activities.apply(repo, actor, update) == "applied:Update:note"


def card(html: str, post_id: int) -> str:
    """The article of post_id on a page (the whole of it, up to its closing tag)."""
    found = re.search(rf'<article class="post[^"]*" id="post-{post_id}">.*?</article>', html, re.S)
    assert found is not None, f"no card of post {post_id}"
    return found.group(0)


def page(client: Client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


# --- The card ------------------------------------------------------------------------------


def test_a_remote_post_shows_its_html_its_author_and_a_link_to_the_original(
    repo, zed, alice, alice_client
):
    repo.graph.follow(alice.id, zed.id)
    post_id = keep(repo, zed, note(1))
    for path in ("/", f"/u/{zed.username}/", "/timeline/", f"/p/{post_id}/"):
        shown = card(page(alice_client, path), post_id)
        assert "<p>Note 1 about " in shown  # its own paragraphs, not escaped
        assert 'class="body remote-html"' in shown
        assert 'href="/u/zed@remote.test/">@zed@remote.test</a>' in shown
        original = f'<a class="original" href="{REMOTE}/@zed/1" rel="nofollow noopener noreferrer">'
        assert original in shown
        assert "View on remote.test" in shown


def test_a_hashtag_the_post_carries_links_to_our_tag_page(repo, zed, alice, alice_client):
    repo.graph.follow(alice.id, zed.id)
    post_id = keep(repo, zed, note(2))
    shown = card(page(alice_client, "/"), post_id)
    assert '<a class="tag" href="/tag/redis/">#<span>Redis</span></a>' in shown
    assert f"{REMOTE}/tags/redis" not in shown


def test_a_hashtag_the_post_does_not_carry_keeps_its_link_there(repo, zed, alice, alice_client):
    repo.graph.follow(alice.id, zed.id)
    post_id = keep(repo, zed, note(3, tag=[]))
    shown = card(page(alice_client, "/"), post_id)
    assert f'<a href="{REMOTE}/tags/redis" class="mention hashtag"' in shown


def test_a_mention_of_a_local_account_links_to_our_profile_and_a_remote_one_stays_there(
    repo, zed, alice, alice_client
):
    local = mention_link(f"{SITE}/u/alice/", "alice")
    remote = mention_link(f"{REMOTE}/@yan", "yan")
    tags = [
        {"type": "Mention", "href": f"{SITE}/ap/users/{alice.id}", "name": "@alice@testserver"},
        {"type": "Mention", "href": f"{REMOTE}/users/yan", "name": "@yan@remote.test"},
    ]
    post_id = keep(repo, zed, note(4, content=f"<p>{local} and {remote} hello</p>", tag=tags))
    shown = card(page(alice_client, f"/p/{post_id}/"), post_id)
    assert '<a class="u-url mention" href="/u/alice/">@<span>alice</span></a>' in shown
    assert f'<a href="{REMOTE}/@yan" class="u-url mention" target="_blank"' in shown


def test_a_mention_linked_to_our_actor_links_to_the_profile(repo, zed, alice, alice_client):
    actor = f"{SITE}/ap/users/{alice.id}"
    tags = [{"type": "Mention", "href": actor, "name": "@alice@testserver"}]
    content = f'<p><a href="{actor}" class="mention">@alice</a> hi</p>'  # as Akkoma writes it
    post_id = keep(repo, zed, note(5, content=content, tag=tags))
    shown = card(page(alice_client, "/mentions/"), post_id)
    assert '<a class="mention" href="/u/alice/">@alice</a>' in shown


def test_a_link_to_us_that_a_browser_reads_as_another_host_stays_as_sent(
    repo, zed, alice, alice_client
):
    repo.graph.follow(alice.id, zed.id)
    content = f'<p><a href="{SITE}//evil.test/x">one</a> <a href="{SITE}/tag/redis/">two</a></p>'
    post_id = keep(repo, zed, note(15, content=content))
    shown = card(page(alice_client, "/"), post_id)
    assert f'<a href="{SITE}//evil.test/x" target="_blank" rel="nofollow noopener">one</a>' in shown
    assert '<a href="/tag/redis/">two</a>' in shown


def test_its_pictures_load_from_their_server_with_their_sizes_and_descriptions(
    repo, zed, alice, alice_client
):
    repo.graph.follow(alice.id, zed.id)
    post_id = keep(repo, zed, note(6, attachment=[PICTURE, VIDEO]))
    shown = card(page(alice_client, "/"), post_id)
    assert (
        f'<a class="media-item" href="{PICTURE["url"]}" rel="nofollow noopener noreferrer">'
        f'<img src="{PICTURE["url"]}" width="640" height="480" alt="A cat asleep on a keyboard"'
        ' loading="lazy" decoding="async" referrerpolicy="no-referrer"></a>'
    ) in shown
    assert 'class="media-grid media-1 remote-media"' in shown  # the video is not a picture
    assert f'<a href="{VIDEO["url"]}" rel="nofollow noopener noreferrer">A video</a>' in shown


def test_a_picture_without_a_size_has_none_in_the_markup(repo, zed, alice, alice_client):
    repo.graph.follow(alice.id, zed.id)
    picture = {key: value for key, value in PICTURE.items() if key not in ("width", "height")}
    post_id = keep(repo, zed, note(7, attachment=[{**picture, "name": None}]))
    shown = card(page(alice_client, "/"), post_id)
    assert f'<img src="{PICTURE["url"]}" alt="A picture its author did not describe"' in shown


def test_a_content_warning_folds_the_html_and_the_pictures(repo, zed, alice, alice_client):
    repo.graph.follow(alice.id, zed.id)
    data = note(8, summary="spoilers", sensitive=True, attachment=[PICTURE])
    post_id = keep(repo, zed, data)
    shown = card(page(alice_client, "/"), post_id)
    folded = re.search(r'<details class="cw">.*</details>', shown, re.S)
    assert folded is not None
    assert "spoilers" in folded.group(0)
    assert "<p>Note 8 about" in folded.group(0) and PICTURE["url"] in folded.group(0)


def test_what_the_sanitiser_refused_at_the_door_never_reaches_a_page(
    repo, r, zed, alice, alice_client
):
    repo.graph.follow(alice.id, zed.id)
    content = (
        '<p onclick="steal()">Hi<script>alert(1)</script><img src="https://evil.test/x.png"> '
        '<a href="javascript:alert(2)">link</a><iframe src="https://evil.test/"></iframe></p>'
    )
    post_id = keep(repo, zed, note(9, content=content))
    assert r.hget(keys.post(post_id), "html") == "<p>Hi link</p>"
    shown = card(page(alice_client, "/"), post_id)
    assert "<p>Hi link</p>" in shown
    for refused in ("<script", "onclick", "evil.test", "javascript:", "<iframe", "<img"):
        assert refused not in shown


def test_a_local_posts_html_field_is_never_shown_unescaped(r, alice, alice_client, repo):
    """Only a remote author's post shows its HTML: a local post's text is escaped, whatever
    its hash holds."""
    post_id = repo.posts.create_post(alice.id, "plain <b>words</b>")
    r.hset(keys.post(post_id), mapping={"uri": f"{REMOTE}/x", "html": "<script>x()</script>"})
    shown = card(page(alice_client, f"/p/{post_id}/"), post_id)
    assert "plain &lt;b&gt;words&lt;/b&gt;" in shown
    assert "<script>" not in shown and "View on" not in shown and "remote-html" not in shown


def test_a_reply_to_a_post_we_do_not_keep_links_to_it_there(repo, zed, alice, alice_client):
    repo.graph.follow(alice.id, zed.id)
    post_id = keep(repo, zed, note(10, inReplyTo="https://else.test/users/x/statuses/1"))
    shown = card(page(alice_client, "/"), post_id)
    assert (
        '<a class="replying" href="https://else.test/users/x/statuses/1" '
        'rel="nofollow noopener noreferrer">replying to a post on else.test</a>'
    ) in shown


def test_the_permalink_shows_the_conversation_both_ways(repo, zed, alice, bob, bob_client):
    question = repo.posts.create_post(alice.id, "what is redis?")
    answer = keep(repo, zed, note(11, inReplyTo=f"{SITE}/ap/posts/{question}"))
    follow_up = repo.posts.create_post(bob.id, "thanks zed", reply_to=answer)
    html = page(bob_client, f"/p/{answer}/")
    assert "what is redis?" in card(html, question)  # what it answers, above it
    shown = card(html, answer)
    assert "<p>Note 11 about" in shown and "replying to @alice" in shown
    assert "thanks zed" in card(html, follow_up)  # a local reply to it, below
    assert 'id="reply"' in html  # a reader may answer it here


def test_a_visitor_sees_a_remote_post_on_its_authors_profile(repo, zed, alice, client):
    repo.graph.follow(alice.id, zed.id)
    post_id = keep(repo, zed, note(12, attachment=[PICTURE]))
    shown = card(page(client, f"/u/{zed.username}/"), post_id)
    assert "<p>Note 12 about" in shown and PICTURE["url"] in shown


def test_pages_allow_pictures_from_other_servers_over_https_alone(repo, zed, alice, client):
    repo.graph.follow(alice.id, zed.id)
    keep(repo, zed, note(13, attachment=[PICTURE]))
    policy = client.get(f"/u/{zed.username}/")["Content-Security-Policy"]
    assert "img-src 'self' data: https:;" in policy
    assert "script-src 'self';" in policy and "http:" not in policy


@pytest.mark.parametrize(
    "which", ["post", "permalink", "actor", "outbox", "outbox page", "followers"]
)
def test_our_activitypub_addresses_answer_404_for_another_servers_post_or_account(
    repo, zed, alice, client, which
):
    """Mastodon answers only its own: a remote note or actor is at its own server, never
    served (or given a key pair) here as if ours."""
    repo.graph.follow(alice.id, zed.id)
    post_id = keep(repo, zed, note(14))
    path = {
        "post": f"/ap/posts/{post_id}",
        "permalink": f"/p/{post_id}/",
        "actor": f"/ap/users/{zed.id}",
        "outbox": f"/ap/users/{zed.id}/outbox",
        "outbox page": f"/ap/users/{zed.id}/outbox?page=1",
        "followers": f"/ap/users/{zed.id}/followers",
    }[which]
    response = client.get(path, HTTP_ACCEPT="application/activity+json")
    assert response.status_code == 404
    assert not repo.r.exists(keys.actor_key(zed.id))


# --- Edits -----------------------------------------------------------------------------------


def test_an_edit_shows_on_pages_that_remembered_the_card(repo, zed, alice, alice_client, client):
    repo.graph.follow(alice.id, zed.id)
    data = note(20, attachment=[PICTURE])
    post_id = keep(repo, zed, data)
    # Remembered: the posts, their cards, and a visitor's remembered pages.
    readers = [(alice_client, "/")] + [
        (reader, path)
        for reader in (alice_client, client)
        for path in (f"/u/{zed.username}/", f"/p/{post_id}/", "/timeline/")
    ]
    for reader, path in readers:
        assert "<p>Note 20 about" in card(page(reader, path), post_id)
    edited = {**data, "content": "<p>Note 20, <em>edited</em></p>", "attachment": []}
    edit(repo, zed, edited)
    for reader, path in readers:
        shown = card(page(reader, path), post_id)
        assert "<p>Note 20, <em>edited</em></p>" in shown and "Note 20 about" not in shown
        assert PICTURE["url"] not in shown
        assert '<span class="edited" title="' in shown


def test_an_edit_that_changes_only_the_markup_shows_too(repo, zed, alice, alice_client):
    """The words are the same (the post's plain-text body unchanged): the edit time tells."""
    repo.graph.follow(alice.id, zed.id)
    data = note(21, content="<p>same words</p>")
    post_id = keep(repo, zed, data)
    assert "<p>same words</p>" in card(page(alice_client, "/"), post_id)
    edit(repo, zed, {**data, "content": "<p><strong>same</strong> words</p>"})
    assert "<p><strong>same</strong> words</p>" in card(page(alice_client, "/"), post_id)


def test_a_remote_post_checked_again_unchanged_keeps_its_html(repo, zed, alice, alice_client):
    """An edit of one of zed's posts has every remembered post of zed's checked again: those
    unchanged are built again from what was remembered, their HTML and pictures kept."""
    repo.graph.follow(alice.id, zed.id)
    kept = keep(repo, zed, note(22, attachment=[PICTURE]))
    data = note(23)
    edited = keep(repo, zed, data)
    before = card(page(alice_client, "/"), kept)
    edit(repo, zed, {**data, "content": "<p>other words</p>"})
    html = page(alice_client, "/")
    assert card(html, kept) == before
    assert "<p>other words</p>" in card(html, edited)


# --- The client API --------------------------------------------------------------------------


@pytest.fixture
def api(repo, alice) -> Api:
    return Api(token_for(repo, alice))


def test_the_api_shows_a_remote_post_as_mastodon_does(repo, zed, alice, api):
    repo.graph.follow(alice.id, zed.id)
    tags = [
        {"type": "Mention", "href": f"{SITE}/ap/users/{alice.id}", "name": "@alice@testserver"},
        {"type": "Hashtag", "href": f"{REMOTE}/tags/redis", "name": "#Redis"},
    ]
    content = f"<p>{mention_link(f'{SITE}/u/alice/', 'alice')} look</p>"
    data = note(30, content=content, tag=tags, attachment=[PICTURE, VIDEO])
    post_id = keep(repo, zed, data)
    status = api.get(f"/api/v1/statuses/{post_id}").json()
    assert (status["uri"], status["url"]) == (data["id"], data["url"])
    assert status["content"].startswith('<p><span class="h-card" translate="no">')
    assert "look</p>" in status["content"]
    assert status["account"]["acct"] == "zed@remote.test"
    assert status["account"]["username"] == "zed"
    assert status["edited_at"] is None
    picture, video = status["media_attachments"]
    assert picture == {
        "id": str(post_id * 10),
        "type": "image",
        "url": PICTURE["url"],
        "preview_url": PICTURE["url"],
        "remote_url": PICTURE["url"],
        "preview_remote_url": None,
        "text_url": None,
        "meta": {"original": {"width": 640, "height": 480, "aspect": 1.3333, "size": "640x480"}},
        "description": "A cat asleep on a keyboard",
        "blurhash": PICTURE["blurhash"],
    }
    assert (video["type"], video["url"]) == ("video", VIDEO["url"])
    assert video["remote_url"] == VIDEO["url"]
    assert video["meta"] == {} and video["preview_url"] is None and video["description"] is None
    assert [(m["acct"], m["username"], m["id"]) for m in status["mentions"]] == [
        ("alice", "alice", str(alice.id))
    ]
    assert [t["name"] for t in status["tags"]] == ["redis"]
    [listed] = [s for s in api.get("/api/v1/timelines/home").json() if s["id"] == str(post_id)]
    assert listed["uri"] == data["id"] and listed["media_attachments"][0]["url"] == PICTURE["url"]


def test_the_api_names_a_remote_account_mentioned_by_name_at_domain(repo, zed, alice, api):
    """A remote account in a post's mentions (as a local post naming it keeps it): acct
    name@domain, username the name alone."""
    yan = store_actor(repo, "yan", "else.test")
    post_id = repo.posts.create_post(alice.id, "hello")
    repo.r.hset(keys.post(post_id), "mentions", f"{yan.id}:{yan.username}")
    status = api.get(f"/api/v1/statuses/{post_id}").json()
    assert [(m["acct"], m["username"]) for m in status["mentions"]] == [("yan@else.test", "yan")]


def test_the_api_shows_an_edit(repo, zed, alice, api):
    repo.graph.follow(alice.id, zed.id)
    data = note(31, attachment=[PICTURE])
    post_id = keep(repo, zed, data)
    before = api.get(f"/api/v1/statuses/{post_id}").json()
    assert before["content"].startswith("<p>Note 31 about")
    edit(repo, zed, {**data, "content": "<p>Edited</p>", "attachment": [VIDEO]})
    after = api.get(f"/api/v1/statuses/{post_id}").json()
    assert after["content"] == "<p>Edited</p>"
    assert after["edited_at"] is not None and after["edited_at"].endswith("Z")
    assert [m["type"] for m in after["media_attachments"]] == ["video"]


def test_a_local_posts_status_is_unchanged(repo, alice, api):
    post_id = repo.posts.create_post(alice.id, "local #words")
    status = api.get(f"/api/v1/statuses/{post_id}").json()
    assert status["uri"] == f"{SITE}/ap/posts/{post_id}"  # its Note's id
    assert status["url"] == f"{SITE}/p/{post_id}/"
    assert status["content"].startswith("<p>local ")
    assert status["edited_at"] is None
