"""The profile form: display name, bio, avatar, header (the settings page and the client
API's update_credentials both validate with it)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_lazy, ngettext

from social.post_forms import PictureUploadField, read_checked, shows_something
from social.repository.accounts.profiles import DISPLAY_NAME_MAX, NOTE_MAX

# What a browser may send at most before we normalise (a paste of a book is refused whole).
RAW_TEXT_MAX = 5000
LINE_BREAKS = re.compile(r"\r\n?")


def plain(text: str, *, keep_newlines: bool) -> str:
    """Return text in NFC with control characters dropped (newlines kept when asked) and
    trailing spaces of each line trimmed."""
    text = unicodedata.normalize("NFC", LINE_BREAKS.sub("\n", text))
    text = "".join(
        ch for ch in text if unicodedata.category(ch) != "Cc" or (keep_newlines and ch == "\n")
    )
    if keep_newlines:
        text = "\n".join(line.rstrip() for line in text.split("\n"))
        return re.sub(r"\n{3,}", "\n\n", text).strip()
    return text.strip()


def over(limit: int, length: int) -> str:
    return ngettext(
        "Keep it to %(max)s characters (this one has %(length)s).",
        "Keep it to %(max)s characters (this one has %(length)s).",
        length,
    ) % {"max": f"{limit:,}", "length": f"{length:,}"}


class PictureField(PictureUploadField):
    """An avatar or a header (`kind`): cleans to the UploadedFile, its size checked and
    nothing read (ProfileForm.checked_pictures reads it once the attempt is counted)."""

    def __init__(self, kind: str, **kwargs: Any) -> None:
        self.kind = kind
        super().__init__(**kwargs)


class ProfileForm(forms.Form):
    """A profile's changes. Only the fields sent are changed (the API's PATCH sends some);
    the settings page sends both texts, so an emptied field is cleared."""

    display_name = forms.CharField(
        label=gettext_lazy("Display name"),
        required=False,
        strip=False,
        max_length=RAW_TEXT_MAX,
        help_text=gettext_lazy(
            "Up to 50 characters, any script and emoji. Shown beside your @name."
        ),
        widget=forms.TextInput(attrs={"autocomplete": "nickname"}),
    )
    note = forms.CharField(
        label=gettext_lazy("Bio"),
        required=False,
        strip=False,
        max_length=RAW_TEXT_MAX,
        help_text=gettext_lazy(
            "Up to 500 characters. @names and #tags become links; line breaks are kept."
        ),
        widget=forms.Textarea(attrs={"rows": 4}),
    )
    avatar = PictureField(
        "avatar",
        label=gettext_lazy("Avatar"),
        help_text=gettext_lazy("PNG, JPEG, WebP or GIF, up to 10 MB; cropped square."),
    )
    header = PictureField(
        "header",
        label=gettext_lazy("Header image"),
        help_text=gettext_lazy("PNG, JPEG, WebP or GIF, up to 10 MB; cropped to 1500 x 500."),
    )

    remove_avatar = forms.BooleanField(label=gettext_lazy("Remove my avatar"), required=False)
    remove_header = forms.BooleanField(label=gettext_lazy("Remove my header image"), required=False)

    def clean_display_name(self) -> str:
        raw = self.cleaned_data["display_name"]
        name = plain(raw, keep_newlines=False)
        if raw and not shows_something(name):
            raise ValidationError(
                gettext("A display name needs something besides spaces."), code="blank"
            )
        if len(name) > DISPLAY_NAME_MAX:
            raise ValidationError(over(DISPLAY_NAME_MAX, len(name)), code="max_length")
        return name

    def clean_note(self) -> str:
        note = plain(self.cleaned_data["note"], keep_newlines=True)
        if not shows_something(note):
            return ""
        if len(note) > NOTE_MAX:
            raise ValidationError(over(NOTE_MAX, len(note)), code="max_length")
        return note

    def checked_pictures(self) -> list[tuple[str, bytes]] | None:
        """Read each picture sent and check its header (images.inspect: nothing decoded);
        return (kind, bytes) for each, or None after adding each refusal to its field.
        Called once the attempt is counted."""
        checked, refused = [], False
        for kind in ("avatar", "header"):
            upload = self.cleaned_data.get(kind)
            if upload is None:
                continue
            try:
                checked.append((kind, read_checked(upload)[0]))
            except ValidationError as error:
                self.add_error(kind, error)
                refused = True
        return None if refused else checked

    def changes(self) -> dict[str, Any]:
        """Return ProfileStore.update's keyword arguments for what was sent, but the
        pictures (the caller's: checked_pictures, then processed)."""
        data = self.cleaned_data
        changed: dict[str, Any] = {
            name: data[name] for name in ("display_name", "note") if name in self.data
        }
        changed["remove"] = [
            kind
            for kind in ("avatar", "header")
            if data.get(f"remove_{kind}") and not data.get(kind)
        ]
        return changed

    def changes_anything(self) -> bool:
        """Whether the submission changes anything (one that does not is not counted)."""
        changed = self.changes()
        return bool(
            changed["remove"] or any(name in changed for name in ("display_name", "note"))
        ) or any(self.cleaned_data.get(kind) for kind in ("avatar", "header"))
