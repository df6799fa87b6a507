"""Every write that hides or shows posts already listed moves the visibility version, and
nothing else does: web processes trust what they remember only while it stands
(social/repository/cache.py). The version moves in one place, RepositoryBase.send, for
pipelines their hiding write marked (queue_hiding); each kind of hiding is pinned here, so
one that forgets to mark its pipeline fails its test. A change of what a card shows of its
author numbers that author instead (profile_changes.py): each kind is pinned too."""

from __future__ import annotations

import pytest

from social import keys
from social.images import AVATAR_SIZES, process
from social.repository import Repository
from social.repository.accounts.profiles import Picture
from social.repository.cache import ProcessCache
from tests.conftest import make_staff, make_user
from tests.test_images import picture

T0 = 1_700_000_000


def version(repo: Repository) -> int:
    return int(repo.r.get(keys.visibility_version()) or 0)


@pytest.fixture
def scene(any_repo):
    """alice follows bob; bob posted once; sam is staff."""
    alice, bob = make_user(any_repo, "alice"), make_user(any_repo, "bob")
    sam = make_staff(any_repo, "sam")
    any_repo.graph.follow(alice.id, bob.id, at=T0)
    post_id = any_repo.posts.create_post(bob.id, "hello", at=T0 + 1)
    return any_repo, alice, bob, sam, post_id


def hide_by_author(repo, alice, bob, sam, post_id):
    repo.posts.delete_own_post(bob.id, post_id)


def hide_by_staff(repo, alice, bob, sam, post_id):
    repo.moderation.delete_posts([post_id], sam, "spam")


def hide_from_report(repo, alice, bob, sam, post_id):
    report_id = repo.reports.report_post(alice, post_id, "spam")
    repo.reports.resolve_report(report_id, sam, "deleted")


def suspend(repo, alice, bob, sam, post_id):
    repo.moderation.suspend(bob.id, sam, "spam")


def suspend_from_report(repo, alice, bob, sam, post_id):
    report_id = repo.reports.report_post(alice, post_id, "spam")
    repo.moderation.suspend_reported_author(report_id, sam, "spam")


def delete_account(repo, alice, bob, sam, post_id):
    repo.accounts.delete_account(bob)


HIDING = [
    hide_by_author,
    hide_by_staff,
    hide_from_report,
    suspend,
    suspend_from_report,
    delete_account,
]


@pytest.mark.parametrize("hide", HIDING, ids=lambda f: f.__name__)
def test_each_way_of_hiding_a_post_moves_the_version_and_the_post_leaves_the_pages(scene, hide):
    repo, alice, bob, sam, post_id = scene
    assert [p.id for p in repo.pages.timeline().posts.items] == [post_id]  # remembered now
    before = version(repo)

    hide(repo, alice, bob, sam, post_id)

    assert version(repo) > before
    assert repo.pages.timeline().posts.items == []
    assert repo.pages.home(alice.id).feed.items == []


def test_unsuspending_moves_the_version_and_the_posts_come_back(scene):
    repo, alice, bob, sam, post_id = scene
    repo.moderation.suspend(bob.id, sam, "spam")
    assert repo.pages.timeline().posts.items == []
    before = version(repo)

    repo.moderation.unsuspend(bob.id, sam)

    assert version(repo) == before + 1
    assert [p.id for p in repo.pages.timeline().posts.items] == [post_id]


def test_a_promotion_to_fan_out_on_read_moves_the_version(any_repo):
    repo = Repository(any_repo.r, cache=ProcessCache(), fanout_read_threshold=1)
    star, fan = make_user(repo, "star"), make_user(repo, "fan")
    repo.posts.create_post(star.id, "before", at=T0)  # no follower yet: fanned out
    repo.graph.follow(fan.id, star.id, at=T0)
    before = version(repo)

    repo.posts.create_post(star.id, "now a celebrity", at=T0 + 1)

    assert repo.r.zscore(keys.celebrities(), star.id) is not None
    assert version(repo) == before + 1
    repo.posts.create_post(star.id, "still one", at=T0 + 2)
    assert version(repo) == before + 1  # joining happens once


def test_writes_that_hide_nothing_leave_the_version_alone(scene):
    repo, alice, bob, sam, post_id = scene
    before = version(repo)

    repo.posts.create_post(alice.id, "a reply", reply_to=post_id, at=T0 + 2)
    repo.likes.like(alice.id, post_id)
    repo.likes.unlike(alice.id, post_id)
    repo.graph.unfollow(alice.id, bob.id)
    repo.reports.report_post(alice, post_id, "spam")

    assert version(repo) == before
    assert [p.id for p in repo.pages.latest(5).items] == [post_id + 1, post_id]


# A change of what a card shows of its author (display name, avatar) is that author's alone:
# numbered in profile_changes (accounts/profile_changes.py), the version left where it is.


def rename(repo, bob, sam):
    repo.profiles.update(bob.id, display_name="Bob Renamed")


def new_avatar(repo, bob, sam):
    repo.profiles.update(bob.id, pictures=[Picture("avatar", process(picture(), AVATAR_SIZES))])


def avatar_removed(repo, bob, sam):
    repo.profiles.update(bob.id, remove=["avatar"])


def avatar_from_the_worker(repo, bob, sam):
    token = repo.profiles.begin_picture(bob.id, "avatar", picture())
    assert repo.profiles.adopt(bob.id, "avatar", token)


def name_removed_by_staff(repo, bob, sam):
    repo.profiles.remove(sam, bob, "display_name", "rule 2")


def avatar_removed_by_staff(repo, bob, sam):
    repo.profiles.remove(sam, bob, "avatar", "rule 2")


CARD_CHANGES = [
    rename,
    new_avatar,
    avatar_removed,
    avatar_from_the_worker,
    name_removed_by_staff,
    avatar_removed_by_staff,
]


@pytest.mark.parametrize("change", CARD_CHANGES, ids=lambda f: f.__name__)
def test_each_change_of_what_cards_show_numbers_its_author_and_leaves_the_version(repo, change):
    alice, bob = make_user(repo, "alice"), make_user(repo, "bob")
    sam = make_staff(repo, "sam")
    repo.profiles.update(bob.id, display_name="Bob", pictures=[])
    repo.r.hset(keys.user(bob.id), "avatar", "0123456789abcdef")  # one to remove
    post_id = repo.posts.create_post(bob.id, "hello", at=T0 + 1)
    repo.posts.create_post(alice.id, "alice's", at=T0 + 2)
    assert len(repo.pages.timeline().posts.items) == 2  # remembered now
    before, numbered = version(repo), repo.r.zscore(keys.profile_changes(), bob.id)

    change(repo, bob, sam)

    assert version(repo) == before
    assert repo.r.zscore(keys.profile_changes(), bob.id) > numbered
    assert repo.r.zscore(keys.profile_changes(), alice.id) is None
    shown = {p.id: p for p in repo.pages.timeline().posts.items}[post_id]
    stored = repo.users.get_user(bob.id)
    assert (shown.author_display, shown.author_avatar) == (stored.display_name, stored.avatar)
    assert (shown.author_display, shown.author_avatar) != ("Bob", "0123456789abcdef")
