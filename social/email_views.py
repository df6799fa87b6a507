"""E-mail and account recovery: an account's address and its confirmation, "Forgot your
password?" and the reset link. Mail goes out while the person waits (social/mail.py): when
the mail server fails, nothing is kept and the page says to try again later (503)."""

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

from social import auth, mail
from social.account_forms import EmailForm, ForgotPasswordForm, RemoveEmailForm, ResetPasswordForm
from social.account_views import AccountFormView
from social.http import AuthenticatedHttpRequest, SiteHttpRequest
from social.mixins import RepositoryMixin
from social.repository import AnonymousUser, EmailTaken, Repository
from social.repository.limits import Check, wait_phrase

TRY_LATER = gettext_lazy(
    "We could not send the mail just now. Nothing was changed: try again later."
)
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


def unavailable(view: FormView, form: Form) -> HttpResponse:
    """Return the form again with "try again later" (503): the mail was not sent."""
    form.add_error(None, TRY_LATER)
    response = view.render_to_response(view.get_context_data(form=form), status=503)
    response["Retry-After"] = "60"
    return response


class EmailView(AccountFormView):
    """/settings/email/: the account's address; a new one is used once its link is
    followed, and the old one is told."""

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
        try:
            token = self.repo.emails.request_change(user.id, email)
        except EmailTaken:
            self.repo.limits.give_back(limits)
            form.add_error("email", TAKEN)
            return self.render_to_response(self.get_context_data(form=form), status=409)
        mails = [mail.confirmation(self.request, user.username, email, token)]
        if old and old.lower() != email.lower():
            mails.append(mail.change_notice(user.username, old, email))
        try:
            mail.send(mails)
        except mail.MailUnavailable:
            self.repo.emails.cancel_change(user.id, token)
            self.repo.limits.give_back(limits)
            return unavailable(self, form)
        messages.success(
            self.request,
            gettext("We sent a link to %(email)s: open it within 24 hours to confirm the address.")
            % {"email": email},
        )
        return redirect("social:email")


class RemoveEmailView(AccountFormView):
    """POST /settings/email/remove/: with the password, remove the address (the address is
    told, when the mail server answers)."""

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
            with contextlib.suppress(mail.MailUnavailable):
                mail.send([mail.removal_notice(user.username, old)])
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
    The answer is the same whether or not one has it."""

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
        user = self.repo.emails.account_for(email)
        link = self.repo.emails.make_reset(user.id) if user and not user.is_suspended else None
        if link is not None:
            try:
                mail.send([mail.reset(self.request, link.user.username, link.email, link.token)])
            except mail.MailUnavailable:
                self.repo.emails.drop_reset(link.token)
                self.repo.limits.give_back(limits)
                return unavailable(self, form)
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
    logged out; the page after says which apps keep their access."""

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
        self.repo.accounts.change_password(link.user.id, new_hash)  # every device logged out
        context: dict = {"apps": self.repo.oauth.authorisations(link.user.id), "link": link}
        if same:  # its secret is gone too: shown as logged out, as it now is
            self.request.user = AnonymousUser()
        response = TemplateResponse(self.request, "social/password_reset_done.html", context)
        if same:
            auth.clear_auth_cookie(response)
        return response
