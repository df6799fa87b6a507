"""ActivityPub, discovery and actors (issue 35, part 1): our accounts as Person, the instance
actor, posts as Note, outboxes and follow lists as paged collections, the key pairs behind
them, the profile and permalink answering JSON to servers, WebFinger and NodeInfo. Every id
comes from SITE_URL, never from the request's Host."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.hashes import SHA256
from django.test import Client

from social import keys
from social.federation import documents as doc
from social.federation import signatures
from social.federation import views as federation_views
from social.repository import Post
from social.repository.federation import key_pairs
from social.repository.models import Attachment
from tests.conftest import CLUSTER, make_user

AS_JSON = "application/activity+json"
LD_JSON = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"'
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
TOKEN = "0123456789abcdef"  # a picture's token (16 hex digits)


def fetch(path: str, accept: str = AS_JSON, client: Client | None = None, **headers):
    return (client or Client()).get(path, HTTP_ACCEPT=accept, **headers)


def document(path: str, **kwargs) -> dict:
    answer = fetch(path, **kwargs)
    assert answer.status_code == 200, (path, answer.status_code, answer.content[:200])
    assert answer["Content-Type"] == "application/activity+json; charset=utf-8"
    return json.loads(answer.content)


def public_key(pem: str) -> rsa.RSAPublicKey:
    key = serialization.load_pem_public_key(pem.encode())
    assert isinstance(key, rsa.RSAPublicKey)
    return key


# Keys and the key store.


def test_the_key_pairs_are_named_as_documented():
    assert keys.actor_key(7) == "ap:key:7"
    assert keys.actor_key("7") == "ap:key:7"  # type: ignore[arg-type]
    assert keys.instance_actor_key() == "ap:key:instance"
    assert keys.federation in keys.PARTS
    with pytest.raises(ValueError):
        keys.actor_key("7 or 8")  # type: ignore[arg-type]


def test_a_key_pair_is_made_when_first_needed_then_kept(repo, r, alice):
    assert not r.exists(keys.actor_key(alice.id))

    first = repo.federation_keys.for_account(alice.id)
    again = repo.federation_keys.for_account(alice.id)

    assert again == first and first.owner == alice.id
    stored = r.hgetall(keys.actor_key(alice.id))
    assert stored["public"] == first.public_pem and stored["private"] == first.private_pem
    assert int(stored["created"]) == first.created > 0
    private = serialization.load_pem_private_key(first.private_pem.encode(), password=None)
    assert isinstance(private, rsa.RSAPrivateKey) and private.key_size == 2048
    signature = private.sign(b"hello", padding.PKCS1v15(), SHA256())
    public_key(first.public_pem).verify(signature, b"hello", padding.PKCS1v15(), SHA256())


def test_the_instance_actor_and_each_account_have_their_own_pair(repo, r, alice, bob):
    pairs = [
        repo.federation_keys.for_instance(),
        repo.federation_keys.for_account(alice.id),
        repo.federation_keys.for_account(bob.id),
    ]

    assert len({pair.public_pem for pair in pairs}) == 3
    assert pairs[0].owner is None
    assert repo.federation_keys.for_instance() == pairs[0]
    assert r.hget(keys.instance_actor_key(), "public") == pairs[0].public_pem


def test_two_processes_racing_to_make_a_pair_keep_one(repo, r, alice, monkeypatch):
    real = key_pairs.generate_key_pair
    made: list[signatures.KeyPair] = []
    other: list[key_pairs.ActorKeyPair] = []

    def racing() -> signatures.KeyPair:
        # The first maker is overtaken: while it makes its pair, another process makes
        # and stores one.
        if not made:
            made.append(signatures.KeyPair("", ""))
            other.append(repo.federation_keys.for_account(alice.id))
        pair = real()
        made.append(pair)
        return pair

    monkeypatch.setattr(key_pairs, "generate_key_pair", racing)

    kept = repo.federation_keys.for_account(alice.id)

    assert len(made) == 3  # both made a pair
    assert kept == other[0]  # the later writer took the pair stored first
    assert r.hget(keys.actor_key(alice.id), "private") == kept.private_pem
    assert made[2].private_pem != kept.private_pem  # the overtaken maker's pair was dropped


def test_the_private_key_is_not_in_a_key_pair_s_repr(repo, alice):
    pair = repo.federation_keys.for_account(alice.id)
    middle = pair.private_pem.splitlines()[5]

    for shown in (repr(pair), str(pair), f"{pair}", repr([pair])):
        assert "PRIVATE" not in shown and middle not in shown
    assert "PUBLIC KEY" in repr(pair)


# Actors.


def test_an_account_is_a_person_as_mastodon_describes_one(repo, r, alice, bob):
    repo.profiles.update(alice.id, display_name="Alice A.", note="Hi <b>you</b> @bob\n#redis")
    # The pictures' tokens as a finished upload leaves them (no file is read here).
    r.hset(keys.user(alice.id), mapping={"avatar": TOKEN, "header": "fedcba9876543210"})

    person = document(f"/ap/users/{alice.id}")

    actor = f"http://testserver/ap/users/{alice.id}"
    context = person.pop("@context")
    assert context[:2] == ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"]
    assert context[2]["manuallyApprovesFollowers"] == "as:manuallyApprovesFollowers"
    assert context[2]["toot"] == "http://joinmastodon.org/ns#"
    assert context[2]["featured"] == {"@id": "toot:featured", "@type": "@id"}
    assert context[2]["discoverable"] == "toot:discoverable"
    pem = person.pop("publicKey")
    assert pem == {
        "id": f"{actor}#main-key",
        "owner": actor,
        "publicKeyPem": r.hget(keys.actor_key(alice.id), "public"),
    }
    assert public_key(pem["publicKeyPem"]).key_size == 2048
    signup_day = doc.iso(alice.signup_time)[:10]
    assert person == {
        "id": actor,
        "type": "Person",
        "following": f"{actor}/following",
        "followers": f"{actor}/followers",
        "inbox": f"{actor}/inbox",
        "outbox": f"{actor}/outbox",
        "featured": f"{actor}/featured",
        "preferredUsername": "alice",
        "name": "Alice A.",
        "summary": (
            '<p>Hi &lt;b&gt;you&lt;/b&gt; <a class="mention" href="http://testserver/u/bob/">'
            '@bob</a><br><a class="tag" href="http://testserver/tag/redis/">#redis</a></p>'
        ),
        "url": "http://testserver/u/alice/",
        "manuallyApprovesFollowers": False,
        "discoverable": True,
        "indexable": True,
        "webfinger": "alice@testserver",
        "tag": [],
        "attachment": [],
        "endpoints": {"sharedInbox": "http://testserver/ap/inbox"},
        "published": f"{signup_day}T00:00:00Z",
        "icon": {
            "type": "Image",
            "mediaType": "image/webp",
            "url": f"http://testserver/media/avatars/{TOKEN}-400.webp",
        },
        "image": {
            "type": "Image",
            "mediaType": "image/webp",
            "url": "http://testserver/media/headers/fedcba9876543210-1500.webp",
        },
    }


def test_an_account_without_a_name_pictures_or_bio_says_so(bob):
    person = document(f"/ap/users/{bob.id}")

    assert person["name"] == "bob" and person["summary"] == ""
    assert "icon" not in person and "image" not in person


def test_the_key_is_made_by_the_first_fetch_and_served_unchanged_after(repo, r, alice):
    first = document(f"/ap/users/{alice.id}")["publicKey"]["publicKeyPem"]
    stored = repo.federation_keys.for_account(alice.id)
    again = document(f"/ap/users/{alice.id}")["publicKey"]["publicKeyPem"]

    assert first == again == stored.public_pem
    assert r.hlen(keys.actor_key(alice.id)) == 3


@pytest.mark.skipif(CLUSTER, reason="one server's count")
def test_an_actor_costs_one_round_trip_once_its_key_is_made(repo, alice, round_trips):
    document(f"/ap/users/{alice.id}")
    round_trips.reset()

    document(f"/ap/users/{alice.id}")

    assert round_trips.count == 1


def test_the_instance_actor_is_an_application_named_by_the_domain(repo, r):
    actor = document("/ap/actor")

    assert actor["type"] == "Application"
    assert actor["id"] == "http://testserver/ap/actor"
    assert actor["preferredUsername"] == "testserver"
    assert actor["inbox"] == actor["endpoints"]["sharedInbox"] == "http://testserver/ap/inbox"
    assert actor["outbox"] == "http://testserver/ap/actor/outbox"
    assert actor["publicKey"]["id"] == "http://testserver/ap/actor#main-key"
    assert actor["publicKey"]["owner"] == "http://testserver/ap/actor"
    assert actor["publicKey"]["publicKeyPem"] == r.hget(keys.instance_actor_key(), "public")
    assert document("/ap/actor")["publicKey"] == actor["publicKey"]
    outbox = document("/ap/actor/outbox")
    assert outbox["type"] == "OrderedCollection" and outbox["totalItems"] == 0


def test_every_id_comes_from_site_url_whatever_host_is_asked(repo, alice, bob, settings):
    settings.SITE_URL = "https://alpha.test:8443"
    post_id = repo.posts.create_post(alice.id, "hello @bob #redis")
    repo.graph.follow(bob.id, alice.id)
    paths = [
        f"/ap/users/{alice.id}", "/ap/actor", f"/ap/posts/{post_id}",
        f"/ap/posts/{post_id}/activity", f"/ap/users/{alice.id}/outbox?page=1",
        f"/ap/users/{alice.id}/followers?page=1", f"/ap/users/{bob.id}/following",
    ]  # fmt: skip
    for path in paths:
        answer = fetch(path, HTTP_HOST="localhost")
        assert answer.status_code == 200, path
        body = answer.content.decode()
        assert "localhost" not in body and "testserver" not in body, path
        assert "https://alpha.test:8443/" in body, path
    person = document(f"/ap/users/{alice.id}", HTTP_HOST="localhost")
    assert person["id"] == f"https://alpha.test:8443/ap/users/{alice.id}"
    assert person["url"] == "https://alpha.test:8443/u/alice/"
    assert person["webfinger"] == "alice@alpha.test:8443"
    assert document("/ap/actor")["preferredUsername"] == "alpha.test"


@pytest.mark.parametrize(
    ("site", "domain"),
    [
        ("https://alpha.test", "alpha.test"),
        ("https://Alpha.TEST:443", "alpha.test"),
        ("http://alpha.test:80", "alpha.test"),
        ("http://alpha.test:18001", "alpha.test:18001"),
        ("https://alpha.test:80", "alpha.test:80"),
        ("http://[::1]:8000", "[::1]:8000"),
    ],
)
def test_the_domain_is_site_url_s_host_with_a_port_that_is_not_the_default(settings, site, domain):
    settings.SITE_URL = site
    assert doc.domain() == domain


def test_the_private_key_is_in_no_document(repo, alice, bob):
    post_id = repo.posts.create_post(alice.id, "hello")
    repo.graph.follow(bob.id, alice.id)
    paths = [
        f"/ap/users/{alice.id}", "/ap/actor", f"/ap/posts/{post_id}", "/u/alice/",
        f"/p/{post_id}/", f"/ap/users/{alice.id}/outbox?page=1",
        f"/ap/users/{bob.id}/following?page=1",
    ]  # fmt: skip
    bodies = [fetch(path).content.decode() for path in paths]
    secrets = [
        repo.federation_keys.for_account(alice.id).private_pem,
        repo.federation_keys.for_instance().private_pem,
    ]
    assert all(answer.startswith("{") for answer in bodies)
    for body in bodies:
        assert "PRIVATE" not in body
        for secret in secrets:
            assert all(line not in body for line in secret.splitlines()[1:-1])


def test_a_suspended_or_deleted_account_is_gone_and_a_missing_one_not_found(
    repo, alice, bob, charlie, sam
):
    repo.moderation.suspend(bob.id, sam, "spam")
    repo.accounts.delete_account(charlie)

    for user in (bob, charlie):
        answer = fetch(f"/ap/users/{user.id}")
        assert answer.status_code == 410
        assert json.loads(answer.content) == {
            "@context": "https://www.w3.org/ns/activitystreams",
            "id": f"http://testserver/ap/users/{user.id}",
            "type": "Tombstone",
            "formerType": "Person",
        }
        for part in ("outbox", "outbox?page=1", "followers", "following?page=1", "featured"):
            assert fetch(f"/ap/users/{user.id}/{part}").status_code == 410, part
    for path in ("/ap/users/999", "/ap/users/999/outbox?page=1", "/ap/users/999/followers"):
        answer = fetch(path)
        assert answer.status_code == 404, path
        assert json.loads(answer.content) == {"error": "Record not found"}


def test_odd_ids_are_not_found(repo, alice):
    huge = "9" * 30
    for path in (
        "/ap/users/²", f"/ap/users/{huge}", f"/ap/users/{huge}/outbox?page=1",
        f"/ap/users/{huge}/followers", "/ap/posts/²", f"/ap/posts/{huge}",
        f"/ap/posts/{2**63}", "/ap/users/-1", "/ap/users/1.0", f"/ap/users/{alice.id}/",
        f"/p/{huge}/",
    ):  # fmt: skip
        assert fetch(path).status_code == 404, path


def test_the_documents_answer_get_alone(alice):
    answer = Client().post(f"/ap/users/{alice.id}", "{}", content_type=AS_JSON)
    assert answer.status_code == 405
    assert Client().head(f"/ap/users/{alice.id}").status_code == 200


# Posts.


def test_a_post_is_a_note_as_mastodon_sends_one(repo, alice, bob):
    parent = repo.posts.create_post(bob.id, "first")
    post_id = repo.posts.create_post(
        alice.id, "@bob yes! #Redis <3 https://redis.io", reply_to=parent,
        spoiler_text="opinions", sensitive=True,
    )  # fmt: skip

    note = document(f"/ap/posts/{post_id}")

    assert note.pop("@context") == [
        "https://www.w3.org/ns/activitystreams",
        {
            "sensitive": "as:sensitive",
            "Hashtag": "as:Hashtag",
            "toot": "http://joinmastodon.org/ns#",
            "blurhash": "toot:blurhash",
        },
    ]
    time = int(repo.r.hget(keys.post(post_id), "time"))
    assert note == {
        "id": f"http://testserver/ap/posts/{post_id}",
        "type": "Note",
        "summary": "opinions",
        "inReplyTo": f"http://testserver/ap/posts/{parent}",
        "published": doc.iso(time),
        "url": f"http://testserver/p/{post_id}/",
        "attributedTo": f"http://testserver/ap/users/{alice.id}",
        "to": [PUBLIC],
        "cc": [
            f"http://testserver/ap/users/{alice.id}/followers",
            f"http://testserver/ap/users/{bob.id}",
        ],
        "sensitive": True,
        "content": (
            '<p><a class="mention" href="http://testserver/u/bob/">@bob</a> yes! '
            '<a class="tag" href="http://testserver/tag/redis/">#Redis</a> &lt;3 '
            '<a class="url" href="https://redis.io" rel="nofollow noopener noreferrer">'
            "https://redis.io</a></p>"
        ),
        "attachment": [],
        "tag": [
            {"type": "Mention", "href": f"http://testserver/ap/users/{bob.id}", "name": "@bob"},
            {"type": "Hashtag", "href": "http://testserver/tag/redis/", "name": "#redis"},
        ],
    }
    assert doc.iso(time).endswith("Z") and "." not in doc.iso(time)


def test_a_post_s_pictures_are_documents_with_their_alt_blurhash_and_size(settings):
    picture = Attachment(TOKEN, 1600, 900, 640, 360, alt="A cat", blurhash="LKO2?U%2Tw=w")
    post = Post(
        5, 7, "alice", 1_700_000_000, "look", media=(picture, Attachment("ab" * 8, 10, 20, 10, 20))
    )

    note = doc.note(post)

    assert note["attachment"] == [
        {
            "type": "Document",
            "mediaType": "image/webp",
            "url": f"http://testserver/media/posts/{TOKEN}-1600.webp",
            "name": "A cat",
            "blurhash": "LKO2?U%2Tw=w",
            "width": 1600,
            "height": 900,
        },
        {
            "type": "Document",
            "mediaType": "image/webp",
            "url": "http://testserver/media/posts/abababababababab-1600.webp",
            "name": None,
            "blurhash": None,
            "width": 10,
            "height": 20,
        },
    ]
    assert note["published"] == "2023-11-14T22:13:20Z"
    assert note["summary"] is None and note["sensitive"] is False and note["inReplyTo"] is None


def test_a_content_warning_makes_a_note_sensitive_as_mastodon_marks_it():
    warned = doc.note(Post(5, 7, "alice", 0, "spoilers", spoiler_text="film"))
    blurred = doc.note(Post(5, 7, "alice", 0, "look", sensitive=True))

    assert (warned["summary"], warned["sensitive"]) == ("film", True)
    assert (blurred["summary"], blurred["sensitive"]) == (None, True)


def test_a_post_naming_someone_twice_mentions_them_once():
    post = Post(5, 7, "alice", 0, "@bob @Bob", mentions=(("bob", 2), ("Bob", 2)))

    note = doc.note(post, embedded=True)

    assert "@context" not in note
    assert note["cc"] == ["http://testserver/ap/users/7/followers", "http://testserver/ap/users/2"]
    assert [t["href"] for t in note["tag"]] == ["http://testserver/ap/users/2"]


def test_a_post_s_activity_is_the_create_holding_its_note(repo, alice):
    post_id = repo.posts.create_post(alice.id, "hello")

    create = document(f"/ap/posts/{post_id}/activity")
    note = document(f"/ap/posts/{post_id}")

    assert create["@context"] == note.pop("@context")
    assert create["id"] == f"http://testserver/ap/posts/{post_id}/activity"
    assert create["type"] == "Create"
    assert create["actor"] == note["attributedTo"]
    assert (create["published"], create["to"], create["cc"]) == (
        note["published"],
        note["to"],
        note["cc"],
    )
    assert create["object"] == note


def test_a_repost_is_an_announce_of_the_post_it_shares(repo, alice, bob):
    post_id = repo.posts.create_post(alice.id, "hello")
    repost_id, _ = repo.reposts.repost(bob.id, post_id)

    for path in (f"/ap/posts/{repost_id}", f"/ap/posts/{repost_id}/activity", f"/p/{repost_id}/"):
        announce = document(path)
        assert announce == {
            "@context": "https://www.w3.org/ns/activitystreams",
            "id": f"http://testserver/ap/posts/{repost_id}/activity",
            "type": "Announce",
            "actor": f"http://testserver/ap/users/{bob.id}",
            "published": announce["published"],
            "to": [PUBLIC],
            "cc": [
                f"http://testserver/ap/users/{alice.id}",
                f"http://testserver/ap/users/{bob.id}/followers",
            ],
            "object": f"http://testserver/ap/posts/{post_id}",
        }, path
    # A browser still goes to the post it shares.
    assert fetch(f"/p/{repost_id}/", BROWSER).status_code == 302


def test_a_removed_post_is_gone_and_a_missing_one_not_found(repo, alice, bob, sam):
    deleted = repo.posts.create_post(alice.id, "oops")
    repo.posts.delete_own_post(alice.id, deleted)
    removed = repo.posts.create_post(alice.id, "spam")
    repo.moderation.delete_posts([removed], sam, "spam")
    by_suspended = repo.posts.create_post(bob.id, "hello")
    repo.moderation.suspend(bob.id, sam, "spam")

    for post_id in (deleted, removed, by_suspended):
        for path in (f"/ap/posts/{post_id}", f"/ap/posts/{post_id}/activity", f"/p/{post_id}/"):
            answer = fetch(path)
            assert answer.status_code == 410, path
            assert json.loads(answer.content) == {
                "@context": "https://www.w3.org/ns/activitystreams",
                "id": f"http://testserver/ap/posts/{post_id}",
                "type": "Tombstone",
                "formerType": "Note",
            }
    assert fetch("/ap/posts/999").status_code == 404
    assert fetch("/p/999/").status_code == 404


def test_a_repost_of_a_removed_post_is_gone(repo, alice, bob, sam):
    post_id = repo.posts.create_post(alice.id, "hello")
    repost_id, _ = repo.reposts.repost(bob.id, post_id)
    repo.moderation.delete_posts([post_id], sam, "spam")

    answer = fetch(f"/ap/posts/{repost_id}")

    assert answer.status_code == 410
    assert json.loads(answer.content)["formerType"] == "Announce"
    assert document(f"/ap/users/{bob.id}/outbox?page=1")["orderedItems"] == []


# Collections.


def test_the_outbox_pages_the_create_and_announce_activities_newest_first(repo, alice, bob):
    own = [repo.posts.create_post(alice.id, f"post {n}", at=1_700_000_000 + n) for n in range(22)]
    shared = repo.posts.create_post(bob.id, "bob's", at=1_700_000_100)
    repost_id, _ = repo.reposts.repost(alice.id, shared, at=1_700_000_200)
    outbox = f"http://testserver/ap/users/{alice.id}/outbox"

    whole = document(f"/ap/users/{alice.id}/outbox")
    first = document(f"/ap/users/{alice.id}/outbox?page=1")
    second = document(first["next"].removeprefix("http://testserver"))

    assert whole == {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": outbox,
        "type": "OrderedCollection",
        "totalItems": 23,
        "first": f"{outbox}?page=1",
    }
    assert first["type"] == second["type"] == "OrderedCollectionPage"
    assert first["id"] == f"{outbox}?page=1" and first["partOf"] == outbox
    assert first["next"] == f"{outbox}?page=2" and "prev" not in first
    assert first["@context"][1]["Hashtag"] == "as:Hashtag"
    items = first["orderedItems"] + second["orderedItems"]
    assert len(first["orderedItems"]) == 20
    assert items[0]["type"] == "Announce" and items[0]["object"].endswith(f"/ap/posts/{shared}")
    assert items[0]["id"] == f"http://testserver/ap/posts/{repost_id}/activity"
    assert [item["object"]["id"] for item in items[1:]] == [
        f"http://testserver/ap/posts/{post_id}" for post_id in reversed(own)
    ]
    assert all(item["type"] == "Create" and "@context" not in item["object"] for item in items[1:])
    assert second["prev"] == f"{outbox}?page=1" and "next" not in second
    # Past the end: an empty page.
    assert document(f"/ap/users/{alice.id}/outbox?page=9")["orderedItems"] == []


def test_an_outbox_page_past_removed_posts_sends_the_next_on_from_where_it_stopped(
    repo, alice, sam, monkeypatch
):
    monkeypatch.setattr(federation_views, "OUTBOX_PAGE_SIZE", 3)
    own = [repo.posts.create_post(alice.id, f"post {n}", at=1_700_000_000 + n) for n in range(6)]
    # Removed by staff: still in the list, hidden from every visitor (on the first page).
    repo.moderation.delete_posts([own[4]], sam, "spam")
    outbox = f"http://testserver/ap/users/{alice.id}/outbox"

    first = document(f"/ap/users/{alice.id}/outbox?page=1")
    second = document(first["next"].removeprefix("http://testserver"))

    assert first["next"] == f"{outbox}?page=2&from=4"
    assert second["id"] == f"{outbox}?page=2&from=4"
    ids = [item["object"]["id"] for item in first["orderedItems"] + second["orderedItems"]]
    assert ids == [f"http://testserver/ap/posts/{own[n]}" for n in (5, 3, 2, 1, 0)]
    # A mangled `page` is the first; a `from` past any list is ignored.
    assert document(f"/ap/users/{alice.id}/outbox?page=yes")["id"] == f"{outbox}?page=1"
    odd = document(f"/ap/users/{alice.id}/outbox?page=2&from={10**12}")
    assert odd["id"] == f"{outbox}?page=2"


def test_an_outbox_lists_its_own_account_s_posts_alone(repo, alice, bob, charlie):
    repo.posts.create_post(bob.id, "bob's own")
    mine = repo.posts.create_post(alice.id, "alice's own")

    items = document(f"/ap/users/{alice.id}/outbox?page=1")["orderedItems"]

    assert [item["object"]["id"] for item in items] == [f"http://testserver/ap/posts/{mine}"]
    assert document(f"/ap/users/{charlie.id}/outbox?page=1")["orderedItems"] == []


def test_followers_and_following_are_paged_lists_of_actor_ids(
    repo, alice, bob, charlie, sam, monkeypatch
):
    monkeypatch.setattr(federation_views, "FOLLOWS_PAGE_SIZE", 2)
    dave = make_user(repo, "dave")
    for at, follower in enumerate((bob, charlie, dave, sam)):
        repo.graph.follow(follower.id, alice.id, at=1_700_000_000 + at)
    repo.moderation.suspend(dave.id, sam, "spam")  # listed nowhere, counted as the pages count
    base = f"http://testserver/ap/users/{alice.id}/followers"

    whole = document(f"/ap/users/{alice.id}/followers")
    first = document(f"/ap/users/{alice.id}/followers?page=1")
    second = document(f"/ap/users/{alice.id}/followers?page=2")

    assert whole == {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": base,
        "type": "OrderedCollection",
        "totalItems": 4,
        "first": f"{base}?page=1",
    }
    assert first == {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": f"{base}?page=1",
        "type": "OrderedCollectionPage",
        "totalItems": 4,
        "next": f"{base}?page=2",
        "partOf": base,
        "orderedItems": [f"http://testserver/ap/users/{sam.id}"],
    }
    assert second["orderedItems"] == [
        f"http://testserver/ap/users/{charlie.id}",
        f"http://testserver/ap/users/{bob.id}",
    ]
    assert second["prev"] == f"{base}?page=1" and "next" not in second
    following = document(f"/ap/users/{bob.id}/following?page=1")
    assert following["id"] == f"http://testserver/ap/users/{bob.id}/following?page=1"
    assert following["orderedItems"] == [f"http://testserver/ap/users/{alice.id}"]
    assert document(f"/ap/users/{bob.id}/following")["totalItems"] == 1


def test_featured_is_an_empty_collection(alice):
    assert document(f"/ap/users/{alice.id}/featured") == {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": f"http://testserver/ap/users/{alice.id}/featured",
        "type": "OrderedCollection",
        "totalItems": 0,
        "orderedItems": [],
    }


# The profile and the permalink: JSON to servers, HTML to browsers.


@pytest.mark.parametrize(
    "accept",
    [
        AS_JSON,
        LD_JSON,
        "application/ld+json",
        'application/activity+json, application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
        "application/activity+json;q=0.9, text/html;q=0.8",
        'application/ld+json;profile="https://www.w3.org/ns/activitystreams https://example.org/x"',
    ],
)
def test_the_profile_and_permalink_answer_activity_json_to_servers(repo, alice, accept):
    post_id = repo.posts.create_post(alice.id, "hello")

    profile = fetch("/u/alice/", accept)
    permalink = fetch(f"/p/{post_id}/", accept)

    for answer, path in ((profile, f"/ap/users/{alice.id}"), (permalink, f"/ap/posts/{post_id}")):
        assert answer.status_code == 200
        assert answer["Content-Type"] == "application/activity+json; charset=utf-8"
        assert "Accept" in answer["Vary"]
        assert json.loads(answer.content) == document(path)


@pytest.mark.parametrize(
    "accept",
    [
        BROWSER,
        "",
        "*/*",
        "application/json",
        'application/ld+json; profile="https://example.org/other"',
        "text/html, application/activity+json;q=0.5",
        "application/activity+json;q=0",
    ],
)
def test_the_profile_and_permalink_stay_html_for_browsers(repo, alice, accept):
    post_id = repo.posts.create_post(alice.id, "hello")

    for path in ("/u/alice/", f"/p/{post_id}/"):
        answer = fetch(path, accept)
        assert answer.status_code == 200, path
        assert answer["Content-Type"] == "text/html; charset=utf-8"
        assert b"<html" in answer.content
        # No cache may keep the page (views.wants_activity: why it has no Vary: Accept).
        assert not {"Cache-Control", "Expires", "ETag", "Last-Modified"} & set(answer.headers)


def test_a_logged_in_reader_asking_for_json_gets_the_public_document(
    repo, alice, bob, alice_client
):
    post_id = repo.posts.create_post(bob.id, "hello")

    assert json.loads(fetch("/u/bob/", client=alice_client).content) == document(
        f"/ap/users/{bob.id}"
    )
    assert json.loads(fetch(f"/p/{post_id}/", client=alice_client).content) == document(
        f"/ap/posts/{post_id}"
    )


def test_the_profile_of_no_one_or_of_a_hidden_account_answers_json_too(repo, bob, sam):
    repo.moderation.suspend(bob.id, sam, "spam")

    missing = fetch("/u/nobody/")
    hidden = fetch("/u/BOB/")

    assert missing.status_code == 404 and json.loads(missing.content) == {
        "error": "Record not found"
    }
    assert hidden.status_code == 410 and json.loads(hidden.content)["type"] == "Tombstone"


# WebFinger and NodeInfo.


def webfinger(resource: str, **headers):
    return Client().get("/.well-known/webfinger", {"resource": resource}, **headers)


def test_webfinger_finds_an_account_by_acct_actor_or_profile_on_site_url_s_domain(
    repo, alice, settings
):
    settings.SITE_URL = "https://alpha.test:8443"
    actor = f"https://alpha.test:8443/ap/users/{alice.id}"
    wanted = {
        "subject": "acct:alice@alpha.test:8443",
        "aliases": ["https://alpha.test:8443/u/alice/", actor],
        "links": [
            {
                "rel": "http://webfinger.net/rel/profile-page",
                "type": "text/html",
                "href": "https://alpha.test:8443/u/alice/",
            },
            {"rel": "self", "type": "application/activity+json", "href": actor},
        ],
    }
    for resource in (
        "acct:alice@alpha.test:8443", "acct:ALICE@Alpha.Test:8443", "alice@alpha.test:8443",
        "acct:alice", actor, "https://alpha.test:8443/u/alice/", "https://alpha.test:8443/u/Alice",
    ):  # fmt: skip
        answer = webfinger(resource, HTTP_HOST="localhost")
        assert answer.status_code == 200, resource
        assert answer["Content-Type"] == "application/jrd+json"
        assert answer.json() == wanted, resource
    self_link = webfinger("acct:alice@alpha.test:8443").json()["links"][1]["href"]
    assert document(self_link.removeprefix("https://alpha.test:8443"))["id"] == self_link


def test_webfinger_knows_no_one_of_another_domain_and_no_one_unknown(
    repo, alice, bob, sam, settings
):
    settings.SITE_URL = "https://alpha.test:8443"
    repo.moderation.suspend(bob.id, sam, "spam")
    for resource in (
        "acct:alice@alpha.test", "acct:alice@testserver", "acct:alice@beta.test:8443",
        "acct:alice@localhost", "acct:nobody@alpha.test:8443", "acct:bob@alpha.test:8443",
        "https://beta.test/ap/users/1", f"http://alpha.test:8443/ap/users/{alice.id}",
        "https://alpha.test:8443/ap/users/999", "https://alpha.test:8443/ap/users/²",
        f"https://alpha.test:8443/ap/users/{alice.id}/outbox",
        "https://alpha.test:8443.evil/u/alice/", "https://alpha.test:8443/u/nobody/",
        "acct:a@b@c", "²", f"https://alpha.test:8443/ap/users/{'9' * 30}",
    ):  # fmt: skip
        answer = webfinger(resource, HTTP_HOST="localhost")
        assert answer.status_code == 404, resource
        assert answer.json() == {"error": "Record not found"}


def test_webfinger_names_the_instance_actor(settings):
    settings.SITE_URL = "https://alpha.test:8443"
    for resource in ("acct:alpha.test@alpha.test:8443", "https://alpha.test:8443/ap/actor"):
        answer = webfinger(resource)
        assert answer.status_code == 200, resource
        assert answer.json() == {
            "subject": "acct:alpha.test@alpha.test:8443",
            "aliases": ["https://alpha.test:8443/ap/actor"],
            "links": [
                {
                    "rel": "http://webfinger.net/rel/profile-page",
                    "type": "text/html",
                    "href": "https://alpha.test:8443/",
                },
                {
                    "rel": "self",
                    "type": "application/activity+json",
                    "href": "https://alpha.test:8443/ap/actor",
                },
            ],
        }


def test_host_meta_and_nodeinfo_name_site_url_and_activitypub(settings):
    settings.SITE_URL = "https://alpha.test:8443"

    host_meta = Client().get("/.well-known/host-meta.json", HTTP_HOST="localhost").json()
    links = Client().get("/.well-known/nodeinfo", HTTP_HOST="localhost").json()
    info = Client().get("/nodeinfo/2.0").json()

    template = "https://alpha.test:8443/.well-known/webfinger?resource={uri}"
    assert host_meta == {"links": [{"rel": "lrdd", "template": template}]}
    assert links["links"][0]["href"] == "https://alpha.test:8443/nodeinfo/2.0"
    assert info["protocols"] == ["activitypub"]
