"""OAuth 2 through oauthlib's server core, with its request validator over the repository.

oauthlib speaks the protocol (RFC 6749, PKCE's RFC 7636, revocation's RFC 7009): parsing,
error responses, the order of checks. `Validator` answers its questions from `repo.oauth`
(apps, codes, tokens, all in Redis) and the site's own password check and login limits.
`server()` builds the endpoints the site serves: authorization codes (PKCE optional, as in
Mastodon, and S256 only; a code issued with a challenge may be exchanged with its verifier
instead of the client secret, any other needs the secret), the password grant for
command-line clients, the client credentials grant, and revocation. No implicit grant and
no refresh tokens: Mastodon's tokens do not expire, and neither do ours (until revoked).
Which redirect URIs an app may register and use: social/api/redirect_uris.py.

Checking a Bearer token on an API call is not done here but in social/api/base.py: one
pipeline read of the token and its user, the hot path of every call.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from typing import Any

from django.utils.translation import gettext
from oauthlib.common import Request
from oauthlib.oauth2 import (
    AuthorizationCodeGrant,
    AuthorizationEndpoint,
    BearerToken,
    ClientCredentialsGrant,
    RequestValidator,
    ResourceOwnerPasswordCredentialsGrant,
    RevocationEndpoint,
    TokenEndpoint,
)
from oauthlib.oauth2.rfc6749 import errors

from social import auth, keys
from social.repository import Repository
from social.repository.clients.oauth import AuthCode, OAuthApp

from . import redirect_uris
from . import scopes as scope_rules

# PKCE's code challenge method the server takes (the metadata says so: oauth_views.py):
# S256 only, as Mastodon. oauthlib takes "plain" too and has no setting for it (the table
# of methods is private): s256_only refuses the others where oauthlib's own checks run.
PKCE_METHOD = "S256"


def s256_only(request: Request) -> dict[str, str]:
    """Refuse an authorization request whose code challenge is not S256 (one without a
    method is "plain": RFC 7636 4.3): oauthlib's public hook before its own checks of an
    authorization request (custom_validators.pre_auth); nothing to add to the request."""
    if request.code_challenge is not None and request.code_challenge_method != PKCE_METHOD:
        raise errors.UnsupportedCodeChallengeMethodError(request=request)
    return {}


def new_token(request: Request | None = None) -> str:
    """Return a new access token: 256 random bits, URL-safe (stored hashed)."""
    return secrets.token_urlsafe(32)


class Validator(RequestValidator):
    """oauthlib's questions, answered from the repository. One per request: it carries
    the client's address (the password grant counts failures against it)."""

    def __init__(self, repo: Repository, client_ip: str) -> None:
        super().__init__()
        self.repo = repo
        self.client_ip = client_ip

    # --- Clients --------------------------------------------------------------------------

    def _app(self, client_id: str | None, request: Request) -> OAuthApp | None:
        """The app client_id names (remembered on the request), or None."""
        app = getattr(request, "app", None)
        if app is None or app.client_id != client_id:
            app = self.repo.oauth.get_app(client_id or "")
            request.app = app
        return app

    def client_authentication_required(self, request: Request, *args, **kwargs) -> bool:
        """Every grant and revocation authenticates the client, except a public client's
        exchange of a code issued with a PKCE challenge: its verifier proves who asked
        (checked after). A verifier sent for a code without a challenge proves nothing
        (RFC 6749 §4.1.3), so without a secret that exchange is refused. A code that is
        no more (used, expired) needs no secret to be refused: invalid_grant."""
        if request.grant_type != "authorization_code" or (
            request.client_secret or request.headers.get("Authorization")
        ):
            return True
        grant = self._take_code(request)
        return grant is not None and not grant.challenge

    def _take_code(self, request: Request) -> AuthCode | None:
        """The grant the request's code stands for, taken once per request (a code is used
        once, whatever happens next) and remembered on it."""
        if not getattr(request, "code_taken", False):
            request.code_taken = True
            request.taken_code = self.repo.oauth.take_code(request.code or "")
        return request.taken_code

    def authenticate_client(self, request: Request, *args, **kwargs) -> bool:
        """The client secret in the body (client_secret_post) or in Basic auth."""
        client_id, secret = request.client_id, request.client_secret
        header = request.headers.get("Authorization", "")
        if header.startswith("Basic ") and not secret:
            try:
                pair = base64.b64decode(header[6:], validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                return False
            client_id, _, secret = pair.partition(":")
        app = self._app(client_id, request)
        if app is None or not secret or not app.checks_secret(secret):
            return False
        request.client = app
        request.client_id = app.client_id
        return True

    def authenticate_client_id(self, client_id: str, request: Request, *args, **kwargs) -> bool:
        app = self._app(client_id, request)
        if app is None:
            return False
        request.client = app
        return True

    def validate_client_id(self, client_id: str, request: Request, *args, **kwargs) -> bool:
        return self._app(client_id, request) is not None

    def validate_grant_type(
        self, client_id: str, grant_type: str, client: Any, request: Request, *args, **kwargs
    ) -> bool:
        return grant_type in ("authorization_code", "password", "client_credentials")

    def validate_response_type(
        self, client_id: str, response_type: str, client: Any, request: Request, *args, **kwargs
    ) -> bool:
        return response_type == "code"

    # --- Redirect URIs ----------------------------------------------------------------------

    def validate_redirect_uri(
        self, client_id: str, redirect_uri: str, request: Request, *args, **kwargs
    ) -> bool:
        """A URI the app registered (a loopback one on any port) and the rules allow."""
        app = self._app(client_id, request)
        return app is not None and redirect_uris.allowed(app.redirect_uris, redirect_uri)

    def get_default_redirect_uri(self, client_id: str, request: Request, *args, **kwargs) -> str:
        app = self._app(client_id, request)
        return app.redirect_uris[0] if app is not None and app.redirect_uris else ""

    # --- Scopes -----------------------------------------------------------------------------

    def validate_scopes(
        self, client_id: str, scopes: list[str], client: Any, request: Request, *args, **kwargs
    ) -> bool:
        """Known scopes, each within what the app registered (Mastodon's rule)."""
        app = self._app(client_id, request)
        parsed = scope_rules.parse(" ".join(scopes or ()))
        return app is not None and parsed is not None and scope_rules.within(app.scopes, parsed)

    def get_default_scopes(self, client_id: str, request: Request, *args, **kwargs) -> list[str]:
        return list(scope_rules.DEFAULT)

    # --- Codes ------------------------------------------------------------------------------

    def save_authorization_code(
        self, client_id: str, code: dict, request: Request, *args, **kwargs
    ) -> None:
        self.repo.oauth.save_code(
            code["code"],
            AuthCode(
                client_id=client_id,
                user_id=request.user.id,
                redirect_uri=request.redirect_uri or "",
                scopes=tuple(request.scopes or scope_rules.DEFAULT),
                challenge=request.code_challenge or "",
                challenge_method=request.code_challenge_method or "",
            ),
        )

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Request, *args, **kwargs
    ) -> bool:
        """Take the code (used once, whatever happens next) and check it is this app's and
        its account may still log in."""
        grant = self._take_code(request)
        if grant is None or grant.client_id != client_id:
            return False
        if grant.challenge and grant.challenge_method != PKCE_METHOD:
            return False  # never saved (s256_only); oauthlib would check it as "plain"
        user = self.repo.oauth.user_of(grant.user_id)
        if user is None or not user.is_active:
            return False
        request.user = user
        request.scopes = list(grant.scopes)
        return True

    def confirm_redirect_uri(
        self,
        client_id: str,
        code: str,
        redirect_uri: str,
        client: Any,
        request: Request,
        *args,
        **kwargs,
    ) -> bool:
        grant: AuthCode | None = getattr(request, "taken_code", None)
        return grant is not None and grant.redirect_uri == redirect_uri

    def get_code_challenge(self, code: str, request: Request) -> str | None:
        grant: AuthCode | None = getattr(request, "taken_code", None)
        return grant.challenge if grant is not None and grant.challenge else None

    def get_code_challenge_method(self, code: str, request: Request) -> str | None:
        grant: AuthCode | None = getattr(request, "taken_code", None)
        return grant.challenge_method if grant is not None and grant.challenge_method else None

    def invalidate_authorization_code(
        self, client_id: str, code: str, request: Request, *args, **kwargs
    ) -> None:
        """Nothing left to do: validate_code took the code already."""

    def is_pkce_required(self, client_id: str, request: Request) -> bool:
        return False  # optional, as in Mastodon; a code issued with a challenge needs it

    # --- Users and tokens -------------------------------------------------------------------

    def validate_user(
        self, username: str, password: str, client: Any, request: Request, *args, **kwargs
    ) -> bool:
        """The password grant: the site's own password check, under the login limits
        (a refused attempt raises RateLimited: the view answers 429). The username may be
        given as `name`, `@name` or `name@host` (clients ask for an e-mail address)."""
        name = (username or "").strip().lstrip("@").partition("@")[0][:64]
        password = (password or "")[:256]
        limits = auth.login_limits(self.client_ip, name)
        self.repo.limits.enforce(limits, gettext("Too many failed logins. Try again later."))
        user = auth.authenticate(self.repo, name, password) if name and password else None
        if user is None:
            return False
        auth.login_succeeded(self.repo, limits)  # as the login form: no failure
        if not user.is_active:
            return False
        request.user = user
        return True

    def save_bearer_token(self, token: dict, request: Request, *args, **kwargs) -> None:
        """Store the token (hashed) for the user, or for the app itself (client
        credentials); the response says when it was made, as Mastodon's does, and a
        user's token does not expire."""
        user = getattr(request, "user", None)
        user_id = (
            user.id if user is not None and request.grant_type != "client_credentials" else None
        )
        stored = self.repo.oauth.save_token(
            token["access_token"],
            request.client.client_id,
            user_id,
            request.scopes or scope_rules.DEFAULT,
        )
        token["created_at"] = stored.created
        if user_id is not None:
            token.pop("expires_in", None)

    def revoke_token(
        self, token: str, token_type_hint: str | None, request: Request, *args, **kwargs
    ) -> None:
        stored, _ = self.repo.oauth.authenticate(token)
        if stored is not None and stored.client_id == request.client.client_id:
            self.repo.oauth.revoke(token)


