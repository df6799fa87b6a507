"""Delivering one update to many listeners at once (social/streaming/deliver.py's tell,
LiveStore.updates_for): each reader is told exactly what their home feed or the timeline
shows them on the read path (blocks either way, mutes, word filters, staff), and the round
trips an event costs do not grow with its listeners."""

from __future__ import annotations

import json

import pytest

from social import keys
from social.repository import Viewer
from social.repository.read.sources import HOME, PUBLIC, HomeFeed, Timeline
from social.streaming.deliver import Audience, Listener, tell
from social.streaming.hub import Hub
from social.streaming.streams import Stream
from tests.conftest import CLUSTER, make_staff, make_user
from tests.test_live_bus import T0, events, in_new_loop
from tests.test_streaming_hub import connection

BASE = "http://testserver"


def audience_of(users, stream: Stream, first_key: int = 1) -> list[Audience]:
    return [
        Audience(first_key + i, Listener(u, ("read",)), stream, BASE) for i, u in enumerate(users)
    ]


def told_keys(repo, event, audience) -> dict[int, dict]:
    """The subscriptions told of event, with the status each is told."""
    messages = tell(repo, event, audience).messages
    return {key: json.loads(payload) for key, _name, payload in messages}


def relations_state(r, *users) -> dict:
    """Every block, mute and filter set of users (delivery must leave them as they were)."""
    return {
        (name, u.id): sorted(r.zrange(key(u.id), 0, -1))
        for u in users
        for name, key in (
            ("blocks", keys.blocks),
            ("blocked_by", keys.blocked_by),
            ("mutes", keys.mutes),
            ("muted_by", keys.muted_by),
            ("filters", keys.filters),
        )
    }


def test_each_of_many_readers_is_told_what_their_own_read_path_shows(repo, r):
    author = make_user(repo, "author")
    readers = [make_user(repo, f"reader{i}") for i in range(24)]
    staff = make_staff(repo, "staffer")
    everyone = [*readers, staff]
    for reader in everyone:
        repo.graph.follow(reader.id, author.id, at=T0)
    repo.relations.block(readers[0].id, author.id)  # the reader blocks the author
    repo.relations.block(author.id, readers[1].id)  # the author blocks the reader
    repo.relations.mute(readers[2].id, author.id)
    repo.filters.add(readers[3].id, "spoilers", "never", at=T0)
    repo.filters.add(readers[4].id, "spoilers", "never", at=T0, action="warn")
    repo.graph.unfollow(readers[5].id, author.id)  # home: followers only
    repo.relations.block(author.id, staff.id)  # staff read only their own blocks (the
    # block ended the follow: home no longer)
    before = relations_state(r, author, *everyone)
    everyone = [repo.users.get_user(u.id) for u in everyone]  # as they now are

    post_id = repo.posts.create_post(author.id, "big spoilers ahead", at=T0 + 1)
    event = events(r)[-1]
    home = audience_of(everyone, Stream("user"))
    public = audience_of(everyone, Stream("public"), first_key=100)

    told = told_keys(repo, event, [*home, *public])

    for sub in [*home, *public]:
        viewer = Viewer.of(sub.listener.user)
        home_stream = sub.stream.name == "user"
        source = HomeFeed(viewer.id) if home_stream else Timeline()
        page = repo.reader.page(source, viewer, 1, 20, shows=HOME if home_stream else PUBLIC).page
        assert (sub.key in told) == (post_id in [p.id for p in page.items]), sub
    blocked_either_way = {readers[0].id, readers[1].id}
    assert {s.key for s in home if s.key in told} == {
        s.key for s in home if s.listener.user.id not in {*blocked_either_way, readers[2].id,
                                                          readers[3].id, readers[5].id,
                                                          staff.id}
    }  # fmt: skip
    assert {s.key for s in public if s.key not in told} == {
        s.key for s in public if s.listener.user.id in {*blocked_either_way, readers[2].id,
                                                        readers[3].id}
    }  # fmt: skip
    warned = told[home[4].key]["filtered"]
    assert [f["keyword_matches"] for f in warned] == [["spoilers"]]
    assert told[home[6].key]["filtered"] == [] and told[home[6].key]["id"] == str(post_id)
    assert relations_state(r, author, *everyone) == before  # delivery reads, never writes


