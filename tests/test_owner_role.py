"""The owner role: only owners grant and revoke staff, and staff are safe from other staff.

Before it, any staff member could revoke another's staff and then suspend them, and only a
command line undid it. Owners are made by `manage.py createstaff --owner` (the audit log
records it as done by "manage.py"); the staff pages hide what a non-owner may not do and
refuse it with a message when posted anyway.
"""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from social.repository import NotAllowed, Repository, User
from social.repository.moderation.actions import OWNER_ONLY, SYSTEM_ACTOR
from tests.conftest import login, make_staff, make_user
from tests.test_staff_actions import messages_of

T0 = 1_700_000_000


def make_owner(repo: Repository, name: str = "owen") -> User:
    """Return an owner, made the way `manage.py createstaff --owner` makes one."""
    user = make_staff(repo, name, at=T0)
    repo.moderation.grant_owner(user.id, SYSTEM_ACTOR, at=T0)
    return user


def entries(r) -> list[dict]:
    """Return the audit entries' fields, oldest first."""
    return [fields for _, fields in r.xrange("audit")]


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("createstaff", *args, stdout=out)
    return out.getvalue()


# --- the repository ------------------------------------------------------------------------


@pytest.fixture
def crew(any_repo):
    """owen (owner), sam and olga (staff), alice."""
    owen = make_owner(any_repo)
    sam, olga = make_staff(any_repo, "sam", at=T0), make_staff(any_repo, "olga", at=T0)
    return owen, sam, olga, make_user(any_repo, "alice", at=T0)


def test_the_command_line_makes_an_owner_and_logs_it(any_repo, any_r, crew):
    owen, _, _, _ = crew

    assert any_r.zrange("staff_owners", 0, -1, withscores=True) == [(str(owen.id), T0)]
    assert any_repo.moderation.is_owner(owen.id) is True
    entry = entries(any_r)[1]  # after owen's grant_staff
    assert (entry["actor"], entry["actor_name"], entry["action"], entry["user"]) == (
        "0", "manage.py", "grant_owner", str(owen.id),
    )  # fmt: skip
    assert any_r.zcard("audit:action:grant_owner") == 1
    assert any_r.zcard(f"audit:target:{owen.id}") == 2


def test_making_an_owner_again_is_a_no_op(any_repo, any_r, crew):
    owen, _, _, _ = crew
    length = any_r.xlen("audit")

    assert any_repo.moderation.grant_owner(owen.id, SYSTEM_ACTOR) is False

    assert any_r.xlen("audit") == length


def test_only_the_command_line_makes_owners(any_repo, any_r, crew):
    owen, sam, _, _ = crew
    length = any_r.xlen("audit")

    with pytest.raises(NotAllowed, match="createstaff --owner"):
        any_repo.moderation.grant_owner(sam.id, owen)

    assert any_repo.moderation.is_owner(sam.id) is False
    assert any_r.xlen("audit") == length


def test_an_owner_must_be_staff(any_repo, any_r, crew):
    _, _, _, alice = crew

    with pytest.raises(NotAllowed, match="staff first"):
        any_repo.moderation.grant_owner(alice.id, SYSTEM_ACTOR)

    assert any_r.zscore("staff_owners", alice.id) is None


@pytest.mark.parametrize("method", ["grant_staff", "revoke_staff"])
def test_staff_who_are_not_owners_cannot_grant_or_revoke_staff(any_repo, any_r, crew, method):
    _, sam, olga, alice = crew
    target = olga if method == "revoke_staff" else alice
    before = any_r.hget(f"user:{target.id}", "staff")
    length = any_r.xlen("audit")

    with pytest.raises(NotAllowed) as refused:
        getattr(any_repo.moderation, method)(target.id, sam, "power grab")

    assert str(refused.value) == OWNER_ONLY
    assert any_r.hget(f"user:{target.id}", "staff") == before
    assert any_r.zcard("staff_users") == 3
    assert any_r.xlen("audit") == length


