"""Forms: every input is validated and normalised here, never in views."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib.auth import password_validation
from django.core.exceptions import NON_FIELD_ERRORS, FieldDoesNotExist, ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.utils.functional import lazy
from django.utils.translation import gettext, gettext_lazy, ngettext, ngettext_lazy

from social import auth, images
from social.keys import FILTER_CONTEXTS, FILTER_MAX, MEDIA_ALT_MAX, MEDIA_PER_POST
from social.repository import Repository, User
from social.repository.emails import EMAIL_MAX
from social.repository.filters import LEGACY_CONTEXT
from social.repository.limits import wait_phrase
from social.repository.reports import REPORT_REASONS, REPORT_TEXT_MAX
from social.repository.search import QUERY_MAX
from social.text import normal_tag

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

# The characters a username may hold; its length (3 to 20) is checked by min/max_length.
USERNAME_RE = re.compile(r"[A-Za-z0-9_]+")
POST_MAX = 280
SPOILER_MAX = 140  # a content warning's characters
# Hard ceiling on what a field accepts at all, before any normalising: limits on every input.
RAW_POST_MAX = 2000
PASSWORD_MAX = 256


def lazy_text(make):
    """Return a string made by make() when it is shown (in the reader's language): a lazy
    translation with its values filled in. (ngettext_lazy(...) % values would translate
    once, at import.)"""
    return lazy(make, str)()


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
    THROTTLED = gettext_lazy("Too many failed attempts from your network. Try again in %(wait)s.")
    SUSPENDED = gettext_lazy("This account is suspended.")

    def __init__(self, *args, repo: Repository | None = None, ip: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.repo, self.ip = repo, ip
        self.user_cache: User | None = None
        self.retry_after = 0  # seconds, when throttled

    def clean(self) -> dict[str, Any]:
        """Authenticate, as Django's AuthenticationForm does: count the attempt first (a
        throttled one checks no password), then the password, then the account's standing.

        Only failures count: a correct password takes its attempt back and clears its
        (username, address) count, so the owner is never locked out by someone else's
        guesses from other addresses (auth.login_limits).
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


def too_long(length: int, limit: int = POST_MAX) -> str:
    """Say that a text of `length` characters is over `limit` (a post's POST_MAX), and by
    how much."""
    over = length - limit
    keep = ngettext(
        "Keep it to %(max)s characters (this one has %(length)s).",
        "Keep it to %(max)s characters (this one has %(length)s).",
        length,
    ) % {"max": f"{limit:,}", "length": f"{length:,}"}
    by = ngettext("That is %(over)s character over.", "That is %(over)s characters over.", over) % {
        "over": f"{over:,}"
    }
    return f"{keep} {by}"


def within_raw_ceiling(value: str) -> None:
    """Refuse a huge paste before normalising it (RAW_POST_MAX), saying how long it is."""
    if len(value) > RAW_POST_MAX:
        raise ValidationError(too_long(len(value)), code="max_length")


REPLY_OUT_OF_DATE = gettext_lazy("This reply form is out of date. Reload the post and reply again.")


@dataclass(frozen=True)
class PostPicture:
    """A post's picture as the form cleaned it: its sizes, re-encoded, and its blurhash."""

    variants: list[images.Variant]
    blurhash: str


