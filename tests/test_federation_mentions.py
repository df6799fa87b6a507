"""A post's @name@domain: a mention of another server's account (issue 35, part 5).

The text rule (social/text.py) finds the address, checked by social/federation/names.py;
posting's resolve step (posts/posting.py) looks it up among the remote accounts known here
and asks no other server, so an address no one here has looked up stays text. A known one
is a mention: in the post's `mentions` as its account is called, linked on the card to our
page of it, named in the API by its acct, not told here (its server is), and delivered:
the Create's Note carries its Mention tag and its inbox gets the post. On real Redis."""

from __future__ import annotations

import re

import pytest

from social import keys, work
from social.federation import deliver as outbox
from social.federation import documents
from social.federation.actor_documents import parse_actor
from social.repository import ANONYMOUS
from social.repository.federation.actors import RemoteActor
from social.text import MENTION_RE, mention_key, mentioned_names, mentions_of
from tests import test_federation_deliver as deliveries
from tests.api import Api, all_keys, token_for
from tests.federation_actors import mastodon_actor
from tests.test_round_trips import pin

remote = deliveries.remote  # the test's remote inbox (remote.test on loopback)
REMOTE = deliveries.REMOTE


def known(repo, name: str = "bob", host: str = REMOTE, scheme: str = "https") -> RemoteActor:
    """A remote account stored as the resolver stores one (Mastodon's actor document)."""
    document = mastodon_actor(name, host, scheme)
    return repo.remote_actors.upsert(parse_actor(document, fetched_from=document["id"]))


# --- The text rule ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "found"),
    [
        ("hi @bob@beta.test!", ["bob@beta.test"]),
        ("hi @bob@beta.test:18002.", ["bob@beta.test:18002"]),  # a test instance's port
        ("@Bob@BETA.Test, @bob@beta.test", ["Bob@beta.test"]),  # one account, first spelling
        ("@bob.smith@example.org", ["bob.smith@example.org"]),  # the remote name rule
        ("@bob@bücher.example", ["bob@xn--bcher-kva.example"]),  # the domain's one spelling
        ("@alice and @bob@beta.test", ["alice", "bob@beta.test"]),
        ("ask @bob@beta.test: he knows", ["bob@beta.test"]),  # a colon without a port
    ],
)
def test_an_address_after_at_is_a_mention_in_its_one_spelling(body, found):
    assert mentions_of(body) == found


@pytest.mark.parametrize(
    "body",
    [
        "@bob@beta_x.test",  # no domain name
        "@bob@beta.test:99999",  # no port
        "@bob@beta.test:80x",  # no shorter address either
        "@a@b.test@c",
        "mail bob@beta.test",  # an e-mail address is no mention
        "@bob@",
        "see https://beta.test/@bob@beta.test",
    ],
)
def test_what_is_no_address_is_no_mention_at_all(body):
    assert mentions_of(body) == []


def test_local_names_are_found_as_before_and_addresses_left_to_posting():
    body = "hi @Alice, @alice@beta.test and @bob.smith, mail a@b.com"
    assert mentioned_names(body) == ["Alice", "bob"]  # "@bob.smith": bob, then a full stop
    assert [m.group(1) for m in MENTION_RE.finditer(body)] == ["Alice", "alice@beta.test", "bob"]
    assert mention_key("Bob@BETA.test:18002") == "bob@beta.test:18002"
    assert mention_key("Alice") == "alice" and mention_key("bob@beta_x.test") is None


# --- Posting ------------------------------------------------------------------------------


def test_a_known_remote_account_s_address_is_a_mention_not_told_here(repo, r, alice, bob):
    zed = known(repo, "zed")

    post_id = repo.posts.create_post(alice.id, "hi @bob and @Zed@Remote.Test")

    # Its account's name (its server's spelling), after the local mentions.
    shown = repo.pages.post(post_id, ANONYMOUS)[0]
    assert shown.mentions == (("bob", bob.id), ("zed@remote.test", zed.id))
    # The local mention is told as before; the remote account is not told here.
    assert r.zrange(keys.mentions(bob.id), 0, -1) == [str(post_id)]
    assert r.hget(keys.user(bob.id), "unread_mentions") == "1"
    assert not r.exists(keys.mentions(zed.id)) and not r.exists(keys.notifications(zed.id))
    assert r.hget(keys.user(zed.id), "unread_mentions") is None


