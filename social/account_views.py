"""Pages and actions of an account: sign-up, log-in and -out, notices, the settings hub,
password, deletion, language."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.hashers import make_password
from django.contrib.auth.views import RedirectURLMixin
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext, ngettext
from django.views import View
from django.views.generic import FormView, TemplateView

from social import auth
from social.account_forms import (
    CurrentPasswordForm,
    DeleteAccountForm,
    LoginForm,
    PasswordChangeForm,
    RegisterForm,
)
from social.api.oauth_views import OPENER_POLICY
from social.http import AuthenticatedHttpRequest, SiteHttpRequest
from social.keys import DELETED_ACCOUNT_GRACE_DAYS
from social.mixins import LoginNextMixin, RepositoryMixin
from social.repository import NotAllowed, UsernameTaken, UserNotFound
from social.repository.moderation.limits import wait_phrase


class RegisterView(RepositoryMixin, FormView):
    """/register/: create the account, log in, go home."""

    request: SiteHttpRequest

    form_class = RegisterForm
    template_name = "social/register.html"

    def form_valid(self, form: RegisterForm) -> HttpResponse:
        data = form.cleaned_data
        limits = auth.signup_limits(auth.client_ip(self.request))
        verdict = self.repo.limits.hit(limits)  # counted first: parallel sign-ups see it
        if not verdict.allowed:
            wait = wait_phrase(verdict.retry_after)
            form.add_error(
                None,
                gettext("Too many new accounts from your network. Try again in %(wait)s.")
                % {"wait": wait},
            )
            response = self.render_to_response(self.get_context_data(form=form), status=429)
            response["Retry-After"] = str(verdict.retry_after)
            return response
        try:
            user = self.repo.users.create_user(data["username"], make_password(data["password"]))
        except UsernameTaken:
            self.repo.limits.give_back(limits)  # no account made: not a sign-up
            form.add_error("username", gettext("That username is taken. Try another."))
            return self.form_invalid(form)
        secret = self.repo.users.record_login(user.id, auth.client_ip(self.request))
        response = redirect("social:home")
        auth.set_auth_cookie(response, secret)
        messages.success(
            self.request, gettext("Welcome to Retwis, %(name)s!") % {"name": user.username}
        )
        return response


class LoginView(RepositoryMixin, RedirectURLMixin, FormView):
    """/login/: set the `auth` cookie and go to a safe `next`, or home.

    On the way to an app's consent page (`next` is /oauth/authorize), the login page and
    its redirect keep a popup's opener as the consent page does (oauth_views.OPENER_POLICY):
    a web client that opened the popup logged out still gets its code."""

    request: SiteHttpRequest

    form_class = LoginForm
    template_name = "social/login.html"
    next_page = settings.LOGIN_REDIRECT_URL

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["next"] = self.get_redirect_url()  # "" unless it is a safe, local URL
        return context

    def get_form_kwargs(self) -> dict:
        return {**super().get_form_kwargs(), "repo": self.repo, "ip": auth.client_ip(self.request)}

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponseBase:
        response = super().dispatch(request, *args, **kwargs)
        if self.get_redirect_url().startswith(reverse("api:authorize")):
            response["Cross-Origin-Opener-Policy"] = OPENER_POLICY
        return response

    def form_valid(self, form: LoginForm) -> HttpResponse:
        user = form.get_user()
        assert user is not None  # a valid LoginForm has found its user
        secret = self.repo.users.record_login(user.id, auth.client_ip(self.request))
        response = HttpResponseRedirect(self.get_success_url())
        auth.set_auth_cookie(response, secret)
        return response

    def form_invalid(self, form: LoginForm) -> HttpResponse:
        status = 429 if form.is_throttled() else 400
        response = self.render_to_response(self.get_context_data(form=form), status=status)
        if form.is_throttled():
            response["Retry-After"] = str(form.retry_after)
        return response


class LogoutView(RepositoryMixin, View):
    """POST /logout/: rotate the secret (every device logs out) and clear the cookie."""

    request: SiteHttpRequest

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        if request.user.is_authenticated:
            self.repo.users.rotate_secret(request.user.id)
        response = redirect("social:home")
        auth.clear_auth_cookie(response)
        return response


class DismissNoticesView(LoginNextMixin, RepositoryMixin, View):
    """POST /notices/dismiss/: clear the notices on the home page (e.g. a removed post)."""

    request: AuthenticatedHttpRequest

    http_method_names = ["post"]

    def login_next(self) -> str:
        return reverse("social:home")

    def post(self, request: AuthenticatedHttpRequest) -> HttpResponse:
        self.repo.notices.dismiss_notices(request.user.id)
        return redirect("social:home")


class SettingsView(LoginNextMixin, TemplateView):
    """/settings/: every setting by group (templates/social/_settings.html lists them)."""

    request: AuthenticatedHttpRequest

    template_name = "social/settings.html"


class LanguageView(LoginNextMixin, TemplateView):
    """/settings/language/: the footer's language switch as a setting (the same POST to
    Django's set_language, the same cookie)."""

    request: AuthenticatedHttpRequest

    template_name = "social/language.html"


