"""A card's own actions, each a POST from the page's #card-actions form, answered with the
page it came from, at the post: like, unlike, repost, undo a repost. Idempotent."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views import View

from social import auth
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

    def back(self, post_id: int) -> HttpResponseRedirect:
        back = self.safe_back_url(reverse("social:post_detail", args=[post_id]))
        return HttpResponseRedirect(back if "#" in back else f"{back}#post-{post_id}")


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
                self.repo.likes.like(request.user.id, post_id)
            else:
                self.repo.likes.unlike(request.user.id, post_id)
        except PostNotFound:
            raise Http404("No such post.") from None
        except NotAllowed as error:  # a block between the reader and its author
            messages.error(request, gettext(str(error)))
        return self.back(post_id)


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
        try:
            if self.action == "repost":
                _, new = self.repo.reposts.repost(request.user.id, post_id)
                if new:
                    messages.success(request, gettext("Reposted: your followers see it now."))
                else:
                    messages.info(request, gettext("You already repost this post."))
            elif self.repo.reposts.unrepost(request.user.id, post_id):
                messages.success(request, gettext("Your repost is undone."))
            else:
                messages.info(request, gettext("You do not repost this post."))
        except PostNotFound:
            raise Http404("No such post.") from None
        except NotAllowed as error:  # one's own post, or a block either way
            messages.error(request, gettext(str(error)))
        return self.back(post_id)
