"""Search (issue 17, part 6): people by name (exact first, then prefix, then contains;
legacy names; suspended, deleted and blocked accounts absent) and tags by prefix."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.test import Client

from social import keys
from social.repository import ANONYMOUS, Viewer
from social.repository.read.search import KINDS
from tests.conftest import CLUSTER, login, make_staff, make_user

T0 = 1_700_000_000


@pytest.fixture
def world(repo, r):
    names = ["redis", "redisfan", "superredis", "ann", "bob"]
    users = {n: make_user(repo, n) for n in names}
    legacy = r.incr("next_user_id")  # written by the reference Retwis: `users` only
    r.hset("users", "RedisLegacy", legacy)
    r.hset(f"user:{legacy}", mapping={"username": "RedisLegacy", "password": "x"})
    repo.posts.create_post(users["ann"].id, "hello #redis and #redistribution", at=T0)
    repo.posts.create_post(users["ann"].id, "#rediscover", at=T0 + 1)
    return users


def names(results) -> list[str]:
    return [p.user.username for p in results.people]


def test_the_exact_name_comes_first_then_prefix_then_contains(repo, world):
    found = repo.search.search("redis", ANONYMOUS)

    assert names(found)[0] == "redis"
    assert set(names(found)) == {"redis", "redisfan", "superredis", "RedisLegacy"}
    assert names(found).index("redisfan") < names(found).index("superredis")
    assert [t.tag for t in found.tags] == ["redis", "rediscover", "redistribution"]
    assert {t.tag: t.posts for t in found.tags}["redis"] == 1


def test_a_legacy_mixed_case_name_is_found_as_typed(repo, world):
    assert names(repo.search.search("@RedisLegacy", ANONYMOUS)) == ["RedisLegacy"]


def test_at_and_hash_narrow_the_search(repo, world):
    assert repo.search.search("@redis", ANONYMOUS).tags == []
    assert repo.search.search("#redis", ANONYMOUS).people == []


def test_suspended_deleted_and_blocked_accounts_are_not_found(repo, world):
    sam = make_staff(repo, "sam")
    repo.moderation.suspend(world["redisfan"].id, sam, "spam")
    repo.accounts.delete_account(world["superredis"])
    repo.relations.block(world["redis"].id, world["ann"].id)

    assert "redisfan" not in names(repo.search.search("redis", ANONYMOUS))
    assert "superredis" not in names(repo.search.search("redis", ANONYMOUS))
    ann = Viewer.of(repo.users.get_user(world["ann"].id))
    assert "redis" not in names(repo.search.search("redis", ann))


def test_the_page_shows_follow_buttons_and_counts(repo, r, world):
    client = login(Client(), repo, world["bob"])

    html = client.get("/search/", {"q": "ann"}).content.decode()

    assert 'action="/u/ann/follow/"' in html and "2 posts" in html
    client.post("/u/ann/follow/", {"next": "/search/?q=ann"})
    assert r.zscore(keys.following(world["bob"].id), world["ann"].id) is not None
    assert 'action="/u/ann/unfollow/"' in client.get("/search/", {"q": "ann"}).content.decode()


@pytest.mark.parametrize("query", ["", "   ", "@", "#", "x" * 500, "a/b", "<script>", "%00"])
def test_odd_queries_answer_a_page_not_an_error(client, world, query):
    response = client.get("/search/", {"q": query})

    assert response.status_code == 200
    assert "<script>" not in response.content.decode().split("</header>")[1]


def test_the_work_per_query_is_bounded_whatever_the_data(repo, world, round_trips):
    for i in range(60):
        make_user(repo, f"redis{i:02d}")
    round_trips.reset()

    found = repo.search.search("redis", ANONYMOUS)
    first = round_trips.count  # the staff's name index catches up on the new accounts
    round_trips.reset()
    repo.search.search("redis", ANONYMOUS)

    assert len(found.people) == 20
    # On a cluster a pipeline costs a round trip per node it reaches (at most 3 here).
    nodes = 3 if CLUSTER else 1
    assert first <= 16 * nodes and round_trips.count <= 8 * nodes  # steady state


# --- The navigation's box and the length limit (issue 27, rough edge 9) -----------------


def nav_box(html: str) -> str:
    found = re.search(r'<input id="nav-search"[^>]*>', html.split("</header>")[0])
    assert found, "no search box in the navigation"
    return found.group(0)


def test_the_navigation_box_keeps_the_query_on_the_results_page(repo, r, world, client):
    reader = login(Client(), repo, world["bob"])

    for who in (client, reader):
        html = who.get("/search/", {"q": "ann"}).content.decode()
        assert 'value="ann"' in nav_box(html)
        assert "@ann" in html.split("<main")[1]  # and the results
    assert "value=" not in nav_box(reader.get("/timeline/").content.decode())
    odd = client.get("/search/", {"q": '"><b>x'}).content.decode()
    assert 'value="&#34;&gt;&lt;b&gt;x"' in nav_box(odd) and "<b>x" not in odd


def test_a_query_over_the_limit_is_refused_with_a_message_and_kept(repo, r, world, client):
    typed = "redis " * 50  # 300 characters
    keys_before = r.dbsize()

    response = client.get("/search/", {"q": typed})

    html = response.content.decode()
    main = html.split("<main")[1]
    assert response.status_code == 200
    assert "A search is at most 50 characters; this one has 299." in main
    assert f'value="{typed}"' in nav_box(html)  # what was typed, all of it
    assert re.search(rf'<input id="search-q"[^>]*value="{typed}"', main)
    assert "@redis" not in main and "#redis" not in main  # not searched cut short
    assert r.dbsize() == keys_before


def test_a_query_at_the_limit_is_searched(repo, world, client):
    html = client.get("/search/", {"q": "r" * 50}).content.decode()

    assert "at most 50 characters" not in html and "No one by that name." in html


# --- People by their display names (issue 37, part 4) -----------------------------------


@pytest.fixture
def named(repo):
    """Accounts whose display names are nothing like their usernames."""
    given = {
        "kbowman": "Kathleen Bowman",
        "zoe_ob": "Zoë O'Brien",
        "wxm": "王小明",
        "kishore": "किशोर कुमार",
        "kathy99": "",
        "bowmanfan": "Fan of Bowman",
    }
    users = {name: make_user(repo, name) for name in given}
    for name, display in given.items():
        if display:
            repo.profiles.update(users[name].id, display_name=display)
    return users


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("Kathleen", {"kbowman"}),
        ("kath", {"kbowman", "kathy99"}),  # a display name's word, and a username's start
        ("KATHLEEN bow", {"kbowman"}),
        ("bowman", {"kbowman", "bowmanfan"}),
        ("zoe", {"zoe_ob"}),
        ("ZOË o'brien", {"zoe_ob"}),
        ("Ｂｒｉｅｎ", {"zoe_ob"}),
        ("小明", {"wxm"}),
        ("王", {"wxm"}),
        ("किशोर", {"kishore"}),
        ("kathleen smith", set()),
        ("athleen", set()),
    ],
)
def test_people_are_found_by_the_start_of_any_word_of_their_display_name(repo, named, query, found):
    assert set(names(repo.search.search(query, ANONYMOUS))) == found


def test_the_display_name_index_holds_each_word_and_follows_every_change(repo, r, named):
    sam = make_staff(repo, "sam")
    kb = named["kbowman"].id

    fan = named["bowmanfan"].id
    assert set(r.zrangebylex(keys.name_words(), "[bowman", "[bowman\xff")) == {
        f"bowman {kb}",
        f"bowman {fan}",
    }
    assert r.hget(keys.name_words_of(), str(kb)) == "kathleen bowman"
    repo.profiles.update(kb, display_name="Kate Brown")
    assert r.hget(keys.name_words_of(), str(kb)) == "kate brown"
    assert f"kathleen {kb}" not in r.zrange(keys.name_words(), 0, -1)
    assert names(repo.search.search("Kathleen", ANONYMOUS)) == []
    assert names(repo.search.search("kate", ANONYMOUS)) == ["kbowman"]

    repo.moderation.remove_display_name(kb, sam, "impersonation")
    assert r.hget(keys.name_words_of(), str(kb)) is None
    assert not [m for m in r.zrange(keys.name_words(), 0, -1) if m.endswith(f" {kb}")]

    repo.profiles.update(named["zoe_ob"].id, display_name="")
    assert names(repo.search.search("brien", ANONYMOUS)) == []


def test_a_deleted_account_leaves_the_display_name_index(repo, r, named):
    repo.accounts.delete_account(named["kbowman"])

    assert r.hget(keys.name_words_of(), str(named["kbowman"].id)) is None
    assert names(repo.search.search("bowman", ANONYMOUS)) == ["bowmanfan"]


def test_suspended_and_blocked_accounts_are_not_found_by_display_name(repo, named):
    sam = make_staff(repo, "sam")
    repo.moderation.suspend(named["kbowman"].id, sam, "spam")
    repo.relations.block(named["bowmanfan"].id, named["zoe_ob"].id)
    zoe = Viewer.of(repo.users.get_user(named["zoe_ob"].id))

    assert names(repo.search.search("bowman", ANONYMOUS)) == ["bowmanfan"]
    assert names(repo.search.search("bowman", zoe)) == []


def test_seeded_profiles_are_indexed_as_they_are_written(repo, r):
    ann = make_user(repo, "ann")

    repo.bulk.set_profiles_bulk([(ann.id, "Annabel Lee", "a poem")])

    assert r.hget(keys.name_words_of(), str(ann.id)) == "annabel lee"
    assert names(repo.search.search("annabel", ANONYMOUS)) == ["ann"]


def test_repair_indexes_display_names_written_before_the_index(repo, r, named):
    old = make_user(repo, "oldtimer")
    r.hset(keys.user(old.id), "display_name", "Édith Piaf")  # as a backup restores it
    r.hset(keys.user(named["kbowman"].id), "status", "deleted")  # deleted, not unindexed
    from django.core.management import call_command

    call_command("repair", dry_run=True, grace=0, stdout=(out := StringIO()))
    assert "2 display name(s) to index" in out.getvalue()
    assert r.hget(keys.name_words_of(), str(old.id)) is None  # a dry run changes nothing

    call_command("repair", grace=0, stdout=(out := StringIO()))

    assert "indexed 2 display name(s)" in out.getvalue()
    assert r.hget(keys.name_words_of(), str(old.id)) == "edith piaf"
    assert r.hget(keys.name_words_of(), str(named["kbowman"].id)) is None
    assert names(repo.search.search("edith", ANONYMOUS)) == ["oldtimer"]
    assert repo.repair.index_display_names() == 0  # a second run finds nothing to do


def test_a_name_search_looks_at_a_bounded_range_of_the_rarest_term(repo, monkeypatch):
    """One command whatever the number of accounts: the rarest term's range is scanned,
    at most SCAN_CAP members of it, the other terms checked against each account's words."""
    ids = [make_user(repo, f"user{i:04d}").id for i in range(60)]
    repo.bulk.set_profiles_bulk([(i, f"Common Name{n}", "") for n, i in enumerate(ids)])
    monkeypatch.setattr("social.repository.accounts.name_words.SCAN_CAP", 10)

    assert len(names(repo.search.search("common", ANONYMOUS))) == 10  # cut at the cap
    assert names(repo.search.search("common name45", ANONYMOUS)) == ["user0045"]
    assert names(repo.search.search("name45 common", ANONYMOUS)) == ["user0045"]
    assert names(repo.search.search("common nobody", ANONYMOUS)) == []


