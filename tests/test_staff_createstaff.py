"""`manage.py createstaff`: create a staff account, promote an existing one, or demote."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.hashers import check_password
from django.core.management import CommandError, call_command

from social.management.commands import createstaff

GOOD = "a long and quiet passphrase"


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("createstaff", *args, stdout=out)
    return out.getvalue()


class Terminal:
    """Stands in for a terminal: isatty() and the answers getpass will give."""

    def __init__(self, monkeypatch, *answers: str) -> None:
        self.answers = list(answers)
        monkeypatch.setattr(createstaff.sys, "stdin", self)
        monkeypatch.setattr(createstaff.getpass, "getpass", self.getpass)

    def isatty(self) -> bool:
        return True

    def getpass(self, prompt: str = "") -> str:
        return self.answers.pop(0)


def test_it_creates_a_staff_account_with_a_password_from_the_environment(repo, r, monkeypatch):
    monkeypatch.setenv("MOD_PASSWORD", GOOD)

    out = run("moddy", "--password-from-env", "MOD_PASSWORD")

    assert "Created user moddy" in out and "moddy is now staff." in out
    user_id = r.hget("users", "moddy")
    assert r.hget(f"user:{user_id}", "staff") == "1"
    assert check_password(GOOD, r.hget(f"user:{user_id}", "password"))
    assert r.zscore("staff_users", "moddy") is not None
    ((_, entry),) = r.xrange("audit")
    assert (entry["actor"], entry["actor_name"], entry["action"]) == (
        "0",
        "manage.py",
        "grant_staff",
    )


def test_it_asks_for_the_password_twice_on_a_terminal(repo, r, monkeypatch):
    Terminal(monkeypatch, GOOD, GOOD)

    run("moddy")

    user_id = r.hget("users", "moddy")
    assert check_password(GOOD, r.hget(f"user:{user_id}", "password"))


def test_it_refuses_two_different_passwords(repo, r, monkeypatch):
    Terminal(monkeypatch, GOOD, GOOD + "!")
    with pytest.raises(CommandError, match="do not match"):
        run("moddy")
    assert r.hget("users", "moddy") is None


@pytest.mark.parametrize("weak", ["short", "12345678901", "password123", "moddy1234"])
def test_it_refuses_a_password_the_validators_refuse(repo, r, monkeypatch, weak):
    monkeypatch.setenv("MOD_PASSWORD", weak)
    with pytest.raises(CommandError, match="Password refused"):
        run("moddy", "--password-from-env", "MOD_PASSWORD")
    assert r.hget("users", "moddy") is None


def test_it_refuses_an_empty_environment_variable(repo, r):
    with pytest.raises(CommandError, match="MOD_UNSET"):
        run("moddy", "--password-from-env", "MOD_UNSET")


def test_it_will_not_hang_waiting_for_a_password_without_a_terminal(repo, r, monkeypatch):
    monkeypatch.setattr(createstaff.sys, "stdin", io.StringIO(""))
    with pytest.raises(CommandError, match="--password-from-env"):
        run("moddy")


def test_it_refuses_a_bad_username(repo, r, monkeypatch):
    monkeypatch.setenv("MOD_PASSWORD", GOOD)
    with pytest.raises(CommandError, match="Invalid username"):
        run("bad name!", "--password-from-env", "MOD_PASSWORD")


def test_it_promotes_an_existing_user_without_touching_the_password(repo, r, alice):
    before = r.hget(f"user:{alice.id}", "password")

    out = run("ALICE")

    assert "alice is now staff." in out
    assert r.hget(f"user:{alice.id}", "staff") == "1"
    assert r.hget(f"user:{alice.id}", "password") == before
    assert "was already staff" in run("alice")
    assert r.xlen("audit") == 1


def test_revoke_demotes_and_logs_it(repo, r, alice):
    run("alice")

    out = run("alice", "--revoke", "--reason", "left the team")

    assert "alice is no longer staff." in out
    assert r.hget(f"user:{alice.id}", "staff") is None
    assert r.zscore("staff_users", "alice") is None
    ((_, entry),) = r.xrevrange("audit", count=1)
    assert (entry["action"], entry["reason"]) == ("revoke_staff", "left the team")


def test_revoke_of_an_unknown_user_fails(repo):
    with pytest.raises(CommandError, match="No user called"):
        run("ghost", "--revoke")


def test_a_suspended_user_cannot_be_promoted(repo, alice, sam):
    repo.moderation.suspend(alice.id, sam, "spam")
    with pytest.raises(CommandError, match="Unsuspend"):
        run("alice")


def test_the_new_account_can_log_in_and_open_the_staff_pages(repo, monkeypatch, client):
    monkeypatch.setenv("MOD_PASSWORD", GOOD)
    run("moddy", "--password-from-env", "MOD_PASSWORD")

    response = client.post("/login/", {"username": "moddy", "password": GOOD, "next": "/staff/"})

    assert response["Location"] == "/staff/"
    assert client.get("/staff/").status_code == 200
