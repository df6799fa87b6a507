"""Remote accounts (social/repository/federation/actors.py) on a real Redis, and the checks
an actor document passes before it is kept (social/federation/actor_documents.py).

A remote account is an account here: an id from next_user_id, a user:<id> hash the pages
read (username name@domain), three indexes of its own (uri, address, key id), and none of
the local ones (users, users_lower, users_lex, users_by_time).
"""

from __future__ import annotations

import threading

import pytest

from social import keys
from social.federation.actor_documents import (
    DISPLAY_NAME_MAX,
    NOTE_TEXT_MAX,
    SUMMARY_HTML_MAX,
    URL_MAX,
    InvalidActor,
    parse_actor,
)
from social.repository.federation.actors import ActorConflict
from tests.conftest import make_user
from tests.federation_actors import mastodon_actor, public_pem

URI = "https://remote.test/users/alice"


def parsed(doc=None, **changes):
    doc = doc if doc is not None else mastodon_actor(**changes)
    return parse_actor(doc, fetched_from=doc["id"])


def refused(doc, fetched_from=None):
    with pytest.raises(InvalidActor) as caught:
        parse_actor(doc, fetched_from=fetched_from or doc.get("id") or URI)
    return caught.value.reason


# --- Keys ------------------------------------------------------------------------------


def test_its_keys_are_named_by_the_digest_of_what_they_index():
    digest = "5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9"  # sha256("0")
    assert keys.remote_actor_by_uri("0") == f"ap:uri:{digest}"
    assert keys.remote_actor_by_acct("0") == f"ap:acct:{digest}"
    assert keys.remote_actor_by_key("0") == f"ap:keyid:{digest}"
    assert len(keys.remote_actor_by_uri("https://x.test/" + "a" * 5000)) == len("ap:uri:") + 64


# --- Upserting ---------------------------------------------------------------------------


def test_an_upsert_makes_an_account_the_pages_read_as_name_at_domain(repo, r):
    actor = repo.remote_actors.upsert(parsed(), now=1_700_000_000)
    assert actor.id == int(r.get(keys.next_user_id()))
    stored = r.hgetall(keys.user(actor.id))
    assert stored["username"] == "alice@remote.test"
    assert stored["domain"] == "remote.test"
    assert stored["uri"] == URI
    assert stored["inbox"] == URI + "/inbox"
    assert stored["shared_inbox"] == "https://remote.test/inbox"
    assert stored["outbox"] == URI + "/outbox"
    assert stored["followers_url"] == URI + "/followers"
    assert stored["following_url"] == URI + "/following"
    assert stored["key_id"] == URI + "#main-key"
    assert stored["public_key"] == public_pem()
    assert stored["url"] == "https://remote.test/@alice"
    assert stored["display_name"] == "Alice Remote"
    assert stored["avatar_url"] == "https://remote.test/avatars/alice.png"
    assert stored["header_url"] == "https://remote.test/headers/alice.png"
    assert stored["fetched_at"] == "1700000000"
    assert stored["signup"] == "1680652800"  # published, 2023-04-05
    assert "<script>" not in stored["summary"] and "alert" not in stored["summary"]
    assert 'rel="nofollow noopener"' in stored["summary"]
    assert stored["summary_text"] == "Hello from #redis"
    assert "password" not in stored and "auth" not in stored
    assert "avatar" not in stored  # a token of ours: the picture job's, not a stranger's URL
    user = repo.users.get_user(actor.id)
    assert user is not None
    assert (user.username, user.domain, user.display_name) == (
        "alice@remote.test",
        "remote.test",
        "Alice Remote",
    )
    assert user.signup_time == 1680652800


def test_a_remote_account_is_in_none_of_the_local_indexes(repo, r):
    actor = repo.remote_actors.upsert(parsed())
    assert r.hgetall(keys.users()) == {}
    assert r.hgetall(keys.usernames_lower()) == {}
    assert r.zrange(keys.username_index(), 0, -1) == []
    assert r.zrange(keys.users_by_time(), 0, -1) == []
    assert repo.users.user_id_for_name("alice@remote.test") is None
    # A sign-up after it walks the new ids for legacy names: the remote one is none of them.
    bob = make_user(repo, "bob")
    assert bob.id == actor.id + 1
    assert r.hgetall(keys.usernames_lower()) == {"bob": str(bob.id)}
    assert repo.users.user_id_for_name("alice") is None


def test_upserting_again_keeps_the_account_and_its_id(repo, r):
    first = repo.remote_actors.upsert(parsed(), now=100)
    before = r.hgetall(keys.user(first.id))
    again = repo.remote_actors.upsert(parsed(), now=100)
    assert again == first
    assert r.hgetall(keys.user(first.id)) == before
    assert int(r.get(keys.next_user_id())) == first.id  # no second id handed out


