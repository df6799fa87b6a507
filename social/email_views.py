"""E-mail and account recovery: an account's address and its confirmation, "Forgot your
password?" and the reset link. Mail is queued for the worker (social/mail.py), never sent
while the person waits: the pages answer alike whether or not an address has an account
(or is another's) and whether or not the mail server is up. Only a full mail queue makes
them say to try again later (503)."""

from __future__ import annotations

import contextlib

from django.contrib import messages
from django.contrib.auth.hashers import make_password
from django.forms import Form
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy
from django.views import View
from django.views.generic import FormView

from social import auth, mail, work
from social.account_forms import EmailForm, ForgotPasswordForm, RemoveEmailForm, ResetPasswordForm
from social.account_views import AccountFormView
from social.http import AuthenticatedHttpRequest, SiteHttpRequest
from social.mixins import RepositoryMixin
from social.repository import AnonymousUser, EmailTaken, Repository
from social.repository.moderation.limits import Check, wait_phrase

TRY_LATER = gettext_lazy(
    "We could not send the mail just now. Nothing was changed: try again later."
)
BUSY_RETRY_AFTER = 60  # seconds, when the mail queue is full
TAKEN = gettext_lazy("This address is already in use. Use another one.")
BAD_LINK = gettext_lazy(
    "This link does not work: it may have expired, been used already, or been replaced by "
    "a newer one."
)


def throttled(
    view: FormView, repo: Repository, form: Form, checks: list[Check], message: str
) -> HttpResponse | None:
    """Count one attempt against checks; if refused, return the form's 429 answer."""
    verdict = repo.limits.hit(checks)
    if verdict.allowed:
        return None
    form.add_error(None, message % {"wait": wait_phrase(verdict.retry_after)})
    response = view.render_to_response(view.get_context_data(form=form), status=429)
    response["Retry-After"] = str(verdict.retry_after)
    return response


def busy(view: FormView, form: Form) -> HttpResponse:
    """Return the form again with "try again later" (503): the mail queue is full."""
    form.add_error(None, TRY_LATER)
    response = view.render_to_response(view.get_context_data(form=form), status=503)
    response["Retry-After"] = str(BUSY_RETRY_AFTER)
    return response


class EmailView(AccountFormView):
    """/settings/email/: the account's address; a new one is used once its link is
    followed, and the old one is told. An address another account holds is answered as a
    free one (its owner is told by mail instead), and counted all the same."""

    request: AuthenticatedHttpRequest

    form_class = EmailForm
    template_name = "social/email.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["state"] = self.repo.emails.state(self.request.user.id)
        context["remove_form"] = kwargs.get("remove_form") or RemoveEmailForm(
            repo=self.repo, user=self.request.user
        )
        return context

    def form_valid(self, form: EmailForm) -> HttpResponse:
        user, email = self.request.user, form.cleaned_data["email"]
        limits = auth.email_limits(user.id)
        too_many = gettext("Too many changes. Try again in %(wait)s.")
        refused = throttled(self, self.repo, form, limits, too_many)
        if refused is not None:
            return refused
        old = self.repo.emails.state(user.id).email
        email = self.repo.emails.note_pending(user.id, email)  # before the job reads it
        try:
            mail.queue_confirmation(user.id, email)
            if old and old.lower() != email.lower():
                mail.queue_change_notice(user.username, old, email)
        except work.QueueFull:
            self.repo.emails.drop_pending(user.id)
            self.repo.limits.give_back(limits)
            return busy(self, form)
        messages.success(
            self.request,
            gettext("We sent a link to %(email)s: open it within 24 hours to confirm the address.")
            % {"email": email},
        )
        return redirect("social:email")


class RemoveEmailView(AccountFormView):
    """POST /settings/email/remove/: with the password, remove the address (the address is
    told, unless the mail queue is full)."""

    request: AuthenticatedHttpRequest

    http_method_names = ["post"]
    form_class = RemoveEmailForm
    template_name = "social/email.html"

    def login_next(self) -> str:
        return reverse("social:email")

    def get_context_data(self, **kwargs) -> dict:
        form = kwargs.pop("form")
        kwargs["remove_form"] = form
        kwargs["form"] = EmailForm(repo=self.repo, user=self.request.user)
        context = super().get_context_data(**kwargs)
        context["state"] = self.repo.emails.state(self.request.user.id)
        return context

    def form_valid(self, form: RemoveEmailForm) -> HttpResponse:
        user = self.request.user
        old = self.repo.emails.remove(user.id)
        if old:  # removed all the same if the notice fails: the owner asked, with the password
            with contextlib.suppress(work.QueueFull):
                mail.queue_removal_notice(user.username, old)
        messages.success(self.request, gettext("Your e-mail address is removed."))
        return redirect("social:email")


