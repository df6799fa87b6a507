"""What the site's and the staff's views share: the repository, paging, safe URLs, login."""

from __future__ import annotations

from functools import cached_property

from django.contrib.auth.mixins import LoginRequiredMixin
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.http import url_has_allowed_host_and_scheme

from social.repository import Repository, User, get_repository

MAX_PAGE = 1000  # a page number past the capped lists is never useful


class RepositoryMixin:
    """Give a view `self.repo` and the requested page number."""

    request: HttpRequest

    @cached_property
    def repo(self) -> Repository:
        return get_repository()

    def page_number(self) -> int:
        try:
            number = int(self.request.GET.get("page", "1"))
        except ValueError:
            return 1
        return min(max(number, 1), MAX_PAGE)

    def safe_url(self, candidate: str | None, default: str = "") -> str:
        """Return candidate when it is a URL on this site, else default."""
        if candidate and url_has_allowed_host_and_scheme(
            candidate,
            allowed_hosts={self.request.get_host()},
            require_https=self.request.is_secure(),
        ):
            return candidate
        return default

    def safe_back_url(self, default: str) -> str:
        """Return the POSTed `next` when it points at this site, else default."""
        return self.safe_url(self.request.POST.get("next", ""), default)


class LoginNextMixin(LoginRequiredMixin):
    """LoginRequiredMixin whose `next` is login_next(): this page by default.

    POST-only actions override login_next() to name the GET page the action lives on: after
    logging in, a browser GETs `next`, and the action's own URL would answer 405.
    """

    def login_next(self) -> str:
        return self.request.get_full_path()

    def handle_no_permission(self) -> HttpResponse:
        if self.request.user.is_authenticated:
            return super().handle_no_permission()
        return redirect_to_login(self.login_next(), self.get_login_url())


class UserPageMixin(RepositoryMixin):
    """Resolve the account the URL names, by <username> or by <user_id>, or 404.

    Staff pages also take the id: a name the reference Retwis allowed may fit no URL
    (social.repository.users.name_has_url). An id is not looked up here; the page's own
    read of the account answers 404 when there is none.
    """

    kwargs: dict

    @cached_property
    def target_id(self) -> int:
        if "user_id" in self.kwargs:
            return self.kwargs["user_id"]
        user_id = self.repo.users.user_id_for_name(self.kwargs["username"])
        if user_id is None:
            raise Http404("No such user.")
        return user_id

    @cached_property
    def target_user(self) -> User:
        """The account, or 404 when it does not exist or is suspended and the viewer is not
        staff: a suspended account is absent wherever the public can reach (the profile,
        its lists, following it), and the 404 names no one."""
        user = self.repo.users.get_user(self.target_id)
        if user is None or (user.is_suspended and not self.request.user.is_staff):
            raise Http404("No such user.")
        return user
