"""/api/v1/push/subscription: Web Push is not sent by this site, so no subscription ever
exists. Every method answers as Mastodon does for a token with no subscription (404
"Record not found"); creating one is refused the same way, rather than pretending to
keep it, so an app knows nothing will be pushed."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from .base import ApiError
from .common import EntityView

NO_SUBSCRIPTION = "Record not found"


class PushSubscriptionView(EntityView):
    """GET, POST, PUT, DELETE /api/v1/push/subscription: 404, for a user's token with the
    `push` scope (401 without a token, 403 without the scope, as Mastodon's)."""

    scopes = {"get": "push", "post": "push", "put": "push", "delete": "push"}

    def answer(self) -> HttpResponse:
        self.me()
        raise ApiError(404, NO_SUBSCRIPTION)

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.answer()

    def post(self, request: HttpRequest) -> HttpResponse:
        return self.answer()

    def put(self, request: HttpRequest) -> HttpResponse:
        return self.answer()

    def delete(self, request: HttpRequest) -> HttpResponse:
        return self.answer()
