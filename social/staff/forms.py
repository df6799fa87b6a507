"""Forms of the staff pages: every input is checked here."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

from social.federation.documents import domain as local_domain
from social.federation.names import (
    ADDRESS_INPUT_MAX,
    InvalidAddress,
    normalise_domain,
    parse_address,
    url_domain,
)
from social.numbers import ID_MAX, whole_number
from social.repository import Repository
from social.repository.moderation.actions import NOTE_MAX
from social.repository.moderation.audit import ACTIONS, REASON_MAX
from social.repository.moderation.directory import CONTAINS_MIN, USER_STATUSES
from social.repository.moderation.reports import OUTCOMES

# What a name lookup accepts: the characters of our usernames (searching never creates one).
NAME_RE = re.compile(r"[A-Za-z0-9_]{1,20}")
# A stream entry id as the log's links write it; [0-9], not \d, which matches any script's digits.
STREAM_ID = re.compile(r"([0-9]{1,15})-([0-9]{1,15})")
BULK_MAX = 100  # posts one bulk action may touch: a page of the staff post list and then some


def one_line(value: str) -> str:
    """Collapse runs of whitespace (newlines included) to single spaces and trim."""
    return re.sub(r"\s+", " ", value).strip()


class ReasonForm(forms.Form):
    """An optional reason for a staff action, one line, at most REASON_MAX characters."""

    reason = forms.CharField(
        required=False,
        max_length=REASON_MAX,
        widget=forms.TextInput(attrs={"placeholder": gettext_lazy("Reason (optional)")}),
    )

    def clean_reason(self) -> str:
        return one_line(self.cleaned_data["reason"])

    def value(self) -> str:
        """Return the text the repository stores with the action."""
        return self.cleaned_data["reason"]


class RequiredReasonForm(ReasonForm):
    """A staff action that must say why (the user may be told): 3 to REASON_MAX chars."""

    reason = forms.CharField(
        max_length=REASON_MAX,
        widget=forms.TextInput(attrs={"placeholder": gettext_lazy("Reason (required)")}),
        error_messages={"required": gettext_lazy("Say why: it goes into the log.")},
    )

    def clean_reason(self) -> str:
        reason = one_line(self.cleaned_data["reason"])
        if len(reason) < 3:
            raise ValidationError(
                gettext("Give a reason of at least 3 characters."), code="min_length"
            )
        return reason


class NoteForm(ReasonForm):
    """A note on an account, visible to staff only."""

    reason = forms.CharField(
        label=gettext_lazy("Note"),
        max_length=NOTE_MAX,
        strip=True,
        widget=forms.Textarea(
            attrs={"rows": 2, "placeholder": gettext_lazy("Visible to staff only")}
        ),
        error_messages={"required": gettext_lazy("Write the note first.")},
    )

    def clean_reason(self) -> str:
        return self.cleaned_data["reason"].strip()


# How the status filter names each status (directory.USER_STATUSES).
STATUS_LABELS = {
    "active": gettext_lazy("Active"),
    "suspended": gettext_lazy("Suspended"),
    "staff": pgettext_lazy("account status", "Staff"),
}


class UserSearchForm(forms.Form):
    """The staff user list: a username search (its start, or any part of it) and/or a
    status. "Contains" needs CONTAINS_MIN characters; a shorter query searches the start
    of names instead, and `notice` says so."""

    q = forms.CharField(
        label=gettext_lazy("Username"),
        required=False,
        max_length=20,
        widget=forms.TextInput(
            attrs={"type": "search", "autocapitalize": "none", "autocomplete": "off"}
        ),
    )
    match = forms.ChoiceField(
        label=gettext_lazy("Match"),
        required=False,
        choices=[("prefix", gettext_lazy("Starts with")), ("contains", gettext_lazy("Contains"))],
    )
    status = forms.ChoiceField(
        label=gettext_lazy("Status"),
        required=False,
        choices=[("", gettext_lazy("Any status"))]
        + [(s, STATUS_LABELS.get(s, s.capitalize())) for s in USER_STATUSES],
    )

    notice = ""  # what the page says about the search it made instead of the one asked

    def clean_q(self) -> str:
        query = self.cleaned_data["q"].strip().lstrip("@")
        if query and not NAME_RE.fullmatch(query):
            raise ValidationError(gettext("Usernames hold only letters, digits and underscores."))
        return query.lower()

    def clean_match(self) -> str:
        return self.cleaned_data["match"] or "prefix"

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        query = data.get("q") or ""
        if data.get("match") == "contains" and 0 < len(query) < CONTAINS_MIN:
            data["match"] = "prefix"
            self.notice = gettext(
                "“Contains” needs at least %(num)s characters: these are the names that "
                "start with “%(query)s”."
            ) % {"num": CONTAINS_MIN, "query": query}
        return data


class AuditFilterForm(forms.Form):
    """The audit log's filters: staff member, action, target user (names as typed)."""

    actor = forms.CharField(
        label=gettext_lazy("Staff member"),
        required=False,
        max_length=20,
        widget=forms.TextInput(attrs={"list": "staff-names", "autocapitalize": "none"}),
    )
    action = forms.ChoiceField(
        label=gettext_lazy("Action"),
        required=False,
        choices=[("", gettext_lazy("Any action"))]
        + [(code, gettext_lazy(label)) for code, label in ACTIONS.items()],
    )
    target = forms.CharField(
        label=gettext_lazy("Target user"),
        required=False,
        max_length=ADDRESS_INPUT_MAX,  # name@domain: another server's account
        widget=forms.TextInput(attrs={"autocapitalize": "none"}),
    )
    # The unfiltered log's cursor: the id of the last entry shown ("<ms>-<seq>").
    before = forms.CharField(required=False, max_length=41, widget=forms.HiddenInput)

    def __init__(self, *args, repo: Repository, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.repo = repo

    def clean(self) -> dict[str, Any]:
        """Resolve the names to user ids in one round trip (two more for another server's
        account: name@domain); an unknown name is an error."""
        super().clean()
        data = self.cleaned_data
        names = {f: data[f] for f in ("actor", "target") if data.get(f)}
        ids = self.repo.users.user_ids_for_names([n for n in names.values() if "@" not in n])
        found = iter(ids)
        for field, name in names.items():
            if "@" in name:  # another server's account: its own index
                remote = self.repo.remote_actors.by_acct(name)
                user_id = remote.id if remote is not None else None
            else:
                user_id = next(found)
            if user_id is None:
                self.add_error(field, gettext("No user by that name."))
            data[f"{field}_id"] = user_id
        return data

    def _name(self, field: str) -> str:
        name = self.cleaned_data[field].strip().lstrip("@")
        if name and not NAME_RE.fullmatch(name):
            raise ValidationError(gettext("That is not a username."))
        return name

    def clean_actor(self) -> str:
        return self._name("actor")

    def clean_target(self) -> str:
        name = self.cleaned_data["target"].strip().lstrip("@")
        if "@" in name:
            try:
                return str(parse_address(name))
            except InvalidAddress:
                raise ValidationError(gettext("That is not a username."), code="invalid") from None
        return self._name("target")

    def clean_before(self) -> str:
        """Return the cursor as a stream id Redis takes ("" for none): ASCII digits, at most
        15 a part (as audit.STREAM_ID_RE), above 0-0 (nothing is older than the first id)."""
        raw = self.cleaned_data["before"].strip()
        if not raw:
            return ""
        match = STREAM_ID.fullmatch(raw)
        ms, seq = (int(match[1]), int(match[2])) if match else (0, 0)
        if ms + seq == 0:
            raise ValidationError(gettext("That is not a position in the log."), code="invalid")
        return f"{ms}-{seq}"

    def filters(self) -> dict:
        """Return audit_page's filter arguments."""
        data = self.cleaned_data
        return {
            "actor_id": data.get("actor_id"),
            "action": data.get("action") or None,
            "target_id": data.get("target_id"),
        }


class PostIdsField(forms.Field):
    """A list of post ids (`?id=1&id=2`), 1 to BULK_MAX of them."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> list[int]:
        if not value:
            return []
        values = value if isinstance(value, list | tuple) else [value]
        numbers = [whole_number(v) for v in values]
        if None in numbers:
            raise ValidationError(gettext("Post ids are numbers."), code="invalid")
        ids = [i for i in numbers if i is not None]
        if any(not 0 < i <= ID_MAX for i in ids):
            raise ValidationError(gettext("Post ids are positive numbers."), code="invalid")
        return list(dict.fromkeys(ids))

    def validate(self, value: list[int]) -> None:
        super().validate(value)
        if len(value) > BULK_MAX:
            raise ValidationError(
                gettext("Select at most %(num)s posts at a time.") % {"num": BULK_MAX}, code="max"
            )


class SelectPostsForm(forms.Form):
    """The posts a bulk delete is about (the confirmation page's GET)."""

    id = PostIdsField(error_messages={"required": gettext_lazy("Select at least one post.")})


class DeletePostsForm(SelectPostsForm, RequiredReasonForm):
    """Confirmed bulk delete: the ids again, and why (their authors are told)."""


class ResolveReportForm(ReasonForm):
    """Resolve a report: dismiss it or delete the post (either closes the post's reports).

    The reports page offers Dismiss here; deleting the post and suspending its author go
    through confirmation pages (views.ReportActionView, a RequiredReasonForm each)."""

    outcome = forms.ChoiceField(choices=[(o, o) for o in OUTCOMES])


# Longest text the domain field takes before any work: a URL pasted whole, with room.
DOMAIN_INPUT_MAX = 300


def typed_domain(text: str) -> str:
    """Return the domain staff typed or pasted, in its one spelling (names.py): a bare
    name, `*.name`, `@user@name` or a URL on it; raise ValidationError when it is none,
    holds characters that stand for others ("²", full-width letters: what is blocked must
    be what was typed), is one label (a whole top-level domain) or is this site's."""
    text = text.strip()
    if unicodedata.normalize("NFKC", text) != text:
        raise ValidationError(
            gettext("Type the name as it is written: “%(text)s” holds look-alike characters.")
            % {"text": text[:80]},
            code="lookalike",
        )
    if "://" in text:
        text = url_domain(text) or "?"
    text = text.removeprefix("*.").rpartition("@")[2].rstrip("/")
    try:
        domain = normalise_domain(text)
    except InvalidAddress:
        raise ValidationError(
            gettext("That is not a server's name: write it as social.example or a URL on it."),
            code="invalid",
        ) from None
    if "." not in domain.partition(":")[0]:
        raise ValidationError(
            gettext("Give a server's whole name (social.example), not a top-level domain."),
            code="tld",
        )
    if domain == local_domain():
        raise ValidationError(gettext("That is this site."), code="own")
    return domain


class DomainBlockForm(RequiredReasonForm):
    """Block a server: its name (typed_domain), and why (staff see it; the log keeps it)."""

    domain = forms.CharField(
        label=gettext_lazy("Server"),
        max_length=DOMAIN_INPUT_MAX,
        widget=forms.TextInput(
            attrs={
                "placeholder": "spam.example",
                "autocapitalize": "none",
                "autocomplete": "off",
                "spellcheck": "false",
            }
        ),
        error_messages={"required": gettext_lazy("Name the server to block.")},
    )
    field_order = ["domain", "reason"]

    def clean_domain(self) -> str:
        return typed_domain(self.cleaned_data["domain"])


class KnownDomainsForm(forms.Form):
    """The known servers' pager: `after`, the last domain of the page before."""

    after = forms.CharField(required=False, max_length=DOMAIN_INPUT_MAX)

    def clean_after(self) -> str:
        after = self.cleaned_data["after"]
        if not after:
            return ""
        try:
            return normalise_domain(after)
        except InvalidAddress:
            raise ValidationError(gettext("That is not a server's name."), code="invalid") from None