# --- The reader's posts by their text -------------------------------------------------


@pytest.fixture
def posts(repo):
    """alice's search sees: bob's post she likes, charlie's she reposts, bob's she answers,
    charlie's that mentions her, her own; not dave's, whom she has nothing to do with."""
    alice, bob, charlie, dave = (make_user(repo, n) for n in ("alice", "bob", "charlie", "dave"))
    made = {
        "liked": repo.posts.create_post(bob.id, "Redis Streams are great", at=T0),
        "reposted": repo.posts.create_post(charlie.id, "streams of consciousness", at=T0 + 1),
        "answered": repo.posts.create_post(bob.id, "Valkey forks STREAMS", at=T0 + 2),
    }
    made["reply"] = repo.posts.create_post(alice.id, "agreed", reply_to=made["answered"])
    made["mention"] = repo.posts.create_post(charlie.id, "@alice stream meetup?", at=T0 + 4)
    made["own"] = repo.posts.create_post(alice.id, "my own stréam notes", at=T0 + 5)
    made["stranger"] = repo.posts.create_post(dave.id, "streams everywhere", at=T0 + 6)
    repo.likes.like(alice.id, made["liked"])
    repo.reposts.repost(alice.id, made["reposted"])
    return {"alice": alice, "bob": bob, "charlie": charlie, "dave": dave}, made