class PostPictureField(forms.FileField):
    """One picture of a post, checked and re-encoded by social/images.py (POST_SIZES):
    cleans to a PostPicture, or None when nothing was sent."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, **kwargs)
        self.widget.attrs["accept"] = ",".join(images.MIME_TYPES)

    def clean(self, data: Any, initial: Any = None) -> PostPicture | None:
        upload = super().clean(data, initial)
        if not isinstance(upload, UploadedFile):
            return None
        try:
            data = images.read_upload(upload)
            variants, blurhash = images.process_with_blurhash(data, images.POST_SIZES)
        except images.ImageRefused as refused:
            raise ValidationError(str(refused), code="not_an_image") from None
        return PostPicture(variants, blurhash)


class PostForm(forms.Form):
    """A status update: newlines become spaces, then 1 to 280 characters after trimming.

    The textarea has no maxlength: a browser would silently cut a longer paste. Its
    `data-maxchars` is what static/js/site.js counts down from as the person types; the
    server's message says how many characters are over when the script does not run.
    """

    status = forms.CharField(
        label=gettext_lazy("Status"),
        strip=False,
        validators=[within_raw_ceiling],
        help_text=lazy_text(
            lambda: (
                ngettext("Up to %(num)d character.", "Up to %(num)d characters.", POST_MAX)
                % {"num": POST_MAX}
            )
        ),
        widget=forms.Textarea(
            attrs={
                "rows": 3,
                "data-maxchars": POST_MAX,
                "placeholder": gettext_lazy("What are you doing?"),
                # What static/js/site.js's live counter says, in the page's language: %(num)s
                # is the count, %(max)s the limit; "-one" for 1, "-other" for the rest.
                "data-left-one": ngettext_lazy(
                    "%(num)s character left", "%(num)s characters left", 1
                ),
                "data-left-other": ngettext_lazy(
                    "%(num)s character left", "%(num)s characters left", 2
                ),
                "data-over-one": ngettext_lazy(
                    "%(num)s character over the %(max)s limit",
                    "%(num)s characters over the %(max)s limit",
                    1,
                ),
                "data-over-other": ngettext_lazy(
                    "%(num)s character over the %(max)s limit",
                    "%(num)s characters over the %(max)s limit",
                    2,
                ),
            }
        ),
        error_messages={"required": gettext_lazy("Write something first.")},
    )

    # The one-off submission token (submission_token in social/templating/fields.py): a
    # retried submission returns the first one's post instead of posting twice. Optional
    # (the public contract is `status` alone); a malformed one is refused, since only a
    # tampered form sends it.
    token = forms.RegexField(
        regex=r"^[A-Za-z0-9_-]{16,64}$",
        required=False,
        widget=forms.HiddenInput,
        error_messages={
            "invalid": gettext_lazy("This form is out of date. Reload the page and post again.")
        },
    )

    # The post this one answers (the permalink's reply form). Optional: a plain post has none.
    reply_to = forms.IntegerField(
        min_value=1,
        max_value=2**63 - 1,  # Redis's integer range: post ids come from INCR
        required=False,
        widget=forms.HiddenInput,
        error_messages={
            "invalid": REPLY_OUT_OF_DATE,
            "min_value": REPLY_OUT_OF_DATE,
            "max_value": REPLY_OUT_OF_DATE,
        },
    )

    spoiler_text = forms.CharField(
        label=gettext_lazy("Content warning (optional)"),
        required=False,
        max_length=RAW_POST_MAX,
        help_text=gettext_lazy("Your post and its pictures stay folded behind it until opened."),
    )
    sensitive = forms.BooleanField(
        label=gettext_lazy("Blur the pictures until clicked (sensitive)"), required=False
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for n in range(1, MEDIA_PER_POST + 1):
            self.fields[f"picture_{n}"] = PostPictureField(
                label=lazy_text(lambda n=n: gettext("Picture %(num)s") % {"num": n})
            )
            self.fields[f"alt_{n}"] = forms.CharField(
                label=lazy_text(
                    lambda n=n: gettext("Description of picture %(num)s (alt text)") % {"num": n}
                ),
                required=False,
                max_length=RAW_POST_MAX,
                widget=forms.Textarea(attrs={"rows": 2}),
            )
        # A post of pictures alone needs no text (clean_status decides).
        self.fields["status"].required = False

    def picture_fields(self) -> list[tuple[forms.BoundField, forms.BoundField]]:
        """The (picture, its description) pairs, for the template."""
        return [(self[f"picture_{n}"], self[f"alt_{n}"]) for n in range(1, MEDIA_PER_POST + 1)]

    def extras_used(self) -> bool:
        """Whether a submission came back with a picture, a description, a warning or
        the sensitive mark sent or refused (the composer shows them open)."""
        if not self.is_bound:
            return False
        extra = ["spoiler_text", "sensitive"] + [
            f"{kind}_{n}" for kind in ("picture", "alt") for n in range(1, MEDIA_PER_POST + 1)
        ]
        return bool(self.sent_pictures()) or any(
            self.data.get(name) or name in self.errors for name in extra
        )

    def sent_pictures(self) -> int:
        """How many files the submission carries (fields or not: a 5th is refused)."""
        return sum(1 for _ in self.files.lists()) if self.files else 0

    def pictures(self) -> list[tuple[PostPicture, str]]:
        """The cleaned pictures and their descriptions, in their slots' order."""
        found = []
        for n in range(1, MEDIA_PER_POST + 1):
            picture = self.cleaned_data.get(f"picture_{n}")
            if picture is not None:
                found.append((picture, self.cleaned_data.get(f"alt_{n}") or ""))
        return found

    def clean_spoiler_text(self) -> str:
        text = re.sub(r"\s+", " ", self.cleaned_data.get("spoiler_text") or "").strip()
        if len(text) > SPOILER_MAX:
            raise ValidationError(
                ngettext(
                    "Keep the warning to %(max)s characters (this one has %(length)s).",
                    "Keep the warning to %(max)s characters (this one has %(length)s).",
                    len(text),
                )
                % {"max": SPOILER_MAX, "length": len(text)},
                code="max_length",
            )
        return text

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for n in range(1, MEDIA_PER_POST + 1):
            alt = (cleaned.get(f"alt_{n}") or "").strip()
            if len(alt) > MEDIA_ALT_MAX:
                self.add_error(
                    f"alt_{n}",
                    ValidationError(
                        gettext(
                            "Keep a description to %(max)s characters (this one has %(length)s)."
                        )
                        % {"max": f"{MEDIA_ALT_MAX:,}", "length": f"{len(alt):,}"},
                        code="max_length",
                    ),
                )
            cleaned[f"alt_{n}"] = alt
        if self.sent_pictures() > MEDIA_PER_POST:
            raise ValidationError(
                gettext("A post holds at most %(num)s pictures.") % {"num": MEDIA_PER_POST},
                code="too_many",
            )
        if not cleaned.get("status") and "status" not in self.errors and not self.pictures():
            self.add_error(
                "status", ValidationError(gettext("Write something first."), code="required")
            )
        return cleaned

    def clean_status(self) -> str:
        body = re.sub(r"[\r\n]+", " ", self.cleaned_data["status"]).strip()
        if not body:
            return ""  # refused in clean() unless the post has pictures
        if not shows_something(body):  # zero-width characters alone make a blank post
            raise ValidationError(
                gettext("Write something first: this shows nothing."), code="blank"
            )
        if len(body) > POST_MAX:
            raise ValidationError(too_long(len(body)), code="max_length")
        return body


