"""The dashboard's follows total moves with the graph: new edges only, both ways."""

from django.contrib.auth.hashers import make_password


def test_a_new_follow_counts_once_and_an_unfollow_takes_it_back(any_repo, any_r):
    a = any_repo.users.create_user("ann", make_password("x"))
    b = any_repo.users.create_user("ben", make_password("x"))
    assert any_repo.graph.follow(a.id, b.id) is True
    assert any_r.get("stats:follows") == "1"
    assert any_repo.graph.follow(a.id, b.id) is False
    assert any_r.get("stats:follows") == "1"
    assert any_repo.graph.unfollow(a.id, b.id) is True
    assert any_r.get("stats:follows") == "0"
    assert any_repo.graph.unfollow(a.id, b.id) is False
    assert any_r.get("stats:follows") == "0"


def test_bulk_follows_count_only_the_edges_they_add(any_repo, any_r):
    users = [any_repo.users.create_user(f"user{i}", make_password("x")) for i in range(4)]
    ids = [u.id for u in users]
    any_repo.graph.follow(ids[0], ids[1])
    added = any_repo.bulk.add_follows_bulk(
        [(ids[0], ids[1], 1), (ids[2], ids[1], 1), (ids[3], ids[1], 1), (ids[3], ids[3], 1)]
    )
    assert added == 2
    assert any_r.get("stats:follows") == "3"
    assert any_r.zcard(f"followers:{ids[1]}") == 3


def test_repair_recounts_follows_and_indexes_reference_written_usernames(repo, r):
    from django.core.management import call_command

    # Written the way the PHP Retwis writes accounts and follows: no users_lower, no counter.
    for user_id, name in ((1, "Carol"), (2, "dave")):
        r.hset(
            f"user:{user_id}", mapping={"username": name, "password": "pw", "auth": f"s{user_id}"}
        )
        r.hset("users", name, user_id)
    r.set("next_user_id", 2)
    r.zadd("following:1", {"2": 100})
    r.zadd("followers:2", {"1": 100})
    call_command("repair", "--dry-run")
    assert r.exists("stats:follows", "users_lower") == 0
    call_command("repair", "--grace", "0")
    assert r.get("stats:follows") == "1"
    assert r.hgetall("users_lower") == {"carol": "1", "dave": "2"}
    assert r.zrange("users_lex", 0, -1) == ["carol", "dave"]
    assert repo.users.get_user_by_name("CAROL").id == 1
