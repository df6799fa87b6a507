"""Make someone staff (creating the account if needed), or take staff away.

There is no SQL database and so no `createsuperuser`: this is how the first moderator gets
in. The password is asked for interactively (twice), or read from an environment variable
for scripts, checked by Django's password validators and stored as a Django hash through the
same repository code as sign-up. The change is written to the audit log as done by
"manage.py".
"""

from __future__ import annotations

import getpass
import os
import sys

from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from social.forms import RegisterForm, UsernameField
from social.repository import NotAllowed, Repository, UsernameTaken, get_repository
from social.repository.moderation import SYSTEM_ACTOR


class Command(BaseCommand):
    help = (
        "Make USERNAME staff, creating the account when it does not exist (asks for a "
        "password, or reads it from --password-from-env VAR); --revoke takes staff away."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--password-from-env",
            metavar="VAR",
            help="Read the new account's password from environment variable VAR.",
        )
        parser.add_argument("--revoke", action="store_true", help="Take staff away instead.")
        parser.add_argument(
            "--reason", default="", help="Reason written to the audit log (optional)."
        )

    def handle(self, *args, username: str, revoke: bool, **options) -> None:
        repo = get_repository()
        reason = (options["reason"] or "")[:500]
        user = repo.users.get_user_by_name(username)
        if revoke:
            if user is None:
                raise CommandError(f"No user called {username!r}.")
            if repo.moderation.revoke_staff(user.id, SYSTEM_ACTOR, reason):
                self.stdout.write(self.style.SUCCESS(f"{user.username} is no longer staff."))
            else:
                self.stdout.write(f"{user.username} was not staff.")
            return
        if user is None:
            user = self.create(repo, username, options["password_from_env"])
        try:
            changed = repo.moderation.grant_staff(user.id, SYSTEM_ACTOR, reason)
        except NotAllowed as error:
            raise CommandError(str(error)) from None
        if changed:
            self.stdout.write(self.style.SUCCESS(f"{user.username} is now staff."))
        else:
            self.stdout.write(f"{user.username} was already staff.")

    def create(self, repo: Repository, username: str, env_var: str | None):
        """Create the account with a validated password, or raise CommandError."""
        try:
            UsernameField().clean(username)  # the sign-up form's rules, exactly
        except ValidationError as error:
            raise CommandError(
                f"Invalid username {username!r}: " + " ".join(error.messages)
            ) from None
        password = self.password(username, env_var)
        try:
            user = repo.users.create_user(username, make_password(password))
        except UsernameTaken:
            raise CommandError(f"The username {username!r} was just taken.") from None
        self.stdout.write(f"Created user {user.username} (id {user.id}).")
        return user

    def password(self, username: str, env_var: str | None) -> str:
        """Return the new account's password from env_var or the terminal, validated."""
        if env_var:
            password = os.environ.get(env_var, "")
            if not password:
                raise CommandError(f"Environment variable {env_var} is empty or not set.")
        elif not sys.stdin.isatty():
            raise CommandError(
                f"No user called {username!r}. To create it, run this in a terminal or pass "
                "--password-from-env VAR."
            )
        else:
            password = getpass.getpass(f"Password for new user {username}: ")
            if password != getpass.getpass("Password (again): "):
                raise CommandError("The two passwords do not match.")
        # The sign-up form's own checks (Django's password validators, similarity included).
        form = RegisterForm({"username": username, "password": password, "password2": password})
        if not form.is_valid():
            errors = [e for field in ("username", "password") for e in form.errors.get(field, [])]
            raise CommandError("Password refused: " + " ".join(errors))
        return password
