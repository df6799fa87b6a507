"""The write path in steps (docs/architecture.md, "The write path"): resolve, write,
distribute, each callable on its own, as an incoming post from another server will call
the last two with what its own handler resolved. Each test calls the steps directly,
with an author the steps were handed (standing for a remote account) and data resolved
by the test, and asserts the resulting Redis state: the post hash, the author's lists,
the followers' home feeds, the timeline, the conversation and the notifications."""

from __future__ import annotations

import pytest

from social import keys
from social.repository import Repository, get_repository
from social.repository.errors import PostNotFound, Refused
from social.repository.live.notification_events import entry_of
from social.repository.models import User
from social.repository.posts.fanout import Delivery, Reach, new_post_id, queue_new_post_id
from social.repository.posts.posting import ResolvedPost
from social.repository.targets import Target
from social.text import encode_mentions
from tests.conftest import make_user
from tests.test_round_trips import pin

T0 = 1_700_000_000


@pytest.fixture
def small_batches(settings, repo) -> Repository:
    """The repository with fan-out batches of two followers (three followers: two batches)."""
    settings.RETWIS_FANOUT_BATCH = 2
    return get_repository()


def new_id(repo: Repository, author: User) -> tuple[int, Reach]:
    """Take a new post id and its reach, as an inbox handler's own resolve step would."""
    pipe = repo.r.pipeline(transaction=False)
    queue_new_post_id(pipe, author.id)
    return new_post_id(pipe.execute(), repo.posts.fanout_read_threshold)


def ids(r, key: str) -> list[int]:
    return [int(i) for i in r.lrange(key, 0, -1)]


def followed_by(repo: Repository, author: User, *names: str) -> list[User]:
    fans = [make_user(repo, name, at=T0) for name in names]
    for fan in fans:
        repo.graph.follow(fan.id, author.id, at=T0)
    return fans


def test_a_post_resolved_elsewhere_is_written_and_distributed_by_the_steps(
    small_batches, r, round_trips
):
    repo = small_batches
    author = make_user(repo, "faraway", at=T0)
    ann, ben, cat = followed_by(repo, author, "ann", "ben", "cat")
    post_id, reach = new_id(repo, author)
    post = ResolvedPost(
        post_id, author, "hello @ann #redis", T0 + 5, reach,
        fields={"mentions": encode_mentions({"ann": ann.id}), "tags": "redis"},
        told={"ann": ann.id},
    )  # fmt: skip

    round_trips.reset()
    delivery = repo.posts.write_post(post)
    repo.fanouts.deliver(delivery)

    # the write (reading the first batch), then one a batch (on the cluster, each node)
    assert round_trips.count == pin(3, 8)
    assert reach == Reach(followers=3, copied=True)
    assert delivery == Delivery(post_id, author.id, 3, (ann.id, ben.id))
    assert r.hgetall(keys.post(post_id)) == {
        "user_id": str(author.id), "time": str(T0 + 5), "body": "hello @ann #redis",
        "mentions": encode_mentions({"ann": ann.id}), "tags": "redis",
    }  # fmt: skip
    assert ids(r, keys.own_posts(author.id)) == [post_id]
    assert ids(r, keys.home_feed(author.id)) == [post_id]
    for fan in (ann, ben, cat):
        assert ids(r, keys.home_feed(fan.id)) == [post_id]
    assert ids(r, keys.timeline()) == [post_id]
    assert ids(r, keys.tag_posts("redis")) == [post_id]
    assert r.zscore(keys.mentions(ann.id), post_id) == T0 + 5
    assert r.lrange(keys.notifications(ann.id), 0, -1) == [
        entry_of("mention", author.id, post_id, T0 + 5)
    ]
    assert r.hget(keys.user(ann.id), "unread_notifications") == "1"
    assert r.llen(keys.notifications(ben.id)) == 0
    assert r.zcard(keys.fanouts_in_progress()) == 0
    assert [p.author_name for p in repo.pages.timeline().posts.items] == ["faraway"]


def test_the_write_step_alone_leaves_the_copies_on_record_for_the_distribute_step(small_batches, r):
    repo = small_batches
    author = make_user(repo, "faraway", at=T0)
    ann, ben, cat = followed_by(repo, author, "ann", "ben", "cat")
    post_id, reach = new_id(repo, author)

    delivery = repo.posts.write_post(ResolvedPost(post_id, author, "soon", T0 + 5, reach))

    assert r.zscore(keys.fanouts_in_progress(), post_id) == T0 + 5  # repair would finish it
    assert ids(r, keys.own_posts(author.id)) == ids(r, keys.timeline()) == [post_id]
    assert [ids(r, keys.home_feed(f.id)) for f in (ann, ben, cat)] == [[], [], []]

    repo.fanouts.deliver(delivery)

    assert [ids(r, keys.home_feed(f.id)) for f in (ann, ben, cat)] == [[post_id]] * 3
    assert r.zcard(keys.fanouts_in_progress()) == 0