def texts(results) -> list[int]:
    return [post.id for post in results.posts.items]


def reader(repo, user) -> Viewer:
    return Viewer.of(repo.users.get_user(user.id))


def test_a_reader_finds_the_posts_they_wrote_liked_reposted_answered_or_were_mentioned_in(
    repo, posts
):
    users, made = posts

    found = repo.search.search("stream", reader(repo, users["alice"]), kinds=KINDS)

    wanted = ["own", "mention", "answered", "reposted", "liked"]
    assert texts(found) == [made[k] for k in wanted]  # newest first; not dave's
    assert found.posts.counts[made["liked"]].liked
    assert texts(
        repo.search.search("redis streams", reader(repo, users["alice"]), kinds=KINDS)
    ) == [made["liked"]]
    assert texts(repo.search.search("stream", reader(repo, users["dave"]), kinds=KINDS)) == [
        made["stranger"]
    ]
    assert texts(repo.search.search("stream", ANONYMOUS, kinds=KINDS)) == []


def test_posts_found_go_through_the_read_paths_policy(repo, posts):
    users, made = posts
    alice = users["alice"]
    sam = make_staff(repo, "sam")
    repo.relations.block(alice.id, users["charlie"].id)  # reposted and mention out
    repo.moderation.suspend(users["bob"].id, sam, "spam")  # liked and answered out

    assert texts(repo.search.search("stream", reader(repo, alice), kinds=KINDS)) == [made["own"]]
    repo.posts.delete_own_post(alice.id, made["own"])
    assert texts(repo.search.search("stream", reader(repo, alice), kinds=KINDS)) == []


