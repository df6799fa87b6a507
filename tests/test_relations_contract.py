"""A reader's Relations read both ways agree (read/relations_of.py): from the reader's own
sets, as every page reads them, and from the authors' and posts' side, as the live bus
decides one post for many listeners. On one server and on the cluster (the repo fixture):
the two ways read keys on different nodes."""

from __future__ import annotations

from dataclasses import fields

import pytest

from social import keys
from social.repository import Viewer
from social.repository.read.relations_of import (
    Listeners,
    actor_relations,
    pair_relations,
    queue_author_sets,
    queue_listeners,
    queue_marks,
    queue_reader_sets,
    reader_relations,
    rules_read,
)
from social.repository.read.visibility import NO_RELATIONS, Relations
from tests.conftest import make_staff, make_user

T0 = 1_700_000_000
LATER = T0 + 2 * 3600  # a filter made at T0 for an hour has expired


@pytest.fixture
def world(repo):
    """Six accounts, each with a post, and every kind of relation between them: blocks
    both ways (one against staff), mutes (one of a suspended account), word filters that
    hide, warn and have expired, likes, reposts and reports, a suspension, and dave, who
    never blocked or muted anyone."""
    names = ("alice", "bob", "carol", "dave", "erin")
    people = {n: make_user(repo, n, at=T0) for n in names}
    people["sam"] = make_staff(repo, "sam", at=T0)
    ids = {n: u.id for n, u in people.items()}
    posts = {
        n: repo.posts.create_post(ids[n], f"{n} writes about redis and cats", at=T0 + 1)
        for n in people
    }
    a, b, c, d, e, s = (ids[n] for n in ("alice", "bob", "carol", "dave", "erin", "sam"))
    repo.relations.block(a, b, at=T0 + 2)  # alice blocks bob
    repo.relations.block(c, a, at=T0 + 2)  # carol blocks alice
    repo.relations.block(c, s, at=T0 + 2)  # carol blocks staff: no one hides from staff
    repo.relations.block(s, e, at=T0 + 2)  # staff's own block counts
    repo.relations.mute(a, e, at=T0 + 2)
    repo.relations.mute(s, d, at=T0 + 2)
    repo.relations.mute(b, c, at=T0 + 2)
    repo.filters.add(a, "cats", "never", at=T0)
    repo.filters.add(a, "redis", "1h", at=T0)  # expired at LATER
    repo.filters.add(b, "redis", "never", at=T0, action="warn")
    repo.likes.like(a, posts["dave"], at=T0 + 3)
    repo.likes.like(d, posts["alice"], at=T0 + 3)
    repo.reposts.repost(d, posts["erin"], at=T0 + 3)
    repo.reposts.repost(s, posts["dave"], at=T0 + 3)
    repo.reports.report_post(people["alice"], posts["dave"], "spam", at=T0 + 3)
    repo.reports.report_post(people["dave"], posts["erin"], "spam", at=T0 + 3)
    repo.moderation.suspend(e, people["sam"], "spam", at=T0 + 4)
    return ids, [posts[n] for n in people]


def viewers(repo, ids) -> list[Viewer]:
    """Each account as its pages read it (staff, the `relations` flag) and a visitor."""
    return [Viewer.of(repo.users.get_user(i)) for i in ids.values()]


def from_reader(repo, viewer: Viewer, posts: list[int]) -> Relations:
    reads = repo.reader.reads()
    queue_reader_sets(reads, viewer)
    queue_marks(reads, posts, viewer)
    got = reads.execute()
    return reader_relations(viewer, got, got, posts, at=LATER)


def listeners_of(repo, readers: list[Viewer], authors: list[int], posts: list[int]) -> Listeners:
    ids = [v.id for v in readers]
    reads = repo.reader.reads()
    queue_listeners(reads, authors[0], posts, ids, ids)
    for author in authors[1:]:
        queue_author_sets(reads, author, ids)
    got = reads.execute()
    found = Listeners.read(got, authors[0], posts, ids, rules_read(got, ids))
    for author in authors[1:]:
        found.add_author(got, author)
    return found


