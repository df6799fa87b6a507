"""Blocking and muting (issue 17, parts 1 and 2): what each keeps from whom, on every page
of posts through the one read path, and the Redis state each action leaves."""

from __future__ import annotations

import pytest
from django.test import Client

from social import keys
from social.repository import ANONYMOUS, NotAllowed, PostNotFound, Viewer
from tests.conftest import login, make_staff, make_user

T0 = 1_700_000_000


@pytest.fixture
def trio(repo):
    """alice and bob follow each other; carol follows bob. Each has posted; bob's post
    mentions alice and carol; carol replied to alice's."""
    alice, bob, carol = (make_user(repo, n) for n in ("alice", "bob", "carol"))
    repo.graph.follow(alice.id, bob.id, at=T0)
    repo.graph.follow(bob.id, alice.id, at=T0)
    repo.graph.follow(carol.id, bob.id, at=T0)
    a = repo.posts.create_post(alice.id, "alice here #redis", at=T0 + 1)
    b = repo.posts.create_post(bob.id, "bob here @alice @carol #redis", at=T0 + 2)
    c = repo.posts.create_post(carol.id, "carol replies", reply_to=a, at=T0 + 3)
    return alice, bob, carol, a, b, c


def ids(items) -> list[int]:
    return [p.id for p in items]


def test_a_block_cuts_the_follows_both_ways_and_is_kept_from_both_sides(repo, r, trio):
    alice, bob, carol, *_ = trio

    assert repo.relations.block(alice.id, bob.id, at=T0 + 9)
    assert not repo.relations.block(alice.id, bob.id)  # idempotent

    assert r.zscore(keys.blocks(alice.id), bob.id) == T0 + 9
    assert r.zscore(keys.blocked_by(bob.id), alice.id) == T0 + 9
    assert r.zscore(keys.following(alice.id), bob.id) is None
    assert r.zscore(keys.following(bob.id), alice.id) is None
    assert r.zscore(keys.followers(alice.id), bob.id) is None
    assert r.zcard(keys.blocked_by(bob.id)) == 1 and r.zcard(keys.muted_by(bob.id)) == 0


def test_the_blocker_and_the_blocked_see_nothing_of_each_other(repo, trio):
    alice, bob, carol, a, b, c = trio
    repo.relations.block(alice.id, bob.id)
    me, them = Viewer(alice.id), Viewer(bob.id)

    assert b not in ids(repo.pages.timeline(me).posts.items)
    assert b not in ids(repo.pages.tag("redis", me).items)
    assert b not in ids(repo.pages.mentions(alice.id).items)
    assert a not in ids(repo.pages.timeline(them).posts.items)  # both ways
    with pytest.raises(PostNotFound):
        repo.pages.conversation(b, me)
    with pytest.raises(PostNotFound):
        repo.pages.conversation(a, them)
    blocked_profile = repo.pages.profile(alice.id, them)
    assert blocked_profile.blocks_viewer and blocked_profile.posts.items == []
    own_view = repo.pages.profile(bob.id, me)
    assert own_view.viewer_blocks and own_view.posts.items == []
    assert b in ids(repo.pages.timeline(Viewer(carol.id)).posts.items)  # others: as before
    assert b in ids(repo.pages.timeline(ANONYMOUS).posts.items)


def test_the_blocked_account_cannot_follow_reply_or_like_and_its_mentions_tell_nothing(
    repo, r, trio
):
    alice, bob, carol, a, b, c = trio
    repo.relations.block(alice.id, bob.id)
    posts_before = r.get(keys.next_post_id())

    with pytest.raises(NotAllowed):
        repo.graph.follow(bob.id, alice.id)
    with pytest.raises(NotAllowed):
        repo.graph.follow(alice.id, bob.id)  # nor the blocker, until they unblock
    with pytest.raises(NotAllowed):
        repo.posts.create_post(bob.id, "hey", reply_to=a)
    with pytest.raises(NotAllowed):
        repo.likes.like(bob.id, a)
    mention = repo.posts.create_post(bob.id, "@alice look", at=T0 + 20)

    assert r.zscore(keys.following(bob.id), alice.id) is None
    assert r.llen(keys.replies(a)) == 1  # carol's only
    assert r.zcard(keys.likes(a)) == 0 and r.hget(keys.post(a), "likes") is None
    assert r.zscore(keys.mentions(alice.id), mention) is None  # not told
    assert int(r.get(keys.next_post_id())) == int(posts_before) + 2  # the refused reply's id


