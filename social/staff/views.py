"""The staff pages under /staff/: thin views over the repository's moderation stores. The
report pages: social/staff/report_views.py."""

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

from social import mail, work
from social.forms import TagSearchForm
from social.http import AuthenticatedHttpRequest
from social.mixins import UserPageMixin
from social.repository import NotAllowed, UserNotFound
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
        context["queues"] = self.repo.jobs.stats(list(work.QUEUES))
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
        if context["account"].user.domain:  # another server's: what federation keeps of it
            remote = context["remote"] = self.repo.remote_actors.get(self.target_id)
            domain = remote.domain if remote is not None else context["account"].user.domain
            context["server_blocked"] = self.repo.federation_domains.is_blocked(domain)
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
            user = self.repo.emails.staff_log_reset(self.target_id, request.user, form.value())
        except UserNotFound:
            messages.error(request, gettext("This account has no confirmed e-mail address."))
            return HttpResponseRedirect(self.account_url())
        try:
            mail.queue_reset(user_id=user.id)  # the worker makes the link and mails it
        except work.QueueFull:
            messages.error(
                request, gettext("The mail could not be sent just now: try again later.")
            )
        else:
            messages.success(
                request,
                gettext("A password reset link is on its way to %(name)s's address.")
                % {"name": user.username},
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
