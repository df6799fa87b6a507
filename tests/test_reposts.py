"""Reposts (issue 17, part 5): a post shared with the reposter's followers, "reposted by
@name", shown once a feed, taken back by undo or by its original's hiding; what each action
leaves in Redis, and the pages that show it."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from social import keys
from social.repository import ANONYMOUS, NotAllowed, PostNotFound, Viewer
from tests.conftest import login, make_staff, make_user

T0 = 1_700_000_000


@pytest.fixture
def cast(repo):
    """alice writes; bob follows alice; carol follows bob only; dave follows bob and
    alice."""
    alice, bob, carol, dave = (make_user(repo, n) for n in ("alice", "bob", "carol", "dave"))
    repo.graph.follow(bob.id, alice.id, at=T0)
    repo.graph.follow(carol.id, bob.id, at=T0)
    repo.graph.follow(dave.id, bob.id, at=T0)
    repo.graph.follow(dave.id, alice.id, at=T0)
    post = repo.posts.create_post(alice.id, "a good thought #redis", at=T0 + 1)
    return alice, bob, carol, dave, post


def shown(items) -> list[tuple[int, str]]:
    """(the id of the post a card shows, who reposted it or "") for each item of a page."""
    return [(p.original.id, p.author_name) if p.original is not None else (p.id, "") for p in items]


def home(repo, user) -> list[tuple[int, str]]:
    return shown(repo.pages.home(user.id).feed.items)


def test_a_repost_is_a_post_of_its_own_in_the_reposters_lists_and_followers_feeds(repo, r, cast):
    alice, bob, carol, dave, post = cast

    repost_id, new = repo.reposts.repost(bob.id, post, at=T0 + 5)

    assert new and repost_id > post
    assert r.hgetall(keys.post(repost_id)) == {
        "user_id": str(bob.id),
        "time": str(T0 + 5),
        "body": "RT @alice",  # what the reference Retwis shows
        "repost_of": str(post),
    }
    assert r.lrange(keys.own_posts(bob.id), 0, -1) == [str(repost_id)]
    assert r.lrange(keys.home_feed(carol.id), 0, -1) == [str(repost_id)]
    # dave follows alice: her post is in his feed already, the repost is not copied there
    assert r.lrange(keys.home_feed(dave.id), 0, -1) == [str(post)]
    # bob follows alice too: his own feed keeps her post, not his repost of it
    assert r.lrange(keys.home_feed(bob.id), 0, -1) == [str(post)]
    assert str(repost_id) not in r.lrange(keys.timeline(), 0, -1)
    assert r.zscore(keys.reposts(post), bob.id) == repost_id
    assert r.zscore(keys.user_reposts(bob.id), post) == repost_id
    assert r.hget(keys.post(post), "reposts") == "1"
    told = r.lrange(keys.notifications(alice.id), 0, -1)
    assert told[0] == f"repost|{bob.id}|{post}|{T0 + 5}"
    assert r.zcard(keys.fanouts_in_progress()) == 0


def test_reposting_twice_is_a_no_op_and_a_repost_of_a_repost_shares_the_post(repo, r, cast):
    alice, bob, carol, dave, post = cast
    repost_id, _ = repo.reposts.repost(bob.id, post)

    assert repo.reposts.repost(bob.id, post) == (repost_id, False)
    second, new = repo.reposts.repost(carol.id, repost_id)  # carol reposts bob's repost

    assert new
    assert r.hget(keys.post(second), "repost_of") == str(post)
    assert r.hget(keys.post(post), "reposts") == "2"
    assert r.zrange(keys.reposts(post), 0, -1) == [str(bob.id), str(carol.id)]


def test_the_follower_sees_the_post_reposted_by_the_reposter_with_its_counts(repo, cast):
    alice, bob, carol, dave, post = cast
    repost_id, _ = repo.reposts.repost(bob.id, post)
    repo.likes.like(carol.id, post)

    page = repo.pages.home(carol.id).feed

    assert shown(page.items) == [(post, "bob")]
    assert page.items[0].id == repost_id and page.items[0].original.author_name == "alice"
    counts = page.counts[post]
    assert (counts.reposts, counts.likes, counts.liked, counts.reposted) == (1, 1, True, False)
    bobs = repo.pages.home(bob.id).feed  # bob's own feed: alice's post, his repost state
    assert bobs.counts[post].reposted


def test_a_post_shows_once_however_many_of_the_readers_followings_repost_it(repo, r, cast):
    alice, bob, carol, dave, post = cast
    erin = make_user(repo, "erin")
    repo.graph.follow(carol.id, erin.id)
    repo.reposts.repost(bob.id, post)

    repo.reposts.repost(erin.id, post)

    assert len(r.lrange(keys.home_feed(carol.id), 0, -1)) == 1  # erin's was not copied
    assert home(repo, carol) == [(post, "bob")]
    assert home(repo, dave) == [(post, "")]  # dave follows alice: her post, once


def test_the_reposters_profile_lists_the_repost_and_the_reposter_cannot_repost_their_own(
    repo, cast
):
    alice, bob, carol, dave, post = cast
    repo.reposts.repost(bob.id, post)

    profile = repo.pages.profile(bob.id, Viewer(carol.id))

    assert shown(profile.posts.items) == [(post, "bob")]
    with pytest.raises(NotAllowed):
        repo.reposts.repost(alice.id, post)


def test_undo_takes_the_repost_back_out_of_every_list(repo, r, cast):
    alice, bob, carol, dave, post = cast
    repost_id, _ = repo.reposts.repost(bob.id, post, at=T0 + 5)
    assert home(repo, carol) == [(post, "bob")]  # remembered by the process

    assert repo.reposts.unrepost(bob.id, post)
    assert not repo.reposts.unrepost(bob.id, post)  # idempotent

    assert not r.exists(keys.post(repost_id))
    assert r.lrange(keys.own_posts(bob.id), 0, -1) == []
    assert r.lrange(keys.home_feed(carol.id), 0, -1) == []
    assert r.zscore(keys.reposts(post), bob.id) is None
    assert r.zscore(keys.user_reposts(bob.id), post) is None
    assert r.hget(keys.post(post), "reposts") == "0"
    assert not [n for n in r.lrange(keys.notifications(alice.id), 0, -1) if "repost" in n]
    assert home(repo, carol) == []


def test_a_deleted_original_takes_its_reposts_with_it_even_for_staff(repo, cast):
    alice, bob, carol, dave, post = cast
    repo.reposts.repost(bob.id, post)
    assert home(repo, carol) == [(post, "bob")]

    repo.posts.delete_own_post(alice.id, post)

    assert home(repo, carol) == []
    sam = make_staff(repo)
    assert shown(repo.pages.profile(bob.id, Viewer(sam.id, is_staff=True)).posts.items) == []


def test_a_suspended_reposter_takes_their_reposts_away(repo, cast):
    alice, bob, carol, dave, post = cast
    repo.reposts.repost(bob.id, post)
    sam = make_staff(repo)

    repo.moderation.suspend(bob.id, sam, "spam")

    assert home(repo, carol) == []


def test_a_muted_reposter_or_author_leaves_the_readers_home(repo, cast):
    alice, bob, carol, dave, post = cast
    repo.reposts.repost(bob.id, post)

    repo.relations.mute(carol.id, alice.id)  # the author
    assert home(repo, carol) == []
    repo.relations.unmute(carol.id, alice.id)
    repo.relations.mute(carol.id, bob.id)  # the reposter (still followed: mute does not cut)
    assert home(repo, carol) == []
    repo.relations.unmute(carol.id, bob.id)
    assert home(repo, carol) == [(post, "bob")]


def test_a_filtered_word_in_the_shared_post_leaves_the_readers_home(repo, cast):
    alice, bob, carol, dave, post = cast
    repo.reposts.repost(bob.id, post)

    repo.filters.add(carol.id, "thought", "never")

    assert home(repo, carol) == []


def test_a_block_refuses_the_repost_and_stores_nothing(repo, r, cast):
    alice, bob, carol, dave, post = cast
    repo.relations.block(alice.id, carol.id)
    keys_before = r.dbsize()

    with pytest.raises(NotAllowed):
        repo.reposts.repost(carol.id, post)
    repo.relations.unblock(alice.id, carol.id)
    repo.relations.block(carol.id, alice.id)  # the reader blocks the author
    keys_before = r.dbsize()
    with pytest.raises(NotAllowed):
        repo.reposts.repost(carol.id, post)

    assert r.dbsize() == keys_before
    assert r.zcard(keys.reposts(post)) == 0


def test_a_blocked_reposter_is_kept_from_the_blocker(repo, cast):
    alice, bob, carol, dave, post = cast
    repo.reposts.repost(bob.id, post)

    repo.relations.block(carol.id, bob.id)

    assert home(repo, carol) == []


def test_missing_deleted_and_hidden_posts_cannot_be_reposted(repo, r, cast):
    alice, bob, carol, dave, post = cast
    with pytest.raises(PostNotFound):
        repo.reposts.repost(bob.id, 999)
    repo.posts.delete_own_post(alice.id, post)
    with pytest.raises(PostNotFound):
        repo.reposts.repost(bob.id, post)
    assert r.zcard(keys.user_reposts(bob.id)) == 0


def test_a_reposter_past_the_threshold_is_merged_into_followers_homes_when_read(repo, r, cast):
    alice, bob, carol, dave, post = cast
    repo.posts.queue_promotion  # noqa: B018 (exists: the same promotion as posts)
    big = repo.__class__(
        repo.r, home_feed_cap=1000, timeline_cap=1000, fanout_batch=1000,
        fanout_read_threshold=2, cache=repo.cache,
    )  # fmt: skip

    repost_id, _ = big.reposts.repost(bob.id, post)

    assert r.zscore(keys.celebrities(), bob.id) is not None
    assert str(repost_id) not in r.lrange(keys.home_feed(carol.id), 0, -1)  # not copied
    assert home(big, carol) == [(post, "bob")]  # merged in when read
    assert [p for p, _ in home(big, dave)] == [post]  # once: dave follows alice as well


def test_a_deleted_account_takes_back_its_reposts(repo, r, cast):
    alice, bob, carol, dave, post = cast
    repost_id, _ = repo.reposts.repost(bob.id, post)

    repo.accounts.delete_account(bob)

    assert r.hget(keys.post(post), "reposts") == "0"
    assert r.zcard(keys.reposts(post)) == 0
    assert not r.exists(keys.post(repost_id))
    assert r.zcard(keys.user_reposts(bob.id)) == 0


def test_the_author_is_notified_grouped_per_post(repo, cast):
    alice, bob, carol, dave, post = cast
    repo.reposts.repost(bob.id, post, at=T0 + 5)
    repo.reposts.repost(carol.id, post, at=T0 + 6)

    groups = repo.notifications.page(Viewer(alice.id), at=T0 + 10).items

    assert [(g.kind, [a.username for a in g.actors], g.post.id) for g in groups[:1]] == [
        ("repost", ["carol", "bob"], post)
    ]


def test_who_reposts_a_post_newest_first(repo, cast):
    alice, bob, carol, dave, post = cast
    repo.reposts.repost(bob.id, post)
    repo.reposts.repost(dave.id, post)

    page = repo.account_lists.reposted_by(post, ANONYMOUS)

    assert [e.user.username for e in page.items] == ["dave", "bob"] and page.total == 2


def test_repair_sets_the_reposts_counter_from_its_set(repo, r, cast):
    alice, bob, carol, dave, post = cast
    repo.reposts.repost(bob.id, post)
    r.hdel(keys.post(post), "reposts")

    wrong = repo.repair.wrong_counts()
    repo.repair.mend_counts(wrong)

    assert (post, 0, 0, 1) in wrong
    assert r.hget(keys.post(post), "reposts") == "1"


def test_repair_finishes_a_reposts_fan_out_without_putting_it_in_the_timeline(repo, r, cast):
    alice, bob, carol, dave, post = cast
    repost_id, _ = repo.reposts.repost(bob.id, post, at=T0 + 5)
    r.lrem(keys.home_feed(carol.id), 0, repost_id)  # as if the process died mid-way
    r.zadd(keys.fanouts_in_progress(), {repost_id: T0 + 5})

    repo.fanouts.finish_fanouts(older_than=0, at=T0 + 100)

    assert str(repost_id) in r.lrange(keys.home_feed(carol.id), 0, -1)
    assert str(repost_id) not in r.lrange(keys.timeline(), 0, -1)


def test_the_repost_contract_holds_on_fakeredis_too(any_repo, any_r):
    alice, bob = make_user(any_repo, "alice"), make_user(any_repo, "bob")
    any_repo.graph.follow(bob.id, alice.id)
    post = any_repo.posts.create_post(alice.id, "hello")

    repost_id, new = any_repo.reposts.repost(bob.id, post)
    assert new and any_r.hget(keys.post(post), "reposts") == "1"
    assert any_repo.reposts.unrepost(bob.id, post)
    assert not any_r.exists(keys.post(repost_id))
    assert any_r.hget(keys.post(post), "reposts") == "0"


# --- Pages ----------------------------------------------------------------------------------


def test_a_card_offers_repost_and_the_post_route_reposts(repo, r, cast):
    alice, bob, carol, dave, post = cast
    client = login(Client(), repo, bob)

    page = client.get("/timeline/").content.decode()
    assert f'formaction="/p/{post}/repost/"' in page
    response = client.post(f"/p/{post}/repost/", {"next": "/timeline/"})

    assert response.status_code == 302 and response["Location"] == f"/timeline/#post-{post}"
    assert r.zscore(keys.user_reposts(bob.id), post) is not None
    page = client.get("/timeline/").content.decode()
    assert f'formaction="/p/{post}/unrepost/"' in page and "Reposted" in page
    client.post(f"/p/{post}/unrepost/", {"next": "/timeline/"})
    assert r.zscore(keys.user_reposts(bob.id), post) is None


def test_the_followers_home_says_who_reposted_it(repo, cast):
    alice, bob, carol, dave, post = cast
    repo.reposts.repost(bob.id, post)

    page = login(Client(), repo, carol).get("/").content.decode()

    assert "reposted by" in page and 'href="/u/bob/">@bob</a>' in page
    assert "a good thought" in page


def test_reposting_ones_own_post_says_why_and_stores_nothing(repo, r, cast):
    alice, bob, carol, dave, post = cast
    client = login(Client(), repo, alice)

    response = client.post(f"/p/{post}/repost/", follow=True)

    assert "You cannot repost your own post." in response.content.decode()
    assert r.zcard(keys.reposts(post)) == 0


def test_reposting_a_missing_post_is_404_and_get_is_refused(repo, cast):
    alice, bob, carol, dave, post = cast
    client = login(Client(), repo, bob)

    assert client.post("/p/999/repost/").status_code == 404
    assert client.get(f"/p/{post}/repost/").status_code == 405


def test_a_visitor_is_sent_to_log_in(repo, r, cast):
    *_, post = cast
    response = Client().post(f"/p/{post}/repost/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert r.zcard(keys.reposts(post)) == 0


def test_a_reposts_permalink_leads_to_the_post_it_shares(repo, cast):
    alice, bob, carol, dave, post = cast
    repost_id, _ = repo.reposts.repost(bob.id, post)

    response = Client().get(f"/p/{repost_id}/")

    assert response.status_code == 302 and response["Location"] == f"/p/{post}/"


@override_settings(RETWIS_LIMIT_REPOSTS=(2, 3600))
def test_reposts_are_rate_limited(repo, r, cast):
    alice, bob, carol, dave, post = cast
    client = login(Client(), repo, bob)
    client.post(f"/p/{post}/repost/")
    client.post(f"/p/{post}/unrepost/")

    response = client.post(f"/p/{post}/repost/")

    assert response.status_code == 429
    assert r.zcard(keys.reposts(post)) == 0


def test_the_notifications_page_names_the_reposters(repo, cast):
    alice, bob, carol, dave, post = cast
    repo.reposts.repost(bob.id, post)

    page = login(Client(), repo, alice).get("/notifications/").content.decode()

    assert "reposted your post." in page and "@bob" in page


def test_the_reposters_feed_has_an_entry_for_the_repost(repo, cast):
    alice, bob, carol, dave, post = cast
    repost_id, _ = repo.reposts.repost(bob.id, post)

    feed = Client().get("/u/bob/feed/").content.decode()

    assert "<title>@bob RT @alice: a good thought #redis</title>" in feed
    assert f"http://testserver/p/{repost_id}/" in feed and "<name>alice</name>" in feed


def test_a_block_takes_back_each_ones_reposts_of_the_others_posts(repo, r, cast):
    alice, bob, carol, dave, post = cast
    bobs = repo.posts.create_post(bob.id, "bob's own", at=T0 + 2)
    repost_id, _ = repo.reposts.repost(bob.id, post)
    repo.reposts.repost(alice.id, bobs)
    assert home(repo, carol) == [(post, "bob"), (bobs, "")]

    repo.relations.block(alice.id, bob.id)

    assert not r.exists(keys.post(repost_id))
    assert r.zcard(keys.user_reposts(bob.id)) == 0 and r.zcard(keys.user_reposts(alice.id)) == 0
    assert r.hget(keys.post(post), "reposts") == "0" and r.hget(keys.post(bobs), "reposts") == "0"
    assert home(repo, carol) == [(bobs, "")]  # bob's followers no longer get alice's post
