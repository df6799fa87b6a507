"""Every list of accounts and every notification asks the one policy (visibility.py) with
the Relations relations_of.py reads (issue 34, part 1): the profile's "followed by" names
and count, "new here" on the timeline, the client API's accounts by id, and a staff
reader's notifications from an account that blocks them. Each failed before."""

from __future__ import annotations

from social import keys
from social.repository import ANONYMOUS, Viewer
from tests.api import Api, token_for
from tests.conftest import make_staff, make_user

T0 = 1_700_000_000


def as_viewer(repo, user) -> Viewer:
    return Viewer.of(repo.users.get_user(user.id))


def test_followed_by_counts_only_the_mutuals_a_list_shows_the_reader(repo, r, sam):
    reader, owner = make_user(repo, "reader"), make_user(repo, "owner")
    friends = [make_user(repo, n) for n in ("f1", "f2", "f3", "f4")]
    for i, friend in enumerate(friends):
        repo.graph.follow(reader.id, friend.id, at=T0 + i)
        repo.graph.follow(friend.id, owner.id, at=T0)
    repo.moderation.suspend(friends[3].id, sam, "spam")
    repo.relations.block(friends[2].id, reader.id, at=T0 + 9)
    # A follow that raced the block (it cut the follows both ways): still counted before.
    r.zadd(keys.following(reader.id), {str(friends[2].id): T0 + 2})

    profile = repo.pages.profile(owner.id, as_viewer(repo, reader))

    assert profile.mutual_names == ("f2", "f1")
    assert profile.mutual_count == 2


def test_new_here_leaves_out_accounts_across_a_block_for_that_reader_only(repo):
    alice, bob, carol = (make_user(repo, n, at=T0 + i) for i, n in enumerate("abc"))
    repo.relations.block(carol.id, alice.id)

    seen = repo.pages.timeline(as_viewer(repo, alice)).latest_users
    assert "c" not in seen and {"a", "b"} <= set(seen)
    assert "c" in repo.pages.timeline(ANONYMOUS).latest_users  # remembered: still per reader
    assert "c" in repo.pages.timeline(as_viewer(repo, bob)).latest_users


def test_the_apis_accounts_by_id_are_those_a_list_shows_staff_included(repo, alice, bob, sam):
    carol, dora = make_user(repo, "carol"), make_user(repo, "dora")
    repo.relations.block(carol.id, alice.id)
    repo.moderation.suspend(dora.id, sam, "spam")
    ids = {"id[]": [bob.id, carol.id, dora.id, alice.id]}

    mine = Api(token_for(repo, alice)).get("/api/v1/accounts", ids).json()
    staffs = Api(token_for(repo, sam)).get("/api/v1/accounts", ids).json()

    assert [a["username"] for a in mine] == ["bob", "alice"]
    assert [a["username"] for a in staffs] == ["bob", "carol", "alice"]


def test_staff_are_told_of_a_mention_by_an_account_that_blocks_them_as_they_see_its_posts(
    repo, bob
):
    sam = make_staff(repo, "sam")
    carol = make_user(repo, "carol")
    repo.relations.block(carol.id, sam.id)
    repo.relations.block(carol.id, bob.id)
    post = repo.posts.create_post(carol.id, "hello @sam and @bob")

    def told(user) -> list[int]:
        page = repo.notifications.page(as_viewer(repo, user))
        return [g.post.id for g in page.items if g.post is not None]

    assert told(sam) == [post]  # staff read posts across a block: and are told of them
    assert post in [p.id for p in repo.pages.timeline(as_viewer(repo, sam)).posts.items]
    assert told(bob) == []
