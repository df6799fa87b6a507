"""Two instances federating on one machine (tests/federation_pair.py): alpha.test and
beta.test, each served for real with its own Redis and worker. What one publishes the other
finds, over plain http on loopback as the three federation settings allow.

The flows are driven as people drive them, with Mastodon.py on each side, and each asserts
what the other side shows: through its client API and in its Redis. The workers apply what
arrives asynchronously, so every look at the other side polls until a deadline (within).
Each flow makes its own accounts (distinct names), so any one runs alone."""

from __future__ import annotations

import json
import secrets
import socket
import threading
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from social import keys
from social.federation.signatures import generate_key_pair, sign_request
from social.repository import User
from tests.federation_pair import Instance, pair

mastodon = pytest.importorskip("mastodon")

from tests.test_api_clients import app_and_login, within  # noqa: E402 (needs Mastodon.py)

ACTIVITY_JSON = "application/activity+json"
AS_CONTEXT = "https://www.w3.org/ns/activitystreams"
DEADLINE = 60  # seconds a flow waits for the other side's worker (a busy CI machine)


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    yield from pair(tmp_path_factory.mktemp("federation"))


@pytest.fixture(scope="module")
def alpha(sites) -> Instance:
    return sites["alpha.test"]


@pytest.fixture(scope="module")
def beta(sites) -> Instance:
    return sites["beta.test"]


@dataclass(frozen=True)
class Person:
    """An account on one instance and its Mastodon.py client there."""

    instance: Instance
    user: User
    client: Any  # mastodon.Mastodon

    @property
    def acct(self) -> str:
        """Its address as the other instance names it (name@alpha.test:<port>)."""
        return f"{self.user.username}@{self.instance.domain}"

    @property
    def actor(self) -> str:
        return f"{self.instance.site_url}/ap/users/{self.user.id}"


def person(instance: Instance, name: str) -> Person:
    """A new account on instance, logged in with Mastodon.py."""
    user = instance.person(name)
    return Person(instance, user, app_and_login(instance.url, name))


def get(instance: Instance, path: str, **headers: str) -> requests.Response:
    """GET path from instance as another server would: by its name (the Host header)."""
    return requests.get(
        instance.url + path, headers={"Host": instance.domain, **headers}, timeout=10
    )


def eventually(check, seconds: float = DEADLINE):
    """Return check()'s value once it is truthy, asking until the deadline."""
    return within(lambda: check() or None, seconds)


def total(instance: Instance, name: str) -> int:
    """One of instance's inbox counters (keys.inbox_totals: `applied:Follow`,
    `dropped:signature`...)."""
    return int(instance.redis().hget(keys.inbox_totals(), name) or 0)


def counted(instance: Instance, name: str, before: int) -> None:
    """Wait until instance's inbox has counted name once more than before."""
    eventually(lambda: total(instance, name) > before)


def find(reader: Person, other: Person) -> dict:
    """The account other is on reader's instance, found as a person finds one: the v2
    search with resolve=true on its @name@domain (asking other's server)."""
    results = reader.client.search_v2(f"@{other.acct}", resolve=True)
    found = [a for a in results["accounts"] if a["acct"] == other.acct]
    assert len(found) == 1, results
    return found[0]


def remote_id(instance: Instance, other: Person) -> int:
    """The id instance gives other's account (stored in its Redis)."""
    found = remote_id_or_none(instance, other)
    assert found is not None, f"{other.acct} is not known on {instance.name}"
    return found


def follow(follower: Person, followed: Person) -> int:
    """follower follows followed across (found by search, followed by id) and the
    followed side has written it; return followed's id on follower's instance."""
    account = find(follower, followed)
    relationship = follower.client.account_follow(account["id"])
    assert relationship["following"] is True
    there = followed.instance
    follower_there = eventually(lambda: remote_id_or_none(there, follower))
    followers = keys.followers(followed.user.id)
    eventually(lambda: there.redis().zscore(followers, follower_there) is not None)
    return int(account["id"])


def remote_id_or_none(instance: Instance, other: Person) -> int | None:
    actor = instance.repo().remote_actors.by_acct(other.acct)
    return actor.id if actor is not None else None