def test_a_reply_written_by_the_steps_joins_its_conversation_and_tells_the_parent_author(repo, r):
    parent_author, author = make_user(repo, "alice", at=T0), make_user(repo, "faraway", at=T0)
    parent = repo.posts.create_post(parent_author.id, "a question", at=T0)
    post_id, reach = new_id(repo, author)
    reply = {
        "reply_to": str(parent), "reply_to_user": str(parent_author.id),
        "reply_to_name": "alice", "ancestors": str(parent),
    }  # fmt: skip

    post = ResolvedPost(post_id, author, "an answer", T0 + 5, reach, fields=reply)
    repo.fanouts.deliver(repo.posts.write_post(post))

    assert post.reply_to == parent and post.parent_author == parent_author.id
    assert ids(r, keys.replies(parent)) == [post_id]
    assert r.hget(keys.post(parent), "replies") == "1"
    assert r.hget(keys.post(post_id), "reply_to_name") == "alice"
    assert r.lrange(keys.notifications(parent_author.id), 0, -1) == [
        entry_of("reply", author.id, post_id, T0 + 5)
    ]


def test_resolving_a_post_settles_its_id_mentions_and_reply_and_writes_none_of_it(repo, r):
    alice, bob, charlie = (make_user(repo, n, at=T0) for n in ("alice", "bob", "charlie"))
    parent = repo.posts.create_post(alice.id, "a question", at=T0)
    repo.relations.block(charlie.id, bob.id)  # charlie is not told of bob's mentions
    before = r.get(keys.next_post_id())

    post = repo.posts.resolve_post(
        bob, "@alice @charlie @nobody see #Redis", at=T0 + 5, reply_to=parent
    )

    assert post.id == int(before) + 1
    assert (post.author, post.ts, post.reach) == (bob, T0 + 5, Reach(followers=0))
    assert post.reply_to == parent and post.parent_author == alice.id
    assert dict(post.told) == {"alice": alice.id}
    assert post.tags == ("redis",)
    assert post.fields["mentions"] == encode_mentions({"alice": alice.id, "charlie": charlie.id})
    assert not r.exists(keys.post(post.id))
    assert r.llen(keys.own_posts(bob.id)) == 0
    assert r.llen(keys.notifications(alice.id)) == 0
    assert r.llen(keys.replies(parent)) == 0


def test_resolving_refuses_a_reply_across_a_block_before_anything_is_written(repo, r):
    alice, bob = make_user(repo, "alice", at=T0), make_user(repo, "bob", at=T0)
    parent = repo.posts.create_post(alice.id, "a question", at=T0)
    repo.relations.block(alice.id, bob.id)

    with pytest.raises(Refused):
        repo.posts.resolve_post(bob, "an answer", reply_to=parent)
    with pytest.raises(PostNotFound):
        repo.posts.resolve_post(bob, "an answer", reply_to=parent + 100)

    assert r.llen(keys.own_posts(bob.id)) == 0 and r.llen(keys.replies(parent)) == 0


def test_an_author_past_the_threshold_is_promoted_by_the_write_and_copied_to_no_one(
    settings, repo, r
):
    settings.RETWIS_FANOUT_READ_THRESHOLD = 2
    repo = get_repository()
    author = make_user(repo, "faraway", at=T0)
    ann, ben = followed_by(repo, author, "ann", "ben")
    post_id, reach = new_id(repo, author)

    delivery = repo.posts.write_post(ResolvedPost(post_id, author, "to many", T0 + 5, reach))
    repo.fanouts.deliver(delivery)

    assert reach == Reach(followers=2, copied=False, promote=True)
    assert delivery == Delivery(post_id, author.id)
    assert r.zscore(keys.celebrities(), author.id) == T0 + 5
    assert ids(r, keys.home_feed(ann.id)) == ids(r, keys.home_feed(ben.id)) == []
    assert r.zcard(keys.fanouts_in_progress()) == 0
    assert [p.id for p in repo.pages.home(ann.id).feed.items] == [post_id]  # merged in