def test_an_owner_grants_and_revokes_staff(any_repo, any_r, crew):
    owen, _, olga, alice = crew

    assert any_repo.moderation.grant_staff(alice.id, owen, "new mod") is True
    assert any_repo.moderation.revoke_staff(olga.id, owen, "left") is True

    assert any_r.hget(f"user:{alice.id}", "staff") == "1"
    assert any_r.hget(f"user:{olga.id}", "staff") is None
    assert [(e["actor"], e["action"]) for e in entries(any_r)[-2:]] == [
        (str(owen.id), "grant_staff"),
        (str(owen.id), "revoke_staff"),
    ]


def test_staff_cannot_suspend_other_staff(any_repo, any_r, crew):
    _, sam, olga, _ = crew

    with pytest.raises(NotAllowed, match="Only an owner"):
        any_repo.moderation.suspend(olga.id, sam, "power grab")

    assert any_r.hget(f"user:{olga.id}", "status") is None
    assert any_r.zcard("suspended_users") == 0


def test_an_owner_suspends_staff_after_revoking_staff(any_repo, any_r, crew):
    owen, _, olga, _ = crew
    with pytest.raises(NotAllowed, match="Revoke staff"):
        any_repo.moderation.suspend(olga.id, owen, "abuse")

    any_repo.moderation.revoke_staff(olga.id, owen, "abuse")
    assert any_repo.moderation.suspend(olga.id, owen, "abuse") is True

    assert any_r.hget(f"user:{olga.id}", "status") == "suspended"


def test_an_owner_keeps_staff_against_another_owner(any_repo, any_r, crew):
    owen, _, _, _ = crew
    other = make_owner(any_repo, "otto")

    with pytest.raises(NotAllowed, match="createstaff"):
        any_repo.moderation.revoke_staff(other.id, owen, "coup")

    assert any_r.hget(f"user:{other.id}", "staff") == "1"
    assert any_r.zscore("staff_owners", other.id) is not None


def test_the_command_line_revokes_an_owners_staff_and_ownership_together(any_repo, any_r, crew):
    owen, _, _, _ = crew

    assert any_repo.moderation.revoke_staff(owen.id, SYSTEM_ACTOR, "handed over") is True

    assert any_r.hget(f"user:{owen.id}", "staff") is None
    assert any_r.zscore("staff_owners", owen.id) is None
    assert [e["action"] for e in entries(any_r)[-2:]] == ["revoke_owner", "revoke_staff"]


def test_the_account_file_says_who_owns(any_repo, crew):
    owen, sam, _, _ = crew

    as_sam = any_repo.staff_pages.account(owen.id, viewer_id=sam.id)
    as_owen = any_repo.staff_pages.account(sam.id, viewer_id=owen.id)

    assert (as_sam.is_owner, as_sam.viewer_is_owner) == (True, False)
    assert (as_owen.is_owner, as_owen.viewer_is_owner) == (False, True)


# --- the staff pages -----------------------------------------------------------------------


@pytest.fixture
def owen_client(repo) -> Client:
    return login(Client(), repo, make_owner(repo))


def test_a_non_owner_sees_no_staff_controls_and_why(sam_client, olga, alice):
    on_staff = sam_client.get("/staff/users/olga/").content.decode()
    on_user = sam_client.get("/staff/users/alice/").content.decode()

    assert "/revoke_staff/" not in on_staff and "/suspend/" not in on_staff
    assert "/grant_staff/" not in on_user
    assert OWNER_ONLY in on_staff and OWNER_ONLY in on_user
    assert "Only an owner can suspend a staff account" in on_staff
    assert 'action="/staff/users/alice/suspend/"' in on_user  # the rest is unchanged