def test_each_instance_is_found_by_its_name_and_says_it_federates(sites):
    alpha = sites["alpha.test"]
    alice = alpha.person("alice")

    finger = get(alpha, f"/.well-known/webfinger?resource=acct:alice@{alpha.domain}")
    assert finger.status_code == 200, finger.text
    links = {link["rel"]: link for link in finger.json()["links"]}
    actor_id = f"{alpha.site_url}/ap/users/{alice.id}"
    assert links["self"]["href"] == actor_id
    assert links["self"]["type"] == ACTIVITY_JSON

    actor = get(alpha, f"/ap/users/{alice.id}", Accept=ACTIVITY_JSON)
    assert actor.status_code == 200
    document = actor.json()
    assert document["id"] == actor_id
    assert document["preferredUsername"] == "alice"
    assert document["inbox"] == actor_id + "/inbox"
    assert document["endpoints"]["sharedInbox"] == f"{alpha.site_url}/ap/inbox"
    assert document["publicKey"]["owner"] == actor_id
    assert "PRIVATE" not in actor.text

    nodeinfo = get(sites["beta.test"], "/nodeinfo/2.0").json()
    assert nodeinfo["protocols"] == ["activitypub"]


def test_an_account_is_found_across_by_its_address(alpha, beta):
    alice, bob = person(alpha, "alice_find"), person(beta, "bob_find")
    alice.client.account_update_credentials(note="Hello from alpha")

    account = find(bob, alice)
    assert account["username"] == "alice_find"
    assert account["url"].startswith(alpha.site_url)
    assert bob.client.account_lookup(alice.acct)["id"] == account["id"]
    # Beta keeps her as an account of its own: its id, her actor id, her server's bio.
    stored = beta.repo().remote_actors.by_acct(alice.acct)
    assert stored is not None and stored.id == int(account["id"])
    assert stored.uri == alice.actor
    assert "Hello from alpha" in account["note"]
    assert beta.redis().hget(keys.user(stored.id), "username") == alice.acct


def test_a_follow_across_is_listed_on_both_sides(alpha, beta):
    alice, bob = person(alpha, "alice_follow"), person(beta, "bob_follow")
    accepted = total(beta, "applied:Accept")
    alice_there = follow(bob, alice)

    # Alpha: bob@beta follows alice, in her followers through the API and in Redis.
    followers = alice.client.account_followers(alice.user.id)
    assert [a["acct"] for a in followers] == [bob.acct]
    bob_on_alpha = remote_id(alpha, bob)
    assert alpha.redis().zscore(keys.followers(alice.user.id), bob_on_alpha) is not None
    # Beta: bob follows alice@alpha (written when sent; the Accept changes nothing).
    following = bob.client.account_following(bob.user.id)
    assert [a["acct"] for a in following] == [alice.acct]
    assert beta.redis().zscore(keys.following(bob.user.id), alice_there) is not None
    counted(beta, "applied:Accept", accepted)  # alpha answered the Follow


@pytest.fixture(scope="module")
def friends(alpha, beta) -> tuple[Person, Person]:
    """alice on alpha and bob on beta, bob following alice (the flows after the follow)."""
    alice, bob = person(alpha, "alice_main"), person(beta, "bob_main")
    follow(bob, alice)
    return alice, bob


def arrived(reader: Person, author: Person, text: str) -> dict:
    """author's status holding text (a post on the other instance) as it shows in reader's
    home timeline, once it has."""

    def look() -> dict | None:
        shown = [
            s
            for s in reader.client.timeline_home()
            if s["account"]["acct"] == author.acct and text in s["content"]
        ]
        return shown[0] if shown else None

    return eventually(look)


def note_id(instance: Instance, status: dict) -> str:
    """The ActivityPub id of a status of instance's own (its Note: SITE_URL/ap/posts/<id>)."""
    return f"{instance.site_url}/ap/posts/{status['id']}"


def notified(someone: Person, kind: str, by: Person, text: str = "") -> dict:
    """someone's notification of kind from by (an account of the other instance), about
    a status holding text when given."""

    def look() -> dict | None:
        found = [
            n
            for n in someone.client.notifications(types=[kind])
            if n["account"]["acct"] == by.acct and text in (n["status"] or {}).get("content", "")
        ]
        return found[0] if found else None

    return eventually(look)