def test_every_index_finds_it_and_only_for_what_it_holds(repo):
    actor = repo.remote_actors.upsert(parsed())
    store = repo.remote_actors
    assert store.by_uri(URI) == actor
    assert store.by_key_id(URI + "#main-key") == actor
    for spelling in ["alice@remote.test", "@Alice@REMOTE.test", "acct:ALICE@remote.test."]:
        assert store.by_acct(spelling) == actor
    assert store.get(actor.id) == actor
    assert store.get_many([actor.id, actor.id, 999]) == {actor.id: actor}
    assert store.by_uri(URI + "x") is None
    assert store.by_acct("alice@other.test") is None
    assert store.by_acct("not an address") is None
    assert store.by_key_id(URI + "#other-key") is None


def test_a_local_account_is_no_remote_one(repo, alice):
    assert repo.remote_actors.get(alice.id) is None
    assert repo.users.get_user(alice.id).domain == ""


def test_a_rename_moves_the_address_and_a_new_key_the_key_index(repo):
    first = repo.remote_actors.upsert(parsed())
    doc = mastodon_actor(preferredUsername="alicia")
    doc["publicKey"] = {"id": URI + "#key-2", "owner": URI, "publicKeyPem": public_pem(1)}
    renamed = repo.remote_actors.upsert(parsed(doc))
    assert renamed.id == first.id
    assert renamed.username == "alicia@remote.test"
    assert repo.remote_actors.by_acct("alice@remote.test") is None
    assert repo.remote_actors.by_acct("alicia@remote.test").id == first.id
    assert repo.remote_actors.by_key_id(URI + "#main-key") is None
    assert repo.remote_actors.by_key_id(URI + "#key-2").public_key == public_pem(1)


def test_an_address_taken_over_by_another_actor_is_no_longer_the_first_ones(repo, r):
    old = repo.remote_actors.upsert(parsed())
    other = mastodon_actor(id="https://remote.test/users/alice2", preferredUsername="alice")
    other["publicKey"] = {
        "id": "https://remote.test/users/alice2#main-key",
        "owner": "https://remote.test/users/alice2",
        "publicKeyPem": public_pem(),
    }
    new = repo.remote_actors.upsert(parsed(other))
    assert new.id != old.id
    assert repo.remote_actors.by_acct("alice@remote.test").id == new.id
    # The first one renamed later does not take the address from the second.
    repo.remote_actors.upsert(parsed(mastodon_actor(preferredUsername="alice_old")))
    assert repo.remote_actors.by_acct("alice@remote.test").id == new.id
    assert repo.remote_actors.by_acct("alice_old@remote.test").id == old.id


def test_a_field_the_actor_no_longer_has_goes_and_counts_not_given_stay(repo, r):
    from dataclasses import replace

    first = repo.remote_actors.upsert(
        replace(parsed(), followers_count=12, following_count=3, statuses_count=40)
    )
    assert (first.followers_count, first.following_count, first.statuses_count) == (12, 3, 40)
    again = repo.remote_actors.upsert(parsed(image=None, summary=None, name=None))
    stored = r.hgetall(keys.user(first.id))
    for gone in ("header_url", "summary", "summary_text", "display_name"):
        assert gone not in stored
    assert (again.followers_count, again.following_count, again.statuses_count) == (12, 3, 40)
    assert stored["followers_count"] == "12"


def race(repo, actor) -> list[int]:
    """Upsert actor from two threads let go at once; return the ids each got."""
    barrier = threading.Barrier(2)
    found: list[int] = []

    def upsert() -> None:
        barrier.wait()
        found.append(repo.remote_actors.upsert(actor).id)

    threads = [threading.Thread(target=upsert) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return found


def test_two_workers_upserting_one_actor_at_once_make_one_account(repo, r):
    for round_ in range(5):
        doc = mastodon_actor(username=f"racer{round_}")
        found = race(repo, parsed(doc))
        assert len(found) == 2 and found[0] == found[1]
        holders = [key for key in r.scan_iter(match="user:*") if r.hget(key, "uri") == doc["id"]]
        assert holders == [keys.user(found[0])]
        assert r.get(keys.remote_actor_by_uri(doc["id"])) == str(found[0])


def test_a_uri_whose_id_holds_a_local_account_is_refused_and_nothing_written(repo, r, alice):
    r.set(keys.remote_actor_by_uri(URI), alice.id)
    before = r.hgetall(keys.user(alice.id))
    with pytest.raises(ActorConflict):
        repo.remote_actors.upsert(parsed())
    assert r.hgetall(keys.user(alice.id)) == before
    assert r.get(keys.remote_actor_by_acct("alice@remote.test")) is None


def test_a_remote_account_costs_a_few_kilobytes(repo, r):
    actor = repo.remote_actors.upsert(parsed())
    size = sum(
        r.memory_usage(key) or 0
        for key in [
            keys.user(actor.id),
            keys.remote_actor_by_uri(URI),
            keys.remote_actor_by_acct("alice@remote.test"),
            keys.remote_actor_by_key(URI + "#main-key"),
        ]
    )
    # About 2.1 KB on one server (docs/data-layout.md); a cluster node counts more.
    assert 1000 < size < 8192


# --- Hostile documents ---------------------------------------------------------------------


def test_a_document_whose_id_is_on_another_host_is_refused(repo, r):
    doc = mastodon_actor(host="evil.test")
    assert "not the URL it came from" in refused(doc, fetched_from=URI)
    assert r.get(keys.next_user_id()) is None


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"type": "Note"}, "not an actor"),
        ({"type": ["Object", 7]}, "not an actor"),
        ({"preferredUsername": None}, "preferredUsername"),
        ({"preferredUsername": "a" * 65}, "preferredUsername"),
        ({"preferredUsername": "ali ce"}, "preferredUsername"),
        ({"preferredUsername": ["alice"]}, "preferredUsername"),
        ({"inbox": None}, "inbox is missing"),
        ({"inbox": 5}, "inbox is missing"),
        ({"inbox": "ftp://remote.test/inbox"}, "inbox"),
        ({"inbox": "http://remote.test/inbox"}, "only https"),
        ({"inbox": "https://remote.test/" + "x" * URL_MAX}, "longer than"),
        ({"inbox": "https://user:pw@remote.test/inbox"}, "inbox"),
        ({"publicKey": None}, "publicKey"),
        ({"publicKey": "-----BEGIN PUBLIC KEY-----"}, "publicKey"),
    ],
)
def test_a_document_missing_or_mistyping_what_an_actor_needs_is_refused(changes, reason, r):
    assert reason in refused(mastodon_actor(**changes))
    assert r.dbsize() == 0


