"""Two instances federating on one machine (tests/federation_pair.py): alpha.test and
beta.test, each served for real with its own Redis and worker. What one publishes the other
finds, over plain http on loopback as the three federation settings allow.

The flows are driven as people drive them, with Mastodon.py on each side, and each asserts
what the other side shows: through its client API and in its Redis. The workers apply what
arrives asynchronously, so every look at the other side polls until a deadline (within).
Each flow makes its own accounts (distinct names), so any one runs alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import requests

from social import keys
from social.repository import User
from tests.federation_pair import Instance, pair

mastodon = pytest.importorskip("mastodon")

from tests.test_api_clients import app_and_login, within  # noqa: E402 (needs Mastodon.py)

ACTIVITY_JSON = "application/activity+json"
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


def find(reader: Person, other: Person) -> dict:
    """The account other is on reader's instance, found as a person finds one: the v2
    search with resolve=true on its @name@domain (asking other's server)."""
    results = reader.client.search_v2(f"@{other.acct}", resolve=True)
    found = [a for a in results["accounts"] if a["acct"] == other.acct]
    assert len(found) == 1, results
    return found[0]


def remote_id(instance: Instance, other: Person) -> int:
    """The id instance gives other's account (stored in its Redis)."""
    actor = instance.repo().remote_actors.by_acct(other.acct)
    assert actor is not None, f"{other.acct} is not known on {instance.name}"
    return actor.id


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
    totals = eventually(lambda: beta.redis().hget(keys.inbox_totals(), "applied:Accept"))
    assert int(totals) >= 1


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


@pytest.mark.xfail(
    strict=True,
    reason="The client API's Status `uri` and `url` (social/api/entities.py status() and "
    "reblog()) are this site's permalink built from the request's host "
    "(render.url(url('social:post_detail'))), for local and remote posts alike: a local "
    "post's `uri` should be its ActivityPub id from SITE_URL (documents.post_id) and its "
    "`url` SITE_URL/p/<id>/; a remote post's its note's `uri` and `url`, which the post hash "
    "keeps but models.Post does not carry (read/loading.py drops the fields)",
)
def test_a_post_across_names_its_original_in_the_api(alpha, beta, friends):
    alice, bob = friends
    status = alice.client.status_post("Where do I come from?")
    assert status["uri"] == note_id(alpha, status)
    assert status["url"] == f"{alpha.site_url}/p/{status['id']}/"

    shown = arrived(bob, alice, "Where do I come from?")
    assert shown["uri"] == status["uri"]
    assert shown["url"] == status["url"]


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
    told = notified(alice, "mention", bob, "I think it works")
    assert told["status"]["id"] == answer["id"]
    # In alpha's Redis: the reply is bob@beta's post, listed under alice's post.
    r = alpha.redis()
    assert r.lrange(keys.replies(int(status["id"])), 0, -1) == [answer["id"]]
    post = r.hgetall(keys.post(int(answer["id"])))
    assert post["user_id"] == str(remote_id(alpha, bob))
    assert post["uri"] == note_id(beta, reply)


@pytest.mark.xfail(
    strict=True,
    reason="A post's @name@domain is no mention: social/text.py's MENTION_RE refuses it (its "
    "lookahead (?![\\w@]) stops at the second @), so posting's resolve step looks up no "
    "remote account, the post's `mentions` miss it, its Note has no Mention tag and the "
    "fan-out (work_handlers/fanout.conversation_inboxes) sends it to no inbox on alpha. "
    "Needs text.py to take an address and posting to find it by remote_actors.by_acct",
)
def test_a_mention_across_tells_the_account_mentioned(alpha, beta, friends):
    alice, bob = friends
    find(bob, alice)  # known on beta (the follow found her already)
    status = bob.client.status_post(f"Look at this @{alice.acct}, from beta")
    assert [m["acct"] for m in status["mentions"]] == [alice.acct]

    told = notified(alice, "mention", bob, "from beta")
    assert [m["acct"] for m in told["status"]["mentions"]] == [alice.user.username]
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
