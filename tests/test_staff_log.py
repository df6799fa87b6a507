"""The audit log page: newest first, paged, filtered by staff member, action and target."""

from __future__ import annotations

import pytest

from tests.conftest import make_user


@pytest.fixture
def log(repo, alice, bob, sam, olga, sam_client):
    """sam and olga act on alice and bob; returns sam's client."""
    repo.moderation.add_note(alice.id, sam, "note-one")
    repo.moderation.suspend(bob.id, sam, "note-two")
    repo.moderation.add_note(bob.id, olga, "note-three")
    return sam_client


def shown(response) -> list[str]:
    html = response.content.decode()
    found = [(html.find(f"note-{n}"), f"note-{n}") for n in ("one", "two", "three")]
    return [name for pos, name in sorted(found) if pos >= 0]


def test_the_log_lists_every_action_newest_first(log):
    response = log.get("/staff/log/")
    assert response.status_code == 200
    assert shown(response) == ["note-three", "note-two", "note-one"]
    entries = response.content.decode().split('<ol class="audit">')[1]  # past the filter
    assert "Granted staff" in entries and "by manage.py" in entries


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("actor=sam", ["note-two", "note-one"]),
        ("actor=OLGA", ["note-three"]),
        ("action=add_note", ["note-three", "note-one"]),
        ("target=bob", ["note-three", "note-two"]),
        ("actor=sam&target=bob", ["note-two"]),
        ("actor=sam&action=add_note&target=alice", ["note-one"]),
        ("action=revoke_staff", []),
    ],
)
def test_the_log_filters(log, query, expected):
    assert shown(log.get(f"/staff/log/?{query}")) == expected


@pytest.mark.parametrize("query", ["actor=nobody", "target=no_such", "action=explode"])
def test_a_bad_filter_says_so_and_lists_nothing(log, query):
    response = log.get(f"/staff/log/?{query}")
    assert response.status_code == 200
    assert b'class="error"' in response.content
    assert shown(response) == []


def test_the_unfiltered_log_pages_with_an_older_link(repo, log, alice, sam):
    for i in range(55):
        repo.moderation.add_note(alice.id, sam, f"bulk {i:02d}")

    first = log.get("/staff/log/").content.decode()
    assert "bulk 54" in first and "bulk 05" in first and "bulk 04" not in first
    older = first.split('rel="next"')[0].rsplit('href="', 1)[1].split('"')[0]
    assert older.startswith("?before=")

    second = log.get("/staff/log/" + older.replace("&amp;", "&")).content.decode()
    assert "bulk 04" in second and "bulk 05" not in second and "note-one" in second
    assert "Newest" in second


def test_a_filtered_log_pages_by_number(repo, log, alice, sam):
    for i in range(55):
        repo.moderation.add_note(alice.id, sam, f"bulk {i:02d}")

    second = log.get("/staff/log/?target=alice&page=2").content.decode()
    assert "bulk 03" in second and "note-one" in second and "bulk 05" not in second
    assert "Newer" in second


def test_a_users_history_shows_on_their_account_page(log):
    html = log.get("/staff/users/bob/").content.decode()
    assert "note-three" in html and "note-two" in html and "note-one" not in html


def test_names_in_the_log_are_escaped(repo, log, sam):
    make_user(repo, "x_script")
    target = repo.users.get_user_by_name("x_script")
    repo.moderation.add_note(target.id, sam, "<script>alert(1)</script>")
    html = log.get("/staff/log/").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_legacy_name_filters_the_legacy_account_not_a_newer_one_that_differs_in_case(
    repo, log, r, sam
):
    newer = make_user(repo, "carol")
    # The reference Retwis wrote "Carol" afterwards: both accounts exist, told apart by case.
    legacy_id = int(r.incr("next_user_id"))
    r.hset("users", "Carol", legacy_id)
    r.hset(f"user:{legacy_id}", mapping={"username": "Carol", "password": "x", "auth": "s"})
    repo.moderation.add_note(legacy_id, sam, "note-for-legacy")
    repo.moderation.add_note(newer.id, sam, "note-for-newer")

    exact = log.get("/staff/log/?target=Carol").content.decode()
    lower = log.get("/staff/log/?target=carol").content.decode()

    assert "note-for-legacy" in exact and "note-for-newer" not in exact
    assert "note-for-newer" in lower and "note-for-legacy" not in lower
    assert repo.users.user_ids_for_names(["Carol", "carol", "CAROL", "", "x" * 65]) == [
        legacy_id,
        newer.id,
        newer.id,
        None,
        None,
    ]
    assert [repo.users.user_id_for_name(n) for n in ("Carol", "carol")] == [legacy_id, newer.id]
