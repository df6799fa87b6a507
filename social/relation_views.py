"""Blocking and muting an account (POST from its profile or a post's card) and the reader's
lists of the accounts they block and mute (/settings/blocks/, /settings/mutes/)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views import View
from django.views.generic import TemplateView

from social import auth
from social.keys import RELATIONS_CAP
from social.mixins import LoginNextMixin, RepositoryMixin, UserPageMixin
from social.repository import NotAllowed, UserNotFound


class RelationView(LoginNextMixin, UserPageMixin, View):
    """POST /u/<username>/block/, /unblock/, /mute/, /unmute/: idempotent; back to the
    page it came from with a message."""

    ACTIONS = ("block", "unblock", "mute", "unmute")
    http_method_names = ["post"]
    action = "block"

    def login_next(self) -> str:
        return reverse("social:profile", args=[self.kwargs["username"]])

    def post(self, request: HttpRequest, username: str) -> HttpResponse:
        back = self.safe_back_url(reverse("social:profile", args=[username]))
        target = self.target_user  # 404 for a missing or suspended account, as its profile
        self.repo.limits.enforce(
            auth.relation_limits(request.user.id),
            gettext("You have blocked and muted a lot in a short time."),
        )
        name = {"name": target.username}
        try:
            changed = getattr(self.repo.relations, self.action)(request.user.id, target.id)
        except NotAllowed as error:  # oneself, or the cap
            messages.error(request, gettext(str(error)) % {"cap": f"{RELATIONS_CAP:,}"})
            return HttpResponseRedirect(back)
        except UserNotFound:
            raise Http404("No such user.") from None
        said = {
            "block": gettext("You blocked @%(name)s. Neither of you sees the other now."),
            "unblock": gettext("You unblocked @%(name)s."),
            "mute": gettext("You muted @%(name)s. Their posts stay out of your feeds."),
            "unmute": gettext("You unmuted @%(name)s."),
        }
        already = {
            "block": gettext("You already block @%(name)s."),
            "unblock": gettext("You do not block @%(name)s."),
            "mute": gettext("You already mute @%(name)s."),
            "unmute": gettext("You do not mute @%(name)s."),
        }
        if changed:
            messages.success(request, said[self.action] % name)
        else:
            messages.info(request, already[self.action] % name)
        return HttpResponseRedirect(back)


class RelationListView(LoginNextMixin, RepositoryMixin, TemplateView):
    """/settings/blocks/ and /settings/mutes/: the accounts the reader blocks or mutes,
    newest first, paged, each with its undo button."""

    template_name = "social/relations.html"
    which = "blocks"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        pages = {"blocks": self.repo.relations.blocks_page, "mutes": self.repo.relations.mutes_page}
        context["which"] = self.which
        context["entries"] = self.checked_page(
            pages[self.which](
                self.request.user.id, self.page_number(), settings.RETWIS_LIST_PAGE_SIZE
            )
        )
        return context