class OAuthServer(AuthorizationEndpoint, TokenEndpoint, RevocationEndpoint):
    """The endpoints the site serves: /oauth/authorize, /oauth/token, /oauth/revoke."""

    def __init__(self, validator: Validator) -> None:
        # An app's own token expires (keys.OAUTH_APP_TOKEN_TTL); save_bearer_token drops
        # `expires_in` from a user's, which lives until revoked.
        bearer = BearerToken(validator, new_token, lambda request: keys.OAUTH_APP_TOKEN_TTL)
        code = AuthorizationCodeGrant(validator, refresh_token=False)
        code.custom_validators.pre_auth.append(s256_only)
        password = ResourceOwnerPasswordCredentialsGrant(validator, refresh_token=False)
        credentials = ClientCredentialsGrant(validator)
        AuthorizationEndpoint.__init__(
            self,
            default_response_type="code",
            response_types={"code": code},
            default_token_type=bearer,
        )
        TokenEndpoint.__init__(
            self,
            default_grant_type="authorization_code",
            grant_types={
                "authorization_code": code,
                "password": password,
                "client_credentials": credentials,
            },
            default_token_type=bearer,
        )
        RevocationEndpoint.__init__(self, validator, supported_token_types=["access_token"])


def server(repo: Repository, client_ip: str) -> OAuthServer:
    """Return the OAuth server for one request."""
    return OAuthServer(Validator(repo, client_ip))