def test_the_readers_side_and_the_authors_side_build_the_same_relations(repo, world):
    ids, posts = world
    readers = viewers(repo, ids)
    listeners = listeners_of(repo, readers, list(ids.values()), posts)

    for viewer in readers:
        assert listeners.relations(viewer, at=LATER) == from_reader(repo, viewer, posts), viewer
    assert listeners.relations(Viewer()) == from_reader(repo, Viewer(), posts) == NO_RELATIONS


def test_the_fixture_gives_every_field_and_the_staff_rule_something_to_check(repo, world):
    ids, posts = world
    got = {v.id: from_reader(repo, v, posts) for v in viewers(repo, ids)}
    alice, sam = got[ids["alice"]], got[ids["sam"]]

    for field in fields(Relations):
        assert any(getattr(r, field.name) for r in got.values()), field.name
    assert alice.blocked == {ids["bob"], ids["carol"]} and alice.muted == {ids["erin"]}
    assert [f.keywords[0].keyword for f in alice.filters] == ["cats"]  # one expired
    assert sam.blocks == {ids["erin"]} and sam.blocked_by == frozenset()  # carol's not read
    assert got[ids["dave"]].liked == {posts[0]} and not got[ids["dave"]].blocked


def about(relations: Relations, authors: set[int], posts: set[int]) -> Relations:
    """relations as far as they concern these authors and posts (what a listener's are
    read for: one post and the one it shares)."""
    return Relations(
        liked=relations.liked & posts,
        reported=relations.reported & posts,
        reposted=relations.reposted & posts,
        blocked=relations.blocked & authors,
        muted=relations.muted & authors,
        blocks=relations.blocks & authors,
        blocked_by=relations.blocked_by & authors,
        filters=relations.filters,
    )


@pytest.mark.parametrize("author", ["alice", "bob", "carol", "dave", "erin", "sam"])
def test_one_post_read_from_its_side_gives_each_listener_their_relations_to_it(repo, world, author):
    ids, posts = world
    readers = viewers(repo, ids)
    post = posts[list(ids).index(author)]
    listeners = listeners_of(repo, readers, [ids[author]], [post])

    for viewer in readers:
        read = about(from_reader(repo, viewer, posts), {ids[author]}, {post})
        assert listeners.relations(viewer, at=LATER) == read, viewer


def test_a_listener_skipped_as_plain_has_no_relations_to_the_post(repo, world):
    ids, posts = world
    readers = viewers(repo, ids)
    bob, post = ids["bob"], posts[1]
    listeners = listeners_of(repo, readers, [bob], [post])

    plain = listeners.plain()
    assert plain == {ids["carol"], ids["dave"], ids["erin"], ids["sam"]}
    for viewer in readers:
        if viewer.id in plain:
            assert about(from_reader(repo, viewer, posts), {bob}, {post}) == NO_RELATIONS


def test_a_write_reads_the_same_blocks_and_for_staff_those_against_them_too(repo, r, world):
    ids, posts = world
    for viewer in viewers(repo, ids):
        read = from_reader(repo, viewer, posts)
        me = viewer.id
        own = actor_relations(
            r.zrange(keys.blocks(me), 0, -1), r.zrange(keys.blocked_by(me), 0, -1)
        )
        assert own.blocks == read.blocks
        if viewer.is_staff:  # a block keeps staff's follows and replies out
            assert own.blocked_by == {ids["carol"]} and read.blocked_by == frozenset()
        else:
            assert own.blocked_by == read.blocked_by and own.blocked == read.blocked
        for other in ids.values():
            pair = pair_relations(
                other, r.zscore(keys.blocks(other), me), r.zscore(keys.blocks(me), other)
            )
            assert pair.blocks == own.blocks & {other}
            assert pair.blocked_by == own.blocked_by & {other}
