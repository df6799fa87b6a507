"""Pages a person browses: thin class-based views over the repository."""

from __future__ import annotations

import time
from collections.abc import Hashable
from functools import cached_property

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.translation import gettext
from django.views import View
from django.views.generic import FormView, TemplateView

from social import auth
from social.account_forms import LoginForm, RegisterForm
from social.answers import answer
from social.forms import SearchForm
from social.http import AuthenticatedHttpRequest, SiteHttpRequest
from social.mixins import LoginNextMixin, RepositoryMixin, UserPageMixin
from social.post_forms import PostForm, ReplyForm, ReportPostForm
from social.redis_client import ping_within
from social.remembered import RememberedPageMixin, posts_fingerprint
from social.repository import (
    CannotFollowSelf,
    Conversation,
    MediaNotFound,
    NotAllowed,
    Post,
    PostCounts,
    PostNotFound,
    PostPending,
    UserNotFound,
    Viewer,
)
from social.repository.reports import AlreadyReported
from social.templating.filters import age_changes_at
from social.text import normal_tag

REPLIES_PAGE_SIZE = 20  # replies under a permalink, oldest first


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
                    viewer.id, self.page_number(), settings.RETWIS_FEED_PAGE_SIZE, viewer=viewer
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


class ConversationMixin(RepositoryMixin):
    """Load a post in its conversation as this reader may see it, or 404."""

    request: SiteHttpRequest

    def visible_conversation(self, post_id: int, number: int = 1) -> Conversation:
        """Return post_id with its ancestors and a page of replies, or raise Http404 when
        this reader may not see it (the repository's visibility policy decides)."""
        try:
            return self.read_as_viewer(
                lambda viewer: self.repo.pages.conversation(
                    post_id, viewer, number, REPLIES_PAGE_SIZE
                )
            )
        except PostNotFound:
            raise Http404("No such post.") from None

    def conversation_context(self, conversation: Conversation, reply_form=None) -> dict:
        """Return what post_detail.html shows of a conversation, with the reply form (a
        blank one unless given) when this reader may reply."""
        if reply_form is None and conversation.can_reply:
            prefix = reply_mentions(conversation.post, self.request.user.id)
            reply_form = ReplyForm(initial={"status": prefix} if prefix else None)
        return {
            "conversation": conversation,
            "post": conversation.post,
            "counts": conversation.counts,
            "reply_form": reply_form if conversation.can_reply else None,
        }


def reply_mentions(post: Post, replier_id: int | None) -> str:
    """Return what a reply to post starts with, as Mastodon pre-fills it: "@author " and
    the post's other @mentions, each once, never the replier ("" when none is left)."""
    names: dict[int, str] = {post.author_id: post.author_name}
    for name, user_id in post.mentions:
        names.setdefault(user_id, name)
    if replier_id is not None:
        names.pop(replier_id, None)
    return "".join(f"@{name} " for name in names.values())


