"""Every list of accounts through the one account read path (account_reader.py) and the one
policy (visibility.may_list_account), and every interaction across a block refused by
visibility.interaction_refused: a block either way, a suspension, and staff, whom no one
hides from but whose own blocks hold."""

from __future__ import annotations

import pytest

from social import keys
from social.repository import NotAllowed, PostNotFound, Repository, User, Viewer
from tests.api import Api, token_for
from tests.conftest import CLUSTER, make_staff, make_user

T0 = 1_700_000_000


@pytest.fixture
def cast(repo):
    """star posts; fan follows star, star follows fan, fan likes and reposts star's post
    and posts once itself; reader and sam (staff) are bystanders who follow no one."""
    star, fan, reader = (make_user(repo, n) for n in ("star", "fan", "reader"))
    sam = make_staff(repo, "sam")
    post = repo.posts.create_post(star.id, "star here", at=T0)
    repo.posts.create_post(fan.id, "fan here", at=T0 + 1)
    repo.graph.follow(fan.id, star.id, at=T0 + 2)
    repo.graph.follow(star.id, fan.id, at=T0 + 3)
    repo.likes.like(fan.id, post, at=T0 + 4)
    repo.reposts.repost(fan.id, post, at=T0 + 5)
    return star, fan, reader, sam, post


def viewer_of(repo: Repository, user: User) -> Viewer:
    """The viewer as a request would make it: the user hash as it is now."""
    fresh = repo.users.get_user(user.id)
    assert fresh is not None
    return Viewer.of(fresh)


def blocked_actor(repo: Repository, cast, who_blocks: str, staff: bool) -> User:
    """The reader (staff: sam) with a block between them and star, made by who_blocks
    ("author": star; "actor": the reader)."""
    star, fan, reader, sam, post = cast
    actor = sam if staff else reader
    if who_blocks == "author":
        repo.relations.block(star.id, actor.id)
    else:
        repo.relations.block(actor.id, star.id)
    return actor


def lists_on_the_site(repo: Repository, viewer: Viewer, star: User, post: int) -> dict:
    """The names each list of accounts shows viewer."""
    names = lambda page: {e.user.username for e in page.items}  # noqa: E731
    home = repo.pages.home(viewer.id, viewer=viewer) if viewer.id is not None else None
    return {
        "followers": names(repo.account_lists.follow_list(star.id, "followers", viewer=viewer)),
        "following": names(repo.account_lists.follow_list(star.id, "following", viewer=viewer)),
        "likers": names(repo.account_lists.likers(post, viewer)),
        "reposters": names(repo.account_lists.reposted_by(post, viewer)),
        "search": {p.user.username for p in repo.search.search("fan", viewer).people},
        "suggestions": {u.username for u in home.suggestions} if home else set(),
    }


def lists_in_the_api(repo: Repository, user: User, star: User, post: int) -> dict:
    """The names each of the API's lists of accounts shows user."""
    api = Api(token_for(repo, user))
    paths = {
        "followers": f"/api/v1/accounts/{star.id}/followers",
        "following": f"/api/v1/accounts/{star.id}/following",
        "likers": f"/api/v1/statuses/{post}/favourited_by",
        "reposters": f"/api/v1/statuses/{post}/reblogged_by",
        "search": "/api/v1/accounts/search?q=fan",
    }
    found = {}
    for name, path in paths.items():
        answer = api.get(path)
        assert answer.status_code == 200, path
        found[name] = {a["username"] for a in answer.json()}
    return found


def test_every_list_shows_an_account_when_nothing_keeps_it_out(repo, cast):
    star, fan, reader, sam, post = cast

    site = lists_on_the_site(repo, viewer_of(repo, reader), star, post)
    api = lists_in_the_api(repo, reader, star, post)

    assert all("fan" in names for names in site.values()), site
    assert all("fan" in names for names in api.values()), api