def test_a_post_reaches_a_follower_on_the_other_instance(alpha, beta, friends):
    alice, bob = friends
    status = alice.client.status_post("Hello beta, from alpha")

    shown = arrived(bob, alice, "Hello beta, from alpha")
    assert shown["account"]["id"] == str(remote_id(beta, alice))
    assert shown["in_reply_to_id"] is None
    # In beta's Redis: a post of its own, in bob's home feed, found by the note's id, with
    # the note's id and address kept.
    kept = beta.repo().remote_objects.find(note_id(alpha, status))
    assert kept is not None and kept.post_id == int(shown["id"])
    r = beta.redis()
    assert str(kept.post_id) in r.lrange(keys.home_feed(bob.user.id), 0, -1)
    post = r.hgetall(keys.post(kept.post_id))
    assert post["user_id"] == str(remote_id(beta, alice))
    assert post["uri"] == note_id(alpha, status)
    assert post["url"] == f"{alpha.site_url}/p/{status['id']}/"


def test_a_post_is_named_by_its_activitypub_id_in_the_api(alpha, friends):
    alice, _bob = friends
    status = alice.client.status_post("What is my name?")
    assert status["uri"] == note_id(alpha, status)
    assert status["url"] == f"{alpha.site_url}/p/{status['id']}/"


def test_a_post_across_names_its_original_in_the_api(alpha, beta, friends):
    alice, bob = friends
    status = alice.client.status_post("Where do I come from?")

    shown = arrived(bob, alice, "Where do I come from?")
    assert shown["uri"] == note_id(alpha, status)
    assert shown["url"] == f"{alpha.site_url}/p/{status['id']}/"


def test_a_reply_reaches_the_conversation_and_the_author_on_the_other_instance(
    alpha, beta, friends
):
    alice, bob = friends
    status = alice.client.status_post("What do you think, beta?")
    there = arrived(bob, alice, "What do you think, beta?")
    reply = bob.client.status_reply(there, "I think it works")
    assert reply["in_reply_to_id"] == there["id"]

    def in_conversation() -> dict | None:
        found = alice.client.status_context(status["id"])["descendants"]
        return found[0] if found else None

    answer = eventually(in_conversation)
    assert answer["account"]["acct"] == bob.acct
    assert answer["in_reply_to_id"] == status["id"]
    assert "I think it works" in answer["content"]
    assert answer["uri"] == note_id(beta, reply)  # named by its id on beta
    told = notified(alice, "mention", bob, "I think it works")
    assert told["status"]["id"] == answer["id"]
    # In alpha's Redis: the reply is bob@beta's post, listed under alice's post.
    r = alpha.redis()
    assert r.lrange(keys.replies(int(status["id"])), 0, -1) == [answer["id"]]
    post = r.hgetall(keys.post(int(answer["id"])))
    assert post["user_id"] == str(remote_id(alpha, bob))
    assert post["uri"] == note_id(beta, reply)


def test_a_mention_across_tells_the_account_mentioned(alpha, beta, friends):
    alice, bob = friends
    find(bob, alice)  # known on beta (the follow found her already)
    status = bob.client.status_post(f"Look at this @{alice.acct}, from beta")
    assert [m["acct"] for m in status["mentions"]] == [alice.acct]

    told = notified(alice, "mention", bob, "from beta")
    assert [m["acct"] for m in told["status"]["mentions"]] == [alice.user.username]
    # Beta's HTML links her page on alpha (as Mastodon links a mention), not beta's page
    # of her.
    assert f'href="{alpha.site_url}/u/{alice.user.username}/"' in told["status"]["content"]
    post_id = int(told["status"]["id"])
    r = alpha.redis()
    assert r.zscore(keys.mentions(alice.user.id), post_id) is not None
    assert r.hget(keys.post(post_id), "uri") == note_id(beta, status)


