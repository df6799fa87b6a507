"""A card's own actions, each a POST from the page's #card-actions form, answered with the
page it came from, at the post (or, to the page's script, with what the button becomes:
social/answers.py): like, unlike, repost, undo a repost. Idempotent."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.urls import reverse
from django.utils.translation import gettext, ngettext
from django.views import View

from social import auth
from social.answers import answer, wants_json
from social.federation import outgoing
from social.http import AuthenticatedHttpRequest
from social.mixins import LoginNextMixin, RepositoryMixin
from social.repository import NotAllowed, PostNotFound


class PostActionView(LoginNextMixin, RepositoryMixin, View):
    """What the actions share: POST only, a login sends back to the post, and the answer
    is the page the form came from (safe `next`), at the post."""

    request: AuthenticatedHttpRequest

    http_method_names = ["post"]
    action = ""

    def login_next(self) -> str:
        return reverse("social:post_detail", args=[self.kwargs["post_id"]])

    def back_url(self, post_id: int) -> str:
        back = self.safe_back_url(reverse("social:post_detail", args=[post_id]))
        return back if "#" in back else f"{back}#post-{post_id}"

    def answer(self, post_id: int, message: str, level: int, done: bool) -> HttpResponse:
        """Back to the page with the message; to the script, the button as it is now (done:
        whether the reader likes, or reposts, the post after this request)."""
        control = None
        if wants_json(self.request) and level != messages.ERROR:
            control = self.control(post_id, done, self.repo.likes.counts(post_id))
        return answer(self.request, self.back_url(post_id), message, level=level, control=control)

    def control(self, post_id: int, done: bool, counts: tuple[int, int]) -> dict:
        """The button after this request: its URL, words (words()) and the count beside it."""
        kind = self.action.removeprefix("un")  # "like" or "repost"
        count = counts[0] if kind == "like" else counts[1]
        label, title, count_title = self.words(done, count)
        return {
            "action": reverse(f"social:un{kind}" if done else f"social:{kind}", args=[post_id]),
            "label": label,
            "title": title,
            "pressed": done,
            "count": count,
            "count_title": count_title % {"num": count},
        }

    def words(self, done: bool, count: int) -> tuple[str, str, str]:
        """The button's label and title, and the count's title (%(num)s), as the card has them."""
        raise NotImplementedError


class LikeView(PostActionView):
    """POST /p/<id>/like/ and /unlike/ (a repost's id: the post it shares). Counted against
    RETWIS_LIMIT_LIKES (429 past it)."""

    action = "like"

    def post(self, request: AuthenticatedHttpRequest, post_id: int) -> HttpResponse:
        self.repo.limits.enforce(
            auth.like_limits(request.user.id), gettext("You have liked a lot in a short time.")
        )
        try:
            if self.action == "like":
                if self.repo.likes.like(request.user.id, post_id):
                    outgoing.liked(request.user.id, post_id)
            elif self.repo.likes.unlike(request.user.id, post_id):
                outgoing.unliked(request.user.id, post_id)
        except PostNotFound:
            raise Http404("No such post.") from None
        except NotAllowed as error:  # a block between the reader and its author
            return self.answer(post_id, gettext(str(error)), messages.ERROR, False)
        return self.answer(post_id, "", messages.SUCCESS, self.action == "like")

    def words(self, done: bool, count: int) -> tuple[str, str, str]:
        if done:
            label, title = gettext("Liked"), gettext("Unlike this post")
        else:
            label, title = gettext("Like"), gettext("Like this post")
        return label, title, ngettext("%(num)s like", "%(num)s likes", count)


class RepostView(PostActionView):
    """POST /p/<id>/repost/ and /unrepost/: the post goes to (or leaves) the reader's
    followers' home feeds and their profile, "reposted by" them. Counted against
    RETWIS_LIMIT_REPOSTS (429 past it)."""

    action = "repost"

    def post(self, request: AuthenticatedHttpRequest, post_id: int) -> HttpResponse:
        self.repo.limits.enforce(
            auth.repost_limits(request.user.id),
            gettext("You have reposted a lot in a short time."),
        )
        level = messages.SUCCESS
        try:
            if self.action == "repost":
                repost_id, new = self.repo.reposts.repost(request.user.id, post_id)
                if new:
                    outgoing.reposted(request.user.id, repost_id)
                    said = gettext("Reposted: your followers see it now.")
                else:
                    said, level = gettext("You already repost this post."), messages.INFO
            elif self.repo.reposts.unrepost(request.user.id, post_id):
                outgoing.unreposted(request.user.id, post_id)
                said = gettext("Your repost is undone.")
            else:
                said, level = gettext("You do not repost this post."), messages.INFO
        except PostNotFound:
            raise Http404("No such post.") from None
        except NotAllowed as error:  # one's own post, or a block either way
            said, level = gettext(str(error)), messages.ERROR
        return self.answer(post_id, said, level, self.action == "repost")

    def words(self, done: bool, count: int) -> tuple[str, str, str]:
        if done:
            label, title = gettext("Reposted"), gettext("Undo your repost")
        else:
            label, title = gettext("Repost"), gettext("Repost to your followers")
        return label, title, ngettext("%(num)s repost", "%(num)s reposts", count)