@pytest.mark.parametrize("who_blocks", ["reader", "fan"])
def test_a_block_either_way_keeps_the_account_out_of_every_list(repo, r, cast, who_blocks):
    star, fan, reader, sam, post = cast
    if who_blocks == "reader":
        repo.relations.block(reader.id, fan.id)
    else:
        repo.relations.block(fan.id, reader.id)

    site = lists_on_the_site(repo, viewer_of(repo, reader), star, post)
    api = lists_in_the_api(repo, reader, star, post)

    assert all("fan" not in names for names in site.values()), site
    assert all("fan" not in names for names in api.values()), api
    # The lists are as they were: only the reader's view of them changed.
    assert r.zscore(keys.followers(star.id), fan.id) is not None
    assert r.zscore(keys.likes(post), fan.id) is not None
    assert r.zscore(keys.reposts(post), fan.id) is not None


def test_a_suspended_account_is_in_no_list_for_anyone_staff_included(repo, cast):
    star, fan, reader, sam, post = cast
    repo.moderation.suspend(fan.id, sam, "spam")

    for user in (reader, sam):
        site = lists_on_the_site(repo, viewer_of(repo, user), star, post)
        api = lists_in_the_api(repo, user, star, post)
        assert all("fan" not in names for names in site.values()), (user.username, site)
        assert all("fan" not in names for names in api.values()), (user.username, api)
    visitor = lists_on_the_site(repo, Viewer(), star, post)
    assert all("fan" not in names for names in visitor.values())


def test_staff_see_those_who_block_them_but_not_those_they_block(repo, cast):
    star, fan, reader, sam, post = cast
    repo.relations.block(fan.id, sam.id)

    blocked_by = lists_on_the_site(repo, viewer_of(repo, sam), star, post)
    assert all("fan" in names for names in blocked_by.values()), blocked_by
    assert all("fan" in names for names in lists_in_the_api(repo, sam, star, post).values())

    repo.relations.unblock(fan.id, sam.id)
    repo.relations.block(sam.id, fan.id)
    blocking = lists_on_the_site(repo, viewer_of(repo, sam), star, post)
    assert all("fan" not in names for names in blocking.values()), blocking


def test_the_readers_own_blocks_and_mutes_list_every_account_suspended_ones_too(repo, cast):
    star, fan, reader, sam, post = cast
    repo.relations.block(reader.id, fan.id, at=T0 + 10)
    repo.relations.mute(reader.id, star.id, at=T0 + 11)
    repo.moderation.suspend(fan.id, sam, "spam")

    blocks = repo.account_lists.blocks_page(reader.id)
    mutes = repo.account_lists.mutes_page(reader.id)

    assert [(e.user.username, e.since) for e in blocks.items] == [("fan", T0 + 10)]
    assert [(e.user.username, e.since) for e in mutes.items] == [("star", T0 + 11)]
    api = Api(token_for(repo, reader))
    assert [a["username"] for a in api.get("/api/v1/mutes").json()] == ["star"]


@pytest.mark.parametrize("who_blocks", ["author", "actor"])
@pytest.mark.parametrize("staff", [False, True])
def test_follow_reply_like_and_repost_across_a_block_are_refused_writing_nothing(
    repo, r, cast, who_blocks, staff
):
    """Either way, and for staff too: reading shows staff what blockers post, but a block
    keeps their follows, replies, likes and reposts out."""
    star, fan, reader, sam, post = cast
    actor = blocked_actor(repo, cast, who_blocks, staff)
    said = "does not let you" if who_blocks == "author" else "You block this account"
    before = {
        "following": r.zcard(keys.following(actor.id)),
        "replies": r.llen(keys.replies(post)),
        "likes": r.zcard(keys.likes(post)),
        "reposts": r.zcard(keys.reposts(post)),
    }

    for act in (
        lambda: repo.graph.follow(actor.id, star.id),
        lambda: repo.posts.create_post(actor.id, "hello", reply_to=post),
        lambda: repo.likes.like(actor.id, post),
        lambda: repo.reposts.repost(actor.id, post),
    ):
        with pytest.raises(NotAllowed, match=said):
            act()

    assert before == {
        "following": r.zcard(keys.following(actor.id)),
        "replies": r.llen(keys.replies(post)),
        "likes": r.zcard(keys.likes(post)),
        "reposts": r.zcard(keys.reposts(post)),
    }
    assert r.zscore(keys.user_likes(actor.id), post) is None
    assert r.zscore(keys.user_reposts(actor.id), post) is None


