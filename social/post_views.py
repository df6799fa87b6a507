"""A post: writing it (/post/, a reply), its permalink with its conversation
(/p/<id>/), reporting and deleting it. A card's own buttons: social/post_actions.py."""

from __future__ import annotations

from functools import cached_property
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.urls import Resolver404, resolve, reverse
from django.utils.translation import gettext, gettext_lazy
from django.views.generic import FormView, TemplateView

from social import auth, work
from social.federation import outgoing
from social.federation.views import post_response, wants_activity
from social.http import AuthenticatedHttpRequest, SiteHttpRequest
from social.mixins import LoginNextMixin, RepositoryMixin
from social.post_forms import CheckedPicture, PostForm, ReplyForm, ReportPostForm
from social.repository import (
    Conversation,
    NotAllowed,
    Post,
    PostCounts,
    PostNotFound,
    PostPending,
    Viewer,
)
from social.repository.errors import RepositoryError
from social.repository.moderation.reports import AlreadyReported

REPLIES_PAGE_SIZE = 20  # replies under a permalink, oldest first
BUSY = gettext_lazy("Many pictures are waiting to be processed: try again in a minute.")
BUSY_RETRY_AFTER = 60  # seconds: about what the media queue takes to drain a burst


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


# The pages a permalink's back link names by their own name (URL name -> words); a
# profile is "@name", a tag "#tag", any other page of the site "Back".
BACK_WORDS = {
    "home": gettext_lazy("Home"),
    "timeline": gettext_lazy("Timeline"),
    "notifications": gettext_lazy("Notifications"),
    "mentions": gettext_lazy("Mentions"),
    "search": gettext_lazy("Search"),
}


def back_link(request: HttpRequest, post_id: int, signed_in: bool) -> tuple[str, str]:
    """Return where the permalink's back link goes and what it says: the page of this
    site the reader came from (its Referer, which the Referrer-Policy sends only within
    the site), named; without one, or from this post itself, home for a reader and the
    timeline for a visitor. Only a path the site routes is linked."""
    default = (
        (reverse("social:home"), gettext("Home"))
        if signed_in
        else (reverse("social:timeline"), gettext("Timeline"))
    )
    came = urlsplit(request.headers.get("Referer", ""))
    if came.scheme not in ("http", "https") or came.netloc != request.get_host():
        return default
    try:
        match = resolve(unquote(came.path))  # a tag's path is percent-encoded
    except Resolver404:
        return default
    name, found = match.url_name, match.kwargs
    here = came.path + (f"?{came.query}" if came.query else "")
    if name == "post_detail" and found.get("post_id") == post_id or name in AWAY:
        return default
    if name == "profile":
        return here, f"@{found['username']}"
    if name == "tag":
        return here, f"#{found['tag']}"
    words = BACK_WORDS.get(name or "")
    return here, str(words) if words is not None else gettext("Back")


# Pages the back link does not return to: the forms that led here once (a login, a report).
AWAY = {"login", "register", "report_post", "delete_post", "block"}


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
        # only an active user gets here. Everything cheap is checked (is_valid); the
        # attempt is counted before any picture is read, and a refused picture counts.
        self.count_attempt()
        user_id = self.request.user.id
        checked = form.checked_pictures()
        if checked is None:
            return self.form_invalid(form)
        data = form.cleaned_data
        if checked:
            return self.queue_post(form, checked)
        try:
            post_id = self.repo.posts.create_post(
                user_id,
                data["status"],
                token=data.get("token") or None,
                reply_to=data.get("reply_to"),
                spoiler_text=data.get("spoiler_text") or "",
            )
        except (PostPending, PostNotFound, NotAllowed) as refused:
            return self.refused(form, refused)
        outgoing.posted(user_id, post_id)
        messages.success(self.request, gettext("Posted."))
        return HttpResponseRedirect(self.safe_back_url(reverse("social:home")))

    def queue_post(self, form: PostForm, checked: list[CheckedPicture]) -> HttpResponse:
        """Keep the post and its pictures as sent, and queue one job a picture: the worker
        writes the post once they are processed (home's live bar shows it when it lands;
        a picture refused then is told on the home page, with the text). Never waits."""
        data, user_id = form.cleaned_data, self.request.user.id
        reply_to = data.get("reply_to")
        if reply_to is not None:  # said now if already gone (the worker checks again)
            try:
                self.repo.pages.post(
                    reply_to, Viewer.of(self.request.user), to_act=True, shared=True
                )
            except PostNotFound as gone:
                return self.refused(form, gone)
        draft = self.repo.attachments.draft_post(
            user_id,
            data["status"],
            [(picture.data, picture.alt) for picture in checked],
            post_token=data.get("token") or None,
            reply_to=reply_to,
            spoiler_text=data.get("spoiler_text") or "",
            sensitive=bool(data.get("sensitive")),
        )
        try:
            for token in draft.media:
                work.enqueue("media", "picture", {"token": token})
        except work.QueueFull:
            self.repo.attachments.drop_draft(draft)
            return self.busy(form)
        messages.success(
            self.request, gettext("Your post will appear once its pictures are ready.")
        )
        if any(not picture.alt for picture in checked):  # a gentle reminder
            messages.info(
                self.request,
                gettext(
                    "Next time, describe each picture (its alt text) for people who cannot see it."
                ),
            )
        return HttpResponseRedirect(self.safe_back_url(reverse("social:home")))

    def busy(self, form: PostForm) -> HttpResponse:
        """The form again with "try again in a minute" (503 with Retry-After): the
        picture queue is full."""
        form.add_error(None, BUSY)
        response = self.form_invalid(form, status=503)
        response["Retry-After"] = str(BUSY_RETRY_AFTER)
        return response

    def refused(self, form: PostForm, refused: RepositoryError) -> HttpResponse:
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
        return self.form_invalid(form)

    def count_attempt(self) -> None:
        """Count this submission against the post limit, once; raise RateLimited past it."""
        if not getattr(self, "counted", False):
            self.counted = True
            self.repo.limits.enforce(
                auth.post_limits(self.request.user.id),
                gettext("You have posted a lot in a short time."),
            )

    def form_invalid(self, form: PostForm, status: int = 400) -> HttpResponse:
        if form.sent_pictures():
            # A refused submission with pictures counts too: its upload cost the server
            # (bench/attack.py), and past the limit the answer is a short 429, not a page.
            self.count_attempt()
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
        if wants_activity(request):  # another server asks for the post's Note
            return post_response(self.repo, self.kwargs["post_id"], vary=True)
        conversation = self.visible_conversation(self.kwargs["post_id"], self.page_number())
        if conversation.post.id != self.kwargs["post_id"]:  # a repost: the post it shares
            return redirect("social:post_detail", conversation.post.id)
        self.checked_page(conversation.replies)
        back = back_link(request, conversation.post.id, self.request.user.is_authenticated)
        return self.render_to_response(
            self.get_context_data(**self.conversation_context(conversation), back=back, **kwargs)
        )


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
        outgoing.deleted(request.user.id, post_id)
        messages.success(request, gettext("Your post is deleted."))
        return redirect("social:home")