class AccountFormView(LoginNextMixin, RepositoryMixin, FormView):
    """A settings page whose form checks the current password (CurrentPasswordForm)."""

    request: AuthenticatedHttpRequest

    def get_form_kwargs(self) -> dict:
        kwargs = super().get_form_kwargs()
        return {**kwargs, "repo": self.repo, "user": self.request.user}

    def get_form(self, form_class=None) -> CurrentPasswordForm:
        form = super().get_form(form_class)
        form.ip = auth.client_ip(self.request)
        return form

    def form_invalid(self, form: CurrentPasswordForm) -> HttpResponse:
        status = 429 if form.is_throttled() else 400
        response = self.render_to_response(self.get_context_data(form=form), status=status)
        if form.is_throttled():
            response["Retry-After"] = str(form.retry_after)
        return response


class PasswordChangeView(AccountFormView):
    """/settings/password/: the current password and a new one; every other device is
    logged out, this one gets the new secret."""

    request: AuthenticatedHttpRequest

    form_class = PasswordChangeForm
    template_name = "social/password_change.html"

    def form_valid(self, form: PasswordChangeForm) -> HttpResponse:
        new_hash = make_password(form.cleaned_data["new_password1"])
        secret = self.repo.accounts.change_password(self.request.user.id, new_hash)
        messages.success(
            self.request, gettext("Your password is changed. Your other devices are logged out.")
        )
        response = redirect("social:home")
        auth.set_auth_cookie(response, secret)
        return response


class DeleteAccountView(AccountFormView):
    """/settings/delete/: with the password, delete the account, log out, go to the
    welcome page. Staff accounts are refused (an owner revokes staff first)."""

    request: AuthenticatedHttpRequest

    form_class = DeleteAccountForm
    template_name = "social/delete_account.html"

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.user.is_staff:  # refused before any password is checked
            return self.render_to_response(self.get_context_data(), status=403)
        return super().post(request, *args, **kwargs)

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["grace_days"] = DELETED_ACCOUNT_GRACE_DAYS
        return context

    def form_valid(self, form: DeleteAccountForm) -> HttpResponse:
        user = self.request.user
        try:
            self.repo.accounts.delete_account(user)
        except NotAllowed as error:
            form.add_error(None, gettext(str(error)))
            return self.render_to_response(self.get_context_data(form=form), status=403)
        except UserNotFound:
            pass  # deleted meanwhile (another tab): what was asked for is done
        messages.success(
            self.request,
            ngettext(
                "Your account %(name)s is deleted. Its name stays reserved for %(num)s day.",
                "Your account %(name)s is deleted. Its name stays reserved for %(num)s days.",
                DELETED_ACCOUNT_GRACE_DAYS,
            )
            % {"name": user.username, "num": DELETED_ACCOUNT_GRACE_DAYS},
        )
        response = redirect("social:home")
        auth.clear_auth_cookie(response)
        return response
