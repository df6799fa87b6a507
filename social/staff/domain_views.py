"""Other servers, for staff: /staff/domains/ lists the blocked ones (when, by whom, why)
with a form to block one and a button to unblock each, then the servers remote accounts
are known on (how many, whether blocked, whether deliveries to them fail). Blocking and
unblocking are POSTs of their own, audited (repository/federation/domains.py); each queues
the job that finishes the work off the page (social/federation/moderation.py)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views import View
from django.views.generic import TemplateView

from social import work
from social.federation.moderation import queue_settle
from social.federation.names import InvalidAddress, normalise_domain
from social.http import AuthenticatedHttpRequest
from social.staff import forms
from social.staff.mixins import StaffRequiredMixin


def queued_settle(request: AuthenticatedHttpRequest, domain: str) -> None:
    """Queue the job that settles domain's accounts; say so when the queue is full."""
    try:
        queue_settle(domain)
    except work.QueueFull:
        messages.warning(
            request,
            gettext(
                "The background work is busy: the follows with %(domain)s are not all "
                "removed yet. Block it again later to finish."
            )
            % {"domain": domain},
        )


class DomainsView(StaffRequiredMixin, TemplateView):
    """/staff/domains/: blocked servers, the block form (?domain= fills it in), known
    servers (?after=<domain>: the page after that one)."""

    request: AuthenticatedHttpRequest
    template_name = "staff/domains.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        domains = self.repo.federation_domains
        if "form" not in context:
            asked = self.request.GET.get("domain", "")[: forms.DOMAIN_INPUT_MAX]
            context["form"] = forms.DomainBlockForm(initial={"domain": asked})
            if asked:  # "Block…" from the known servers: the reason is what is left to type
                context["form"].fields["reason"].widget.attrs["autofocus"] = True
        context["blocked"] = domains.blocked()
        pager = forms.KnownDomainsForm(self.request.GET)
        after = pager.cleaned_data["after"] if pager.is_valid() else ""
        context["after"] = after
        context["known"], context["more"] = domains.known(after)
        context["failing"] = {f.domain: f for f in self.repo.federation_deliveries.failing()}
        return context


class DomainBlockView(DomainsView):
    """POST /staff/domains/block/: block a server (audited), suspend its accounts, and
    queue the removal of its follows; back to /staff/domains/, or the page again with
    the form's errors (400)."""

    http_method_names = ["post"]

    def login_next(self) -> str:
        return reverse("staff:domains")

    def post(self, request: AuthenticatedHttpRequest, *args, **kwargs) -> HttpResponse:
        form = forms.DomainBlockForm(request.POST)
        if not form.is_valid():
            return self.render_to_response(self.get_context_data(form=form), status=400)
        domain = form.cleaned_data["domain"]
        named = {"domain": domain}
        if self.repo.federation_domains.block(domain, request.user, form.value()):
            messages.success(
                request,
                gettext(
                    "%(domain)s is blocked: nothing goes to it or comes from it, its "
                    "accounts are suspended, and their follows with people here are being "
                    "removed."
                )
                % named,
            )
        else:
            messages.info(
                request,
                gettext("%(domain)s was blocked already: its accounts are checked again.") % named,
            )
        queued_settle(request, domain)
        return HttpResponseRedirect(reverse("staff:domains"))


class DomainUnblockView(StaffRequiredMixin, View):
    """POST /staff/domains/<domain>/unblock/: unblock a server (audited) and lift the
    suspensions its block made; back to /staff/domains/."""

    request: AuthenticatedHttpRequest
    http_method_names = ["post"]

    def login_next(self) -> str:
        return reverse("staff:domains")

    def post(self, request: AuthenticatedHttpRequest, domain: str) -> HttpResponse:
        try:
            named = normalise_domain(domain)
        except InvalidAddress:
            raise Http404 from None
        if named != domain:  # the page's own links use the one spelling
            raise Http404
        form = forms.ReasonForm(request.POST)
        reason = form.value() if form.is_valid() else ""
        if self.repo.federation_domains.unblock(domain, request.user, reason):
            messages.success(
                request,
                gettext(
                    "%(domain)s is unblocked: the suspensions its block made are lifted. "
                    "The follows it removed do not come back."
                )
                % {"domain": domain},
            )
            queued_settle(request, domain)
        else:
            messages.info(request, gettext("%(domain)s was not blocked.") % {"domain": domain})
        return HttpResponseRedirect(reverse("staff:domains"))
