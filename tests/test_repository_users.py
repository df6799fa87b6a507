"""Repository contract for accounts, on real Redis and on fakeredis (`any_repo`)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from social import keys
from social.repository import Repository, UsernameTaken
from social.repository.accounts.users import LEGACY_RECHECK
from tests.conftest import raw_client

T0 = 1_700_000_000  # 2023-11-14 22:13:20 UTC
DAY = datetime.fromtimestamp(T0, tz=UTC).date()


def test_it_writes_the_reference_layout_for_a_new_user(any_repo, any_r):
    user = any_repo.users.create_user("Alice", "pbkdf2$hash", at=T0)

    assert user.id == 1 and user.username == "Alice" and user.signup_time == T0
    assert any_r.get("next_user_id") == "1"
    stored = any_r.hgetall("user:1")
    assert stored["username"] == "Alice"
    assert stored["password"] == "pbkdf2$hash"
    assert len(stored["auth"]) == 40 and int(stored["auth"], 16) >= 0
    assert stored["signup"] == str(T0)
    assert any_r.hgetall("users") == {"Alice": "1"}
    assert any_r.hgetall("auths") == {stored["auth"]: "1"}
    assert any_r.zrange("users_by_time", 0, -1, withscores=True) == [("Alice", T0)]
    assert any_r.hgetall("users_lower") == {"alice": "1"}
    assert any_r.zrange("users_lex", 0, -1, withscores=True) == [("alice", 0)]


def test_it_counts_the_signup_under_a_key_that_expires(any_repo, any_r):
    any_repo.users.create_user("alice", "h", at=T0)

    key = keys.daily_counter("signups", DAY)
    assert any_r.get(key) == "1"
    assert 0 < any_r.ttl(key) <= keys.STATS_TTL_DAYS * 86400


def test_it_gives_each_user_a_different_secret(any_repo, any_r):
    any_repo.users.create_user("alice", "h")
    any_repo.users.create_user("bob", "h")

    assert any_r.hget("user:1", "auth") != any_r.hget("user:2", "auth")
    assert any_r.hlen("auths") == 2


@pytest.mark.parametrize("taken", ["alice", "ALICE", "aLiCe"])
def test_it_refuses_a_username_taken_in_any_case(any_repo, any_r, taken):
    any_repo.users.create_user("Alice", "h")

    with pytest.raises(UsernameTaken):
        any_repo.users.create_user(taken, "h")

    assert any_r.hgetall("users") == {"Alice": "1"}
    assert any_r.hgetall("users_lower") == {"alice": "1"}
    assert any_r.zcard("users_by_time") == 1
    assert not any_r.exists("user:2")


@pytest.mark.parametrize("typed", ["bob", "Bob", "BOB"])
def test_it_refuses_a_name_a_reference_retwis_account_has(any_repo, any_r, typed):
    # The PHP Retwis writes `users` but knows nothing of `users_lower`.
    any_r.hset("user:1", mapping={"username": "bob", "password": "secret", "auth": "a" * 40})
    any_r.hset("users", "bob", 1)
    any_r.set("next_user_id", 1)

    with pytest.raises(UsernameTaken):
        any_repo.users.create_user(typed, "h")

    assert any_r.hgetall("users") == {"bob": "1"}
    assert any_r.hget("users_lower", "bob") == "1"  # claimed for it on first sight
    assert any_repo.users.user_id_for_name("bob") == 1


def test_it_gives_one_account_to_simultaneous_signups_with_one_name(redis_url, r):
    # Real Redis only: the atomic claim is what is under test, across connections.
    contenders = 16
    names = [("Racer", "racer", "RACER", "rAcEr")[i % 4] for i in range(contenders)]
    start = threading.Barrier(contenders)
    outcomes: list[str] = []

    def sign_up(name: str) -> None:
        repo = Repository(raw_client(redis_url))
        start.wait()
        try:
            repo.users.create_user(name, "h")
            outcomes.append("created")
        except UsernameTaken:
            outcomes.append("taken")
        finally:
            repo.r.close()

    threads = [threading.Thread(target=sign_up, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert sorted(outcomes) == ["created"] + ["taken"] * (contenders - 1)
    assert r.hlen("users") == 1
    assert r.hlen("users_lower") == 1
    assert r.hlen("auths") == 1
    assert r.zcard("users_by_time") == 1
    assert len(list(r.scan_iter("user:*"))) == 1
    (winner_id,) = r.hvals("users")
    assert r.hget("users_lower", "racer") == winner_id


@pytest.mark.parametrize("typed", ["alice", "ALICE", "Alice"])
def test_it_finds_a_user_by_name_ignoring_case(any_repo, typed):
    any_repo.users.create_user("Alice", "h", at=T0)

    user = any_repo.users.get_user_by_name(typed)

    assert user is not None and user.id == 1 and user.username == "Alice"
    assert user.signup_time == T0 and not user.is_staff and not user.is_suspended


@pytest.mark.parametrize("typed", ["nobody", "", "x" * 65])
def test_it_finds_no_user_for_an_unknown_name(any_repo, typed):
    any_repo.users.create_user("alice", "h")

    assert any_repo.users.get_user_by_name(typed) is None
    assert any_repo.users.user_id_for_name(typed) is None


def test_it_returns_none_for_an_unknown_id(any_repo):
    assert any_repo.users.get_user(99) is None


def test_it_returns_the_stored_password_field_as_credentials(any_repo):
    any_repo.users.create_user("alice", "md5$salt$hash")

    creds = any_repo.users.get_credentials("ALICE")

    assert creds is not None and creds.user.id == 1 and creds.password == "md5$salt$hash"
    assert any_repo.users.get_credentials("bob") is None


def test_it_replaces_the_password_hash(any_repo, any_r):
    any_repo.users.create_user("alice", "old")

    any_repo.users.set_password_hash(1, "new")

    assert any_r.hget("user:1", "password") == "new"


def test_it_resolves_the_current_secret_to_its_user(any_repo, any_r):
    any_repo.users.create_user("alice", "h")
    secret = any_r.hget("user:1", "auth")

    user = any_repo.users.user_for_secret(secret)

    assert user is not None and user.id == 1 and user.username == "alice"


def test_it_rejects_a_stale_auths_entry(any_repo, any_r):
    any_repo.users.create_user("alice", "h")
    any_r.hset("auths", "f" * 40, 1)  # points at alice, but user:1.auth says otherwise

    assert any_repo.users.user_for_secret("f" * 40) is None
    assert any_r.hget("auths", "f" * 40) == "1"  # reading never writes


def test_it_rejects_an_auths_entry_pointing_at_no_user(any_repo, any_r):
    any_r.hset("auths", "e" * 40, 5)

    assert any_repo.users.user_for_secret("e" * 40) is None


@pytest.mark.parametrize("secret", ["", "not-a-secret", "a" * 129])
def test_it_rejects_an_unknown_or_oversized_secret(any_repo, secret):
    any_repo.users.create_user("alice", "h")

    assert any_repo.users.user_for_secret(secret) is None


def test_it_rejects_the_secret_of_a_suspended_user(any_repo, any_r):
    any_repo.users.create_user("alice", "h")
    any_r.hset("user:1", "status", "suspended")

    assert any_repo.users.user_for_secret(any_r.hget("user:1", "auth")) is None


def test_it_rotates_the_secret_and_forgets_the_old_one(any_repo, any_r):
    any_repo.users.create_user("alice", "h")
    old = any_r.hget("user:1", "auth")

    new = any_repo.users.rotate_secret(1)

    assert new != old and len(new) == 40
    assert any_r.hget("user:1", "auth") == new
    assert any_r.hgetall("auths") == {new: "1"}
    assert any_repo.users.user_for_secret(old) is None
    assert any_repo.users.user_for_secret(new).id == 1


def test_it_notes_a_login_and_returns_the_current_secret(any_repo, any_r):
    any_repo.users.create_user("alice", "h", at=T0)

    secret = any_repo.users.record_login(1, "10.0.0.7", at=T0 + 60)

    assert secret == any_r.hget("user:1", "auth")
    assert any_r.hget("user:1", "last_login") == str(T0 + 60)
    assert any_r.hget("user:1", "last_login_ip") == "10.0.0.7"
    counter = keys.daily_counter("logins", DAY)
    assert any_r.get(counter) == "1" and any_r.ttl(counter) > 0
    active = keys.daily_active(DAY)
    assert any_r.pfcount(active) == 1 and any_r.ttl(active) > 0


def test_it_gives_a_secret_to_an_account_written_without_one(any_repo, any_r):
    any_r.hset("user:1", mapping={"username": "old", "password": "x"})
    any_r.hset("users", "old", 1)

    secret = any_repo.users.record_login(1)

    assert secret and any_r.hget("user:1", "auth") == secret
    assert any_r.hget("auths", secret) == "1"


def test_it_lists_the_newest_signups_first_without_suspended_ones(any_repo, any_r):
    for i, name in enumerate(["ann", "ben", "cat", "dan"]):
        any_repo.users.create_user(name, "h", at=T0 + i)
    any_r.zadd("suspended_users", {"cat": T0})

    assert any_repo.pages.timeline(latest_users=2).latest_users == ("dan", "ben")
    assert any_repo.pages.timeline(latest_users=10).latest_users == ("dan", "ben", "ann")


def test_it_refuses_the_lower_cased_twin_of_a_mixed_case_reference_account(any_repo, any_r):
    any_r.hset("user:1", mapping={"username": "Bob", "password": "secret", "auth": "a" * 40})
    any_r.hset("users", "Bob", 1)
    any_r.set("next_user_id", 1)

    with pytest.raises(UsernameTaken):  # sign-up claims the names written since it looked
        any_repo.users.create_user("bob", "h")

    assert any_r.hget("users_lower", "bob") == "1"
    assert any_r.zscore("users_lex", "bob") == 0
    assert any_r.get("users_lower_checked") == "1"
    assert any_repo.users.user_id_for_name("Bob") == any_repo.users.user_id_for_name("bob") == 1
    assert any_r.hgetall("users") == {"Bob": "1"}


def test_a_lookup_claims_a_legacy_name_it_finds_unclaimed(any_repo, any_r):
    any_r.hset("user:7", mapping={"username": "LegacyBob", "password": "secret"})
    any_r.hset("users", "LegacyBob", 7)

    assert any_repo.users.user_ids_for_names(["LegacyBob", "legacybob"]) == [7, None]

    assert any_r.hgetall("users_lower") == {"legacybob": "7"}
    assert any_r.zrange("users_lex", 0, -1) == ["legacybob"]
    assert any_repo.users.user_id_for_name("legacybob") == 7


def test_a_lookup_leaves_the_claim_of_a_legacy_case_twin_alone(any_repo, any_r):
    # The reference allowed both "Bob" and "bob"; whichever was claimed first keeps it.
    for user_id, name in [(1, "bob"), (2, "Bob")]:
        any_r.hset(f"user:{user_id}", mapping={"username": name, "password": "secret"})
        any_r.hset("users", name, user_id)
    any_r.hset("users_lower", "bob", 1)

    assert any_repo.users.user_ids_for_names(["Bob", "bob"]) == [2, 1]

    assert any_r.hgetall("users_lower") == {"bob": "1"}


def test_claiming_legacy_names_looks_at_new_ids_and_the_last_few_again(any_repo, any_r):
    assert 40 <= 100 - LEGACY_RECHECK < 60  # 40 is below the re-checked ids, 60 among them
    any_r.set("next_user_id", 200)
    any_r.set("users_lower_checked", 100)
    for user_id, name in [(40, "Old"), (60, "InFlight"), (150, "NewOne")]:
        any_r.hset(f"user:{user_id}", mapping={"username": name, "password": "secret"})

    assert any_repo.users.claim_legacy_names() == 2
    assert any_repo.users.claim_legacy_names() == 0  # nothing new: no claim written twice

    assert any_r.hgetall("users_lower") == {"inflight": "60", "newone": "150"}
    assert any_r.get("users_lower_checked") == "200"