@pytest.mark.parametrize("action", ["revoke_staff", "suspend"])
def test_a_non_owner_posting_against_staff_is_refused_with_a_message(r, sam_client, olga, action):
    response = sam_client.post(
        f"/staff/users/olga/{action}/", {f"{action}-reason": "power grab"}, follow=True
    )

    shown = messages_of(response)
    assert len(shown) == 1 and shown[0].startswith("Only an owner")
    assert r.hget(f"user:{olga.id}", "staff") == "1"
    assert r.hget(f"user:{olga.id}", "status") is None
    assert r.zcard(f"audit:action:{action}") == 0


def test_a_non_owner_posting_a_grant_is_refused(r, sam_client, alice):
    response = sam_client.post("/staff/users/alice/grant_staff/", {}, follow=True)

    assert messages_of(response) == [OWNER_ONLY]
    assert r.hget(f"user:{alice.id}", "staff") is None
    assert r.zscore("staff_users", "alice") is None


def test_an_owner_sees_the_controls_and_can_use_them(r, owen_client, olga, alice):
    page = owen_client.get("/staff/users/olga/").content.decode()
    response = owen_client.post("/staff/users/olga/revoke_staff/", {"revoke_staff-reason": "x"})

    assert 'action="/staff/users/olga/revoke_staff/"' in page
    assert OWNER_ONLY not in page
    assert response.status_code == 302
    assert r.hget(f"user:{olga.id}", "staff") is None
    ((_, entry),) = r.xrevrange("audit", count=1)
    assert (entry["actor_name"], entry["action"]) == ("owen", "revoke_staff")


def test_an_owners_page_shows_the_badge_and_no_revoke_button(repo, owen_client, sam_client):
    make_owner(repo, "otto")

    for client in (owen_client, sam_client):
        page = client.get("/staff/users/otto/").content.decode()
        assert '<span class="badge staff">owner</span>' in page
        assert "/revoke_staff/" not in page and "/suspend/" not in page
    assert "only <code>manage.py createstaff</code> changes owners" in page


def test_the_log_shows_owner_grants(owen_client):
    page = owen_client.get("/staff/log/?action=grant_owner").content.decode()

    assert "Made owner" in page
    assert re.search(r'<option value="grant_owner"[^>]*>Made owner</option>', page)


# --- manage.py createstaff --owner ---------------------------------------------------------


def test_createstaff_owner_makes_an_existing_user_staff_and_owner(repo, r, alice):
    out = run("alice", "--owner", "--reason", "founder")

    assert "alice is now staff." in out and "alice is now an owner." in out
    assert r.hget(f"user:{alice.id}", "staff") == "1"
    assert r.zscore("staff_owners", alice.id) is not None
    assert [(e["action"], e["reason"]) for e in entries(r)] == [
        ("grant_staff", "founder"),
        ("grant_owner", "founder"),
    ]
    assert "alice was already an owner." in run("alice", "--owner")


def test_createstaff_revoke_owner_keeps_staff(repo, r, alice):
    run("alice", "--owner")

    out = run("alice", "--owner", "--revoke")

    assert "alice is no longer an owner." in out
    assert r.zscore("staff_owners", alice.id) is None
    assert r.hget(f"user:{alice.id}", "staff") == "1"
    assert entries(r)[-1]["action"] == "revoke_owner"


def test_createstaff_revoke_takes_staff_and_ownership(repo, r, alice):
    run("alice", "--owner")

    out = run("alice", "--revoke")

    assert "alice is no longer staff." in out
    assert r.zscore("staff_owners", alice.id) is None
    assert r.hget(f"user:{alice.id}", "staff") is None


def test_createstaff_revoke_owner_of_someone_who_is_not_one(repo, r, sam):
    assert "sam was not an owner." in run("sam", "--owner", "--revoke")
    assert r.hget(f"user:{sam.id}", "staff") == "1"


def test_createstaff_owner_refuses_a_suspended_user(repo, r, alice):
    repo.moderation.suspend(alice.id, SYSTEM_ACTOR, "spam")

    with pytest.raises(CommandError, match="Unsuspend"):
        run("alice", "--owner")

    assert r.zcard("staff_owners") == 0
