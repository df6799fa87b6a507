"""Who may see the staff pages, and what every staff view shares."""

from __future__ import annotations

from functools import cached_property

from django.contrib.auth.mixins import LoginRequiredMixin, UserPassesTestMixin
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache

from social.repository import Repository
from social.views import RepositoryMixin


class StaffRequiredMixin(LoginRequiredMixin, UserPassesTestMixin, RepositoryMixin):
    """Staff only: visitors go to the login page (with `next`), other users get a 403.

    UserPassesTestMixin already answers 403 to a logged-in user who fails the test and
    redirects only the anonymous, so raise_exception stays False. Nothing is cached.
    """

    request: HttpRequest

    def test_func(self) -> bool:
        return bool(self.request.user.is_staff)

    def login_next(self) -> str:
        """Return where to come back to after logging in: this page."""
        return self.request.get_full_path()

    def handle_no_permission(self) -> HttpResponse:
        if self.request.user.is_authenticated:
            return super().handle_no_permission()
        return redirect_to_login(self.login_next(), self.get_login_url())

    def safe_next(self, candidate: str | None, default: str = "") -> str:
        """Return candidate when it is a URL on this site, else default."""
        if candidate and url_has_allowed_host_and_scheme(
            candidate,
            allowed_hosts={self.request.get_host()},
            require_https=self.request.is_secure(),
        ):
            return candidate
        return default

    @method_decorator(never_cache)
    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        return super().dispatch(request, *args, **kwargs)


class StaffTargetMixin:
    """Resolve <username> in the URL to the id of the account staff act on, or 404."""

    kwargs: dict
    repo: Repository

    @cached_property
    def target_id(self) -> int:
        user_id = self.repo.user_id_for_name(self.kwargs["username"])
        if user_id is None:
            raise Http404("No such user.")
        return user_id