class ReplyForm(PostForm):
    """The permalink's reply form: a PostForm that says it is a reply (its blank widget is
    remembered apart from the composer's: widget() in social/templating/fields.py keys on
    the form class)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["status"].widget.attrs["placeholder"] = gettext_lazy("Write your reply")


class ReportPostForm(forms.Form):
    """A user's report of a post: a reason from the list plus optional details."""

    reason = forms.ChoiceField(
        label=gettext_lazy("What is wrong with it?"),
        choices=[(code, gettext_lazy(label)) for code, label in REPORT_REASONS.items()],
        widget=forms.RadioSelect,
        error_messages={"required": gettext_lazy("Pick a reason.")},
    )
    text = forms.CharField(
        label=gettext_lazy("Anything else moderators should know?"),
        required=False,
        # No maxlength: a browser would silently cut a longer paste (clean_text says).
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=lazy_text(
            lambda: (
                ngettext(
                    "Optional, up to %(num)d character.",
                    "Optional, up to %(num)d characters.",
                    REPORT_TEXT_MAX,
                )
                % {"num": REPORT_TEXT_MAX}
            )
        ),
    )

    def clean_text(self) -> str:
        text = self.cleaned_data["text"].strip()
        if len(text) > REPORT_TEXT_MAX:
            raise ValidationError(too_long(len(text), REPORT_TEXT_MAX), code="max_length")
        return text


# A tag as /tag/<tag>/ and the staff search take it: what social.text.TAG_RE finds after "#"
# (letters of any script, digits, underscore; not digits alone, which are numbers).
TAG_NAME_RE = re.compile(r"\w{1,50}")


def is_tag(value: str) -> bool:
    """Return whether value can be a hashtag (without its "#")."""
    return bool(TAG_NAME_RE.fullmatch(value)) and not value.isdigit()