class PostCreateView(LoginNextMixin, ConversationMixin, FormView):
    """POST /post/ (and / and /p/<id>/, where the composer and the reply form post): publish
    a status or a reply (`reply_to`); on error re-show the page it came from (the home
    page, or the permalink replied to) with what was typed, once."""

    request: AuthenticatedHttpRequest

    form_class = PostForm
    template_name = "social/home.html"
    http_method_names = ["post"]

    def login_next(self) -> str:
        return reverse("social:home")

    def get_form_class(self) -> type[PostForm]:
        return ReplyForm if self.request.POST.get("reply_to") else PostForm

    def form_valid(self, form: PostForm) -> HttpResponse:
        # A suspended account is logged out everywhere (its cookie stops resolving), so
        # only an active user gets here.
        user_id = self.request.user.id
        limits = auth.post_limits(user_id)
        self.repo.limits.enforce(limits, gettext("You have posted a lot in a short time."))
        pictures = form.pictures()
        # Stored first (unattached), then claimed by the post; any refusal below deletes
        # them again: a refused post leaves no picture behind.
        tokens = [
            self.repo.attachments.upload(
                user_id, picture.variants, alt=alt, blurhash=picture.blurhash
            ).id
            for picture, alt in pictures
        ]
        try:
            self.repo.posts.create_post(
                user_id,
                form.cleaned_data["status"],
                token=form.cleaned_data.get("token") or None,
                reply_to=form.cleaned_data.get("reply_to"),
                media=tokens,
                spoiler_text=form.cleaned_data.get("spoiler_text") or "",
                sensitive=bool(form.cleaned_data.get("sensitive")) and bool(tokens),
            )
        except (PostPending, PostNotFound, NotAllowed, MediaNotFound) as refused:
            self.repo.attachments.discard(user_id, tokens)
            return self.refused(form, refused)
        except Exception:
            self.repo.attachments.discard(user_id, tokens)
            raise
        if any(not alt for _, alt in pictures):  # a gentle reminder
            messages.info(
                self.request,
                gettext(
                    "Posted. Next time, describe each picture (its alt text) for people "
                    "who cannot see it."
                ),
            )
        else:
            messages.success(self.request, gettext("Posted."))
        return HttpResponseRedirect(self.safe_back_url(reverse("social:home")))

    def refused(self, form: PostForm, refused: Exception) -> HttpResponse:
        """The form again, saying why the repository refused the post."""
        if isinstance(refused, PostPending):
            form.add_error(
                None,
                gettext(
                    "This post is still being saved from your first try. Check your home "
                    "feed in a moment; post again only if it is not there."
                ),
            )
            return self.form_invalid(form, status=409)
        if isinstance(refused, PostNotFound):
            form.add_error(
                None,
                gettext(
                    "The post you replied to is gone: its author deleted it or it was "
                    "removed. Your text is below; post it on its own if you like."
                ),
            )
            return self.form_invalid(form)
        if isinstance(refused, NotAllowed):  # its author blocks the reader
            form.add_error(None, gettext(str(refused)))
            return self.form_invalid(form, status=403)
        form.add_error(None, gettext("Those pictures could not be attached: choose them again."))
        return self.form_invalid(form)

    def form_invalid(self, form: PostForm, status: int = 400) -> HttpResponse:
        if form.sent_pictures():  # a browser cannot be handed files back
            form.add_error(
                None, gettext("Pictures are not kept when a post is refused: choose them again.")
            )
        reply_to = getattr(form, "cleaned_data", {}).get("reply_to")
        context = self.reply_context(reply_to, form) if reply_to else None
        if context is not None and context["reply_form"] is form:
            self.template_name = "social/post_detail.html"
            context["page_url"] = reverse("social:post_detail", args=[reply_to])  # not /post/
        else:  # a post, or a reply to a post gone meanwhile: the text goes to the composer
            user = self.request.user
            home = self.repo.pages.home(
                user.id, 1, settings.RETWIS_FEED_PAGE_SIZE, viewer=Viewer.of(user)
            )
            context = {"post_form": form, "home": home, "page_url": reverse("social:home")}
        return self.render_to_response(self.get_context_data(**context), status=status)

    def reply_context(self, post_id: int, form: PostForm) -> dict | None:
        """Return the permalink's context with form as its reply form, or None when the
        post replied to is no longer there for this reader."""
        try:
            return self.conversation_context(self.visible_conversation(post_id), form)
        except Http404:
            return None


class TimelineView(RememberedPageMixin, RepositoryMixin, TemplateView):
    """/timeline/: the global latest posts, the newest sign-ups and the trending tags."""

    request: SiteHttpRequest

    template_name = "social/timeline.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["timeline"] = timeline = self.read_as_viewer(
            lambda viewer: self.repo.pages.timeline(
                viewer, self.page_number(), settings.RETWIS_TIMELINE_PAGE_SIZE
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
            timeline.latest_users,
            context["trending"],
        )