def test_staff_are_never_kept_out_by_a_block(repo, trio):
    alice, bob, *_ = trio
    sam = make_staff(repo, "sam")
    post = repo.posts.create_post(sam.id, "staff note", at=T0 + 5)
    repo.relations.block(alice.id, sam.id)

    staff = Viewer(sam.id, is_staff=True)
    assert repo.pages.profile(alice.id, staff).posts.items  # staff still see alice
    assert repo.pages.conversation(post, staff).post.id == post
    repo.graph.follow(sam.id, bob.id)  # and may follow others as ever


def test_a_mute_keeps_the_feeds_clear_but_not_the_follow(repo, r, trio):
    alice, bob, carol, a, b, c = trio

    assert repo.relations.mute(alice.id, carol.id, at=T0 + 9)
    assert not repo.relations.mute(alice.id, carol.id)

    assert r.zscore(keys.mutes(alice.id), carol.id) == T0 + 9
    assert r.zscore(keys.muted_by(carol.id), alice.id) == T0 + 9
    me = Viewer(alice.id)
    assert c not in ids(repo.pages.timeline(me).posts.items)
    assert c not in ids(repo.pages.home(alice.id).feed.items)
    talk = repo.pages.conversation(a, me)  # replies: folded, one click away
    assert ids(talk.replies.items) == [c] and talk.counts[c].folded == "muted"
    assert ids(repo.pages.profile(carol.id, me).posts.items) == [c]  # their profile: all
    repo.graph.follow(carol.id, alice.id)  # the muted may still follow
    assert repo.relations.unmute(alice.id, carol.id)
    assert c in ids(repo.pages.timeline(me).posts.items)
    assert r.exists(keys.mutes(alice.id), keys.muted_by(carol.id)) == 0


def test_one_cannot_block_or_mute_oneself_or_a_missing_account(repo, r, trio):
    alice, *_ = trio
    with pytest.raises(NotAllowed):
        repo.relations.block(alice.id, alice.id)
    with pytest.raises(NotAllowed):
        repo.relations.mute(alice.id, alice.id)
    assert r.exists(keys.blocks(alice.id), keys.mutes(alice.id)) == 0


# --- Through the site ----------------------------------------------------------------------


def test_blocking_from_the_profile_says_so_and_lists_it_in_settings(repo, r, trio):
    alice, bob, *_ = trio
    client = login(Client(), repo, alice)

    response = client.post("/u/bob/block/", follow=True)

    assert response.status_code == 200
    html = response.content.decode()
    assert "You blocked @bob." in html and "You block @bob" in html
    assert r.zscore(keys.blocks(alice.id), bob.id) is not None
    settings_page = client.get("/settings/blocks/").content.decode()
    assert "@bob" in settings_page and 'action="/u/bob/unblock/"' in settings_page
    client.post("/u/bob/unblock/", {"next": "/settings/blocks/"})
    assert r.zscore(keys.blocks(alice.id), bob.id) is None
    assert "You block no one." in client.get("/settings/blocks/").content.decode()


def test_the_blocked_account_sees_it_on_the_blockers_profile_and_cannot_follow(repo, r, trio):
    alice, bob, *_ = trio
    repo.relations.block(alice.id, bob.id)
    client = login(Client(), repo, bob)

    profile = client.get("/u/alice/").content.decode()
    refused = client.post("/u/alice/follow/", follow=True).content.decode()

    assert "@alice blocks you" in profile and 'action="/u/alice/follow/"' not in profile
    assert "alice here" not in profile
    assert "This account does not let you follow it." in refused
    assert r.zscore(keys.following(bob.id), alice.id) is None


def test_a_reply_to_a_blocker_is_refused_with_the_text_kept(repo, r, trio):
    alice, bob, carol, a, *_ = trio
    repo.relations.block(alice.id, carol.id)
    client = login(Client(), repo, carol)

    response = client.post("/post/", {"status": "still here", "reply_to": a})

    html = response.content.decode()
    assert response.status_code == 403
    assert "This account does not let you reply to it." in html and "still here" in html
    assert r.llen(keys.replies(a)) == 1


def test_muting_and_unmuting_from_the_profile(repo, r, trio):
    alice, bob, carol, *_ = trio
    client = login(Client(), repo, alice)

    client.post("/u/carol/mute/")
    assert r.zscore(keys.mutes(alice.id), carol.id) is not None
    assert "@carol" in client.get("/settings/mutes/").content.decode()
    client.post("/u/carol/unmute/")
    assert r.zscore(keys.mutes(alice.id), carol.id) is None


