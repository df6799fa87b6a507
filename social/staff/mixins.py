"""Who may see the staff pages, and what every staff view shares."""

from __future__ import annotations

from django.contrib.auth.mixins import UserPassesTestMixin
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache

from social.http import AuthenticatedHttpRequest
from social.mixins import LoginNextMixin, RepositoryMixin


class StaffRequiredMixin(LoginNextMixin, UserPassesTestMixin, RepositoryMixin):
    """Staff only: visitors go to the login page (with `next`), other users get a 403.

    UserPassesTestMixin already answers 403 to a logged-in user who fails the test and
    redirects only the anonymous, so raise_exception stays False. Nothing is cached.
    """

    # Declared again: the bases' declarations differ (a user; a user or a visitor).
    request: AuthenticatedHttpRequest

    def test_func(self) -> bool:
        return bool(self.request.user.is_staff)

    @method_decorator(never_cache)
    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponseBase:
        return super().dispatch(request, *args, **kwargs)