def test_an_undone_like_leaves_the_search_at_once(repo, posts):
    users, made = posts
    repo.likes.unlike(users["alice"].id, made["liked"])

    found = texts(repo.search.search("redis", reader(repo, users["alice"]), kinds=KINDS))

    assert found == []


def test_a_post_search_costs_the_same_round_trips_whatever_the_data(repo, posts, round_trips):
    """Cold (nothing remembered), more posts than LIST_SCAN in each list change nothing."""
    from social.repository import PROCESS_CACHE
    from social.repository.read.post_search import LIST_SCAN

    users, made = posts
    alice = reader(repo, users["alice"])

    def cost() -> int:
        PROCESS_CACHE.clear()  # cold: nothing remembered
        round_trips.reset()
        repo.search.search("stream", alice, kinds=KINDS)
        return round_trips.count

    repo.search.search("stream", alice, kinds=KINDS)  # the name indexes caught up
    small = cost()
    for i in range(LIST_SCAN + 20):
        liked = repo.posts.create_post(users["bob"].id, f"stream number {i}")
        repo.likes.like(alice.id, liked)
        answered = repo.posts.create_post(users["charlie"].id, f"stream question {i}")
        repo.posts.create_post(alice.id, f"my stream answer {i}", reply_to=answered)
    large = cost()
    found = repo.search.search("stream", alice, kinds=KINDS)

    nodes = 3 if CLUSTER else 1
    assert small == large if not CLUSTER else large <= 6 * nodes
    # the first pipeline (names, display names, tags, the four lists), the staff's
    # "contains" index, the texts, the texts answered, the posts (with the visibility
    # version and counts), their authors; on a cluster once per node reached, at most.
    assert small == 6 if not CLUSTER else small <= 6 * nodes
    assert len(found.posts.items) == 20 and texts(found) == sorted(texts(found), reverse=True)