def test_relations_need_a_login_and_a_post(repo, r, trio):
    assert Client().post("/u/bob/block/").status_code == 302  # to the login page
    client = login(Client(), repo, trio[0])
    assert client.get("/u/bob/mute/").status_code == 405
    assert client.get("/u/bob/block/").status_code == 200  # asks to confirm (issue 27)
    assert Client().get("/settings/blocks/").status_code == 302
    assert r.exists(keys.blocks(trio[0].id)) == 0


def test_a_reader_who_never_blocked_or_muted_reads_no_relation_sets(repo, r, trio):
    alice, bob, carol, *_ = trio
    assert not repo.users.get_user(carol.id).has_relations

    repo.relations.mute(alice.id, carol.id)

    assert repo.users.get_user(alice.id).has_relations  # the muter reads her sets now
    assert not repo.users.get_user(carol.id).has_relations  # the muted is not told
    repo.relations.block(bob.id, carol.id)
    assert repo.users.get_user(carol.id).has_relations  # the blocked reads blocked_by
    repo.relations.unblock(bob.id, carol.id)
    assert repo.users.get_user(bob.id).has_relations  # the flag stays: reads, never misses


def test_a_follow_list_leaves_out_accounts_a_block_keeps_apart(repo, trio):
    alice, bob, carol, *_ = trio
    repo.graph.follow(alice.id, carol.id, at=T0)
    repo.relations.block(carol.id, bob.id)
    seen_by_bob = Viewer.of(repo.users.get_user(bob.id))

    followings = repo.account_lists.follow_list(alice.id, "following", viewer=seen_by_bob)

    assert [e.user.username for e in followings.items] == ["bob"]  # carol blocks bob
    assert {
        e.user.username for e in repo.account_lists.follow_list(alice.id, "following").items
    } == {
        "bob",
        "carol",
    }


def test_staff_see_how_many_accounts_block_and_mute_an_account(repo, trio, sam_client):
    alice, bob, carol, *_ = trio
    repo.relations.block(alice.id, bob.id)
    repo.relations.block(carol.id, bob.id)
    repo.relations.mute(carol.id, alice.id)

    account = repo.staff_pages.account(bob.id)
    html = sam_client.get("/staff/users/bob/").content.decode()

    assert (account.blocked_by, account.muted_by) == (2, 0)
    assert "Blocked by" in html and "2 accounts" in html
    assert repo.staff_pages.account(alice.id).muted_by == 1


def test_a_card_mutes_its_author_and_comes_back_to_the_page(repo, r, trio):
    alice, bob, carol, a, b, c = trio
    client = login(Client(), repo, alice)
    timeline = client.get("/timeline/").content.decode()
    assert 'action="/u/carol/mute/"' in timeline and 'action="/u/alice/mute/"' not in timeline

    response = client.post("/u/carol/mute/", {"next": "/timeline/"})

    assert response.status_code == 302 and response["Location"] == "/timeline/"
    assert r.zscore(keys.mutes(alice.id), carol.id) is not None
    assert "carol replies" not in client.get("/timeline/").content.decode()


def test_a_deleted_account_leaves_no_block_or_mute_behind_and_its_purge_its_lists(repo, r, trio):
    alice, bob, carol, a, *_ = trio
    repo.relations.block(alice.id, bob.id)
    repo.relations.mute(carol.id, bob.id)
    repo.relations.mute(bob.id, alice.id)
    repo.filters.add(bob.id, "spoilers", "never")
    repo.likes.like(carol.id, repo.posts.create_post(bob.id, "mine", at=T0 + 30))

    repo.accounts.delete_account(repo.users.get_user(bob.id), at=T0 + 40)

    assert r.zscore(keys.blocks(alice.id), bob.id) is None
    assert r.zscore(keys.mutes(carol.id), bob.id) is None
    assert r.zscore(keys.muted_by(alice.id), bob.id) is None
    assert r.exists(keys.blocked_by(bob.id), keys.muted_by(bob.id), keys.mutes(bob.id)) == 0
    repo.accounts.purge_deleted_accounts(at=T0 + 40 + keys.DELETED_ACCOUNT_GRACE_DAYS * 86400)
    assert r.exists(keys.filters(bob.id), keys.notifications(bob.id)) == 0


def test_a_suspended_account_can_still_be_unblocked_from_the_settings_list(repo, r, trio):
    alice, bob, *_ = trio
    sam = make_staff(repo, "sam")
    repo.relations.block(alice.id, bob.id)
    repo.moderation.suspend(bob.id, sam, "spam")
    client = login(Client(), repo, alice)

    response = client.post("/u/bob/unblock/", {"next": "/settings/blocks/"})

    assert response.status_code == 302
    assert r.zscore(keys.blocks(alice.id), bob.id) is None
    assert client.post("/u/bob/block/").status_code == 404  # but not blocked anew
