"""/settings/profile/: a person's display name, bio, avatar and header."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext, gettext_lazy
from django.views.generic import FormView

from social import auth, work
from social.email_views import throttled
from social.federation import outgoing
from social.http import AuthenticatedHttpRequest
from social.mixins import LoginNextMixin, RepositoryMixin
from social.profile_forms import ProfileForm
from social.repository import Repository

BUSY = gettext_lazy("Many pictures are waiting to be processed: try again in a minute.")
BUSY_RETRY_AFTER = 60  # seconds: about what the media queue takes to drain a burst


def queue_pictures(repo: Repository, user_id: int, checked: Sequence[tuple[str, bytes]]) -> None:
    """Store each (kind, bytes) as user_id's pending avatar or header and queue its job
    (the worker makes it the profile's once processed); raise work.QueueFull, with what
    was stored taken back, when the media queue is full."""
    begun: list[tuple[str, str]] = []
    try:
        for kind, data in checked:
            begun.append((kind, repo.profiles.begin_picture(user_id, kind, data)))
            work.enqueue("media", "picture", {"token": begun[-1][1]})
    except work.QueueFull:
        for kind, token in begun:
            repo.profiles.give_up(user_id, kind, token)
        raise


class ProfileSettingsView(LoginNextMixin, RepositoryMixin, FormView):
    """Edit the profile: a bad field is said beside it and the rest stays as typed;
    nothing is stored until every field is right. New pictures are processed by the
    worker: the page says so until they are ready."""

    request: AuthenticatedHttpRequest

    form_class = ProfileForm
    template_name = "social/profile_settings.html"

    def get_initial(self) -> dict:
        user = self.request.user
        return {"display_name": user.display_name, "note": user.note}

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["processing"] = self.repo.profiles.pending(self.request.user.id)
        return context

    def form_invalid(self, form: ProfileForm, status: int = 400) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=status)

    def form_valid(self, form: ProfileForm) -> HttpResponse:
        # Counted before any picture is read; a refused picture counts.
        too_many = gettext("Too many changes. Try again in %(wait)s.")
        user_id = self.request.user.id
        refused = throttled(self, self.repo, form, auth.profile_limits(user_id), too_many)
        if refused is not None:
            return refused
        checked = form.checked_pictures()
        if checked is None:
            return self.form_invalid(form)
        try:
            queue_pictures(self.repo, user_id, checked)
        except work.QueueFull:
            form.add_error(None, BUSY)
            response = self.form_invalid(form, status=503)
            response["Retry-After"] = str(BUSY_RETRY_AFTER)
            return response
        self.repo.profiles.update(user_id, **form.changes())
        outgoing.profile_changed(user_id)  # pictures: once adopted (work_handlers/media.py)
        if checked:
            messages.success(
                self.request,
                gettext("Your profile is saved. New pictures show once they are processed."),
            )
        else:
            messages.success(self.request, gettext("Your profile is saved."))
        return redirect("social:profile_settings")
