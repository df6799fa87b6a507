"""The worker tier for staff: each queue's state on /staff/jobs/ (and its summary on the
dashboard), and the dead letters, which staff send back to their queue or discard; the
servers deliveries fail to, which staff may mark available again."""

from __future__ import annotations

import re

from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views import View
from django.views.generic import TemplateView

from social import work
from social.federation.deliver import QUEUE as DELIVER
from social.federation.names import InvalidAddress, normalise_domain
from social.http import AuthenticatedHttpRequest
from social.repository.models import as_datetime
from social.staff.mixins import StaffRequiredMixin

JOB_ID_RE = re.compile(r"[0-9a-f]{16}")
DEAD_SHOWN = 50  # dead letters listed per queue


def queue_names() -> list[str]:
    return list(work.QUEUES)


class JobsView(StaffRequiredMixin, TemplateView):
    """/staff/jobs/: every queue's depth, oldest job, failures, destinations backing off,
    and its newest dead letters."""

    request: AuthenticatedHttpRequest
    template_name = "staff/jobs.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        names = queue_names()
        context["queues"] = self.repo.jobs.stats(names)
        context["dead"] = self.repo.jobs.dead_letters_of(names, count=DEAD_SHOWN)
        # The servers deliveries fail to, each with when its backoff ends (if it runs).
        backoff = {q.queue: dict(q.backoff) for q in context["queues"]}.get(DELIVER, {})
        context["failing_domains"] = [
            (item, as_datetime(backoff[item.domain] // 1000) if item.domain in backoff else None)
            for item in self.repo.federation_deliveries.failing()
        ]
        return context


class DeadLetterActionView(StaffRequiredMixin, View):
    """POST /staff/jobs/<queue>/<job_id>/retry/ or discard/: send one dead letter back to
    its queue (attempts reset) or delete it; logged; back to /staff/jobs/."""

    request: AuthenticatedHttpRequest
    http_method_names = ["post"]
    action = ""

    def post(self, request: AuthenticatedHttpRequest, queue: str, job_id: str) -> HttpResponse:
        if queue not in work.QUEUES or not JOB_ID_RE.fullmatch(job_id):
            raise Http404
        if self.action == "retry":
            done = self.repo.jobs.staff_retry_dead(queue, job_id, request.user)
            said = gettext("The job is back in its queue.")
        else:
            done = self.repo.jobs.staff_discard_dead(queue, job_id, request.user)
            said = gettext("The job was discarded.")
        if done:
            messages.success(request, said)
        else:
            messages.info(request, gettext("That job is no longer among the failed ones."))
        return HttpResponseRedirect(reverse("staff:jobs"))


class DomainAvailableView(StaffRequiredMixin, View):
    """POST /staff/jobs/domains/<domain>/available/: forget a server's failed deliveries and
    end its backoff (it is back, staff say); logged; back to /staff/jobs/."""

    request: AuthenticatedHttpRequest
    http_method_names = ["post"]

    def post(self, request: AuthenticatedHttpRequest, domain: str) -> HttpResponse:
        try:
            named = normalise_domain(domain)
        except InvalidAddress:
            raise Http404 from None
        if named != domain:
            raise Http404
        if self.repo.federation_deliveries.staff_revive(domain, request.user):
            self.repo.jobs.clear_destination(DELIVER, domain)
            messages.success(
                request, gettext("Deliveries to %(domain)s are tried again.") % {"domain": domain}
            )
        else:
            messages.info(
                request, gettext("No deliveries to %(domain)s were failing.") % {"domain": domain}
            )
        return HttpResponseRedirect(reverse("staff:jobs") + "#failing-domains")
