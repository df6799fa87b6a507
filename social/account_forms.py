"""Account forms: sign-up, login, password, e-mail and deleting the account."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from django import forms
from django.conf import settings
from django.contrib.auth import password_validation
from django.core.exceptions import NON_FIELD_ERRORS, FieldDoesNotExist, ValidationError
from django.utils.translation import gettext, gettext_lazy

from social import auth
from social.repository import Repository, User
from social.repository.accounts.emails import EMAIL_MAX
from social.repository.moderation.limits import wait_phrase

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


# The characters a username may hold; its length (3 to 20) is checked by min/max_length.
USERNAME_RE = re.compile(r"[A-Za-z0-9_]+")
PASSWORD_MAX = 256


USERNAME_HELP = gettext_lazy("3 to 20 letters, digits or underscores.")


class UsernameField(forms.CharField):
    """A username as typed: trimmed, 3-20 of letters, digits, underscore."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("max_length", 20)
        kwargs.setdefault("min_length", 3)
        kwargs.setdefault(
            "widget",
            forms.TextInput(
                attrs={"autocomplete": "username", "autocapitalize": "none", "spellcheck": "false"}
            ),
        )
        super().__init__(**kwargs)

    def validate(self, value: str) -> None:
        super().validate(value)
        if value and not USERNAME_RE.fullmatch(value):
            raise ValidationError(
                gettext_lazy("Use only letters, digits and underscores."), code="invalid"
            )


def _no_field(name: str) -> None:
    """Stand in for Model._meta.get_field: this user has no model, so no field."""
    raise FieldDoesNotExist(name)


def password_user(username: str) -> SimpleNamespace:
    """Return the user-like object Django's password validators take for username: the
    similarity validator reads its username and asks its `_meta` for the field's name."""
    return SimpleNamespace(username=username, _meta=SimpleNamespace(get_field=_no_field))


def validate_new_password(password: str, username: str) -> None:
    """Run Django's password validators on password for the account username; raise
    ValidationError when one refuses it."""
    # The stubs want an AUTH_USER_MODEL instance; the validators only read attributes, and
    # this site's users are no Django model: password_user() gives them what they read.
    user = password_user(username)
    password_validation.validate_password(password, user)  # type: ignore[arg-type]


def check_new_password(form: forms.Form, first: str, second: str, username: str) -> None:
    """Add form errors unless the form's fields first and second hold the same password and
    Django's validators take it for username (sign-up, password change, reset)."""
    data = form.cleaned_data
    password, again = data.get(first), data.get(second)
    if password and again and password != again:
        form.add_error(second, gettext("The two passwords do not match."))
    elif password:
        try:
            validate_new_password(password, username)
        except ValidationError as error:
            form.add_error(first, error)


