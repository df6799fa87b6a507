"""The client API's OAuth apps, codes and tokens. Secrets (a token, a code, a client
secret) are kept as the SHA-256 of their text (hex)."""

from __future__ import annotations

from ._shared import _checked_digest


def _checked_client_id(client_id: str) -> str:
    if not 16 <= len(client_id) <= 64 or not client_id.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"bad client id {client_id!r}")
    return client_id


def oauth_app(client_id: str) -> str:
    """Hash: a registered client app; expires OAUTH_APP_UNUSED_TTL until authorised."""
    return f"oauth:app:{_checked_client_id(client_id)}"


OAUTH_APP_UNUSED_TTL = 24 * 60 * 60


def oauth_code(digest: str) -> str:
    """Hash: an authorization code (by its SHA-256); used once, OAUTH_CODE_TTL."""
    return f"oauth:code:{_checked_digest(digest)}"


OAUTH_CODE_TTL = 10 * 60


def oauth_token(digest: str) -> str:
    """Hash: an access token (by its SHA-256): a user's until revoked, an app's a day."""
    return f"oauth:token:{_checked_digest(digest)}"


OAUTH_APP_TOKEN_TTL = 24 * 60 * 60


def oauth_user_tokens(user_id: int) -> str:
    """Sorted set: the SHA-256 of each token user_id authorised, by when."""
    return f"oauth:user:{int(user_id)}"


OAUTH_TOKENS_CAP = 200
