"""Posting loses nothing and never doubles: retried submissions, interrupted fan-outs.

Repository contract on real Redis and fakeredis (`any_repo`, fan-out batches of 3); the
killed process runs on the suite's real redis-server.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from social import keys
from social.repository import Repository
from social.repository.errors import PostPending

T0 = 1_700_000_000
ROOT = Path(__file__).resolve().parent.parent


def users(repo: Repository, *names: str) -> list[int]:
    return [repo.users.create_user(name, "h", at=T0).id for name in names]


def listed(r, key: str) -> list[int]:
    return [int(i) for i in r.lrange(key, 0, -1)]


def test_a_retried_submission_returns_the_first_post_and_posts_nothing(any_repo, any_r):
    author, fan = users(any_repo, "author", "fan")
    any_repo.graph.follow(fan, author, at=T0)

    first = any_repo.posts.create_post(author, "once", at=T0 + 1, token="tok-abcdefghijklmnop")
    again = any_repo.posts.create_post(author, "once", at=T0 + 2, token="tok-abcdefghijklmnop")

    assert again == first
    assert listed(any_r, keys.own_posts(author)) == [first]
    assert listed(any_r, keys.home_feed(fan)) == [first]
    assert listed(any_r, keys.timeline()) == [first]
    assert any_r.get(keys.post_token(author, "tok-abcdefghijklmnop")) == str(first)
    assert 0 < any_r.ttl(keys.post_token(author, "tok-abcdefghijklmnop")) <= 86400
    assert any_r.zcard(keys.fanouts_in_progress()) == 0
    # A new submission (a new token) is a new post; tokens are per author.
    other = any_repo.posts.create_post(author, "twice", at=T0 + 3, token="tok-qrstuvwxyz012345")
    theirs = any_repo.posts.create_post(fan, "mine", at=T0 + 4, token="tok-abcdefghijklmnop")
    assert len({first, other, theirs}) == 3
    assert listed(any_r, keys.own_posts(author)) == [other, first]


def test_a_retry_while_the_first_has_not_stored_its_post_is_pending(any_repo, any_r):
    (author,) = users(any_repo, "author")
    any_r.set(keys.post_token(author, "tok-abcdefghijklmnop"), 41)

    with pytest.raises(PostPending):
        any_repo.posts.create_post(author, "hello", at=T0, token="tok-abcdefghijklmnop")

    assert any_r.llen(keys.own_posts(author)) == 0
    assert any_r.exists(keys.post(41)) == 0


def test_a_fan_out_is_on_record_only_while_it_runs(any_repo, any_r):
    author, *fans = users(any_repo, "author", *(f"fan{i}" for i in range(7)))
    (loner,) = users(any_repo, "loner")
    for fan in fans:
        any_repo.graph.follow(fan, author, at=T0)

    post_id = any_repo.posts.create_post(author, "news", at=T0 + 1)
    any_repo.posts.create_post(loner, "nobody reads me", at=T0 + 2)

    assert all(listed(any_r, keys.home_feed(f)) == [post_id] for f in fans)
    assert any_r.zcard(keys.fanouts_in_progress()) == 0


def interrupt(r, post_id: int, lost: list[int], started: int) -> None:
    """Make post_id look like a fan-out whose process died: the record stays and the
    copies to `lost` followers (and the timeline entry) were never written."""
    for follower in lost:
        r.lrem(keys.home_feed(follower), 0, post_id)
    r.lrem(keys.timeline(), 0, post_id)
    r.zadd(keys.fanouts_in_progress(), {post_id: started})


def test_repair_finishes_an_interrupted_fan_out_in_place(any_repo, any_r):
    author, friend, *fans = users(any_repo, "author", "friend", *(f"fan{i}" for i in range(7)))
    for fan in fans:
        any_repo.graph.follow(fan, author, at=T0)
        any_repo.graph.follow(fan, friend, at=T0)
    post_id = any_repo.posts.create_post(author, "news", at=T0 + 1)
    interrupt(any_r, post_id, fans[3:], started=T0 + 1)
    newer = any_repo.posts.create_post(friend, "newer", at=T0 + 2)  # lands meanwhile

    assert any_repo.fanouts.finish_fanouts(older_than=60, at=T0 + 30) == []  # may still run
    assert any_r.zcard(keys.fanouts_in_progress()) == 1
    assert any_repo.fanouts.finish_fanouts(older_than=60, at=T0 + 120) == [post_id]

    for fan in fans:
        assert listed(any_r, keys.home_feed(fan)) == [newer, post_id]
    assert listed(any_r, keys.timeline()) == [newer, post_id]
    assert listed(any_r, keys.own_posts(author)) == [post_id]
    assert any_r.zcard(keys.fanouts_in_progress()) == 0
    assert any_repo.fanouts.finish_fanouts(older_than=60, at=T0 + 180) == []  # idempotent


def test_repair_strikes_off_a_fan_out_whose_post_was_never_written(any_repo, any_r):
    any_r.zadd(keys.fanouts_in_progress(), {99: T0})

    assert any_repo.fanouts.finish_fanouts(older_than=60, at=T0 + 120) == [99]

    assert any_r.zcard(keys.fanouts_in_progress()) == 0
    assert any_r.exists(keys.post(99), keys.timeline()) == 0


CHILD = """
import os, sys, time
sys.path.insert(0, {root!r})
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
import django
django.setup()
import redis
from social.repository import Repository
from social.repository.cache import ProcessCache

