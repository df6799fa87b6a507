"""Pages of posts a person browses (home, the timeline, a profile, mentions, a tag, likes,
search, notifications) and /healthz: thin class-based views over the repository."""

from __future__ import annotations

import time
from collections.abc import Hashable

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.utils.functional import SimpleLazyObject
from django.views import View
from django.views.generic import TemplateView

from social.account_forms import LoginForm, RegisterForm
from social.federation.resolve import search_remote
from social.federation.views import actor_for_name, wants_activity
from social.forms import SearchForm
from social.http import AuthenticatedHttpRequest, SiteHttpRequest
from social.mixins import MAX_PAGE, LoginNextMixin, RepositoryMixin, UserPageMixin
from social.numbers import whole_number
from social.post_views import PostCreateView
from social.redis_client import ping_within
from social.remembered import RememberedPageMixin, posts_fingerprint
from social.repository import (
    Profile,
    UserNotFound,
    Viewer,
)
from social.repository.federation.actors import RemoteActor
from social.repository.read.reader import PageAt
from social.repository.read.search import KINDS
from social.templating.filters import age_changes_at
from social.text import normal_tag

# The furthest list position a pager's link names (the longest lists are capped well below).
POSITION_MAX = MAX_PAGE * 100


def page_at(request: HttpRequest, number: int) -> PageAt | None:
    """Where page `number` of a list of posts lies when the pager's link says (?from=,
    ?before=: list positions, after a page that read past posts hidden from its reader;
    reader.py's fill), or None: at its number's own place. Page 1 is the list's head."""
    if number <= 1:
        return None
    start, before = (whole_number(request.GET.get(name, "")) for name in ("from", "before"))
    if before is not None and before <= POSITION_MAX:
        return PageAt(before=before)
    if start is not None and start <= POSITION_MAX:
        return PageAt(start=start)
    return None


class HomeView(RememberedPageMixin, RepositoryMixin, TemplateView):
    """/: welcome and forms for visitors; the home feed for a logged-in user (people to
    follow when its first page is empty)."""

    request: SiteHttpRequest

    def get_template_names(self) -> list[str]:
        if self.request.user.is_authenticated:
            return ["social/home.html"]
        return ["social/welcome.html"]

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        home = self.read_as_viewer(
            lambda viewer: (
                self.repo.pages.home(
                    viewer.id,
                    self.page_number(),
                    settings.RETWIS_FEED_PAGE_SIZE,
                    viewer=viewer,
                    where=page_at(self.request, self.page_number()),
                )
                if viewer.id is not None
                else None
            )
        )
        if home is not None:
            context["home"] = home
            self.checked_page(home.feed)  # the composer: blank, or post_form from PostView
        else:
            # Built when the page renders: a visitor's remembered page is not rendered.
            context["register_form"] = SimpleLazyObject(RegisterForm)
            context["login_form"] = SimpleLazyObject(LoginForm)
            context["latest"] = self.repo.pages.latest(5)
        return context

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponseBase:
        """The composer posts here, so a refused post is shown again at / (PostCreateView)."""
        return PostCreateView.as_view()(request)

    def remembered_fingerprint(self, context: dict) -> Hashable | None:
        """A visitor's welcome page shows its latest posts and nothing else that changes."""
        latest = context.get("latest")
        return None if latest is None else posts_fingerprint(latest, time.time())

    def remembered_until(self, context: dict, now: float) -> float | None:
        """The welcome page changes by the clock when one of its cards' ages does."""
        latest = context["latest"]
        return min((age_changes_at(post.time, now) for post in latest.items), default=now + 900)


class TimelineView(RememberedPageMixin, RepositoryMixin, TemplateView):
    """/timeline/: the global latest posts, the newest sign-ups and the trending tags."""

    request: SiteHttpRequest

    template_name = "social/timeline.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["timeline"] = timeline = self.read_as_viewer(
            lambda viewer: self.repo.pages.timeline(
                viewer,
                self.page_number(),
                settings.RETWIS_TIMELINE_PAGE_SIZE,
                where=page_at(self.request, self.page_number()),
            )
        )
        self.checked_page(timeline.posts)
        context["trending"] = self.repo.trending.trending()
        return context

    def remembered_fingerprint(self, context: dict) -> Hashable | None:
        """The timeline shows its posts, the newest sign-ups and the trending tags."""
        timeline = context["timeline"]
        return (
            posts_fingerprint(timeline.posts, time.time()),
            timeline.posts.has_next,
            timeline.posts.next_from,  # the pager's link (a page that read past hidden ones)
            timeline.latest_users,
            context["trending"],
        )


