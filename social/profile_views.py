"""/settings/profile/: a person's display name, bio, avatar and header."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext
from django.views.generic import FormView

from social import auth, images
from social.email_views import throttled
from social.http import AuthenticatedHttpRequest
from social.mixins import LoginNextMixin, RepositoryMixin
from social.profile_forms import ProfileForm
from social.repository.profiles import Picture


class ProfileSettingsView(LoginNextMixin, RepositoryMixin, FormView):
    """Edit the profile: a bad field is said beside it and the rest stays as typed;
    nothing is stored until every field is right."""

    request: AuthenticatedHttpRequest

    form_class = ProfileForm
    template_name = "social/profile_settings.html"

    def get_initial(self) -> dict:
        user = self.request.user
        return {"display_name": user.display_name, "note": user.note}

    def form_invalid(self, form: ProfileForm) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)

    def form_valid(self, form: ProfileForm) -> HttpResponse:
        # Counted before any picture is read; a refused picture counts.
        too_many = gettext("Too many changes. Try again in %(wait)s.")
        refused = throttled(
            self, self.repo, form, auth.profile_limits(self.request.user.id), too_many
        )
        if refused is not None:
            return refused
        checked = form.checked_pictures()
        if checked is None:
            return self.form_invalid(form)
        try:
            pictures = [
                Picture(kind, images.process(data, images.SIZES[kind])) for kind, data in checked
            ]
        except images.ImageRefused as error:
            form.add_error(None, str(error))
            return self.form_invalid(form)
        self.repo.profiles.update(self.request.user.id, pictures=pictures, **form.changes())
        messages.success(self.request, gettext("Your profile is saved."))
        return redirect("social:profile_settings")