def test_a_key_owned_by_someone_else_or_on_another_host_or_unreadable_is_refused():
    owner = {
        "id": URI + "#main-key",
        "owner": "https://remote.test/users/bob",
        "publicKeyPem": public_pem(),
    }
    assert "not owned" in refused(mastodon_actor(publicKey=owner))
    elsewhere = {"id": "https://evil.test/key", "owner": URI, "publicKeyPem": public_pem()}
    assert "not on the actor's domain" in refused(mastodon_actor(publicKey=elsewhere))
    garbage = {"id": URI + "#main-key", "owner": URI, "publicKeyPem": "not a key"}
    assert "publicKeyPem" in refused(mastodon_actor(publicKey=garbage))
    huge = {"id": URI + "#main-key", "owner": URI, "publicKeyPem": "A" * 20_000}
    assert "longer than" in refused(mastodon_actor(publicKey=huge))
    missing = {"id": URI + "#main-key", "owner": URI}
    assert "missing" in refused(mastodon_actor(publicKey=missing))


def test_a_key_is_found_in_a_list_of_keys_by_its_owner():
    other = {"id": URI + "#x", "owner": "https://remote.test/users/bob", "publicKeyPem": "x"}
    mine = {"id": URI + "#main-key", "owner": URI, "publicKeyPem": public_pem()}
    assert parsed(mastodon_actor(publicKey=[other, mine])).key_id == URI + "#main-key"


def test_a_document_that_is_no_object_is_refused():
    for doc in ([], "actor", None, 7):
        with pytest.raises(InvalidActor):
            parse_actor(doc, fetched_from=URI)


def test_http_urls_are_taken_under_federation_allow_http(settings):
    settings.FEDERATION_ALLOW_HTTP = True
    actor = parsed(mastodon_actor(scheme="http"))
    assert actor.inbox == "http://remote.test/users/alice/inbox"


def test_huge_fields_are_cut_and_wrong_optional_ones_left_out():
    doc = mastodon_actor(
        name="N\u202eame " * 1000,
        summary="<p>" + "word " * 50_000 + "</p>",
        url=[{"type": "Link", "href": "javascript:alert(1)"}, {"href": "https://remote.test/@a"}],
        icon=[{"type": "Image", "url": {"href": "https://remote.test/a.png"}}],
        image={"type": "Image", "url": ["ftp://x", "https://remote.test/h.png"]},
        outbox=["https://remote.test/outbox"],
        followers={"id": "https://remote.test/f"},
        endpoints="https://remote.test/inbox",
        manuallyApprovesFollowers="yes",
        published="yesterday",
    )
    actor = parsed(doc)
    assert len(actor.display_name) == DISPLAY_NAME_MAX
    assert "\u202e" not in actor.display_name
    assert len(actor.summary_html) <= SUMMARY_HTML_MAX
    assert len(actor.note_text) <= NOTE_TEXT_MAX
    assert actor.url == "https://remote.test/@a"
    assert actor.avatar_url == "https://remote.test/a.png"
    assert actor.header_url == "https://remote.test/h.png"
    assert (actor.outbox, actor.followers_url, actor.shared_inbox) == ("", "", "")
    assert actor.locked is False and actor.published is None


def test_a_service_or_a_group_is_an_actor_too():
    assert parsed(mastodon_actor(type="Service")).actor_type == "Service"
    assert parsed(mastodon_actor(type=["Group", "Object"])).actor_type == "Group"


def test_the_domain_confirmed_by_the_resolver_names_the_account():
    actor = parse_actor(mastodon_actor(), fetched_from=URI, domain="Example.COM")
    assert actor.acct == "alice@example.com"
    with pytest.raises(InvalidActor):
        parse_actor(mastodon_actor(), fetched_from=URI, domain="not a domain")
