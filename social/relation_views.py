"""Following, blocking and muting an account: follow and unfollow, the followers,
following and mutuals lists; block and mute (POST from its profile or a card; to the
page's script, JSON: social/answers.py), the lists of accounts the reader blocks and mutes
(/settings/blocks/, /settings/mutes/), and their word filters (/settings/filters/)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext, ngettext
from django.views import View
from django.views.generic import FormView, TemplateView
from markupsafe import Markup

from social import auth
from social.answers import answer, wants_json
from social.federation import outgoing
from social.forms import FILTER_PLACES, FilterForm
from social.http import AuthenticatedHttpRequest, SiteHttpRequest
from social.keys import FILTERS_CAP, RELATIONS_CAP
from social.mixins import LoginNextMixin, RepositoryMixin, UserPageMixin
from social.repository import CannotFollowSelf, NotAllowed, UserNotFound, Viewer
from social.templating.filters import intcomma


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
            self.repo.account_lists.follow_list(
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
        owner, entries = self.repo.account_lists.mutuals(
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
                    outgoing.followed(request.user.id, target.id)
                    said = gettext("You are now following @%(name)s.") % name
            elif self.repo.graph.unfollow(request.user.id, target.id):
                outgoing.unfollowed(request.user.id, target.id)
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
        if wants_json(request) and level != messages.ERROR:  # the profile's count, as it is now
            control["count_html"] = followers_words(self.repo.graph.follower_count(target.id))
        return answer(request, back, said, level=level, control=control)


def followers_words(count: int) -> str:
    """A profile's followers count as its head shows it ("<strong>2</strong> followers",
    social/_profile.html), the number escaped."""
    words = ngettext(
        "<strong>%(num)s</strong> follower", "<strong>%(num)s</strong> followers", count
    )
    return str(Markup(words) % {"num": intcomma(count)})


class RelationView(LoginNextMixin, UserPageMixin, View):
    """POST /u/<username>/block/, /unblock/, /mute/, /unmute/: idempotent; back to the
    page it came from with a message."""

    request: AuthenticatedHttpRequest

    ACTIONS = ("block", "unblock", "mute", "unmute")
    http_method_names = ["post"]
    action = "block"

    def login_next(self) -> str:
        return reverse("social:profile", args=[self.kwargs["username"]])

    def post(self, request: AuthenticatedHttpRequest, username: str) -> HttpResponse:
        back = self.safe_back_url(reverse("social:profile", args=[username]))
        if self.action in ("unblock", "unmute"):
            # Undoing is for any account in the reader's lists, a suspended one included
            # (/settings/blocks/ lists it); only a missing name is 404.
            target_id, target_name = self.target_id, username
        else:  # 404 for a missing or suspended account, as its profile
            target_id, target_name = self.target_user.id, self.target_user.username
        self.repo.limits.enforce(
            auth.relation_limits(request.user.id),
            gettext("You have blocked and muted a lot in a short time."),
        )
        name = {"name": target_name}
        try:
            changed = getattr(self.repo.relations, self.action)(request.user.id, target_id)
            if changed and self.action in ("block", "unblock"):
                outgoing.queue_action(self.action, request.user.id, target_id)
        except NotAllowed as error:  # oneself, or the cap
            refused = gettext(str(error)) % {"cap": f"{RELATIONS_CAP:,}"}
            return answer(request, back, refused, level=messages.ERROR)
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
        said_now = (said if changed else already)[self.action] % name
        level = messages.SUCCESS if changed else messages.INFO
        return answer(request, back, said_now, level=level, control=self.control(target_name))

    def control(self, name: str) -> dict:
        """What the control becomes, to the page's script (social/answers.py): Mute and
        Unmute trade places; after a block the profile's main button is Unblock, after an
        unblock Follow."""
        become = {"block": "unblock", "unblock": "follow", "mute": "unmute", "unmute": "mute"}
        action = become[self.action]
        labels = {
            "unblock": (gettext("Unblock"), gettext("Unblock @%(name)s")),
            "follow": (gettext("Follow"), gettext("Follow @%(name)s")),
            "unmute": (gettext("Unmute"), gettext("Unmute @%(name)s")),
            "mute": (gettext("Mute"), gettext("Mute @%(name)s")),
        }
        label, labelled = labels[action]
        return {
            "action": reverse(f"social:{action}", args=[name]),
            "label": label,
            "name": labelled % {"name": name},
            "pressed": self.action in ("block", "mute"),
        }


class BlockView(RelationView):
    """/u/<username>/block/: GET asks to confirm, saying what a block does (a form that
    POSTs: no script needed); POST blocks (RelationView)."""

    http_method_names = ["get", "post"]
    action = "block"

    def login_next(self) -> str:
        if self.request.method == "GET":  # this page itself: a browser GETs it after login
            return self.request.get_full_path()
        return super().login_next()

    def get(self, request: AuthenticatedHttpRequest, username: str) -> HttpResponse:
        target = self.target_user  # 404 for a missing or suspended account, as its profile
        profile = reverse("social:profile", args=[target.username])
        context = {
            "target": target,
            "own": target.id == request.user.id,
            "back": self.safe_url(request.GET.get("next"), profile),
            "profile": profile,
        }
        return render(request, "social/block_confirm.html", context)


class RelationListView(LoginNextMixin, RepositoryMixin, TemplateView):
    """/settings/blocks/ and /settings/mutes/: the accounts the reader blocks or mutes,
    newest first, paged, each with its undo button."""

    request: AuthenticatedHttpRequest

    template_name = "social/relations.html"
    which = "blocks"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        pages = {
            "blocks": self.repo.account_lists.blocks_page,
            "mutes": self.repo.account_lists.mutes_page,
        }
        context["which"] = self.which
        context["entries"] = self.checked_page(
            pages[self.which](
                self.request.user.id, self.page_number(), settings.RETWIS_LIST_PAGE_SIZE
            )
        )
        return context


class FilterView(LoginNextMixin, RepositoryMixin, FormView):
    """/settings/filters/: the reader's word filters (those made in apps too), each with
    its delete button, and the form that adds one (POST: back here with a message; a bad
    phrase keeps what was typed)."""

    request: AuthenticatedHttpRequest

    form_class = FilterForm
    template_name = "social/filters.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["filters"] = self.repo.filters.filters(self.request.user.id)
        context["cap"] = FILTERS_CAP
        context["places"] = FILTER_PLACES
        return context

    def form_valid(self, form: FilterForm) -> HttpResponse:
        self.repo.limits.enforce(
            auth.relation_limits(self.request.user.id),
            gettext("You have added a lot of filters in a short time."),
        )
        data = form.cleaned_data
        phrase, action = data["phrase"], data["action"]
        try:
            self.repo.filters.add(
                self.request.user.id, phrase, data["expiry"], action=action, context=data["context"]
            )
        except NotAllowed as error:  # a duplicate, or a cap
            form.add_error("phrase", gettext(str(error)) % {"phrase": phrase, "cap": FILTERS_CAP})
            return self.form_invalid(form)
        said = {
            "hide": gettext("Posts with “%(phrase)s” stay out of your feeds now."),
            "warn": gettext("Posts with “%(phrase)s” are folded now, with the word named."),
        }
        messages.success(self.request, said[action] % {"phrase": phrase})
        return redirect("social:filters")

    def form_invalid(self, form: FilterForm) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)


class FilterDeleteView(LoginNextMixin, RepositoryMixin, View):
    """POST /settings/filters/<id>/delete/: idempotent; back to the list."""

    request: AuthenticatedHttpRequest

    http_method_names = ["post"]

    def login_next(self) -> str:
        return reverse("social:filters")

    def post(self, request: AuthenticatedHttpRequest, filter_id: int) -> HttpResponse:
        if self.repo.filters.delete(request.user.id, filter_id):
            messages.success(request, gettext("The filter is deleted."))
        return redirect("social:filters")