def test_a_like_and_a_repost_across_count_and_tell_the_author(alpha, beta, friends):
    alice, bob = friends
    status = alice.client.status_post("Like and repost me")
    there = arrived(bob, alice, "Like and repost me")
    bob.client.status_favourite(there["id"])
    bob.client.status_reblog(there["id"])

    counted = eventually(
        lambda: (
            (s := alice.client.status(status["id"]))["favourites_count"] == 1
            and s["reblogs_count"] == 1
            and s
        )
    )
    assert counted["favourites_count"] == counted["reblogs_count"] == 1
    assert notified(alice, "favourite", bob)["status"]["id"] == status["id"]
    assert notified(alice, "reblog", bob)["status"]["id"] == status["id"]
    assert [a["acct"] for a in alice.client.status_favourited_by(status["id"])] == [bob.acct]
    assert [a["acct"] for a in alice.client.status_reblogged_by(status["id"])] == [bob.acct]
    bob_there = str(remote_id(alpha, bob))
    r = alpha.redis()
    assert r.zrange(keys.likes(int(status["id"])), 0, -1) == [bob_there]
    assert r.zrange(keys.reposts(int(status["id"])), 0, -1) == [bob_there]


def test_a_deleted_post_leaves_the_other_instance(alpha, beta, friends):
    alice, bob = friends
    status = alice.client.status_post("Soon gone")
    there = arrived(bob, alice, "Soon gone")
    alice.client.status_delete(status["id"])

    eventually(lambda: all(s["id"] != there["id"] for s in bob.client.timeline_home()))
    with pytest.raises(mastodon.MastodonNotFoundError):
        bob.client.status(there["id"])
    kept = beta.repo().remote_objects.find(note_id(alpha, status))
    # Beta's post is marked deleted (the read path leaves it out of every feed).
    assert kept is not None and kept.post_id == int(there["id"]) and kept.deleted


def test_a_profile_change_shows_on_the_other_instance(alpha, beta, friends):
    alice, bob = friends
    there = find(bob, alice)
    alice.client.account_update_credentials(display_name="Alice of Alpha")

    renamed = eventually(
        lambda: (a := bob.client.account(there["id"]))["display_name"] == "Alice of Alpha" and a
    )
    assert renamed["acct"] == alice.acct
    assert beta.redis().hget(keys.user(int(there["id"])), "display_name") == "Alice of Alpha"


def test_an_unfollow_across_leaves_the_followers_list(alpha, beta):
    alice, bob = person(alpha, "alice_unfollow"), person(beta, "bob_unfollow")
    alice_there = follow(bob, alice)
    bob_there = remote_id(alpha, bob)
    bob.client.account_unfollow(alice_there)

    assert beta.redis().zscore(keys.following(bob.user.id), alice_there) is None
    followers = keys.followers(alice.user.id)
    eventually(lambda: alpha.redis().zscore(followers, bob_there) is None)
    assert alice.client.account_followers(alice.user.id) == []
    assert int(alpha.redis().hget(keys.inbox_totals(), "applied:Undo:Follow")) >= 1


# --- Negatives: activities the test signs itself, POSTed to alpha over real HTTP ----------


@dataclass(frozen=True)
class Signer:
    """An account of beta's whose activities the test writes and signs itself, with its
    own key (read from beta's Redis) or another."""

    instance: Instance
    user: User

    @property
    def actor(self) -> str:
        return f"{self.instance.site_url}/ap/users/{self.user.id}"

    @property
    def key_id(self) -> str:
        return self.actor + "#main-key"

    def private_pem(self) -> str:
        return self.instance.repo().federation_keys.for_account(self.user.id).private_pem

    def activity(self, kind: str, obj: Any, **more: Any) -> dict[str, Any]:
        """An activity of kind on obj by this account, its id on beta and new each time."""
        activity_id = f"{self.actor}#tests/{kind.lower()}/{secrets.token_hex(6)}"
        return {"@context": AS_CONTEXT, "id": activity_id, "type": kind, "actor": self.actor,
                "object": obj, **more}  # fmt: skip


def signer(instance: Instance, name: str) -> Signer:
    return Signer(instance, instance.person(name))


