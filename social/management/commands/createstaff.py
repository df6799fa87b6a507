"""Make someone staff (creating the account if needed), or take staff away.

There is no SQL database and so no `createsuperuser`: this is how the first moderator gets
in. The password is asked for interactively (twice), or read from an environment variable
for scripts, checked by Django's password validators and stored as a Django hash through the
same repository code as sign-up. The change is written to the audit log as done by
"manage.py".

`--owner` also makes them an owner: owners alone grant and revoke staff and suspend staff
accounts (after revoking staff), and no one can make or unmake an owner from the site, so a
staff member gone rogue cannot lock the others out. `--owner --revoke` takes only the owner
role away; `--revoke` takes staff (and the owner role with it).
"""

from __future__ import annotations

import getpass
import os
import sys

from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from social.account_forms import RegisterForm, UsernameField
from social.repository import NotAllowed, Repository, UsernameTaken, get_repository
from social.repository.moderation.actions import SYSTEM_ACTOR


class Command(BaseCommand):
    help = (
        "Make USERNAME staff, creating the account when it does not exist (asks for a "
        "password, or reads it from --password-from-env VAR); --owner also makes them an "
        "owner; --revoke takes staff away (with --owner: only the owner role)."
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
            "--owner",
            action="store_true",
            help="Also make them an owner (owners alone grant and revoke staff); with "
            "--revoke, take only the owner role away.",
        )
        parser.add_argument(
            "--reason", default="", help="Reason written to the audit log (optional)."
        )

    def handle(self, *args, username: str, revoke: bool, owner: bool, **options) -> None:
        repo = get_repository()
        reason = (options["reason"] or "")[:500]
        user = repo.users.get_user_by_name(username)
        if user is None and revoke:
            raise CommandError(f"No user called {username!r}.")
        if user is None:
            user = self.create(repo, username, options["password_from_env"])
        name, moderation = user.username, repo.moderation
        try:
            if revoke and owner:
                done = moderation.revoke_owner(user.id, SYSTEM_ACTOR, reason)
                self.say(done, f"{name} is no longer an owner.", f"{name} was not an owner.")
            elif revoke:
                done = moderation.revoke_staff(user.id, SYSTEM_ACTOR, reason)
                self.say(done, f"{name} is no longer staff.", f"{name} was not staff.")
            else:
                done = moderation.grant_staff(user.id, SYSTEM_ACTOR, reason)
                self.say(done, f"{name} is now staff.", f"{name} was already staff.")
                if owner:
                    done = moderation.grant_owner(user.id, SYSTEM_ACTOR, reason)
                    self.say(done, f"{name} is now an owner.", f"{name} was already an owner.")
        except NotAllowed as error:
            raise CommandError(str(error)) from None

    def say(self, changed: bool, done: str, unchanged: str) -> None:
        """Write what happened: `done` when the command changed something, else `unchanged`."""
        self.stdout.write(self.style.SUCCESS(done) if changed else unchanged)

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
            fields = ("username", "password")
            errors = [str(e) for field in fields for e in form.errors.get(field, [])]
            raise CommandError("Password refused: " + " ".join(errors))
        return password