class ProfileView(RepositoryMixin, TemplateView):
    """/u/<username>/: the user's own posts, counts, follow button, mutual followers, and
    "Follows you" when the user follows the reader."""

    request: SiteHttpRequest

    template_name = "social/profile.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        try:
            profile = self.read_as_viewer(
                lambda viewer: self.repo.pages.profile_for_name(
                    self.kwargs["username"],
                    viewer,
                    self.page_number(),
                    settings.RETWIS_FEED_PAGE_SIZE,
                )
            )
        except UserNotFound:
            raise Http404("No such user.") from None
        self.checked_page(profile.posts)
        context["profile"] = profile
        return context


class FollowListView(UserPageMixin, TemplateView):
    """/u/<username>/followers/ and /following/: paged, newest first. A logged-in reader
    gets a Follow or Unfollow button on every row but their own (it comes back to this
    page), and "Follows you" on the people who follow them."""

    request: SiteHttpRequest

    template_name = "social/follow_list.html"
    which = "followers"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        viewer = self.request.user
        context["owner"] = self.target_user
        context["which"] = self.which
        context["entries"] = self.checked_page(
            self.repo.graph.follow_list(
                self.target_id,
                self.which,
                self.page_number(),
                settings.RETWIS_LIST_PAGE_SIZE,
                viewer=Viewer.of(viewer),
            )
        )
        return context


class MutualsView(LoginNextMixin, UserPageMixin, TemplateView):
    """/u/<username>/followers/you-follow/: the people the reader follows who follow this
    account (a profile's "…and 15 more"), paged, in the followers list's template."""

    request: AuthenticatedHttpRequest

    template_name = "social/follow_list.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        owner, entries = self.repo.graph.mutuals(
            self.target_id,
            Viewer.of(self.request.user),
            self.page_number(),
            settings.RETWIS_LIST_PAGE_SIZE,
        )
        if owner is None:  # absent, or hidden from this reader: as its profile
            raise Http404("No such user.")
        context.update(owner=owner, which="mutuals", entries=self.checked_page(entries))
        return context


class FollowView(LoginNextMixin, UserPageMixin, View):
    """POST /u/<username>/follow/ and /unfollow/: change the graph, go back."""

    request: AuthenticatedHttpRequest

    http_method_names = ["post"]
    action = "follow"

    def login_next(self) -> str:
        return reverse("social:profile", args=[self.kwargs["username"]])

    def post(self, request: AuthenticatedHttpRequest, username: str) -> HttpResponse:
        back = self.safe_back_url(reverse("social:profile", args=[username]))
        target = self.target_user  # 404 for a suspended account, as its profile
        limits = auth.follow_limits(request.user.id)
        self.repo.limits.enforce(
            limits, gettext("You have followed and unfollowed a lot in a short time.")
        )
        name = {"name": target.username}
        said, level = "", messages.SUCCESS
        try:
            if self.action == "follow":
                if self.repo.graph.follow(request.user.id, target.id):
                    said = gettext("You are now following @%(name)s.") % name
            elif self.repo.graph.unfollow(request.user.id, target.id):
                said = gettext("You unfollowed @%(name)s.") % name
        except CannotFollowSelf:
            said, level = gettext("You cannot follow yourself."), messages.ERROR
        except NotAllowed as error:  # across a block
            said, level = gettext(str(error)), messages.ERROR
        except UserNotFound:
            raise Http404("No such user.") from None
        follows = self.action == "follow"
        control = {  # what the button becomes (to the page's script: social/answers.py)
            "action": reverse("social:unfollow" if follows else "social:follow", args=[username]),
            "label": gettext("Unfollow") if follows else gettext("Follow"),
            "name": (gettext("Unfollow @%(name)s") if follows else gettext("Follow @%(name)s"))
            % name,
            "pressed": follows,
        }
        return answer(request, back, said, level=level, control=control)