def signed(
    target: Instance, path: str, body: bytes, key_id: str, private_pem: str
) -> dict[str, str]:
    """The headers of a POST of body to target's path signed as Mastodon signs one."""
    url = target.site_url + path
    headers = sign_request("POST", url, {"Content-Type": ACTIVITY_JSON}, body, key_id, private_pem)
    return {**headers, "Content-Type": ACTIVITY_JSON}


def post_activity(
    target: Instance,
    activity: dict[str, Any],
    *,
    key_id: str,
    private_pem: str,
    path: str = "/ap/inbox",
) -> requests.Response:
    """POST activity to target's inbox (the shared one unless path), signed with
    private_pem under key_id, as another server would."""
    body = json.dumps(activity).encode()
    headers = signed(target, path, body, key_id, private_pem)
    return requests.post(target.url + path, data=body, headers=headers, timeout=10)


def post_as(target: Instance, sender: Signer, activity: dict[str, Any]) -> requests.Response:
    """POST activity to target signed by sender with its own key; it must be accepted."""
    answer = post_activity(target, activity, key_id=sender.key_id, private_pem=sender.private_pem())
    assert answer.status_code == 202, answer.text
    return answer


def followers_of(instance: Instance, user: User) -> list[str]:
    return instance.redis().zrange(keys.followers(user.id), 0, -1)


def test_a_forged_signature_is_dropped_and_nothing_written(alpha, beta):
    alice, eve = alpha.person("alice_forged"), signer(beta, "eve_forged")
    before = total(alpha, "dropped:signature")
    follow = eve.activity("Follow", f"{alpha.site_url}/ap/users/{alice.id}")

    # eve's key id, but not eve's key: alpha fetches eve's actor, and once more, in vain.
    forged = generate_key_pair().private_pem
    answer = post_activity(alpha, follow, key_id=eve.key_id, private_pem=forged)
    assert answer.status_code == 202  # verified by the worker, as docs/federation.md says

    counted(alpha, "dropped:signature", before)
    assert followers_of(alpha, alice) == []
    # The same activity rightly signed is taken: the key, not the activity, was refused.
    post_as(alpha, eve, follow)
    eve_there = eventually(lambda: followers_of(alpha, alice))
    assert eve_there == [str(alpha.repo().remote_actors.by_uri(eve.actor).id)]


def test_a_key_that_changed_is_fetched_again_and_the_old_one_refused(alpha, beta):
    alice, dana = alpha.person("alice_rekey"), signer(beta, "dana_rekey")
    alice_actor = f"{alpha.site_url}/ap/users/{alice.id}"
    follow = dana.activity("Follow", alice_actor)
    post_as(alpha, dana, follow)
    eventually(lambda: followers_of(alpha, alice))
    old_pem = dana.private_pem()

    # dana's server gives her a new key: an Undo signed with it verifies once alpha has
    # fetched her actor again, and alpha keeps the new key.
    new = generate_key_pair()
    beta.redis().hset(
        keys.actor_key(dana.user.id), mapping={"public": new.public_pem, "private": new.private_pem}
    )
    post_as(alpha, dana, dana.activity("Undo", follow))
    eventually(lambda: not followers_of(alpha, alice))
    stored = alpha.repo().remote_actors.by_uri(dana.actor)
    assert stored is not None and stored.public_key.strip() == new.public_pem.strip()

    # The old key no longer speaks for her: a Follow signed with it is dropped.
    before = total(alpha, "dropped:signature")
    again = dana.activity("Follow", alice_actor)
    answer = post_activity(alpha, again, key_id=dana.key_id, private_pem=old_pem)
    assert answer.status_code == 202
    counted(alpha, "dropped:signature", before)
    assert followers_of(alpha, alice) == []


