"""The staff's report pages under /staff/reports/: the open and resolved lists, resolving a
report, and acting on its post (delete it, suspend its author)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib import messages
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy
from django.views import View
from django.views.generic import TemplateView

from social.http import AuthenticatedHttpRequest
from social.repository import NotAllowed, UserNotFound
from social.repository.moderation.reports import OPEN, Report, ReportNotFound, group_by_post
from social.staff import forms
from social.staff.mixins import StaffRequiredMixin

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


_ = gettext_lazy


class ReportListView(StaffRequiredMixin, TemplateView):
    """/staff/reports/ (open, oldest first) and /staff/reports/resolved/ (newest first)."""

    request: AuthenticatedHttpRequest

    template_name = "staff/reports.html"
    status = OPEN

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        page = self.repo.reports.reports_page(
            self.status, self.page_number(), settings.RETWIS_LIST_PAGE_SIZE
        )
        groups = group_by_post(page.items)
        # One resolve form per post, each with ids of its own (several on one page).
        resolve_forms = {
            g.first.id: forms.ResolveReportForm(auto_id=f"id_%s_{g.first.id}") for g in groups
        }
        context.update(status=self.status, page=page, groups=groups, resolve_forms=resolve_forms)
        return context


class ResolveReportView(StaffRequiredMixin, View):
    """POST /staff/reports/<id>/resolve/: dismiss, or delete the post; closes its reports."""

    request: AuthenticatedHttpRequest

    http_method_names = ["post"]

    def login_next(self) -> str:
        return reverse("staff:reports")

    def post(self, request: AuthenticatedHttpRequest, report_id: int) -> HttpResponse:
        back = self.safe_back_url(reverse("staff:reports"))
        form = forms.ResolveReportForm(request.POST)
        if not form.is_valid():
            messages.error(
                request, gettext("Choose dismiss or delete, with a reason of at most 500.")
            )
            return HttpResponseRedirect(back)
        outcome = form.cleaned_data["outcome"]
        try:
            done = self.repo.reports.resolve_report(report_id, request.user, outcome, form.value())
        except ReportNotFound:
            raise Http404("No such report.") from None
        if not done:
            messages.info(request, str(ALREADY_RESOLVED))
        elif outcome == "deleted":
            messages.success(request, str(REPORT_ACTIONS["delete"].done))
        else:
            messages.success(request, gettext("Reports on that post dismissed."))
        return HttpResponseRedirect(back)


ALREADY_RESOLVED = _("Someone already resolved that report.")


@dataclass(frozen=True)
class ReportAction:
    """What the confirmation page of an action on a report says (translated when shown)."""

    title: StrOrPromise
    explain: StrOrPromise
    label: StrOrPromise  # the reason field's
    button: StrOrPromise
    done: StrOrPromise


REPORT_ACTIONS = {
    "delete": ReportAction(
        _("Delete this post?"),
        _(
            "The post disappears from every page and feed and its author sees a notice with "
            "your reason. It is kept, marked deleted, for the record; every open report on it "
            "is closed, and the deletion goes into the audit log."
        ),
        _("Reason (the author sees it)"),
        _("Yes, delete the post"),
        _("Post deleted; its reports are closed."),
    ),
    "suspend": ReportAction(
        _("Suspend the author?"),
        _(
            "The account is suspended and logged out everywhere: none of its posts show "
            "anywhere until it is unsuspended (nothing is removed). Every open report on this "
            "post is closed as “author suspended”; reports on their other posts stay open. "
            "The suspension goes into the audit log."
        ),
        _("Reason (goes into the log and the account's file)"),
        _("Yes, suspend the author"),
        _(
            "The author is suspended and logged out everywhere; the reports on that post "
            "are closed."
        ),
    ),
}


class ReportActionView(StaffRequiredMixin, TemplateView):
    """GET /staff/reports/<id>/delete/ or /suspend/: the reported post, its author and a
    reason to confirm with; POST (CSRF) acts, logs it, closes the post's open reports and
    goes back to the queue. As /staff/posts/delete/, nothing changes on a GET."""

    request: AuthenticatedHttpRequest

    template_name = "staff/report_action.html"
    action = ""  # a key of REPORT_ACTIONS

    def login_next(self) -> str:
        if self.request.method == "GET":
            return self.request.get_full_path()
        return reverse("staff:reports")

    def back(self) -> str:
        """Return the queue page to go back to: `next` when it is on this site."""
        candidate = self.request.POST.get("next") or self.request.GET.get("next")
        return self.safe_url(candidate, reverse("staff:reports"))

    def report(self, report_id: int) -> Report:
        try:
            return self.repo.reports.report_with_post(report_id)
        except ReportNotFound:
            raise Http404("No such report.") from None

    def get(self, request: HttpRequest, report_id: int) -> HttpResponse:
        report = self.report(report_id)
        if not report.is_open:
            messages.info(request, str(ALREADY_RESOLVED))
            return HttpResponseRedirect(self.back())
        initial = {"reason": report.reason_label} if self.action == "delete" else {}
        return self.confirm(report, forms.RequiredReasonForm(initial=initial))

    def post(self, request: AuthenticatedHttpRequest, report_id: int) -> HttpResponse:
        form = forms.RequiredReasonForm(request.POST)
        if not form.is_valid():
            return self.confirm(self.report(report_id), form, status=400)
        try:
            if self.action == "delete":
                done = self.repo.reports.resolve_report(
                    report_id, request.user, "deleted", form.value()
                )
            else:
                done = self.repo.moderation.suspend_reported_author(
                    report_id, request.user, form.value()
                )
        except ReportNotFound:
            raise Http404("No such report.") from None
        except UserNotFound:
            messages.error(request, gettext("The author's account no longer exists."))
        except NotAllowed as error:
            messages.error(request, gettext(str(error)))
        else:
            if done:
                messages.success(request, str(REPORT_ACTIONS[self.action].done))
            else:
                messages.info(request, str(ALREADY_RESOLVED))
        return HttpResponseRedirect(self.back())

    def refusal(self, report: Report) -> str:
        """Return why the action cannot be taken on this report ("" when it can)."""
        post = report.post
        if self.action == "delete":
            if post is None:
                return gettext("That post no longer exists: dismiss the report instead.")
            return gettext("That post is already deleted.") if post.is_deleted else ""
        try:
            refusal = self.repo.moderation.suspension_refusal(report.author_id, self.request.user)
        except UserNotFound:
            return gettext("The author's account no longer exists.")
        return gettext(refusal) if refusal else ""

    def confirm(self, report: Report, form: Form, status: int = 200) -> HttpResponse:
        context = self.get_context_data(
            report=report,
            post=report.post,
            form=form,
            action=self.action,
            text=REPORT_ACTIONS[self.action],
            refusal=self.refusal(report),
            back=self.back(),
        )
        return self.render_to_response(context, status=status)
