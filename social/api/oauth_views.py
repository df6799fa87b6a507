"""OAuth 2 endpoints: registering an app, the consent page, tokens, revocation, the
server's metadata; and /settings/apps/, where a person sees and revokes what they
authorised. The protocol is oauthlib's (social/api/oauth.py); these views only carry
requests to it and its answers back."""

from __future__ import annotations

import json
from typing import NamedTuple
from urllib.parse import parse_qs, urlencode, urlsplit

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views import View
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import TemplateView
from oauthlib.common import add_params_to_uri
from oauthlib.oauth2 import OAuth2Error

from social import auth
from social.http import AuthenticatedHttpRequest
from social.middleware import form_action_allowing
from social.mixins import LoginNextMixin, RepositoryMixin
from social.repository import get_repository

from . import redirect_uris
from . import scopes as scope_rules
from .base import (
    ApiError,
    ApiView,
    error_for,
    error_response,
    json_response,
    parse_body,
    with_cors,
)
from .forms import app_registration
from .oauth import OAuthServer, server
from .redirect_uris import OOB

# What the consent page's hidden fields carry back to the POST (and nothing else).
AUTHORIZE_FIELDS = (
    "client_id", "redirect_uri", "response_type", "scope", "state", "code_challenge",
    "code_challenge_method",
)  # fmt: skip
FIELD_MAX = 2000


def app_json(app, secret: str | None = None) -> dict:
    """An Application as Mastodon shows it (the secret only when just registered)."""
    data = {
        "id": app.client_id,
        "name": app.name,
        "website": app.website or None,
        "scopes": list(app.scopes),
        "redirect_uri": "\n".join(app.redirect_uris),
        "redirect_uris": list(app.redirect_uris),
        "vapid_key": "",
    }
    if secret is not None:
        data.update(client_id=app.client_id, client_secret=secret, client_secret_expires_at=0)
    return data


class AppsView(ApiView):
    """POST /api/v1/apps: register a client; anyone may, a few times an hour an address."""

    public = frozenset({"post"})

    def post(self, request: HttpRequest) -> HttpResponse:
        form = app_registration(self.request.params)
        headers = self.enforce(
            auth.app_limits(auth.client_ip(request)), "Too many apps registered."
        )
        app, secret = self.repo.oauth.register_app(
            form.name, form.redirect_uris, form.scopes, form.website
        )
        return json_response(app_json(app, secret), headers=headers)


class AppVerifyView(ApiView):
    """GET /api/v1/apps/verify_credentials: the app the token belongs to."""

    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        token = self.request.token
        app = self.repo.oauth.get_app(token.client_id) if token is not None else None
        if app is None:
            raise ApiError(401, "The access token is invalid")
        return json_response(app_json(app))


def oauth_request(request: HttpRequest) -> tuple[str, str, str, dict[str, str]]:
    """The request as oauthlib takes it: URI, method, a form-encoded body (a JSON body is
    re-encoded: Mastodon takes both) and the headers it reads."""
    params = parse_body(request)
    if isinstance(params, dict):
        pairs = [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in params.items()]
        body = urlencode([(k, v) for k, v in pairs if v is not None])
    else:
        body = urlencode(list(params.lists()), doseq=True) if request.method == "POST" else ""
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if "Authorization" in request.headers:
        headers["Authorization"] = request.headers["Authorization"]
    return request.build_absolute_uri(), request.method or "GET", body, headers


def oauth_answer(headers: dict, body: str | None, status: int) -> HttpResponse:
    """oauthlib's answer as a response, with CORS (/oauth/token is called by browsers)."""
    response = HttpResponse(body or "{}", status=status, content_type="application/json")
    for name, value in headers.items():
        response[name] = value
    response["Cache-Control"] = "no-store"
    return with_cors(response)


def _oauth_endpoint(request: HttpRequest, respond: str) -> tuple | HttpResponse:
    """What /oauth/token and /oauth/revoke share: CORS preflight, POST only, the request
    given to oauthlib's server (its method `respond`), a refused attempt (429), a bad body
    or Redis down answered as the API answers them. Returns oauthlib's (headers, body,
    status), or the response to send as it is."""
    if request.method == "OPTIONS":
        return with_cors(HttpResponse(status=204))
    if request.method != "POST":
        return error_response(405, "Method not allowed")
    try:
        uri, method, body, headers = oauth_request(request)
        endpoint = server(get_repository(), auth.client_ip(request))
        return getattr(endpoint, respond)(uri, method, body, headers)
    except Exception as error:
        mapped = error_for(error)
        if mapped is None:
            raise
        return mapped


