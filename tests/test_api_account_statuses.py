"""An account's statuses as Mastodon filters them (issue 37): the profile's Media tab
(`only_media`), `exclude_replies` (threads kept), `exclude_reblogs`, `tagged`, `pinned`
(none), alone and together, paged with their Link headers."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from social import images
from tests.api import Api, token_for
from tests.test_images import picture


def with_picture(repo, user, body: str) -> int:
    variants, blurhash = images.process_with_blurhash(picture(size=(80, 60)), images.POST_SIZES)
    upload = repo.attachments.upload(user.id, variants, alt="a red field", blurhash=blurhash)
    return repo.posts.create_post(user.id, body, media=[upload.id])


@pytest.fixture
def profile(repo, alice, bob):
    """alice's list, oldest first: a text post, a picture, a reply to bob, a reply to
    herself, a repost of bob's, a tagged post, a tagged picture."""
    theirs = repo.posts.create_post(bob.id, "bob's post")
    made = {"text": repo.posts.create_post(alice.id, "just words")}
    made["picture"] = with_picture(repo, alice, "a picture")
    made["reply"] = repo.posts.create_post(alice.id, "@bob yes", reply_to=theirs)
    made["thread"] = repo.posts.create_post(alice.id, "and more", reply_to=made["picture"])
    made["repost"], _ = repo.reposts.repost(alice.id, theirs)
    made["tagged"] = repo.posts.create_post(alice.id, "#Redis is fun")
    made["tagged picture"] = with_picture(repo, alice, "#redis in a picture")
    return made


def statuses(api: Api, user, **params) -> list[str]:
    answer = api.get(f"/api/v1/accounts/{user.id}/statuses", params)
    assert answer.status_code == 200, answer.content[:300]
    return [s["id"] for s in answer.json()]


def ids(profile: dict, *names: str) -> list[str]:
    return [str(profile[name]) for name in names]


def test_only_media_lists_their_posts_with_pictures(repo, alice, profile):
    api = Api(None)

    found = api.get(f"/api/v1/accounts/{alice.id}/statuses", {"only_media": "true"}).json()

    assert [s["id"] for s in found] == ids(profile, "tagged picture", "picture")
    assert all(len(s["media_attachments"]) == 1 for s in found)
    assert found[1]["media_attachments"][0]["description"] == "a red field"


def test_exclude_replies_keeps_their_threads(repo, alice, profile):
    found = statuses(Api(None), alice, exclude_replies="true")

    assert found == ids(profile, "tagged picture", "tagged", "repost", "thread", "picture", "text")


def test_exclude_reblogs_leaves_out_their_reposts(repo, alice, profile):
    found = statuses(Api(token_for(repo, alice)), alice, exclude_reblogs="1")

    assert str(profile["repost"]) not in found
    assert found == ids(profile, "tagged picture", "tagged", "thread", "reply", "picture", "text")
    everything = statuses(Api(None), alice)
    assert str(profile["repost"]) in everything and len(everything) == 7


def test_tagged_lists_their_posts_with_the_tag(repo, alice, bob, profile):
    repo.posts.create_post(bob.id, "#redis from bob")

    assert statuses(Api(None), alice, tagged="REDIS") == ids(profile, "tagged picture", "tagged")
    assert statuses(Api(None), alice, tagged="#redis") == ids(profile, "tagged picture", "tagged")
    assert statuses(Api(None), alice, tagged="valkey") == []
    assert statuses(Api(None), alice, tagged="!!!") == []  # no tag at all


def test_the_filters_combine(repo, alice, profile):
    api = Api(None)
    assert statuses(api, alice, only_media="true", tagged="redis") == ids(profile, "tagged picture")
    assert statuses(api, alice, only_media="true", exclude_replies="true") == ids(
        profile, "tagged picture", "picture"
    )


def test_pinned_is_empty_the_site_pins_nothing(repo, alice, profile):
    assert statuses(Api(None), alice, pinned="true") == []
    assert statuses(Api(None), alice, pinned="false") != []


def test_a_media_tab_pages_through_a_long_list_with_its_link(repo, alice):
    pictures = []
    for n in range(6):
        pictures.append(with_picture(repo, alice, f"picture {n}"))
        for m in range(3):
            repo.posts.create_post(alice.id, f"words {n}.{m}")
    api = Api(None)
    seen, params = [], {"only_media": "true", "limit": "2"}
    for _ in range(5):
        answer = api.get(f"/api/v1/accounts/{alice.id}/statuses", params)
        assert answer.status_code == 200
        seen += [s["id"] for s in answer.json()]
        link = answer.get("Link", "")
        if 'rel="next"' not in link:
            break
        nxt = link.split(">;")[0].lstrip("<")
        params = {k: v[0] for k, v in parse_qs(urlsplit(nxt).query).items()}
        assert params["only_media"] == "true"
    assert seen == [str(p) for p in reversed(pictures)]
