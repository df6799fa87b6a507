"""Pages a person browses: thin class-based views over the repository."""

from __future__ import annotations

from functools import cached_property

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.hashers import make_password
from django.contrib.auth.views import RedirectURLMixin
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views import View
from django.views.generic import FormView, TemplateView

from social import auth
from social.forms import LoginForm, PostForm, RegisterForm, ReportPostForm
from social.mixins import LoginNextMixin, RepositoryMixin, UserPageMixin
from social.redis_client import ping_within
from social.repository import (
    CannotFollowSelf,
    NotAllowed,
    Post,
    PostNotFound,
    PostPending,
    UsernameTaken,
    UserNotFound,
)
from social.repository.limits import wait_phrase
from social.repository.reports import AlreadyReported


class HomeView(RepositoryMixin, TemplateView):
    """/: welcome and forms for visitors; the home feed for a logged-in user."""

    def get_template_names(self) -> list[str]:
        if self.request.user.is_authenticated:
            return ["social/home.html"]
        return ["social/welcome.html"]

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        user = self.request.user
        if user.is_authenticated:
            context["home"] = self.repo.posts.home_page(
                user.id, self.page_number(), settings.RETWIS_FEED_PAGE_SIZE
            )
            context.setdefault("post_form", PostForm())
        else:
            context["register_form"] = RegisterForm()
            context["login_form"] = LoginForm()
            context["latest_posts"] = self.repo.posts.latest_posts(5)
        return context


class PostCreateView(LoginNextMixin, RepositoryMixin, FormView):
    """POST /post/: publish a status; on error re-show the home page with what was typed."""

    form_class = PostForm
    template_name = "social/home.html"
    http_method_names = ["post"]

    def login_next(self) -> str:
        return reverse("social:home")

    def form_valid(self, form: PostForm) -> HttpResponse:
        # A suspended account is logged out everywhere (its cookie stops resolving), so
        # only an active user gets here.
        limits = auth.post_limits(self.request.user.id)
        self.repo.limits.enforce(limits, "You have posted a lot in a short time.")
        try:
            self.repo.posts.create_post(
                self.request.user.id,
                form.cleaned_data["status"],
                token=form.cleaned_data.get("token") or None,
            )
        except PostPending:
            form.add_error(
                None,
                "This post is still being saved from your first try. Check your home feed "
                "in a moment; post again only if it is not there.",
            )
            return self.form_invalid(form, status=409)
        messages.success(self.request, "Posted.")
        return HttpResponseRedirect(self.safe_back_url(reverse("social:home")))

    def form_invalid(self, form: PostForm, status: int = 400) -> HttpResponse:
        home = self.repo.posts.home_page(self.request.user.id, 1, settings.RETWIS_FEED_PAGE_SIZE)
        context = self.get_context_data(post_form=form, home=home)
        return self.render_to_response(context, status=status)


class RegisterView(RepositoryMixin, FormView):
    """/register/: create the account, log in, go home."""

    form_class = RegisterForm
    template_name = "social/register.html"

    def form_valid(self, form: RegisterForm) -> HttpResponse:
        data = form.cleaned_data
        limits = auth.signup_limits(auth.client_ip(self.request))
        verdict = self.repo.limits.hit(limits)  # counted first: parallel sign-ups see it
        if not verdict.allowed:
            wait = wait_phrase(verdict.retry_after)
            form.add_error(None, f"Too many new accounts from your network. Try again in {wait}.")
            response = self.render_to_response(self.get_context_data(form=form), status=429)
            response["Retry-After"] = str(verdict.retry_after)
            return response
        try:
            user = self.repo.users.create_user(data["username"], make_password(data["password"]))
        except UsernameTaken:
            self.repo.limits.give_back(limits)  # no account made: not a sign-up
            form.add_error("username", "That username is taken. Try another.")
            return self.form_invalid(form)
        secret = self.repo.users.record_login(user.id, auth.client_ip(self.request))
        response = redirect("social:home")
        auth.set_auth_cookie(response, secret)
        messages.success(self.request, f"Welcome to Retwis, {user.username}!")
        return response


class LoginView(RepositoryMixin, RedirectURLMixin, FormView):
    """/login/: set the `auth` cookie and go to a safe `next`, or home."""

    form_class = LoginForm
    template_name = "social/login.html"
    next_page = settings.LOGIN_REDIRECT_URL

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["next"] = self.get_redirect_url()  # "" unless it is a safe, local URL
        return context

    def get_form_kwargs(self) -> dict:
        return {**super().get_form_kwargs(), "repo": self.repo, "ip": auth.client_ip(self.request)}

    def form_valid(self, form: LoginForm) -> HttpResponse:
        user = form.get_user()
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

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        if request.user.is_authenticated:
            self.repo.users.rotate_secret(request.user.id)
        response = redirect("social:home")
        auth.clear_auth_cookie(response)
        return response


class DismissNoticesView(LoginNextMixin, RepositoryMixin, View):
    """POST /notices/dismiss/: clear the notices on the home page (e.g. a removed post)."""

    http_method_names = ["post"]

    def login_next(self) -> str:
        return reverse("social:home")

    def post(self, request: HttpRequest) -> HttpResponse:
        self.repo.notices.dismiss_notices(request.user.id)
        return redirect("social:home")


