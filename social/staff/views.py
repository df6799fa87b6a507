"""The staff pages under /staff/: thin views over the repository's moderation stores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib import messages
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy
from django.utils.translation import ngettext as _n
from django.views import View
from django.views.generic import TemplateView

from social import mail
from social.forms import TagSearchForm
from social.http import AuthenticatedHttpRequest
from social.mixins import UserPageMixin
from social.repository import NotAllowed, UserNotFound
from social.repository.reports import OPEN, Report, ReportNotFound, group_by_post
from social.staff import forms
from social.staff.charts import build_chart
from social.staff.mixins import StaffRequiredMixin

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


@dataclass(frozen=True)
class UserAction:
    """One action on an account: its form, the repository method, what to say after
    (translated when said; %(name)s is the account's name)."""

    form_class: type[forms.ReasonForm]
    method: str
    done: StrOrPromise
    unchanged: StrOrPromise = ""


_ = gettext_lazy
USER_ACTIONS = {
    "suspend": UserAction(
        forms.RequiredReasonForm,
        "suspend",
        _("%(name)s is suspended and logged out everywhere."),
        _("%(name)s was already suspended."),
    ),
    "unsuspend": UserAction(
        forms.ReasonForm,
        "unsuspend",
        _("%(name)s is no longer suspended."),
        _("%(name)s was not suspended."),
    ),
    "logout": UserAction(forms.ReasonForm, "force_logout", _("%(name)s is logged out everywhere.")),
    "grant_staff": UserAction(
        forms.ReasonForm,
        "grant_staff",
        _("%(name)s is now staff."),
        _("%(name)s was already staff."),
    ),
    "revoke_staff": UserAction(
        forms.ReasonForm,
        "revoke_staff",
        _("%(name)s is no longer staff."),
        _("%(name)s was not staff."),
    ),
    "note": UserAction(forms.NoteForm, "add_note", _("Note added to %(name)s.")),
    # Parts of a profile that break the rules (profiles.py): gone at once, files too.
    "remove_display_name": UserAction(
        forms.RequiredReasonForm,
        "remove_display_name",
        _("The display name of %(name)s is removed."),
        _("%(name)s has no display name."),
    ),
    "remove_note": UserAction(
        forms.RequiredReasonForm,
        "remove_note",
        _("The bio of %(name)s is removed."),
        _("%(name)s has no bio."),
    ),
    "remove_avatar": UserAction(
        forms.RequiredReasonForm,
        "remove_avatar",
        _("The avatar of %(name)s is removed."),
        _("%(name)s has no avatar."),
    ),
    "remove_header": UserAction(
        forms.RequiredReasonForm,
        "remove_header",
        _("The header image of %(name)s is removed."),
        _("%(name)s has no header image."),
    ),
}


class DashboardView(StaffRequiredMixin, TemplateView):
    """/staff/: totals, 30-day charts against the 30 days before, sign-ups, server health."""

    request: AuthenticatedHttpRequest

    template_name = "staff/dashboard.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        dashboard = self.repo.stats.dashboard()
        context["dashboard"] = dashboard
        context["charts"] = [build_chart(series) for series in dashboard.series]
        return context


class UserListView(StaffRequiredMixin, TemplateView):
    """/staff/users/: accounts newest first; ?q= a username search (?match=prefix, the
    default, or contains), ?status= filter."""

    request: AuthenticatedHttpRequest

    template_name = "staff/users.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        form = forms.UserSearchForm(self.request.GET)
        context["form"] = form
        if form.is_valid():
            context["page"] = self.repo.directory.users_page(
                form.cleaned_data["q"],
                form.cleaned_data["status"],
                self.page_number(),
                settings.RETWIS_LIST_PAGE_SIZE,
                match=form.cleaned_data["match"],
            )
        return context


class UserDetailView(StaffRequiredMixin, UserPageMixin, TemplateView):
    """/staff/users/<username>/: the account's file, with the actions staff can take."""

    request: AuthenticatedHttpRequest

    template_name = "staff/user_detail.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        try:
            context["account"] = self.repo.staff_pages.account(
                self.target_id, viewer_id=self.request.user.id
            )
        except UserNotFound:
            raise Http404("No such user.") from None
        context["apps"] = self.repo.oauth.authorisations(self.target_id)
        bound = kwargs.get("bound", {})
        context["forms"] = {
            name: bound.get(name) or action.form_class(prefix=name)
            for name, action in USER_ACTIONS.items()
        }
        context["forms"]["send_reset"] = bound.get("send_reset") or forms.ReasonForm(
            prefix="send_reset"
        )
        return context


class UserActionView(UserDetailView):
    """POST /staff/users/<username>/<action>/: one action, logged; back to the account."""

    request: AuthenticatedHttpRequest

    http_method_names = ["post"]
    action = ""

    def login_next(self) -> str:
        return self.account_url()

    def account_url(self) -> str:
        """Return the account's page: by name, or by id when the URL gave the id."""
        if "username" in self.kwargs:
            return reverse("staff:user", args=[self.kwargs["username"]])
        return reverse("staff:user_by_id", args=[self.kwargs["user_id"]])

    def account_name(self) -> str:
        """Return the account's name for messages (read when the URL gave the id)."""
        if "username" in self.kwargs:
            return self.kwargs["username"]
        user = self.repo.users.get_user(self.target_id)
        if user is not None:
            return user.username
        return gettext("Account #%(id)s") % {"id": self.target_id}

    def post(self, request: AuthenticatedHttpRequest, **kwargs) -> HttpResponse:
        action = USER_ACTIONS[self.action]
        form = action.form_class(request.POST, prefix=self.action)
        if not form.is_valid():
            context = self.get_context_data(bound={self.action: form})
            return self.render_to_response(context, status=400)
        try:
            changed = getattr(self.repo.moderation, action.method)(
                self.target_id, request.user, form.value()
            )
        except NotAllowed as error:
            messages.error(request, gettext(str(error)))
        except UserNotFound:
            raise Http404("No such user.") from None
        else:
            name = self.account_name()
            if changed is False:
                messages.info(request, action.unchanged % {"name": name})
            else:
                messages.success(request, action.done % {"name": name})
        return HttpResponseRedirect(self.account_url())


class SendResetView(UserActionView):
    """POST /staff/users/<username>/send_reset/: mail a password reset link to the
    account's confirmed address (logged); back to the account. Staff never see the link."""

    request: AuthenticatedHttpRequest

    action = "send_reset"

    def post(self, request: AuthenticatedHttpRequest, **kwargs) -> HttpResponse:
        form = forms.ReasonForm(request.POST, prefix=self.action)
        if not form.is_valid():
            context = self.get_context_data(bound={self.action: form})
            return self.render_to_response(context, status=400)
        try:
            link = self.repo.emails.staff_make_reset(self.target_id, request.user, form.value())
        except UserNotFound:
            messages.error(request, gettext("This account has no confirmed e-mail address."))
            return HttpResponseRedirect(self.account_url())
        try:
            mail.send([mail.reset(request, link.user.username, link.email, link.token)])
        except mail.MailUnavailable:
            self.repo.emails.drop_reset(link.token)
            messages.error(
                request, gettext("The mail could not be sent just now: try again later.")
            )
        else:
            messages.success(
                request,
                gettext("A password reset link is on its way to %(name)s's address.")
                % {"name": link.user.username},
            )
        return HttpResponseRedirect(self.account_url())


class RevokeAppView(StaffRequiredMixin, UserPageMixin, View):
    """POST /staff/users/<username>/apps/<client_id>/revoke/: revoke every token the
    account gave an app (the client API), logged; back to the account."""

    request: AuthenticatedHttpRequest
    http_method_names = ["post"]

    def post(self, request: AuthenticatedHttpRequest, client_id: str, **kwargs) -> HttpResponse:
        back = (
            reverse("staff:user", args=[kwargs["username"]])
            if "username" in kwargs
            else reverse("staff:user_by_id", args=[kwargs["user_id"]])
        )
        form = forms.ReasonForm(request.POST)
        reason = form.value() if form.is_valid() else ""
        try:
            revoked = self.repo.oauth.staff_revoke_app(
                self.target_id, client_id, request.user, reason
            )
        except UserNotFound:
            raise Http404("No such user.") from None
        if revoked:
            messages.success(request, gettext("The app can no longer use this account."))
        return HttpResponseRedirect(back)


class PostListView(StaffRequiredMixin, TemplateView):
    """/staff/posts/: the newest posts site-wide, deleted ones marked, to select and delete;
    ?tag= lists those with that hashtag instead."""

    request: AuthenticatedHttpRequest

    template_name = "staff/posts.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        form = TagSearchForm(self.request.GET)
        context["form"] = form
        if form.is_valid():
            tag = context["tag"] = form.cleaned_data["tag"]
            number, per_page = self.page_number(), settings.RETWIS_LIST_PAGE_SIZE
            if tag:
                context["page"] = self.repo.staff_pages.staff_tag_page(tag, number, per_page)
            else:
                context["page"] = self.repo.staff_pages.staff_posts_page(number, per_page)
        return context


class DeletePostsView(StaffRequiredMixin, TemplateView):
    """/staff/posts/delete/: GET ?id=... confirms what will go; POST deletes and logs."""

    request: AuthenticatedHttpRequest

    template_name = "staff/delete_posts.html"

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        select = forms.SelectPostsForm(request.GET)
        if not select.is_valid():
            # The form's message, translated (an ErrorList item is its message; django-stubs
            # allow a ValidationError too).
            messages.error(request, str(select.errors["id"][0]))
            return redirect("staff:posts")
        return self.confirm(forms.DeletePostsForm(initial={"id": select.cleaned_data["id"]}))

    def post(self, request: AuthenticatedHttpRequest, *args, **kwargs) -> HttpResponse:
        form = forms.DeletePostsForm(request.POST)
        if not form.is_valid():
            return self.confirm(form, status=400)
        deleted = self.repo.moderation.delete_posts(
            form.cleaned_data["id"], request.user, form.value()
        )
        asked = len(form.cleaned_data["id"])
        messages.success(
            request,
            _n("Deleted %(done)s of %(num)s.", "Deleted %(done)s of %(num)s.", asked)
            % {"done": len(deleted), "num": asked},
        )
        return HttpResponseRedirect(self.safe_back_url(reverse("staff:posts")))

    def confirm(self, form: Form, status: int = 200) -> HttpResponse:
        ids = form.cleaned_data.get("id", []) if form.is_bound else form.initial["id"]
        posts = self.repo.staff_pages.posts_by_ids(ids or [])
        back = self.safe_url(self.request.GET.get("next") or self.request.POST.get("next"))
        context = self.get_context_data(
            form=form,
            posts=[p for p in posts if not p.is_deleted],
            skipped=[p for p in posts if p.is_deleted],
            back=back or reverse("staff:posts"),
        )
        return self.render_to_response(context, status=status)


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


class AuditLogView(StaffRequiredMixin, TemplateView):
    """/staff/log/: every staff action, newest first; filter by staff, action, target."""

    request: AuthenticatedHttpRequest

    template_name = "staff/log.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        form = forms.AuditFilterForm(self.request.GET, repo=self.repo)
        context.update(form=form, staff_names=self.repo.directory.staff_names())
        if form.is_valid():
            context["page"] = self.repo.audit.audit_page(
                **form.filters(),
                number=self.page_number(),
                older_than=form.cleaned_data["before"] or None,
                per_page=settings.RETWIS_LIST_PAGE_SIZE,
            )
        return context

    def render_to_response(self, context: dict, **response_kwargs) -> HttpResponse:
        # A bad cursor is no one's typing (the page's own links write it): say so, 400.
        # A name that matches no one shows its error by its field, as a search would: 200.
        if "before" in context["form"].errors:
            messages.error(self.request, context["form"].errors["before"][0])
            response_kwargs["status"] = 400
        return super().render_to_response(context, **response_kwargs)
