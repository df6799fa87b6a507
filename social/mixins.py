"""What the site's and the staff's views share: the repository, paging, safe URLs, login."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TypeVar

from django.conf import settings
from django.contrib.auth.mixins import LoginRequiredMixin
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpResponseRedirect
from django.utils.functional import SimpleLazyObject, empty
from django.utils.http import url_has_allowed_host_and_scheme

from social.http import AuthenticatedHttpRequest, SiteHttpRequest
from social.numbers import whole_number
from social.repository import (
    Page,
    Repository,
    StaleViewer,
    User,
    Viewer,
    ViewerCheck,
    get_repository,
    may_see_account,
)

T = TypeVar("T")

MAX_PAGE = 1000  # a page number past the capped lists is never useful


class RepositoryMixin:
    """Give a view `self.repo`, the requested page number and the check of the page read.

    Paging, the same on every paged list of the site (home, timeline, profile, followers,
    following, mentions, tag, likes, a permalink's replies): `?page=` that is not a whole
    number of at least 1 means page 1 (a mangled link still lands on the list). A page
    after the list's last one answers 404, the site's not-found page, unless it is page 1
    (an empty list is shown as such, with what to do): checked_page, on the Page the
    repository read (Page.past_the_end: nothing on it and nothing after it). So does a
    number above MAX_PAGE. Chosen over clamping to the last page: a URL then always names
    the page it shows, and the number of the last page is not known before reading the
    list (most lists carry no total); a 404 costs nothing more to find out. A last page
    whose every entry was hidden since (a suspended author's posts) is past the end too:
    it has nothing to show and nothing after it.
    """

    request: SiteHttpRequest

    @cached_property
    def repo(self) -> Repository:
        return get_repository()

    def read_as_viewer(self, read: Callable[[Viewer], T]) -> T:
        """Return read(viewer) for this request's reader, where read is one page of posts
        on the read path (whose first pipeline writes nothing).

        A reader this process remembers for their `auth` cookie is read as remembered, and
        the read path checks them on the page's own first pipeline (visibility.
        ViewerCheck): one round trip fewer than the middleware's look-up first. Then
        request.user is the user as read there. Should the check fail (logged out
        elsewhere, suspended, changed), nothing was shown or written: the page is read
        again for the user the cookie leads to, looked up as any page does."""
        request = self.request
        secret = request.COOKIES.get(settings.AUTH_COOKIE_NAME, "")
        lazy = request.user
        remembered = (
            self.repo.users.remembered_user(secret)
            if secret and isinstance(lazy, SimpleLazyObject) and lazy._wrapped is empty
            else None
        )
        if remembered is None:
            return read(Viewer.of(request.user))
        check = ViewerCheck(secret)
        viewer = Viewer(remembered.id, remembered.is_staff, remembered.has_relations, check)
        try:
            result = read(viewer)
        except StaleViewer:
            return read(Viewer.of(request.user))
        if check.fresh is None:  # the read never reached the read path: not checked
            return read(Viewer.of(request.user))
        request.user = check.fresh
        return result

    def requested_page(self) -> int:
        """The `page` asked for as a number (1 when it is not one: social.numbers)."""
        return whole_number(self.request.GET.get("page", "1")) or 1

    def page_number(self) -> int:
        """The page to read: the one asked for, between 1 and MAX_PAGE."""
        return min(max(self.requested_page(), 1), MAX_PAGE)

    def checked_page(self, page: Page) -> Page:
        """Return page, or raise Http404 when it lies after the list's end or the number
        asked for is above MAX_PAGE (see the class docstring)."""
        if page.past_the_end or self.requested_page() > MAX_PAGE:
            raise Http404("No such page.")
        return page

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

    # What the view's handlers see: dispatch() lets only a logged-in user past. (In
    # login_next() and handle_no_permission() the user may still be a visitor.)
    request: AuthenticatedHttpRequest

    def login_next(self) -> str:
        return self.request.get_full_path()

    def handle_no_permission(self) -> HttpResponseRedirect:
        if self.request.user.is_authenticated:
            return super().handle_no_permission()
        return redirect_to_login(self.login_next(), self.get_login_url())


class UserPageMixin(RepositoryMixin):
    """Resolve the account the URL names, by <username> or by <user_id>, or 404.

    Staff pages also take the id: a name the reference Retwis allowed may fit no URL
    (social.repository.accounts.users.name_has_url). An id is not looked up here; the page's own
    read of the account answers 404 when there is none.
    """

    kwargs: dict

    @cached_property
    def target_id(self) -> int:
        if "user_id" in self.kwargs:
            return self.kwargs["user_id"]
        name = self.kwargs["username"]
        remote = self.repo.remote_actors.by_acct(name) if "@" in name else None
        if remote is not None:  # name@domain: another server's account known here
            return remote.id
        user_id = self.repo.users.user_id_for_name(name)
        if user_id is None:
            raise Http404("No such user.")
        return user_id

    @cached_property
    def target_user(self) -> User:
        """The account, or 404 when it does not exist or is suspended and the viewer is not
        staff: a suspended account is absent wherever the public can reach (the profile,
        its lists, following it), and the 404 names no one."""
        user = self.repo.users.get_user(self.target_id)
        if user is None or not may_see_account(Viewer.of(self.request.user), user):
            raise Http404("No such user.")
        return user