def test_a_repost_is_kept_from_readers_kept_apart_from_the_original_author(repo, r):
    author, reposter = make_user(repo, "author"), make_user(repo, "reposter")
    readers = [make_user(repo, f"reader{i}") for i in range(6)]
    for reader in readers:
        repo.graph.follow(reader.id, reposter.id, at=T0)
    repo.relations.block(readers[0].id, author.id)
    repo.relations.mute(readers[1].id, author.id)
    post_id = repo.posts.create_post(author.id, "worth sharing", at=T0)
    repo.likes.like(readers[2].id, post_id, at=T0 + 1)
    repost_id, _ = repo.reposts.repost(reposter.id, post_id, at=T0 + 2)
    event = next(e for e in events(r) if e.post_id == repost_id)

    told = told_keys(repo, event, audience_of(readers, Stream("user")))

    assert sorted(told) == [3, 4, 5, 6]
    assert {told[k]["id"] for k in told} == {str(repost_id)}
    assert told[3]["reblog"]["favourited"] is True  # reader2 likes the post it shares
    assert told[4]["reblog"]["favourited"] is False
    assert r.zscore(keys.likes(post_id), readers[2].id) is not None


def _cost(repo, r, round_trips, n: int) -> int:
    author = make_user(repo, f"author{n}")
    readers = [make_user(repo, f"r{n}x{i}") for i in range(n)]
    for reader in readers:
        repo.graph.follow(reader.id, author.id, at=T0)
    repo.relations.mute(readers[0].id, author.id)
    repo.filters.add(readers[1].id, "nope", "never", at=T0)
    audience = [
        *audience_of(readers, Stream("user")),
        *audience_of(readers, Stream("public"), first_key=n + 1),
    ]
    repo.posts.create_post(author.id, "warm the process up", at=T0)
    tell(repo, events(r)[-1], audience)  # the process now knows the author
    repo.posts.create_post(author.id, "hello", at=T0 + 1)
    event = events(r)[-1]
    round_trips.reset()
    told = tell(repo, event, audience)
    assert len(told.messages) == 2 * n - 2  # all but the muting reader's two
    return round_trips.count


@pytest.mark.parametrize("n", [5, 60])
def test_an_update_costs_the_same_round_trips_for_5_listeners_as_for_60(repo, r, round_trips, n):
    """Per event, home and public readers alike: the post's load with every reader's
    relations to it (the author's blocks, blocked_by, muted_by and followers sets, the
    post's likes, reposts and reports, each reader's filters), its author (new posts' authors
    are read after them: loading.py), then once the accounts the status names. On the
    cluster the first reaches every node, the others one each."""
    assert _cost(repo, r, round_trips, n) == (6 if CLUSTER else 3)


def test_a_filter_added_while_listening_applies_to_the_next_post(repo, r):
    """The hub holds its listeners' filters as last read (ListenerFilters) and forgets a
    reader's when the bus tells their filters changed."""
    author, reader = make_user(repo, "author"), make_user(repo, "reader")
    repo.graph.follow(reader.id, author.id, at=T0)

    async def run() -> tuple[list[str], int]:
        hub, listening = Hub(), connection(reader)
        hub.admit(listening, 5, 5)
        hub.subscribe(listening, Stream("user"))
        repo.posts.create_post(author.id, "first spoilers", at=T0)
        await hub.deliver(events(r)[-1])
        held = len(hub.filters)
        repo.filters.add(reader.id, "spoilers", "never", at=T0)
        await hub.deliver(events(r)[-1])  # filters_changed
        repo.posts.create_post(author.id, "more spoilers", at=T0 + 1)
        await hub.deliver(events(r)[-1])
        repo.posts.create_post(author.id, "no filter word", at=T0 + 2)
        await hub.deliver(events(r)[-1])
        await hub.stop()
        return list(listening.pending), held

    got, held = in_new_loop(run())
    assert held == 1
    assert got == ["user update ", "user filters_changed ", "user update "]
    assert [e.kind for e in events(r)][-4:] == ["update", "filters_changed", "update", "update"]