class PostDetailView(ConversationMixin, TemplateView):
    """/p/<id>/: the post in its conversation: the posts above it, a reply form, and its
    replies, oldest first, paged."""

    request: SiteHttpRequest

    template_name = "social/post_detail.html"

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponseBase:
        """The reply form posts here, so a refused reply is shown again at its permalink
        (PostCreateView; `reply_to` says what it answers, as at /post/)."""
        return PostCreateView.as_view()(request)

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        conversation = self.visible_conversation(self.kwargs["post_id"], self.page_number())
        if conversation.post.id != self.kwargs["post_id"]:  # a repost: the post it shares
            return redirect("social:post_detail", conversation.post.id)
        self.checked_page(conversation.replies)
        return self.render_to_response(
            self.get_context_data(**self.conversation_context(conversation), **kwargs)
        )


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

    request: AuthenticatedHttpRequest

    form_class = ReportPostForm
    template_name = "social/post_detail.html"

    @cached_property
    def reported(self) -> tuple[Post, PostCounts]:
        """The post and its counts, when the reporter may act on it."""
        try:
            viewer = Viewer.of(self.request.user)
            # A repost's id: the post it shares is reported.
            return self.repo.pages.post(self.kwargs["post_id"], viewer, to_act=True, shared=True)
        except PostNotFound:
            raise Http404("No such post.") from None

    @property
    def reported_post(self) -> Post:
        return self.reported[0]

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["report_form"] = context["form"]
        context["post"], counts = self.reported
        context["counts"] = {context["post"].id: counts}
        return context

    def form_valid(self, form: ReportPostForm) -> HttpResponse:
        data = self.request.user, self.reported_post.id, form.cleaned_data["reason"]
        limits = auth.report_limits(self.request.user.id)
        self.repo.limits.enforce(limits, gettext("You have sent a lot of reports in a short time."))
        try:
            self.repo.reports.report_post(*data, form.cleaned_data["text"])
        except AlreadyReported:
            messages.info(
                self.request, gettext("You already reported this post. Moderators will look.")
            )
        except NotAllowed as error:
            messages.error(self.request, gettext(str(error)))
        except PostNotFound:
            raise Http404("No such post.") from None
        else:
            messages.success(self.request, gettext("Thanks. Moderators will review this post."))
        return redirect("social:post_detail", self.reported_post.id)

    def form_invalid(self, form: ReportPostForm) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)


class DeletePostView(LoginNextMixin, RepositoryMixin, TemplateView):
    """/p/<id>/delete/: GET asks to confirm; POST deletes the reader's own post and goes
    home. Someone else's post: 403 (it is there, but not theirs); a missing one: 404."""

    request: AuthenticatedHttpRequest

    template_name = "social/delete_post.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        try:
            viewer = Viewer.of(self.request.user)
            post, _ = self.repo.pages.post(self.kwargs["post_id"], viewer, to_act=True)
        except PostNotFound:
            raise Http404("No such post.") from None
        if post.repost_of is not None:  # undone by its card's button, never deleted
            raise Http404("No such post.")
        if post.author_id != self.request.user.id:
            raise PermissionDenied(gettext("You can only delete your own posts."))
        context["post"] = post
        return context

    def post(self, request: AuthenticatedHttpRequest, post_id: int) -> HttpResponse:
        try:
            self.repo.posts.delete_own_post(request.user.id, post_id)
        except PostNotFound:
            raise Http404("No such post.") from None
        except NotAllowed as error:
            raise PermissionDenied(gettext(str(error))) from None
        messages.success(request, gettext("Your post is deleted."))
        return redirect("social:home")


class MentionsView(LoginNextMixin, RepositoryMixin, TemplateView):
    """/mentions/: the posts that mention the reader, newest first (a tab of the
    notifications, which count them: the navigation has one count)."""

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
            )
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
                    self.kwargs["tag"], viewer, self.page_number(), settings.RETWIS_FEED_PAGE_SIZE
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
            )
        except UserNotFound:
            raise Http404("No such user.") from None
        context["owner"] = owner
        context["likes"] = self.checked_page(likes)
        return context


class SearchView(RepositoryMixin, TemplateView):
    """/search/?q=: people and tags by name (bounded work per query: SearchStore)."""

    request: SiteHttpRequest

    template_name = "social/search.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        form = SearchForm(self.request.GET)
        context["form"] = form
        if form.is_valid():
            query = form.cleaned_data["q"]
            context["results"] = self.repo.search.search(query, Viewer.of(self.request.user))
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
        context["notifications_seen"] = True  # the header's count was read before it cleared
        return context