class RegisterForm(forms.Form):
    """Sign-up: username, password twice; passwords checked by Django's validators."""

    username = UsernameField(label=gettext_lazy("Username"), help_text=USERNAME_HELP)
    password = forms.CharField(
        label=gettext_lazy("Password"),
        max_length=PASSWORD_MAX,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text=gettext_lazy("At least 8 characters; not a common or all-numeric password."),
    )
    password2 = forms.CharField(
        label=gettext_lazy("Repeat password"),
        max_length=PASSWORD_MAX,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean(self) -> dict[str, Any]:
        super().clean()
        check_new_password(self, "password", "password2", self.cleaned_data.get("username") or "")
        return self.cleaned_data


def suspended_message(user: User) -> str:
    """What a suspended account is told when it logs in: the reason staff gave (not for an
    account its owner deleted) and whom to write to (RETWIS_CONTACT_EMAIL), when known."""
    said = [str(LoginForm.SUSPENDED)]
    if user.suspended_reason and not user.is_deleted:
        said.append(
            gettext("The moderators’ reason: “%(reason)s”.") % {"reason": user.suspended_reason}
        )
    if settings.RETWIS_CONTACT_EMAIL:
        contact = {"address": settings.RETWIS_CONTACT_EMAIL}
        said.append(gettext("To ask about it, write to %(address)s.") % contact)
    return " ".join(said)


class LoginForm(forms.Form):
    """Login: username and password; failure never says which part was wrong."""

    username = forms.CharField(
        label=gettext_lazy("Username"),
        max_length=64,
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none"}),
    )
    password = forms.CharField(
        label=gettext_lazy("Password"),
        max_length=PASSWORD_MAX,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    # Translated when shown (ValidationError takes them lazily); compare with str().
    INVALID = gettext_lazy("That username and password do not match an account.")
    THROTTLED = gettext_lazy("Too many login attempts from your network. Try again in %(wait)s.")
    SUSPENDED = gettext_lazy("This account is suspended.")

    def __init__(self, *args, repo: Repository | None = None, ip: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.repo, self.ip = repo, ip
        self.user_cache: User | None = None
        self.retry_after = 0  # seconds, when throttled

    def clean(self) -> dict[str, Any]:
        """Authenticate, as Django's AuthenticationForm does: count the attempt first (a
        throttled one checks no password), then the password, then the account's standing.

        Every attempt counts against its address (a password hash costs the same right or
        wrong); failures count against the address and the (username, address) too. A
        correct password takes its failure back and clears its (username, address) count,
        so the owner is never locked out by someone else's guesses from other addresses
        (auth.login_limits).
        """
        super().clean()
        data = self.cleaned_data
        username, password = data.get("username"), data.get("password")
        if not username or password is None or self.repo is None:
            return data
        checks = auth.login_limits(self.ip, username)
        verdict = self.repo.limits.hit(checks)
        if not verdict.allowed:
            self.retry_after = verdict.retry_after
            wait = wait_phrase(verdict.retry_after)
            raise ValidationError(self.THROTTLED % {"wait": wait}, code="throttled")
        user = auth.authenticate(self.repo, username, password)
        if user is None:
            raise ValidationError(self.INVALID, code="invalid_login")
        auth.login_succeeded(self.repo, checks)
        if user.is_suspended:
            raise ValidationError(suspended_message(user), code="inactive")
        self.user_cache = user
        return data

    def get_user(self) -> User | None:
        """Return the authenticated user once the form is valid."""
        return self.user_cache

    def is_throttled(self) -> bool:
        return self.has_error(NON_FIELD_ERRORS, "throttled")


# What shows nothing on its own: controls, format characters (zero-width space and joiners,
# word joiner, byte order mark, soft hyphen, direction marks), combining marks with nothing
class CurrentPasswordForm(forms.Form):
    """A form that asks for the account's current password before changing the account.

    The check counts as a login attempt (auth.login_limits, as LoginForm counts them), so a
    borrowed logged-in browser cannot be used to guess the password; a right one gives its
    failure back. current_field names the field that holds it.
    """

    current_field = "password"
    WRONG = gettext_lazy("That is not your current password.")

    def __init__(self, *args, repo: Repository, user: User, ip: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.repo, self.user, self.ip = repo, user, ip
        self.retry_after = 0  # seconds, when throttled

    def check_current(self, password: str) -> str:
        """Return password if it is the user's current one; raise ValidationError if not."""
        checks = auth.login_limits(self.ip, self.user.username)
        verdict = self.repo.limits.hit(checks)
        if not verdict.allowed:
            self.retry_after = verdict.retry_after
            wait = wait_phrase(verdict.retry_after)
            raise ValidationError(LoginForm.THROTTLED % {"wait": wait}, code="throttled")
        found = auth.authenticate(self.repo, self.user.username, password)
        if found is None or found.id != self.user.id:
            raise ValidationError(self.WRONG, code="password_incorrect")
        auth.login_succeeded(self.repo, checks)
        return password

    def is_throttled(self) -> bool:
        return self.has_error(self.current_field, "throttled")


def password_field(label: StrOrPromise, autocomplete: str, **kwargs: Any) -> forms.CharField:
    """Return a password input as every form here has it (never stripped, bounded)."""
    return forms.CharField(
        label=label,
        max_length=PASSWORD_MAX,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": autocomplete}),
        **kwargs,
    )


class PasswordChangeForm(CurrentPasswordForm):
    """Change password: the current one, then the new one twice (Django's validators)."""

    current_field = "old_password"
    old_password = password_field(gettext_lazy("Current password"), "current-password")
    new_password1 = password_field(
        gettext_lazy("New password"),
        "new-password",
        help_text=RegisterForm.base_fields["password"].help_text,
    )
    new_password2 = password_field(gettext_lazy("New password again"), "new-password")

    def clean_old_password(self) -> str:
        return self.check_current(self.cleaned_data["old_password"])

    def clean(self) -> dict[str, Any]:
        super().clean()
        check_new_password(self, "new_password1", "new_password2", self.user.username)
        return self.cleaned_data


class DeleteAccountForm(CurrentPasswordForm):
    """Delete the account: the current password says it is really its owner."""

    password = password_field(gettext_lazy("Your password"), "current-password")

    def clean_password(self) -> str:
        return self.check_current(self.cleaned_data["password"])


EMAIL_HELP = gettext_lazy(
    "Used only to send you links: to confirm it, and to reset a forgotten password."
)


def email_field(**kwargs: Any) -> forms.EmailField:
    """Return an e-mail input as every form here has it (trimmed, at most 254 characters)."""
    return forms.EmailField(
        label=gettext_lazy("E-mail address"),
        max_length=EMAIL_MAX,
        widget=forms.EmailInput(attrs={"autocomplete": "email", "spellcheck": "false"}),
        error_messages={"invalid": gettext_lazy("Enter an e-mail address, like name@example.com.")},
        **kwargs,
    )


class EmailForm(CurrentPasswordForm):
    """A new address for the account, with the current password (a borrowed logged-in
    browser must not move the account's recovery elsewhere)."""

    email = email_field(help_text=EMAIL_HELP)
    password = password_field(gettext_lazy("Your password"), "current-password")

    def clean_email(self) -> str:
        return self.cleaned_data["email"].strip()

    def clean_password(self) -> str:
        return self.check_current(self.cleaned_data["password"])


class RemoveEmailForm(CurrentPasswordForm):
    """Remove the account's address: the current password says it is its owner."""

    prefix = "remove"  # beside EmailForm on one page: its own field ids
    password = password_field(gettext_lazy("Your password"), "current-password")

    def clean_password(self) -> str:
        return self.check_current(self.cleaned_data["password"])


class ForgotPasswordForm(forms.Form):
    """The address to send a password reset link to."""

    email = email_field()

    def clean_email(self) -> str:
        return self.cleaned_data["email"].strip()


class ResetPasswordForm(forms.Form):
    """A new password, twice, for the account a reset link names (Django's validators)."""

    new_password1 = password_field(
        gettext_lazy("New password"),
        "new-password",
        help_text=RegisterForm.base_fields["password"].help_text,
    )
    new_password2 = password_field(gettext_lazy("New password again"), "new-password")

    def __init__(self, *args, username: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.username = username

    def clean(self) -> dict[str, Any]:
        super().clean()
        check_new_password(self, "new_password1", "new_password2", self.username)
        return self.cleaned_data
