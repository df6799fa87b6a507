"""The live bus (social/repository/live/bus.py, live.py): each write that makes an event XADDs it
once, on its own pipeline; a listener decides with the read path's policy for its reader."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from social import keys
from social.redis_client import get_async_redis
from social.repository import Viewer
from social.repository.live.live import LiveBus, LiveEvent, live_event_from

T0 = 1_700_000_000


def in_new_loop(coroutine):
    """Run coroutine to its end on an event loop of its own, in a thread of its own (the
    browser tests' Playwright keeps a loop running in the suite's main thread)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def events(r) -> list[LiveEvent]:
    """Every event on the bus, oldest first."""
    found = [live_event_from(i, f) for i, f in r.xrange(keys.live_events())]
    return [e for e in found if e is not None]


def test_a_post_is_published_once_whatever_its_followers(repo, r, alice, bob, charlie):
    repo.graph.follow(bob.id, alice.id, at=T0)
    repo.graph.follow(charlie.id, alice.id, at=T0)
    r.delete(keys.live_events())

    post_id = repo.posts.create_post(alice.id, "hello #redis #live", at=T0)

    (event,) = events(r)
    assert (event.kind, event.post_id, event.author_id) == ("update", post_id, alice.id)
    assert event.tags == ("redis", "live")
    assert r.xlen(keys.live_events()) == 1


def test_a_post_by_a_fan_out_on_read_author_is_published_once(settings, repo, r, alice, bob):
    settings.RETWIS_FANOUT_READ_THRESHOLD = 1
    from social.repository import get_repository

    repo = get_repository()
    repo.graph.follow(bob.id, alice.id, at=T0)
    r.delete(keys.live_events())

    post_id = repo.posts.create_post(alice.id, "to many", at=T0)

    assert r.zscore(keys.celebrities(), alice.id) is not None
    assert [(e.kind, e.post_id) for e in events(r)] == [("update", post_id)]
    assert repo.live.update_for(Viewer(bob.id), events(r)[0], home=True) is not None


def test_a_repost_a_reply_notification_a_delete_and_a_filter_are_told(repo, r, alice, bob):
    post_id = repo.posts.create_post(alice.id, "hello", at=T0)
    r.delete(keys.live_events())

    repost_id, _ = repo.reposts.repost(bob.id, post_id, at=T0 + 1)
    repo.posts.delete_own_post(alice.id, post_id, at=T0 + 2)
    repo.filters.add(bob.id, "spoilers", "never", at=T0 + 3)

    told = [(e.kind, e.post_id, e.author_id, e.repost_of, e.user_id) for e in events(r)]
    assert told == [
        ("notification", None, None, None, alice.id),  # the repost's, on its pipeline
        ("update", repost_id, bob.id, post_id, None),
        ("delete", post_id, None, None, None),
        ("filters_changed", None, None, None, bob.id),
    ]
    note = events(r)[0].notification
    assert note is not None and (note.kind, note.actor_id, note.post_id) == (
        "repost", bob.id, post_id,
    )  # fmt: skip


def test_the_bus_is_capped(repo, r, alice, monkeypatch):
    monkeypatch.setattr(keys, "LIVE_EVENTS_CAP", 10)
    for i in range(300):
        repo.posts.create_post(alice.id, f"post {i}", at=T0 + i)

    assert r.xlen(keys.live_events()) < 300  # XADD MAXLEN ~: trimmed by whole nodes


def test_an_error_of_the_publish_is_logged_and_the_post_is_written(repo, r, alice, caplog):
    r.set(keys.live_events(), "not a stream")  # every XADD now fails (WRONGTYPE)

    with caplog.at_level(logging.WARNING, logger="social.repository.base"):
        post_id = repo.posts.create_post(alice.id, "still posted", at=T0)

    assert r.hget(keys.post(post_id), "body") == "still posted"
    assert r.lindex(keys.timeline(), 0) == str(post_id)
    assert "live event not published" in caplog.text


def test_other_errors_of_a_write_still_raise(repo, r, alice, bob):
    post_id = repo.posts.create_post(alice.id, "hello", at=T0)
    r.set(keys.likes(post_id), "junk")  # the like's own write fails

    with pytest.raises(redis.ResponseError):
        repo.likes.like(bob.id, post_id, at=T0)


def test_a_listener_is_told_only_what_the_read_path_lets_its_reader_see(
    repo, r, alice, bob, charlie
):
    repo.graph.follow(bob.id, alice.id, at=T0)
    post_id = repo.posts.create_post(alice.id, "about spoilers", at=T0)
    event = events(r)[-1]

    delivered = repo.live.update_for(Viewer(bob.id), event, home=True)
    assert delivered is not None and delivered.post.id == post_id
    assert repo.live.update_for(Viewer(charlie.id), event, home=True) is None  # not followed
    assert repo.live.update_for(Viewer(charlie.id), event, home=False) is not None  # public
    assert repo.live.update_for(Viewer(alice.id), event, home=True) is not None  # their own

    repo.filters.add(bob.id, "spoilers", "never", at=T0)
    assert repo.live.update_for(Viewer(bob.id), event, home=True) is None
    repo.relations.mute(charlie.id, alice.id)
    assert repo.live.update_for(Viewer(charlie.id), event, home=False) is None
    repo.relations.block(alice.id, bob.id)  # alice blocks bob: nothing of hers reaches him
    assert repo.live.update_for(Viewer(bob.id), event, home=False) is None
    repo.posts.delete_own_post(alice.id, post_id, at=T0 + 1)
    assert repo.live.update_for(Viewer(), event, home=False) is None


def test_a_repost_is_delivered_as_the_post_it_shares(repo, r, alice, bob, charlie):
    repo.graph.follow(charlie.id, bob.id, at=T0)
    post_id = repo.posts.create_post(alice.id, "worth sharing", at=T0)
    repost_id, _ = repo.reposts.repost(bob.id, post_id, at=T0 + 1)
    event = next(e for e in events(r) if e.post_id == repost_id)

    delivered = repo.live.update_for(Viewer(charlie.id), event, home=True)

    assert delivered is not None
    assert delivered.post.id == repost_id and delivered.post.original is not None
    assert delivered.post.original.id == post_id


def test_a_notification_is_told_as_the_notifications_page_shows_it(repo, r, alice, bob):
    post_id = repo.posts.create_post(alice.id, "like me", at=T0)
    repo.likes.like(bob.id, post_id, at=T0 + 1)
    note = events(r)[-1].notification
    assert note is not None and note.kind == "like"

    shown = repo.live.notification_for(Viewer(alice.id), note)
    assert shown is not None and shown[0].events == (note,)
    assert shown[0].post is not None and shown[0].post.id == post_id

    repo.relations.mute(alice.id, bob.id)
    assert repo.live.notification_for(Viewer(alice.id), note) is None


def test_the_async_reader_reads_after_an_id_and_waits(repo, r, alice):
    async def run() -> tuple[str, list[LiveEvent], list[LiveEvent]]:
        client = get_async_redis()
        bus = LiveBus(client)
        start = await bus.last_id()
        waited = await bus.read(start, block_ms=50)
        await asyncio.to_thread(repo.posts.create_post, alice.id, "now", at=T0)
        got = await bus.read(start, block_ms=1000)
        await client.aclose()
        return start, waited, got

    start, waited, got = in_new_loop(run())
    assert waited == []
    assert [e.kind for e in got] == ["update"] and got[0].id > start