class SearchForm(forms.Form):
    """/search/'s query: people ("@name") and tags ("#tag"). A longer one than the search
    reads is refused with its length named rather than searched cut short."""

    q = forms.CharField(
        required=False,
        max_length=QUERY_MAX,
        error_messages={
            "max_length": gettext_lazy(
                "A search is at most %(limit_value)d characters; this one has "
                "%(show_value)d. Shorten it and search again."
            )
        },
    )


class TagSearchForm(forms.Form):
    """A tag to list posts by (the staff's posts list): "#Redis" or "redis", normalised."""

    tag = forms.CharField(
        label=gettext_lazy("Tag"),
        required=False,
        max_length=60,
        widget=forms.TextInput(attrs={"placeholder": "#tag", "spellcheck": "false"}),
    )

    def clean_tag(self) -> str:
        tag = self.cleaned_data["tag"].strip().removeprefix("#")
        if tag and not is_tag(tag):
            raise ValidationError(
                gettext("A tag is up to 50 letters, digits or underscores, not only digits."),
                code="invalid",
            )
        return normal_tag(tag)


class CurrentPasswordForm(forms.Form):
    """A form that asks for the account's current password before changing the account.

    The check counts as a login attempt (auth.login_limits, as LoginForm counts them), so a
    borrowed logged-in browser cannot be used to guess the password; a right one gives its
    attempt back. current_field names the field that holds it.
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
        address, name = checks
        self.repo.limits.give_back([address], forget=[name])
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


# Where a word filter acts (keys.FILTER_CONTEXTS), as the filters page names each place.
FILTER_PLACES = {
    "home": gettext_lazy("Home"),
    "notifications": gettext_lazy("Mentions and notifications"),
    "public": gettext_lazy("The timeline and tags"),
    "thread": gettext_lazy("Conversations (always folded)"),
    "account": gettext_lazy("Profiles"),
}


class FilterForm(forms.Form):
    """A word filter: a word or phrase (hashtags too), whether it hides or folds posts,
    where, and how long it acts."""

    phrase = forms.CharField(
        label=gettext_lazy("Word or phrase"),
        # No maxlength: a browser would silently cut a longer paste (clean_phrase says).
        strip=True,
        error_messages={"required": gettext_lazy("Type a word or a phrase to filter.")},
        help_text=lazy_text(
            lambda: (
                gettext(
                    "Case does not matter; whole words only; #tags too. Up to %(num)s characters."
                )
                % {"num": FILTER_MAX}
            )
        ),
    )
    action = forms.ChoiceField(
        label=gettext_lazy("What happens to a post with it"),
        choices=[
            ("hide", gettext_lazy("Hide it")),
            ("warn", gettext_lazy("Fold it, with the word named")),
        ],
        widget=forms.RadioSelect,
        initial="hide",
        error_messages={"required": gettext_lazy("Pick what happens to a post.")},
    )
    context = forms.MultipleChoiceField(
        label=gettext_lazy("Where"),
        choices=list(FILTER_PLACES.items()),
        widget=forms.CheckboxSelectMultiple,
        initial=list(LEGACY_CONTEXT),
        error_messages={"required": gettext_lazy("Pick at least one place.")},
    )
    expiry = forms.ChoiceField(
        label=gettext_lazy("For"),
        choices=[
            ("1h", gettext_lazy("1 hour")),
            ("1d", gettext_lazy("1 day")),
            ("7d", gettext_lazy("7 days")),
            ("30d", gettext_lazy("30 days")),
            ("never", gettext_lazy("Until I delete it")),
        ],
        initial="never",
    )

    def clean_phrase(self) -> str:
        phrase = " ".join(self.cleaned_data["phrase"].split())
        if not phrase.strip("#"):
            raise ValidationError(gettext("Type a word or a phrase to filter."), code="required")
        if len(phrase) > FILTER_MAX:
            raise ValidationError(too_long(len(phrase), FILTER_MAX), code="max_length")
        return phrase

    def clean_context(self) -> tuple[str, ...]:
        return tuple(c for c in FILTER_CONTEXTS if c in self.cleaned_data["context"])


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
