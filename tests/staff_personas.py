"""Staff personas for the tests/test_staff_*.py files: created through the repository."""

from __future__ import annotations

from django.test import Client

from social.repository import Repository, User
from social.repository.moderation import SYSTEM_ACTOR
from tests.conftest import login, make_user


def make_staff(repo: Repository, name: str = "sam") -> User:
    """Create a user and make them staff, as `manage.py createstaff` does."""
    user = make_user(repo, name)
    repo.grant_staff(user.id, SYSTEM_ACTOR)
    return repo.get_user(user.id)  # type: ignore[return-value]


def staff_client_for(repo: Repository, user: User) -> Client:
    """Return a client logged in as user."""
    return login(Client(), repo, user)