def test_an_object_on_another_host_is_dropped(alpha, beta):
    alice = person(alpha, "alice_foreign")
    status = alice.client.status_post("Mine, not yours to delete")
    eve = signer(beta, "eve_foreign")
    note = note_id(alpha, status)

    # A Like whose own id is on a third server, and a Delete of alpha's own note.
    before = total(alpha, "dropped:foreign_id")
    like = {**eve.activity("Like", note), "id": "http://gamma.test:8000/likes/1"}
    post_as(alpha, eve, like)
    counted(alpha, "dropped:foreign_id", before)

    before = total(alpha, "dropped:foreign_object")
    post_as(alpha, eve, eve.activity("Delete", {"id": note, "type": "Tombstone"}))
    counted(alpha, "dropped:foreign_object", before)

    # A Create of a note whose id is on alpha, as if alpha's.
    before = total(alpha, "dropped:invalid_object")
    fake = {
        "id": f"{alpha.site_url}/ap/posts/999999", "type": "Note", "attributedTo": eve.actor,
        "content": "<p>I am alpha</p>", "to": ["https://www.w3.org/ns/activitystreams#Public"],
        "tag": [{"type": "Mention", "href": f"{alpha.site_url}/ap/users/{alice.user.id}"}],
    }  # fmt: skip
    post_as(alpha, eve, eve.activity("Create", fake))
    counted(alpha, "dropped:invalid_object", before)

    shown = alice.client.status(status["id"])
    assert shown["favourites_count"] == 0 and "Mine" in shown["content"]
    r = alpha.redis()
    assert r.zcard(keys.likes(int(status["id"]))) == 0
    assert r.hget(keys.post(int(status["id"])), "deleted") is None
    assert alpha.repo().remote_objects.find(fake["id"]) is None
    assert alice.client.notifications() == []


def test_a_replayed_activity_is_dropped(alpha, beta):
    alice, eve = alpha.person("alice_replay"), signer(beta, "eve_replay")
    follow = eve.activity("Follow", f"{alpha.site_url}/ap/users/{alice.id}")
    body = json.dumps(follow).encode()
    headers = signed(alpha, "/ap/inbox", body, eve.key_id, eve.private_pem())
    first = requests.post(alpha.url + "/ap/inbox", data=body, headers=headers, timeout=10)
    assert first.status_code == 202
    eventually(lambda: followers_of(alpha, alice))
    post_as(alpha, eve, eve.activity("Undo", follow))
    eventually(lambda: not followers_of(alpha, alice))

    # The very request again (its signature still in its time window): seen, dropped.
    before = total(alpha, "dropped:replayed")
    again = requests.post(alpha.url + "/ap/inbox", data=body, headers=headers, timeout=10)
    assert again.status_code == 202
    counted(alpha, "dropped:replayed", before)
    assert followers_of(alpha, alice) == []


def test_an_oversized_body_is_refused_at_the_door(alpha, beta):
    alice, eve = alpha.person("alice_big"), signer(beta, "eve_big")
    follow = eve.activity("Follow", f"{alpha.site_url}/ap/users/{alice.id}")
    follow["summary"] = "x" * (256 * 1024)
    body = json.dumps(follow).encode()
    headers = signed(alpha, "/ap/inbox", body, eve.key_id, eve.private_pem())
    queued = inbox_jobs(alpha)

    answer = requests.post(alpha.url + "/ap/inbox", data=body, headers=headers, timeout=10)
    assert answer.status_code == 413
    # Sent in chunks, without a Content-Length to judge it by: counted as it comes.
    chunks = (body[i : i + 65536] for i in range(0, len(body), 65536))
    unsized = {k: v for k, v in headers.items() if k.lower() != "content-length"}
    chunked = requests.post(alpha.url + "/ap/inbox", data=chunks, headers=unsized, timeout=10)
    assert chunked.status_code == 413
    assert inbox_jobs(alpha) == queued