@csrf_exempt  # a client's call, authenticated by its own secret, never by a cookie
def token_view(request: HttpRequest) -> HttpResponse:
    """POST /oauth/token: a code, a password or the client's own credentials for a token."""
    answer = _oauth_endpoint(request, "create_token_response")
    return answer if isinstance(answer, HttpResponse) else oauth_answer(*answer)


@csrf_exempt
def revoke_view(request: HttpRequest) -> HttpResponse:
    """POST /oauth/revoke: the client revokes one of its tokens (unknown ones too: 200)."""
    answer = _oauth_endpoint(request, "create_revocation_response")
    if isinstance(answer, HttpResponse):
        return answer
    headers, body, status = answer
    if status == 200:
        body = "{}"
    elif status == 401:  # oauthlib says invalid_client; Mastodon answers 403 for it
        status = 403
    return oauth_answer(headers, body, status)


def metadata_view(request: HttpRequest) -> HttpResponse:
    """GET /.well-known/oauth-authorization-server (RFC 8414), as Mastodon 4.3 serves it."""
    base = request.build_absolute_uri("/").rstrip("/")
    data = {
        "issuer": base + "/",
        "service_documentation": base + "/",
        "authorization_endpoint": base + reverse("api:authorize"),
        "token_endpoint": base + reverse("api:token"),
        "revocation_endpoint": base + reverse("api:revoke"),
        "app_registration_endpoint": base + reverse("api:apps"),
        "scopes_supported": sorted(scope_rules.KNOWN),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "password", "client_credentials"],
        "token_endpoint_auth_methods_supported": [
            "client_secret_basic",
            "client_secret_post",
            "none",
        ],  # fmt: skip
        "code_challenge_methods_supported": ["S256"],
    }
    return json_response(data)


class Checked(NamedTuple):
    """An authorization request oauthlib found valid: its server, the request's URI, the
    scopes asked for and the redirect URI (the app's first when it named none)."""

    oauth: OAuthServer
    uri: str
    scopes: list[str]
    redirect_uri: str


class AppRedirect(HttpResponseRedirect):
    """A redirect to an app's URI, whatever its scheme (Django's own allows http, https
    and ftp only; a phone app's is its own): only ever a URI the app registered and
    redirect_uris.py allows."""

    def __init__(self, location: str) -> None:
        self.allowed_schemes = [urlsplit(location).scheme]
        super().__init__(location)


# The consent page's Cross-Origin-Opener-Policy. A web client opens it in a popup and
# waits for the code through `window.opener` (postMessage from its redirect page, or by
# reading the popup's location once it is back on the client's origin). The site's
# `same-origin` (Django's SECURE_CROSS_ORIGIN_OPENER_POLICY) puts the popup in a browsing
# context group of its own and cuts that link: the client sees the popup closed and gives
# up. `same-origin-allow-popups` would not do: it keeps the links of popups a page opens,
# never a cross-origin opener's link to the page. So these responses (the page, its
# answer's redirect to the app, the redirect to the login page) say `unsafe-none`, the
# browsers' default and what Mastodon's authorization pages send (no header). Nothing else
# changes: no frame may hold them (`frame-ancestors 'none'`, X-Frame-Options), every other
# page keeps `same-origin`.
OPENER_POLICY = "unsafe-none"