class TimelineView(RepositoryMixin, TemplateView):
    """/timeline/: the global latest posts and the newest sign-ups."""

    template_name = "social/timeline.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["timeline"] = self.repo.posts.timeline_page(
            self.page_number(), settings.RETWIS_TIMELINE_PAGE_SIZE
        )
        return context


class ProfileView(RepositoryMixin, TemplateView):
    """/u/<username>/: the user's own posts, counts, follow button, mutual followers."""

    template_name = "social/profile.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        viewer = self.request.user
        try:
            profile = self.repo.graph.profile_for_name(
                self.kwargs["username"],
                viewer if viewer.is_authenticated else None,
                self.page_number(),
                settings.RETWIS_FEED_PAGE_SIZE,
                include_hidden=viewer.is_staff,
            )
        except UserNotFound:
            raise Http404("No such user.") from None
        if profile.user.is_suspended and not viewer.is_staff:
            raise Http404("No such user.")
        context["profile"] = profile
        return context


class FollowListView(UserPageMixin, TemplateView):
    """/u/<username>/followers/ and /following/: paged, newest first."""

    template_name = "social/follow_list.html"
    which = "followers"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["owner"] = self.target_user
        context["which"] = self.which
        context["entries"] = self.repo.graph.follow_list(
            self.target_id, self.which, self.page_number(), settings.RETWIS_LIST_PAGE_SIZE
        )
        return context


class FollowView(LoginNextMixin, UserPageMixin, View):
    """POST /u/<username>/follow/ and /unfollow/: change the graph, go back."""

    http_method_names = ["post"]
    action = "follow"

    def login_next(self) -> str:
        return reverse("social:profile", args=[self.kwargs["username"]])

    def post(self, request: HttpRequest, username: str) -> HttpResponse:
        back = self.safe_back_url(reverse("social:profile", args=[username]))
        target = self.target_user  # 404 for a suspended account, as its profile
        limits = auth.follow_limits(request.user.id)
        self.repo.limits.enforce(limits, "You have followed and unfollowed a lot in a short time.")
        try:
            if self.action == "follow":
                if self.repo.graph.follow(request.user.id, target.id):
                    messages.success(request, f"You are now following {username}.")
            elif self.repo.graph.unfollow(request.user.id, target.id):
                messages.success(request, f"You unfollowed {username}.")
        except CannotFollowSelf:
            messages.error(request, "You cannot follow yourself.")
        except UserNotFound:
            raise Http404("No such user.") from None
        return HttpResponseRedirect(back)


class PostDetailView(RepositoryMixin, TemplateView):
    """/p/<id>/: one post's permalink."""

    template_name = "social/post_detail.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        viewer = self.request.user
        try:
            post = self.repo.posts.get_post(self.kwargs["post_id"], include_hidden=True)
        except PostNotFound:
            raise Http404("No such post.") from None
        is_author = viewer.is_authenticated and viewer.id == post.author_id
        if (post.is_deleted and not (viewer.is_staff or is_author)) or (
            post.author_suspended and not viewer.is_staff
        ):
            raise Http404("No such post.")
        context["post"] = post
        return context


class HealthView(View):
    """/healthz: JSON saying whether Redis answers within REDIS_HEALTH_TIMEOUT (200) or not
    (503)."""

    def get(self, request: HttpRequest) -> JsonResponse:
        ok = ping_within(settings.REDIS_HEALTH_TIMEOUT)
        response = JsonResponse({"redis": "ok" if ok else "unavailable"}, status=200 if ok else 503)
        response["Cache-Control"] = "no-store"
        return response


class ReportPostView(LoginNextMixin, RepositoryMixin, FormView):
    """/p/<id>/report/: GET shows the permalink with the report form; POST files a report."""

    form_class = ReportPostForm
    template_name = "social/post_detail.html"

    @cached_property
    def reported_post(self) -> Post:
        """The post, when the reporter may see it (not deleted, author not suspended)."""
        try:
            return self.repo.posts.get_post(self.kwargs["post_id"])
        except PostNotFound:
            raise Http404("No such post.") from None

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["report_form"] = context["form"]
        context["post"] = self.reported_post
        return context

    def form_valid(self, form: ReportPostForm) -> HttpResponse:
        data = self.request.user, self.reported_post.id, form.cleaned_data["reason"]
        limits = auth.report_limits(self.request.user.id)
        self.repo.limits.enforce(limits, "You have sent a lot of reports in a short time.")
        try:
            self.repo.reports.report_post(*data, form.cleaned_data["text"])
        except AlreadyReported:
            messages.info(self.request, "You already reported this post. Moderators will look.")
        except NotAllowed as error:
            messages.error(self.request, str(error))
        except PostNotFound:
            raise Http404("No such post.") from None
        else:
            messages.success(self.request, "Thanks. Moderators will review this post.")
        return redirect("social:post_detail", self.reported_post.id)

    def form_invalid(self, form: ReportPostForm) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)
