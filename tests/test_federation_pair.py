"""Two instances federating on one machine (tests/federation_pair.py): alpha.test and
beta.test, each served for real with its own Redis and worker. What one publishes the other
finds, over plain http on loopback as the three federation settings allow."""

from __future__ import annotations

import pytest
import requests

from tests.federation_pair import Instance, pair

ACTIVITY_JSON = "application/activity+json"


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    yield from pair(tmp_path_factory.mktemp("federation"))


def get(instance: Instance, path: str, **headers: str) -> requests.Response:
    """GET path from instance as another server would: by its name (the Host header)."""
    return requests.get(
        instance.url + path, headers={"Host": instance.domain, **headers}, timeout=10
    )


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