class AuthorizeView(LoginNextMixin, RepositoryMixin, TemplateView):
    """/oauth/authorize: GET asks the logged-in person whether the app may act for them
    (what it asks for, in words); POST answers: the browser sent to the app's redirect URI
    with a code (or `access_denied`), or the code shown for an app without one (the
    out-of-band URI). A request found wrong before the person has pressed anything is
    said on the site's own page, never sent to the app (RFC 9700 §4.11.2). Every answer
    keeps a popup's link to the app that opened it (OPENER_POLICY)."""

    request: AuthenticatedHttpRequest
    template_name = "api/authorize.html"

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponseBase:
        response = super().dispatch(request, *args, **kwargs)
        response["Cross-Origin-Opener-Policy"] = OPENER_POLICY  # SecurityMiddleware keeps it
        return response

    def fields(self, source) -> dict[str, str]:
        return {
            name: str(source.get(name, ""))[:FIELD_MAX]
            for name in AUTHORIZE_FIELDS
            if source.get(name)
        }

    def check(self, fields: dict[str, str]) -> Checked | str:
        """A valid request as oauthlib checked it, or why the request is not valid."""
        oauth = server(self.repo, auth.client_ip(self.request))
        uri = self.request.build_absolute_uri(reverse("api:authorize")) + "?" + urlencode(fields)
        try:
            scopes, credentials = oauth.validate_authorization_request(uri, "GET", "", {})
        except OAuth2Error as error:  # FatalClientError too: an unknown app or URI
            return error.description or error.error
        return Checked(oauth, uri, scopes, credentials["redirect_uri"])

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        fields = self.fields(request.GET)
        checked = self.check(fields)
        if isinstance(checked, str):
            return self.refuse(checked)
        app = self.repo.oauth.get_app(fields.get("client_id", ""))
        context = self.get_context_data(
            app=app, fields=fields, scopes=checked.scopes, scope_lines=scope_lines(checked.scopes)
        )
        response = self.render_to_response(context)
        source = redirect_uris.form_action_source(checked.redirect_uri)
        if source and settings.CONTENT_SECURITY_POLICY:  # let the answer's redirect through
            policy = form_action_allowing(settings.CONTENT_SECURITY_POLICY, source)
            response["Content-Security-Policy"] = policy
        return response

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        fields = self.fields(request.POST)
        checked = self.check(fields)
        if isinstance(checked, str):
            return self.refuse(checked)
        app = self.repo.oauth.get_app  # read only for a page that names it
        if request.POST.get("decision") != "allow":
            if checked.redirect_uri == OOB:
                denied = self.get_context_data(denied=True, app=app(fields["client_id"]))
                return self.render_to_response(denied)
            answer = [("error", "access_denied")]
            answer += [("state", fields["state"])] if fields.get("state") else []
            return AppRedirect(add_params_to_uri(checked.redirect_uri, answer))
        try:
            headers, _, _ = checked.oauth.create_authorization_response(
                checked.uri, "GET", "", {}, scopes=checked.scopes,
                credentials={"user": request.user},
            )  # fmt: skip
        except OAuth2Error as error:
            return self.refuse(error.description or error.error)
        location = headers["Location"]
        if checked.redirect_uri == OOB:
            code = parse_qs(urlsplit(location).query).get("code", [""])[0]
            shown = self.get_context_data(code=code, app=app(fields["client_id"]))
            return self.render_to_response(shown)
        return AppRedirect(location)

    def refuse(self, reason: str) -> HttpResponse:
        """An authorization request no app may be sent back for (unknown app, a redirect
        URI it did not register, a response type, scope or challenge method the site does
        not give): said on the page, with status 400."""
        context = self.get_context_data(refused=reason)
        return self.render_to_response(context, status=400)


def scope_lines(scopes) -> list[str]:
    """What each scope asked for lets the app do, in the reader's language."""
    words = {
        "read": gettext("read everything your account can see: posts, people, notifications"),
        "write": gettext("post, like, follow, block and mute as you, and delete your posts"),
        "follow": gettext("follow, block and mute accounts for you, and see those lists"),
        "push": gettext("receive push notifications (this site sends none)"),
        "profile": gettext("see your name"),
    }
    lines = []
    for scope in scopes:
        if scope in words:
            lines.append(words[scope])
        elif scope.startswith("read:"):
            lines.append(gettext("read: %(what)s") % {"what": scope[5:]})
        elif scope.startswith("write:"):
            lines.append(gettext("change: %(what)s") % {"what": scope[6:]})
    return lines


class AppsSettingsView(LoginNextMixin, RepositoryMixin, TemplateView):
    """/settings/apps/: the apps the reader authorised, each with its revoke button."""

    request: AuthenticatedHttpRequest
    template_name = "api/apps.html"

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["authorisations"] = self.repo.oauth.authorisations(self.request.user.id)
        return context


class AppRevokeView(LoginNextMixin, RepositoryMixin, View):
    """POST /settings/apps/<client_id>/revoke/: revoke every token the reader gave an app;
    idempotent; back to the list."""

    request: AuthenticatedHttpRequest
    http_method_names = ["post"]

    def login_next(self) -> str:
        return reverse("api:settings_apps")

    def post(self, request: AuthenticatedHttpRequest, client_id: str) -> HttpResponse:
        if self.repo.oauth.revoke_app(request.user.id, client_id):
            messages.success(request, gettext("The app can no longer use your account."))
        return redirect("api:settings_apps")
