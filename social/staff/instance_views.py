"""/staff/about/: the server's rules and extended description, which apps show on the
server's "About" page (/api/v1/instance/rules, /api/v1/instance/extended_description).
Staff write them here; each save that changes them is logged."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy, ngettext
from django.views.generic import FormView

from social.http import AuthenticatedHttpRequest
from social.repository.clients.instance import DESCRIPTION_MAX, RULE_MAX, RULES_MAX, About
from social.staff.mixins import StaffRequiredMixin


class AboutForm(forms.Form):
    """The rules, one a line (blank lines dropped), and the description (kept as typed,
    its line breaks shown; trimmed)."""

    rules = forms.CharField(
        label=gettext_lazy("Rules, one a line"),
        required=False,
        max_length=RULES_MAX * (RULE_MAX + 2),
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text=gettext_lazy("Apps list them on the server's page, numbered in this order."),
    )
    description = forms.CharField(
        label=gettext_lazy("Extended description"),
        required=False,
        max_length=DESCRIPTION_MAX,
        widget=forms.Textarea(attrs={"rows": 10}),
        help_text=gettext_lazy("What this server is, for whom, who runs it. Plain text."),
    )

    def clean_rules(self) -> list[str]:
        lines = [" ".join(line.split()) for line in self.cleaned_data["rules"].splitlines()]
        rules = [line for line in lines if line]
        if len(rules) > RULES_MAX:
            raise ValidationError(
                ngettext("At most %(max)s rule.", "At most %(max)s rules.", RULES_MAX)
                % {"max": RULES_MAX}
            )
        for number, rule in enumerate(rules, 1):
            if len(rule) > RULE_MAX:
                raise ValidationError(
                    gettext("Rule %(number)s is longer than %(max)s characters.")
                    % {"number": number, "max": RULE_MAX}
                )
        return rules

    def clean_description(self) -> str:
        return self.cleaned_data["description"].strip().replace("\r\n", "\n")


class AboutView(StaffRequiredMixin, FormView):
    """GET shows the form filled with what is stored; POST saves it (logged when it
    changes anything) and comes back here."""

    request: AuthenticatedHttpRequest
    template_name = "staff/about.html"
    form_class = AboutForm

    def get_initial(self) -> dict:
        about: About = self.repo.instance.about()
        return {
            "rules": "\n".join(rule.text for rule in about.rules),
            "description": about.description,
        }

    def form_valid(self, form: AboutForm) -> HttpResponse:
        data = form.cleaned_data
        if self.repo.instance.save(self.request.user, data["rules"], data["description"]):
            messages.success(self.request, gettext("Saved: apps show the new text now."))
        else:
            messages.info(self.request, gettext("Nothing changed."))
        return HttpResponseRedirect(reverse("staff:about"))
