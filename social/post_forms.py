"""Post forms: compose and reply (the one body rule, `post_body`, and the picture fields),
and reporting a post."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.utils.functional import lazy
from django.utils.translation import gettext, gettext_lazy, ngettext, ngettext_lazy

from social import images
from social.keys import MEDIA_ALT_MAX, MEDIA_PER_POST
from social.repository.moderation.reports import REPORT_REASONS, REPORT_TEXT_MAX

POST_MAX = 280
SPOILER_MAX = 140  # a content warning's characters
# Hard ceiling on what a field accepts at all, before any normalising: limits on every input.
RAW_POST_MAX = 2000


def lazy_text(make):
    """Return a string made by make() when it is shown (in the reader's language): a lazy
    translation with its values filled in. (ngettext_lazy(...) % values would translate
    once, at import.)"""
    return lazy(make, str)()


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


def post_body(raw: str, *, empty_ok: bool = False) -> str:
    """The one rule of a post's body (the site's forms and the API's POST /statuses):
    newlines become spaces, then 1 to POST_MAX characters after trimming (0 when empty_ok:
    a post of pictures alone), at least one of them visible. Raise ValidationError: code
    "required" (nothing), "blank" (zero-width characters alone) or "max_length"."""
    body = re.sub(r"[\r\n]+", " ", raw).strip()
    if not body and empty_ok:
        return ""
    if not body:
        raise ValidationError(gettext("Write something first."), code="required")
    if not shows_something(body):  # zero-width characters alone make a blank post
        raise ValidationError(gettext("Write something first: this shows nothing."), code="blank")
    if len(body) > POST_MAX:
        raise ValidationError(too_long(len(body)), code="max_length")
    return body


REPLY_OUT_OF_DATE = gettext_lazy("This reply form is out of date. Reload the post and reply again.")


@dataclass(frozen=True)
class CheckedPicture:
    """A post's picture whose header passed images.inspect (nothing decoded): its field,
    its bytes, what its header says, and its description."""

    field: str
    data: bytes
    header: images.Header
    alt: str


def read_checked(upload: UploadedFile) -> tuple[bytes, images.Header]:
    """Return an upload's bytes and Header; raise ValidationError (code "not_an_image")
    with images.inspect's reason."""
    try:
        data = images.read_upload(upload)
        return data, images.inspect(data)
    except images.ImageRefused as refused:
        raise ValidationError(str(refused), code="not_an_image") from None


class PictureUploadField(forms.FileField):
    """An uploaded picture, cheaply checked: cleans to the UploadedFile (its size under
    images.MAX_BYTES; not read), or None when nothing was sent. What is in it is checked
    once the attempt is counted (images.inspect, then the worker decodes it)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, **kwargs)
        self.widget.attrs["accept"] = ",".join(images.MIME_TYPES)

    def clean(self, data: Any, initial: Any = None) -> UploadedFile | None:
        upload = super().clean(data, initial)
        if not isinstance(upload, UploadedFile):
            return None
        if upload.size is None or upload.size > images.MAX_BYTES:
            raise ValidationError(gettext("The picture is over 10 MB."), code="too_big")
        return upload


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
            self.fields[f"picture_{n}"] = PictureUploadField(
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

    def pictures(self) -> list[tuple[str, UploadedFile, str]]:
        """The pictures sent, (field, upload, description), in their slots' order."""
        found = []
        for n in range(1, MEDIA_PER_POST + 1):
            upload = self.cleaned_data.get(f"picture_{n}")
            if upload is not None:
                found.append((f"picture_{n}", upload, self.cleaned_data.get(f"alt_{n}") or ""))
        return found

    def checked_pictures(self) -> list[CheckedPicture] | None:
        """Read each picture and check its header (images.inspect: nothing is decoded);
        return them, or None after adding each refusal to its field. Called once the
        attempt is counted: everything cheap was checked by is_valid()."""
        checked, refused = [], False
        for field, upload, alt in self.pictures():
            try:
                checked.append(CheckedPicture(field, *read_checked(upload), alt))
            except ValidationError as error:
                self.add_error(field, error)
                refused = True
        return None if refused else checked

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
        # Empty is refused in clean() unless the post has pictures.
        return post_body(self.cleaned_data["status"], empty_ok=True)


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
