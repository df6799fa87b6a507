"""Forms: every input is validated and normalised here, never in views."""

from __future__ import annotations

import re
import unicodedata
from types import SimpleNamespace

from django import forms
from django.contrib.auth import password_validation
from django.core.exceptions import NON_FIELD_ERRORS, FieldDoesNotExist, ValidationError

from social import auth
from social.repository import Repository, User
from social.repository.limits import wait_phrase
from social.repository.reports import REPORT_REASONS, REPORT_TEXT_MAX

# The characters a username may hold; its length (3 to 20) is checked by min/max_length.
USERNAME_RE = re.compile(r"[A-Za-z0-9_]+")
POST_MAX = 280
# Hard ceiling on what a field accepts at all, before any normalising: limits on every input.
RAW_POST_MAX = 2000
PASSWORD_MAX = 256

USERNAME_HELP = "3 to 20 letters, digits or underscores."


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
            raise ValidationError("Use only letters, digits and underscores.", code="invalid")


def _no_field(name: str) -> None:
    """Stand in for Model._meta.get_field: this user has no model, so no field."""
    raise FieldDoesNotExist(name)


class RegisterForm(forms.Form):
    """Sign-up: username, password twice; passwords checked by Django's validators."""

    username = UsernameField(help_text=USERNAME_HELP)
    password = forms.CharField(
        max_length=PASSWORD_MAX,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="At least 8 characters; not a common or all-numeric password.",
    )
    password2 = forms.CharField(
        label="Repeat password",
        max_length=PASSWORD_MAX,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean(self) -> dict:
        data = super().clean()
        password, password2 = data.get("password"), data.get("password2")
        if password and password2 and password != password2:
            self.add_error("password2", "The two passwords do not match.")
        elif password:
            # The similarity validator wants a user-like object with the typed username, and
            # asks its `_meta` for the field's verbose name when the password is too similar.
            candidate = SimpleNamespace(
                username=data.get("username") or "", _meta=SimpleNamespace(get_field=_no_field)
            )
            try:
                password_validation.validate_password(password, candidate)
            except ValidationError as error:
                self.add_error("password", error)
        return data


class LoginForm(forms.Form):
    """Login: username and password; failure never says which part was wrong."""

    username = forms.CharField(
        max_length=64,
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none"}),
    )
    password = forms.CharField(
        max_length=PASSWORD_MAX,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    INVALID = "That username and password do not match an account."
    THROTTLED = "Too many failed attempts from your network. Try again in {wait}."
    SUSPENDED = "This account is suspended."

    def __init__(self, *args, repo: Repository | None = None, ip: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.repo, self.ip = repo, ip
        self.user_cache: User | None = None
        self.retry_after = 0  # seconds, when throttled

    def clean(self) -> dict:
        """Authenticate, as Django's AuthenticationForm does: count the attempt first (a
        throttled one checks no password), then the password, then the account's standing.

        Only failures count: a correct password takes its attempt back and clears its
        (username, address) count, so the owner is never locked out by someone else's
        guesses from other addresses (auth.login_limits).
        """
        data = super().clean()
        username, password = data.get("username"), data.get("password")
        if not username or password is None or self.repo is None:
            return data
        checks = auth.login_limits(self.ip, username)
        verdict = self.repo.limits.hit(checks)
        if not verdict.allowed:
            self.retry_after = verdict.retry_after
            wait = wait_phrase(verdict.retry_after)
            raise ValidationError(self.THROTTLED.format(wait=wait), code="throttled")
        user = auth.authenticate(self.repo, username, password)
        if user is None:
            raise ValidationError(self.INVALID, code="invalid_login")
        address, name = checks
        self.repo.limits.give_back([address], forget=[name])
        if user.is_suspended:
            raise ValidationError(self.SUSPENDED, code="inactive")
        self.user_cache = user
        return data

    def get_user(self) -> User | None:
        """Return the authenticated user once the form is valid."""
        return self.user_cache

    def is_throttled(self) -> bool:
        return self.has_error(NON_FIELD_ERRORS, "throttled")


# What shows nothing on its own: controls, format characters (zero-width space and joiners,
# word joiner, byte order mark, soft hyphen, direction marks), combining marks with nothing
# to combine with, spaces, and the letters fonts draw blank (Hangul fillers, Braille blank).
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Mn", "Me", "Zs", "Zl", "Zp"})
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def shows_something(text: str) -> bool:
    """Return whether text holds a character a reader can see."""
    return any(
        unicodedata.category(ch) not in INVISIBLE_CATEGORIES
        and ch not in BLANK_LETTERS
        and not ch.isspace()
        for ch in text
    )


class PostForm(forms.Form):
    """A status update: newlines become spaces, then 1 to 280 characters after trimming."""

    status = forms.CharField(
        max_length=RAW_POST_MAX,
        strip=False,
        widget=forms.Textarea(
            attrs={"rows": 3, "maxlength": POST_MAX, "placeholder": "What are you doing?"}
        ),
        error_messages={
            "required": "Write something first.",
            "max_length": f"Keep it to {POST_MAX} characters.",
        },
    )

    # The one-off submission token (templating.submission_token): a retried submission
    # returns the first one's post instead of posting twice. Optional (the public contract
    # is `status` alone); a malformed one is refused, since only a tampered form sends it.
    token = forms.RegexField(
        regex=r"^[A-Za-z0-9_-]{16,64}$",
        required=False,
        widget=forms.HiddenInput,
        error_messages={"invalid": "This form is out of date. Reload the page and post again."},
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # CharField.widget_attrs overwrote the widget's maxlength with the raw ceiling (2000):
        # the browser should enforce the limit people are told about.
        self.fields["status"].widget.attrs["maxlength"] = POST_MAX

    def clean_status(self) -> str:
        body = re.sub(r"[\r\n]+", " ", self.cleaned_data["status"]).strip()
        if not body:
            raise ValidationError("Write something first.", code="required")
        if not shows_something(body):  # zero-width characters alone make a blank post
            raise ValidationError("Write something first: this shows nothing.", code="blank")
        if len(body) > POST_MAX:
            raise ValidationError(
                f"Keep it to {POST_MAX} characters (this one has {len(body)}).", code="max_length"
            )
        return body


class ReportPostForm(forms.Form):
    """A user's report of a post: a reason from the list plus optional details."""

    reason = forms.ChoiceField(
        label="What is wrong with it?",
        choices=list(REPORT_REASONS.items()),
        widget=forms.RadioSelect,
        error_messages={"required": "Pick a reason."},
    )
    text = forms.CharField(
        label="Anything else moderators should know?",
        required=False,
        max_length=REPORT_TEXT_MAX,
        widget=forms.Textarea(attrs={"rows": 3, "maxlength": REPORT_TEXT_MAX}),
        help_text=f"Optional, up to {REPORT_TEXT_MAX} characters.",
    )

    def clean_text(self) -> str:
        return self.cleaned_data["text"].strip()