class SlowPipeline(redis.client.Pipeline):
    def execute(self, *args, **kwargs):
        time.sleep(0.002)  # a slow network: the fan-out takes a few seconds
        return super().execute(*args, **kwargs)

class SlowRedis(redis.Redis):
    def pipeline(self, transaction=True, shard_hint=None):
        return SlowPipeline(self.connection_pool, self.response_callbacks, transaction,
                            shard_hint)

repo = Repository(SlowRedis.from_url({url!r}), cache=ProcessCache(), fanout_batch=1)
print(repo.posts.create_post({author}, "killed half-way"), flush=True)
"""


def test_a_process_killed_mid_fan_out_leaves_a_record_that_repair_finishes(repo, r, redis_url):
    author, *fans = users(repo, "author", *(f"fan{i}" for i in range(1500)))
    pipe = r.pipeline(transaction=False)
    for fan in fans:  # followed as follow() writes it, without 1500 feed rewrites
        pipe.zadd(keys.following(fan), {author: T0})
        pipe.zadd(keys.followers(author), {fan: T0})
    pipe.execute()
    script = CHILD.format(root=str(ROOT), url=redis_url, author=author)
    child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            got = sum(1 for f in fans[:50] if r.llen(keys.home_feed(f)))
            if got >= 20:  # well under way: about 20 of 1500 copies written
                break
            time.sleep(0.005)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=10)
    post_id = int(r.get(keys.next_post_id()))
    have = [f for f in fans if post_id in listed(r, keys.home_feed(f))]
    assert 0 < len(have) < len(fans), "the child was not killed mid-fan-out"
    assert r.zrange(keys.fanouts_in_progress(), 0, -1) == [str(post_id)]

    from django.core.management import call_command

    out = io.StringIO()
    call_command("repair", "--fanout-grace", "0", stdout=out)

    assert f"post {post_id}: fan-out interrupted" in out.getvalue()
    assert "finished 1 interrupted fan-out(s)" in out.getvalue()

    assert all(listed(r, keys.home_feed(f)) == [post_id] for f in fans)
    assert listed(r, keys.own_posts(author)) == [post_id]
    assert r.zcard(keys.fanouts_in_progress()) == 0


# --- Through the site ----------------------------------------------------------------------


def form_token(client) -> str:
    page = client.get("/").content.decode()
    match = re.search(r'name="token" value="([A-Za-z0-9_-]+)"', page)
    assert match, "the composer has no submission token"
    return match.group(1)


def test_the_composer_carries_a_fresh_token_each_time(alice_client):
    assert form_token(alice_client) != form_token(alice_client)


def test_a_resubmitted_form_posts_once(alice_client, alice, bob, repo, r):
    repo.graph.follow(bob.id, alice.id)
    token = form_token(alice_client)

    first = alice_client.post("/post/", {"status": "only once", "token": token})
    again = alice_client.post("/post/", {"status": "only once", "token": token})

    assert first.status_code == again.status_code == 302
    assert r.llen(keys.own_posts(alice.id)) == 1
    assert r.llen(keys.home_feed(bob.id)) == 1
    assert r.get(keys.next_post_id()) == "2"  # the retry's id is spent, nothing written
    assert r.hgetall(keys.post(1))["body"] == "only once"


def test_a_retry_of_a_submission_still_on_its_way_keeps_the_text(alice_client, alice, r):
    token = form_token(alice_client)
    r.set(keys.post_token(alice.id, token), 77)  # claimed, the post not written (yet)

    response = alice_client.post("/post/", {"status": "patience", "token": token})

    assert response.status_code == 409
    page = response.content.decode()
    assert "still being saved" in page and "patience" in page
    assert r.llen(keys.own_posts(alice.id)) == 0
    assert form_token(alice_client) != token  # the page offers a fresh submission


@pytest.mark.parametrize("token", ["short", "x" * 65, "bad token with spaces!!"])
def test_a_malformed_token_is_refused_with_a_message(alice_client, alice, r, token):
    response = alice_client.post("/post/", {"status": "hello", "token": token})

    assert response.status_code == 400
    assert "out of date" in response.content.decode()
    assert "hello" in response.content.decode()
    assert r.llen(keys.own_posts(alice.id)) == 0


def test_posting_without_a_token_still_works(alice_client, alice, r):
    assert alice_client.post("/post/", {"status": "no token"}).status_code == 302
    assert r.llen(keys.own_posts(alice.id)) == 1