def test_acting_on_a_repost_across_a_block_with_its_reposter_finds_nothing(repo, r, cast):
    star, fan, reader, sam, post = cast
    repost = int(r.zscore(keys.user_reposts(fan.id), post))
    repo.relations.block(fan.id, reader.id)

    for act in (repo.likes.like, repo.reposts.repost):
        with pytest.raises(PostNotFound):
            act(reader.id, repost)
    assert r.zscore(keys.likes(post), reader.id) is None


def test_an_account_list_costs_two_round_trips_whatever_the_readers_relations(
    repo, cast, round_trips
):
    """The ids with the list's size, then the accounts with the reader's follows of them
    and the reader's own sets (on a cluster, once per node those keys reach)."""
    star, fan, reader, sam, post = cast
    extra = [make_user(repo, f"more{i}") for i in range(12)]
    for user in extra:
        repo.likes.like(user.id, post)
    plain = viewer_of(repo, reader)
    repo.relations.block(reader.id, extra[0].id)
    blocking = viewer_of(repo, reader)

    costs = []
    for viewer in (plain, blocking):
        round_trips.reset()
        page = repo.account_lists.likers(post, viewer, 1, 40)
        costs.append(round_trips.count)
        assert len(page.items) == (13 if viewer is plain else 12)

    assert costs == ([2, 2] if not CLUSTER else [4, 4])


def test_the_apis_account_lists_read_their_counts_with_them(repo, cast, round_trips):
    """Two round trips for the list and the token's one check: the accounts' counts ride
    on the list's own read (no round trip for the entities)."""
    star, fan, reader, sam, post = cast
    api = Api(token_for(repo, reader))
    api.get(f"/api/v1/statuses/{post}/favourited_by")  # the token and the post remembered

    round_trips.reset()
    answer = api.get(f"/api/v1/accounts/{star.id}/followers")

    assert [a["username"] for a in answer.json()] == ["fan"]
    assert answer.json()[0]["followers_count"] == 1
    assert answer.json()[0]["statuses_count"] == 2  # its post and its repost
    # token check (with the account's user hash), the target account, the ids, the accounts
    # (before the account read path: five, the entities' counts in a round trip of their own)
    # (on the cluster at most once per node: the token's key lands on any of them)
    assert round_trips.count == 4 if not CLUSTER else round_trips.count <= 4 * 3


@pytest.mark.parametrize("path", ["/api/v1/accounts/search?q=fan", "/api/v2/search?q=fan"])
def test_the_apis_search_reads_its_accounts_counts_with_them(repo, cast, round_trips, path):
    star, fan, reader, sam, post = cast
    api = Api(token_for(repo, reader))
    api.get(path)  # the token remembered; the name index caught up

    round_trips.reset()
    answer = api.get(path)

    found = answer.json() if path.startswith("/api/v1") else answer.json()["accounts"]
    assert [(a["username"], a["followers_count"]) for a in found] == [("fan", 1)]
    # The token; the name, names starting with it, display names and tags (one pipeline);
    # the staff's "contains" index and its rows; the accounts with their counts (the
    # entities read none again). (The reader has no posts: their lists read, no texts.)
    assert round_trips.count == 5 if not CLUSTER else round_trips.count <= 5 * 3


@pytest.mark.parametrize("action", ["favourite", "reblog", "reply"])
@pytest.mark.parametrize("who_blocks", ["author", "actor"])
@pytest.mark.parametrize("staff", [False, True])
def test_the_api_answers_404_across_a_block_either_way_staff_too(
    repo, r, cast, action, who_blocks, staff
):
    """Mastodon's answer for a status the reader may not act on across a block; staff,
    who can read it, get the same answer as everyone (the write side refuses them too)."""
    star, fan, reader, sam, post = cast
    actor = blocked_actor(repo, cast, who_blocks, staff)
    api = Api(token_for(repo, actor))

    if action == "reply":
        answer = api.post("/api/v1/statuses", {"status": "hi", "in_reply_to_id": str(post)})
    else:
        answer = api.post(f"/api/v1/statuses/{post}/{action}")

    assert answer.status_code == 404
    assert r.zscore(keys.likes(post), actor.id) is None
    assert r.zscore(keys.reposts(post), actor.id) is None
    assert r.llen(keys.replies(post)) == 0
    assert r.llen(keys.own_posts(actor.id)) == 0