class ConfirmEmailView(RepositoryMixin, View):
    """/settings/email/confirm/<token>/: GET shows what the link confirms, POST confirms it
    (a mail scanner that opens links confirms nothing)."""

    request: SiteHttpRequest

    def get(self, request: HttpRequest, token: str) -> HttpResponse:
        link = self.repo.emails.confirmation(token)
        if link is None:
            return self.page({"bad_link": BAD_LINK}, status=404)
        return self.page({"link": link})

    def post(self, request: HttpRequest, token: str) -> HttpResponse:
        try:
            link = self.repo.emails.confirm(token)
        except EmailTaken:
            return self.page({"bad_link": TAKEN}, status=409)
        if link is None:
            return self.page({"bad_link": BAD_LINK}, status=404)
        messages.success(request, gettext("%(email)s is confirmed.") % {"email": link.email})
        if request.user.is_authenticated and request.user.id == link.user.id:
            return redirect("social:email")
        return redirect("social:home")

    def page(self, context: dict, status: int = 200) -> HttpResponse:
        return TemplateResponse(self.request, "social/email_confirm.html", context, status=status)


class ForgotPasswordView(RepositoryMixin, FormView):
    """/password/forgot/: mail a reset link to the account with that confirmed address.
    The page does the same work whatever the address (counts it, queues the job), so its
    answer and its time say nothing of whether an account has it: the worker looks."""

    request: SiteHttpRequest

    form_class = ForgotPasswordForm
    template_name = "social/password_forgot.html"

    def form_valid(self, form: ForgotPasswordForm) -> HttpResponse:
        email = form.cleaned_data["email"]
        limits = auth.reset_limits(auth.client_ip(self.request), email)
        refused = throttled(
            self, self.repo, form, limits, gettext("Too many requests. Try again in %(wait)s.")
        )
        if refused is not None:
            return refused
        try:
            mail.queue_reset(email=email)
        except work.QueueFull:
            self.repo.limits.give_back(limits)
            return busy(self, form)
        messages.success(
            self.request,
            gettext(
                "If an account has %(email)s as its confirmed address, we sent it a link to "
                "choose a new password. The link works for an hour."
            )
            % {"email": email},
        )
        return redirect("social:login")


class ResetPasswordView(RepositoryMixin, FormView):
    """/password/reset/<token>/: a new password for the link's account. Every device is
    logged out and every app's token revoked; the page after names the apps."""

    request: SiteHttpRequest

    form_class = ResetPasswordForm
    template_name = "social/password_reset.html"

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponseBase:
        self.link = self.repo.emails.reset_link(kwargs["token"])
        if self.link is None:
            return TemplateResponse(
                request, "social/password_reset.html", {"bad_link": BAD_LINK}, status=404
            )
        return super().dispatch(request, *args, **kwargs)

    def get_form_kwargs(self) -> dict:
        assert self.link is not None
        return {**super().get_form_kwargs(), "username": self.link.user.username}

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["link"] = self.link
        return context

    def form_invalid(self, form: ResetPasswordForm) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)

    def form_valid(self, form: ResetPasswordForm) -> HttpResponse:
        link = self.repo.emails.take_reset(self.kwargs["token"])
        if link is None:  # used or outdated meanwhile (another tab)
            return TemplateResponse(
                self.request, "social/password_reset.html", {"bad_link": BAD_LINK}, status=404
            )
        # Whether this browser is the account's, asked before its secret changes.
        same = self.request.user.is_authenticated and self.request.user.id == link.user.id
        new_hash = make_password(form.cleaned_data["new_password1"])
        apps = self.repo.accounts.reset_password(link.user.id, new_hash)  # devices and apps out
        context: dict = {"apps": apps, "link": link}
        if same:  # its secret is gone too: shown as logged out, as it now is
            self.request.user = AnonymousUser()
        response = TemplateResponse(self.request, "social/password_reset_done.html", context)
        if same:
            auth.clear_auth_cookie(response)
        return response
