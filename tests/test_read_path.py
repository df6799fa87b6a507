"""The one read path (social/repository/read/reader.py) and its visibility policy
(visibility.py): each source reads its ids, and who sees what is decided in one place."""

from __future__ import annotations

import pytest

from social.repository import (
    ANONYMOUS,
    CONVERSATION,
    HOME,
    MENTIONS,
    PLAIN,
    PROFILE,
    PUBLIC,
    STAFF,
    WITH_HIDDEN,
    HomeFeed,
    Liked,
    Listed,
    Mentions,
    OwnPosts,
    PostNotFound,
    Replies,
    TagPosts,
    Timeline,
    UserNotFound,
    Viewer,
)
from social.repository.read.reader import PageAt
from tests.conftest import make_staff, make_user

T0 = 1_700_000_000


@pytest.fixture
def scene(any_repo):
    """alice follows bob. bob wrote 'one' (#redis), 'two' @alice, and a reply to 'one'
    by alice; alice likes 'one'. sam is staff."""
    repo = any_repo
    alice, bob = make_user(repo, "alice"), make_user(repo, "bob")
    sam = make_staff(repo, "sam")
    repo.graph.follow(alice.id, bob.id, at=T0)
    one = repo.posts.create_post(bob.id, "one #redis", at=T0 + 1)
    two = repo.posts.create_post(bob.id, "two @alice", at=T0 + 2)
    reply = repo.posts.create_post(alice.id, "re", reply_to=one, at=T0 + 3)
    repo.likes.like(alice.id, one)
    return repo, alice, bob, sam, one, two, reply


def ids(read) -> list[int]:
    return [p.id for p in read.page.items]


def test_each_source_lists_its_posts_in_its_order(scene):
    repo, alice, bob, sam, one, two, reply = scene
    reader, me = repo.reader, Viewer(alice.id)

    assert ids(reader.page(Timeline(), me, shows=PUBLIC)) == [reply, two, one]
    assert ids(reader.page(HomeFeed(alice.id), me, shows=HOME)) == [reply, two, one]
    assert ids(reader.page(OwnPosts(bob.id), me, shows=PROFILE)) == [two, one]
    assert ids(reader.page(TagPosts("REDIS"), me, shows=PUBLIC)) == [one]
    assert ids(reader.page(TagPosts("!!"), me, shows=PUBLIC)) == []  # nothing a tag may hold
    assert ids(reader.page(Mentions(alice.id), me, shows=MENTIONS)) == [two]
    assert ids(reader.page(Liked(alice.id), me, shows=PLAIN)) == [one]
    assert ids(reader.page(Replies(one), me, shows=CONVERSATION)) == [reply]
    assert ids(reader.page(Listed((one, 999, two)), me, shows=WITH_HIDDEN)) == [
        one,
        two,
    ]  # a missing id drops


def test_a_page_carries_counts_and_the_readers_own_relation(scene):
    repo, alice, bob, sam, one, two, reply = scene

    for _ in range(2):  # cold, then with the counts read beside the ids (the guess)
        counts = repo.reader.page(Timeline(), Viewer(alice.id), shows=PUBLIC).page.counts
        assert (counts[one].replies, counts[one].likes, counts[one].liked) == (1, 1, True)
        assert not counts[two].liked and counts[two].actionable
    as_bob = repo.reader.page(Timeline(), Viewer(bob.id), shows=PUBLIC).page.counts
    assert as_bob[one].likes == 1 and not as_bob[one].liked  # not alice's like for bob


def test_paging_says_whether_more_follow(scene):
    repo, alice, *_ = scene

    first = repo.reader.page(Timeline(), ANONYMOUS, 1, 2, shows=PUBLIC).page
    second = repo.reader.page(Timeline(), ANONYMOUS, 2, 2, shows=PUBLIC).page

    assert len(first.items) == 2 and first.has_next
    assert len(second.items) == 1 and not second.has_next


def test_hidden_posts_are_listed_for_staff_only_where_staff_look(scene):
    repo, alice, bob, sam, one, two, reply = scene
    repo.moderation.suspend(bob.id, sam, "spam")
    staff = Viewer(sam.id, is_staff=True)

    assert ids(repo.reader.page(Timeline(), staff, shows=PUBLIC)) == [reply]  # feeds: for no one
    assert ids(repo.reader.page(OwnPosts(bob.id), Viewer(alice.id), shows=PROFILE)) == []
    on_profile = repo.reader.page(OwnPosts(bob.id), staff, shows=PROFILE).page  # staff see
    assert [p.id for p in on_profile.items] == [two, one]
    assert not on_profile.counts[one].actionable  # shown, but nothing to do with it
    assert [p.id for p in repo.staff_pages.posts_by_ids([one, two])] == [one, two]
    assert STAFF.is_staff and not STAFF.is_authenticated