# --- Bad input, the page and the API ------------------------------------------------------


@pytest.mark.parametrize("query", ["!!!", "@", "#", "\ud800", "\x01\x02", "%%%", "…"])
def test_a_query_with_nothing_to_search_does_no_post_work(repo, posts, query, round_trips):
    users, _ = posts

    found = repo.search.search(query, reader(repo, users["alice"]), kinds=KINDS)

    assert not found.words and not found.posts_searched and found.posts.items == []
    assert found.people == [] and found.tags == []


def test_the_page_shows_the_readers_posts_and_says_why_nothing_was_searched(repo, posts):
    users, made = posts
    client = login(Client(), repo, users["alice"])

    html = client.get("/search/", {"q": "streams"}).content.decode()
    main = html.split("<main")[1]
    assert "Your posts" in main and "Redis Streams are great" in main
    assert "streams everywhere" not in main  # dave's

    odd = client.get("/search/", {"q": "!!!"}).content.decode()
    assert odd.count("Nothing to search for") == 1
    anonymous = Client().get("/search/", {"q": "streams"}).content.decode()
    assert "Log in to search the text" in anonymous and "Redis Streams" not in anonymous
    refused = client.get("/search/", {"q": "a\x00b"})
    assert refused.status_code == 200 and "Null characters are not allowed" in (
        refused.content.decode()
    )


def test_the_api_searches_statuses_and_narrows_and_pages_each_kind(repo, posts, named):
    from tests.api import Api, token_for

    users, made = posts
    api = Api(token_for(repo, users["alice"]))

    found = api.get("/api/v2/search", {"q": "stream"}).json()
    assert [s["id"] for s in found["statuses"]] == [
        str(made[k]) for k in ("own", "mention", "answered", "reposted", "liked")
    ]
    assert found["statuses"][4]["favourited"] is True
    page = api.get("/api/v2/search", {"q": "stream", "type": "statuses", "limit": 2, "offset": 1})
    assert [s["id"] for s in page.json()["statuses"]] == [
        str(made["mention"]),
        str(made["answered"]),
    ]
    assert page.json()["accounts"] == [] and page.json()["hashtags"] == []
    people = api.get("/api/v2/search", {"q": "Kathleen", "type": "accounts"}).json()
    assert [a["username"] for a in people["accounts"]] == ["kbowman"] and people["statuses"] == []
    assert api.get("/api/v2/search", {"q": "stream", "type": "bogus"}).json() == {
        "accounts": [], "statuses": [], "hashtags": []
    }  # fmt: skip
    far = api.get("/api/v2/search", {"q": "stream", "offset": "9" * 19}).json()
    assert far == {"accounts": [], "statuses": [], "hashtags": []}
    assert api.get("/api/v2/search", {"q": "stream", "offset": "x"}).status_code == 400
    assert Api(None).get("/api/v2/search", {"q": "stream"}).json()["statuses"] == []
    assert api.get("/api/v2/search", {"q": "x" * 501}).status_code == 422


def test_it_pins_the_display_name_keys():
    assert keys.name_words() == "{names}:words"
    assert keys.name_words_of() == "{names}:words_of"