class ProfileView(RepositoryMixin, TemplateView):
    """/u/<username>/: the user's own posts, counts, follow button, mutual followers, and
    "Follows you" when the user follows the reader."""

    request: SiteHttpRequest

    template_name = "social/profile.html"

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if wants_activity(request):  # another server asks for the account's actor
            return actor_for_name(self.repo, self.kwargs["username"])
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        name = self.kwargs["username"]
        # name@domain: an account of another server known here (federation/actors.py).
        remote = self.repo.remote_actors.by_acct(name) if "@" in name else None
        try:
            profile = self.read_as_viewer(lambda viewer: self.read_profile(name, remote, viewer))
        except UserNotFound:
            raise Http404("No such user.") from None
        self.checked_page(profile.posts)
        context["profile"] = profile
        context["remote"] = remote
        return context

    def read_profile(self, name: str, remote: RemoteActor | None, viewer: Viewer) -> Profile:
        """The profile page of the account called name (of remote when it is one)."""
        number, where = self.page_number(), page_at(self.request, self.page_number())
        size = settings.RETWIS_FEED_PAGE_SIZE
        if remote is not None:
            return self.repo.pages.profile(remote.id, viewer, number, size, where)
        return self.repo.pages.profile_for_name(name, viewer, number, size, where)


class HealthView(View):
    """/healthz: JSON saying whether Redis answers within REDIS_HEALTH_TIMEOUT (200) or not
    (503)."""

    def get(self, request: HttpRequest) -> JsonResponse:
        ok = ping_within(settings.REDIS_HEALTH_TIMEOUT)
        response = JsonResponse({"redis": "ok" if ok else "unavailable"}, status=200 if ok else 503)
        response["Cache-Control"] = "no-store"
        return response


class MentionsView(LoginNextMixin, RepositoryMixin, TemplateView):
    """/mentions/: the posts that mention the reader, newest first (a tab of the
    notifications, which count them: the navigation's one count loses the unread mentions
    and replies when this tab is seen)."""

    request: AuthenticatedHttpRequest

    template_name = "social/mentions.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["mentions"] = self.checked_page(
            self.repo.pages.mentions(
                self.request.user.id,
                self.page_number(),
                settings.RETWIS_FEED_PAGE_SIZE,
                viewer=Viewer.of(self.request.user),
                where=page_at(self.request, self.page_number()),
            )
        )
        user = self.request.user
        # The mentions shown are read now: counted off the navigation's count, when there
        # are mentions this tab has not shown (no round trip otherwise).
        if user.unread_mentions and user.unread_notifications:
            context["notifications_unread"] = self.repo.notifications.mentions_seen(
                user.id, user.unread_mentions, user.unread_notifications
            )
        return context


class TagView(RepositoryMixin, TemplateView):
    """/tag/<tag>/: the newest posts with #tag (the URL's converter refuses non-tags)."""

    request: SiteHttpRequest

    template_name = "social/tag.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["tag"] = normal_tag(self.kwargs["tag"])
        context["posts"] = self.checked_page(
            self.read_as_viewer(
                lambda viewer: self.repo.pages.tag(
                    self.kwargs["tag"],
                    viewer,
                    self.page_number(),
                    settings.RETWIS_FEED_PAGE_SIZE,
                    page_at(self.request, self.page_number()),
                )
            )
        )
        return context


class LikesView(UserPageMixin, TemplateView):
    """/u/<username>/likes/: the posts the user liked, most recently liked first."""

    request: SiteHttpRequest

    template_name = "social/likes.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        try:  # absent, or hidden from this reader: the same 404 as the profile
            owner, likes = self.repo.pages.likes(
                self.target_id,
                Viewer.of(self.request.user),
                self.page_number(),
                settings.RETWIS_FEED_PAGE_SIZE,
                page_at(self.request, self.page_number()),
            )
        except UserNotFound:
            raise Http404("No such user.") from None
        context["owner"] = owner
        context["likes"] = self.checked_page(likes)
        return context


class SearchView(RepositoryMixin, TemplateView):
    """/search/?q=: people by name, tags by prefix, the reader's own posts by their words
    (bounded work per query: SearchStore)."""

    request: SiteHttpRequest

    template_name = "social/search.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        form = SearchForm(self.request.GET)
        context["form"] = form
        if form.is_valid():
            query = form.cleaned_data["q"]
            viewer = Viewer.of(self.request.user)
            # "@name@domain" or a URL: another server is asked (a logged-in reader only).
            remote = search_remote(self.repo, viewer.id, query)
            context["remote_error"] = remote.error
            context["results"] = self.repo.search.search(
                query, viewer, kinds=KINDS, resolved=remote.ids
            )
        # Both boxes (the navigation's, the page's) keep what was typed, as typed.
        context["search_query"] = self.request.GET.get("q", "")
        return context


class NotificationsView(LoginNextMixin, RepositoryMixin, TemplateView):
    """/notifications/: follows, likes, reposts (grouped), replies and mentions, newest
    first, those not seen before marked; seeing them moves the reader's `notifications`
    marker past them (as an app's POST /api/v1/markers does) and clears the count in the
    navigation."""

    request: AuthenticatedHttpRequest

    template_name = "social/notifications.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["notifications"] = self.checked_page(
            self.repo.notifications.page(Viewer.of(self.request.user), self.page_number())
        )
        context["notifications_unread"] = 0  # the header's count was read before it cleared
        return context