def test_a_post_removed_by_moderators_opens_for_its_author_and_staff_only(scene):
    repo, alice, bob, sam, one, two, reply = scene
    repo.moderation.delete_posts([two], sam, "rude")

    assert repo.pages.conversation(two, Viewer(bob.id)).post.is_deleted
    assert repo.pages.conversation(two, Viewer(sam.id, is_staff=True)).post.id == two
    for viewer in (ANONYMOUS, Viewer(alice.id)):
        with pytest.raises(PostNotFound):
            repo.pages.conversation(two, viewer)
    with pytest.raises(PostNotFound):  # its author sees it, but may not act on it
        repo.pages.post(two, Viewer(bob.id), to_act=True)
    assert not repo.pages.conversation(two, Viewer(bob.id)).can_reply


def test_a_post_its_author_deleted_is_gone_for_the_author_too(scene):
    repo, alice, bob, sam, one, two, reply = scene
    repo.posts.delete_own_post(bob.id, two)

    with pytest.raises(PostNotFound):
        repo.pages.conversation(two, Viewer(bob.id))
    assert repo.pages.conversation(two, Viewer(sam.id, is_staff=True)).post.deleted_by_author


def test_a_suspended_account_is_absent_for_everyone_but_staff(scene):
    repo, alice, bob, sam, *_ = scene
    repo.moderation.suspend(bob.id, sam, "spam")

    for viewer in (ANONYMOUS, Viewer(alice.id)):
        with pytest.raises(UserNotFound):
            repo.pages.profile(bob.id, viewer)
        with pytest.raises(UserNotFound):
            repo.pages.likes(bob.id, viewer)
    assert repo.pages.profile(bob.id, Viewer(sam.id, is_staff=True)).user.is_suspended


def test_the_welcome_page_fills_in_for_hidden_posts_from_its_spare_ids(scene):
    repo, alice, bob, sam, one, two, reply = scene
    extra = [repo.posts.create_post(alice.id, f"a{i}", at=T0 + 10 + i) for i in range(3)]
    repo.moderation.suspend(alice.id, sam, "spam")  # hides the 3 newest and the reply

    latest = repo.pages.latest(3)  # reads the 6 newest: 4 hidden

    assert [p.id for p in latest.items] == [two, one]
    assert not set(extra) & {p.id for p in latest.items}


@pytest.fixture
def interleaved(any_repo):
    """The timeline, newest first: "kept 9".."kept 0" by alice, each after (older than)
    one by bob, whom staff then suspend: half the newest ids are hidden from everyone."""
    repo = any_repo
    alice, bob = make_user(repo, "alice"), make_user(repo, "bob")
    kept = []
    for i in range(10):
        kept.append(repo.posts.create_post(alice.id, f"kept {i}", at=T0 + 2 * i))
        repo.posts.create_post(bob.id, f"gone {i}", at=T0 + 2 * i + 1)
    repo.moderation.suspend(bob.id, make_staff(repo, "sam"), "spam")
    return repo, kept[::-1]


def test_a_filling_page_holds_its_size_and_the_next_starts_where_it_ended(interleaved):
    repo, kept = interleaved
    read = repo.reader.page

    first = read(Timeline(), ANONYMOUS, 1, 3, shows=PUBLIC, fill=True).page
    plain = read(Timeline(), ANONYMOUS, 1, 3, shows=PUBLIC).page  # without fill: cut first

    assert [p.id for p in first.items] == kept[:3] and first.has_next
    assert [p.id for p in plain.items] == kept[:1]
    assert first.next_from == 7 and first.previous_before == 0 and not first.has_previous
    seen, page = [p.id for p in first.items], first
    while page.has_next:
        at = PageAt(start=page.next_from) if page.next_from is not None else None
        page = read(Timeline(), ANONYMOUS, page.number + 1, 3, shows=PUBLIC, fill=True, at=at).page
        seen += [p.id for p in page.items]
    assert seen == kept  # every visible post once, in order
    assert page.number == 4 and [p.id for p in page.items] == kept[9:]


def test_a_page_read_backward_holds_the_posts_just_before_its_end(interleaved):
    repo, kept = interleaved
    second = repo.reader.page(
        Timeline(), ANONYMOUS, 2, 3, shows=PUBLIC, fill=True, at=PageAt(start=7)
    ).page

    back = repo.reader.page(
        Timeline(), ANONYMOUS, 1, 3, shows=PUBLIC, fill=True, at=PageAt(before=7)
    ).page

    assert [p.id for p in second.items] == kept[3:6] and second.previous_before == 7
    assert [p.id for p in back.items] == kept[:3]
    assert back.has_next and back.previous_before == 0  # it reached the list's head
    for _ in range(2):  # cold, then warm (the process remembers it): the same page
        again = repo.reader.page(
            Timeline(), ANONYMOUS, 2, 3, shows=PUBLIC, fill=True, at=PageAt(before=12)
        ).page
        assert [p.id for p in again.items] == kept[3:6] and again.previous_before == 6