def test_an_unknown_address_stays_text_and_nothing_is_fetched_or_stored(repo, r, alice):
    post_id = repo.posts.create_post(alice.id, "hi @nobody@remote.test")

    assert r.hget(keys.post(post_id), "mentions") is None
    assert repo.remote_actors.by_acct("nobody@remote.test") is None
    assert all_keys(r, "ap:*") == []  # no account, no job for a fetch


def test_a_suspended_remote_account_is_no_mention(repo, r, alice, sam):
    zed = known(repo, "zed")
    repo.moderation.suspend(zed.id, sam, "spam")

    post_id = repo.posts.create_post(alice.id, "hi @zed@remote.test")

    assert r.hget(keys.post(post_id), "mentions") is None


def test_an_address_whose_index_entry_is_stale_is_no_mention(repo, r, alice):
    zed = known(repo, "zed")
    # The entry of an address its account no longer has (a rename the index missed).
    r.set(keys.remote_actor_by_acct("old@remote.test"), zed.id)

    post_id = repo.posts.create_post(alice.id, "hi @old@remote.test")

    assert r.hget(keys.post(post_id), "mentions") is None


def test_known_addresses_cost_one_round_trip_more_whatever_their_number(repo, alice, round_trips):
    for name in ("zed", "yan", "xia"):
        known(repo, name)
    round_trips.reset()
    repo.posts.resolve_post(alice, "hi @nobody@remote.test")
    without = round_trips.count

    round_trips.reset()
    post = repo.posts.resolve_post(alice, "hi @zed@remote.test @yan@remote.test @xia@remote.test")

    # On a cluster: one round trip per primary the pipelines' keys are on.
    assert round_trips.count == pin(without + 1, 6)
    assert len(post.fields["mentions"].split()) == 3


# --- Shown --------------------------------------------------------------------------------


def test_the_card_links_the_address_to_our_page_of_the_account(repo, alice, client):
    zed = known(repo, "zed")
    post_id = repo.posts.create_post(alice.id, "hi @zed@Remote.Test and @nobody@remote.test")

    html = client.get(f"/p/{post_id}/").content.decode()

    assert '<a class="mention" href="/u/zed@remote.test/">@zed@Remote.Test</a>' in html
    assert "@nobody@remote.test" in html and 'href="/u/nobody@remote.test/"' not in html
    assert client.get("/u/zed@remote.test/").status_code == 200
    assert zed.username == "zed@remote.test"


def test_the_api_names_the_mention_by_its_acct(repo, alice):
    zed = known(repo, "zed")
    api = Api(token_for(repo, alice))

    status = api.post("/api/v1/statuses", {"status": "hi @zed@remote.test"}).json()

    assert status["mentions"] == [
        {
            "id": str(zed.id),
            "username": "zed",
            "acct": "zed@remote.test",
            "url": "http://testserver/u/zed@remote.test/",
        }
    ]
    assert re.search(r'<a class="mention" href="[^"]*/u/zed@remote.test/">', status["content"])


# --- Delivered ----------------------------------------------------------------------------


def test_the_create_names_the_account_and_reaches_its_inbox(repo, remote, alice, alice_client):
    zed = known(repo, "zed", scheme="http")  # the test inbox is plain http

    response = alice_client.post("/post/", {"status": "hi @zed@remote.test"})
    assert response.status_code == 302
    work.run_pending(outbox.QUEUE)  # the fan-out, which queues the delivery
    work.run_pending(outbox.QUEUE)  # the delivery

    [(host, path, activity)] = deliveries.sent(remote)
    assert (host, path) == (REMOTE, "/inbox")  # its server's shared inbox
    note = activity["object"]
    assert activity["type"] == "Create"
    assert {"type": "Mention", "href": zed.uri, "name": "@zed@remote.test"} in note["tag"]
    assert zed.uri in note["cc"] and documents.actor_id(zed.id) not in note["cc"]
    # Linked to its page on its server, as Mastodon links a mention (our page of it in ours).
    assert f'<a class="mention" href="{zed.profile_url}">@zed@remote.test</a>' in note["content"]
    assert zed.profile_url == "http://remote.test/@zed"