@pytest.fixture
def listener():
    """A TCP server on 127.0.0.1 (which the federation settings let the client reach)
    that counts the connections made to it and closes each; yields (port, count)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    connections: list[int] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            connections.append(1)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], lambda: len(connections)
    stop.set()
    thread.join(timeout=5)
    server.close()


def test_a_url_resolving_to_a_private_address_is_refused_before_connecting(alpha, beta, listener):
    port, connections = listener
    alice = person(alpha, "alice_private")
    # 0.0.0.0 reaches this machine's listeners (Linux connects it to loopback), but it is
    # no public address and not in FEDERATION_ALLOW_ADDRESSES (127.0.0.0/8).
    private = f"http://0.0.0.0:{port}/users/mallory"
    found = alice.client.search_v2(private, resolve=True)
    assert found["accounts"] == []
    assert connections() == 0

    # An activity whose key is said to be there: the worker refuses to fetch it.
    before = total(alpha, "dropped:key_unknown")
    follow = {"@context": AS_CONTEXT, "id": private + "#follows/1", "type": "Follow",
              "actor": private, "object": f"{alpha.site_url}/ap/users/{alice.user.id}"}  # fmt: skip
    pem = generate_key_pair().private_pem
    answer = post_activity(alpha, follow, key_id=private + "#main-key", private_pem=pem)
    assert answer.status_code == 202
    counted(alpha, "dropped:key_unknown", before)
    assert connections() == 0 and followers_of(alpha, alice.user) == []

    # The same server named by an address the settings allow is asked (it answers
    # nothing): so the first two were refused before connecting, not for want of it.
    assert (
        alice.client.search_v2(f"http://127.0.0.1:{port}/users/mallory", resolve=True)["accounts"]
        == []
    )
    assert connections() >= 1


def queue_stats(instance: Instance, queue: str):
    """instance's worker queue as staff see it (JobStore.stats)."""
    return instance.repo().jobs.stats([queue])[0]


def inbox_jobs(instance: Instance) -> int:
    """How many activities instance's inbox has ever queued (done, waiting, dead)."""
    stats = queue_stats(instance, "inbox")
    return stats.done + stats.ready + stats.delayed + stats.dead


def test_a_server_staff_block_is_cut_off_both_ways(alpha, beta):
    alice, bob = person(alpha, "alice_block"), person(beta, "bob_block")
    follow(bob, alice)
    bob_there = follow(alice, bob)
    alices = alice.client.status_post("Alice before the block")
    alices_there = arrived(bob, alice, "Alice before the block")
    bob.client.status_post("Bob before the block")
    bobs_here = arrived(alice, bob, "Bob before the block")

    sam = alpha.staff("sam_block")
    answer = alpha.submit(
        alpha.browser(sam), "/staff/domains/", "/staff/domains/block/",
        domain=beta.domain, reason="Testing a block",
    )  # fmt: skip
    assert answer.status_code == 302 and answer.headers["Location"] == "/staff/domains/"
    assert alpha.repo().federation_domains.is_blocked(beta.domain)

    # The follows both ways are cut (the worker's job), bob@beta is suspended, his posts
    # leave alice's pages.
    r = alpha.redis()
    followers, following = keys.followers(alice.user.id), keys.following(alice.user.id)
    eventually(lambda: r.zcard(followers) == r.zcard(following) == 0)
    assert alice.client.account_followers(alice.user.id) == []
    assert alice.client.account_following(alice.user.id) == []
    assert r.hget(keys.user(bob_there), "status") == "suspended"
    assert all(s["id"] != bobs_here["id"] for s in alice.client.timeline_home())

    # Nothing more is accepted: bob's like of alice's post is refused, at alpha's door (a
    # 403 beta's worker gives up on) or by alpha's worker (dropped as blocked).
    dropped = int(r.hget(keys.inbox_totals(), "dropped:blocked") or 0)
    bob.client.status_favourite(alices_there["id"])

    def refused() -> bool:
        at_the_door = any(
            job.destination == alpha.domain and "answered 403" in job.error
            for job in beta.repo().jobs.dead_letters("deliver")
        )
        return at_the_door or int(r.hget(keys.inbox_totals(), "dropped:blocked") or 0) > dropped

    eventually(refused)
    assert r.zcard(keys.likes(int(alices["id"]))) == 0
    assert alice.client.status(alices["id"])["favourites_count"] == 0

    # Nothing more is delivered: alice's next post is fanned out to no inbox on beta.
    received, fanned = inbox_jobs(beta), queue_stats(alpha, "deliver").done
    alice.client.status_post("Alice after the block")
    eventually(
        lambda: (
            (stats := queue_stats(alpha, "deliver")).done > fanned
            and stats.ready == stats.delayed == 0
        )
    )
    assert inbox_jobs(beta) == received
    assert all("after the block" not in s["content"] for s in bob.client.timeline_home())