def test_a_repost_by_the_steps_reaches_only_feeds_without_the_post(small_batches, r):
    repo = small_batches
    alice, bob = make_user(repo, "alice", at=T0), make_user(repo, "faraway", at=T0)
    post = repo.posts.create_post(alice.id, "worth sharing", at=T0)
    fan_of_both, fan_of_bob, other = followed_by(repo, bob, "dora", "ed", "fay")
    repo.graph.follow(fan_of_both.id, alice.id, at=T0)

    repost = repo.reposts.resolve_repost(bob, post, at=T0 + 5)
    assert not isinstance(repost, int)
    delivery = repo.reposts.write_repost(repost)
    assert delivery is not None
    repo.fanouts.deliver(delivery)

    assert (repost.original, repost.author_id, repost.skip_if_following) == (
        post, alice.id, (alice.id,)
    )  # fmt: skip
    assert r.hget(keys.post(repost.id), "repost_of") == str(post)
    assert ids(r, keys.own_posts(bob.id)) == ids(r, keys.home_feed(bob.id)) == [repost.id]
    assert ids(r, keys.home_feed(fan_of_both.id)) == [post]  # had it: no second copy
    assert ids(r, keys.home_feed(fan_of_bob.id)) == ids(r, keys.home_feed(other.id)) == [repost.id]
    assert r.hget(keys.post(post), "reposts") == "1"
    assert r.lindex(keys.notifications(alice.id), 0) == entry_of("repost", bob.id, post, T0 + 5)
    assert r.zcard(keys.fanouts_in_progress()) == 0
    # Again: resolving finds the repost, and a second write of the same loses the claim.
    assert repo.reposts.resolve_repost(bob, post) == repost.id
    assert repo.reposts.write_repost(repost) is None
    assert r.hget(keys.post(post), "reposts") == "1" and r.llen(keys.notifications(alice.id)) == 2


def test_a_like_written_for_a_resolved_target_is_counted_and_told_once(repo, r):
    alice, liker = make_user(repo, "alice", at=T0), make_user(repo, "faraway", at=T0)
    post = repo.posts.create_post(alice.id, "like me", at=T0)

    assert repo.likes.write_like(liker, Target(post, alice.id), at=T0 + 5) is True
    assert repo.likes.write_like(liker, Target(post, alice.id), at=T0 + 6) is False

    assert repo.likes.resolve_like(liker, post) == Target(post, alice.id)
    assert r.zscore(keys.likes(post), liker.id) == T0 + 5
    assert r.zscore(keys.user_likes(liker.id), post) == T0 + 5
    assert r.hget(keys.post(post), "likes") == "1"
    assert r.lrange(keys.notifications(alice.id), 0, -1) == [
        entry_of("like", liker.id, post, T0 + 5)
    ]


def test_resolving_a_like_refuses_it_across_a_block(repo, r):
    alice, bob = make_user(repo, "alice", at=T0), make_user(repo, "bob", at=T0)
    post = repo.posts.create_post(alice.id, "like me", at=T0)
    repo.relations.block(alice.id, bob.id)

    with pytest.raises(Refused):
        repo.likes.resolve_like(bob, post)

    assert r.zcard(keys.likes(post)) == 0


def test_a_follow_written_by_the_steps_merges_the_followees_posts_and_tells_them_once(repo, r):
    alice, follower = make_user(repo, "alice", at=T0), make_user(repo, "faraway", at=T0)
    first = repo.posts.create_post(alice.id, "one", at=T0)
    second = repo.posts.create_post(alice.id, "two", at=T0 + 1)
    mine = repo.posts.create_post(follower.id, "mine", at=T0 + 2)

    repo.graph.resolve_follow(follower, alice.id)
    follow = repo.graph.write_follow(follower, alice.id, at=T0 + 5)
    assert follow is not None
    repo.graph.merge_followed(follow)

    assert follow.posts == (second, first)
    assert ids(r, keys.home_feed(follower.id)) == [mine, second, first]
    assert r.zscore(keys.followers(alice.id), follower.id) == T0 + 5
    assert r.lrange(keys.notifications(alice.id), 0, -1) == [
        entry_of("follow", follower.id, None, T0 + 5)
    ]
    assert repo.graph.write_follow(follower, alice.id, at=T0 + 6) is None  # a no-op
    assert r.llen(keys.notifications(alice.id)) == 1


def test_following_a_fan_out_on_read_author_merges_nothing_into_the_feed(settings, repo, r):
    settings.RETWIS_FANOUT_READ_THRESHOLD = 1
    repo = get_repository()
    alice, follower = make_user(repo, "alice", at=T0), make_user(repo, "faraway", at=T0)
    followed_by(repo, alice, "ann")
    post = repo.posts.create_post(alice.id, "to many", at=T0)  # alice is promoted

    follow = repo.graph.write_follow(follower, alice.id, at=T0 + 5)
    assert follow is not None and follow.posts is None
    repo.graph.merge_followed(follow)

    assert ids(r, keys.home_feed(follower.id)) == []
    assert [p.id for p in repo.pages.home(follower.id).feed.items] == [post]


def test_resolving_a_follow_refuses_it_across_a_block_before_anything_is_written(repo, r):
    alice, bob = make_user(repo, "alice", at=T0), make_user(repo, "bob", at=T0)
    repo.relations.block(bob.id, alice.id)

    with pytest.raises(Refused):
        repo.graph.resolve_follow(alice, bob.id)

    assert r.zcard(keys.following(alice.id)) == 0
