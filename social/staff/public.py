"""Reporting a post: what any logged-in user can do to bring a post to staff's attention."""

from __future__ import annotations

from functools import cached_property

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.views.generic import FormView

from social.repository import NotAllowed, Post, PostNotFound
from social.repository.reports import AlreadyReported
from social.staff.forms import ReportPostForm
from social.views import RepositoryMixin


class ReportPostView(LoginRequiredMixin, RepositoryMixin, FormView):
    """/p/<id>/report/: GET shows the permalink with the report form; POST files a report."""

    form_class = ReportPostForm
    template_name = "social/post_detail.html"

    @cached_property
    def reported_post(self) -> Post:
        """The post, when the reporter may see it (not deleted, author not suspended)."""
        try:
            return self.repo.get_post(self.kwargs["post_id"])
        except PostNotFound:
            raise Http404("No such post.") from None

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["report_form"] = context["form"]
        context["post"] = self.reported_post
        return context

    def form_valid(self, form: ReportPostForm) -> HttpResponse:
        data = self.request.user, self.reported_post.id, form.cleaned_data["reason"]
        try:
            self.repo.report_post(*data, form.cleaned_data["text"])
        except AlreadyReported:
            messages.info(self.request, "You already reported this post. Moderators will look.")
        except NotAllowed as error:
            messages.error(self.request, str(error))
        except PostNotFound:
            raise Http404("No such post.") from None
        else:
            messages.success(self.request, "Thanks. Moderators will review this post.")
        return redirect("post_detail", self.reported_post.id)

    def form_invalid(self, form: ReportPostForm) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)
