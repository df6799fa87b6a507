"""OAuth 2 state for the client API: registered apps, authorization codes, access tokens.

The protocol is oauthlib's (social/api/oauth.py drives its server over this store); this
module only keeps its state. No secret is stored as typed: an app's client secret, a code
and a token are kept as the SHA-256 of their text (`digest`), so reading the database
gives no one a way in. A user's tokens are listed in keys.oauth_user_tokens (the settings
page, revoking an app, the staff account page), at most keys.OAUTH_TOKENS_CAP.

Keys (social/keys/clients.py): oauth:app:<client_id>, oauth:code:<digest>,
oauth:token:<digest>, oauth:user:<id>.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Unpack, cast

import redis

from social import keys

from ..base import (
    Client,
    RepositoryBase,
    StoreSettings,
    as_int,
    decode_hash,
    now,
    user_from_hash,
)
from ..errors import UserNotFound
from ..models import AccessToken, RememberedToken, User, as_datetime
from ..moderation.audit import AuditDraft, AuditStore

CLIENT_ID_BYTES = 32  # token_urlsafe: 43 characters
NAME_MAX = 100  # an app's name as registered (Mastodon: 60; clients send longer ones)
WEBSITE_MAX = 500
REDIRECT_URIS_MAX = 10
REDIRECT_URI_MAX = 500


def digest(text: str) -> str:
    """Return the SHA-256 of text (hex): how a secret, a code or a token is stored."""
    return hashlib.sha256(text.encode()).hexdigest()


def members(reply: object) -> list[str]:
    """A sorted set's members (a ZRANGE reply) as str."""
    return [m.decode() if isinstance(m, bytes) else str(m) for m in cast(list, reply)]


def is_client_id(text: str) -> bool:
    """Whether text may name an app (keys.oauth_app would accept it)."""
    return 16 <= len(text) <= 64 and text.replace("-", "").replace("_", "").isalnum()


@dataclass(frozen=True)
class OAuthApp:
    """A registered client application."""

    client_id: str
    name: str
    website: str
    redirect_uris: tuple[str, ...]
    scopes: tuple[str, ...]
    secret_digest: str
    created: int

    def checks_secret(self, secret: str) -> bool:
        """Whether secret is this app's client secret (compared in constant time)."""
        return secrets.compare_digest(digest(secret), self.secret_digest)


@dataclass(frozen=True)
class AuthCode:
    """An authorization code waiting to be exchanged for a token."""

    client_id: str
    user_id: int
    redirect_uri: str
    scopes: tuple[str, ...]
    challenge: str = ""
    challenge_method: str = ""


@dataclass(frozen=True)
class Authorisation:
    """An app a person authorised: its tokens' scopes together, how many, since when."""

    client_id: str
    name: str
    website: str
    scopes: tuple[str, ...]
    tokens: int
    first: int
    last: int

    @property
    def last_at(self) -> datetime | None:
        return as_datetime(self.last)


class StaleToken(Exception):
    """A remembered token no longer holds (revoked, its account changed): read again with
    the token checked first."""


def queue_token_check(reads, remembered: RememberedToken) -> None:
    """Queue the reads that check a remembered token (see token_holds)."""
    reads.hgetall("token_check", keys.oauth_token(remembered.token.digest))
    reads.hgetall("token_user", keys.user(remembered.user.id))


def token_holds(remembered: RememberedToken, got: Mapping) -> bool:
    """Whether the token and its user, as queue_token_check read them, are as remembered:
    the token not revoked, the account's name, standing and relations flag the same."""
    token = token_from_hash(remembered.token.digest, decode_hash(cast(Mapping, got["token_check"])))
    user = user_from_hash(remembered.user.id, decode_hash(cast(Mapping, got["token_user"])))
    was = remembered.user
    return (
        token == remembered.token
        and user is not None
        and (user.username, user.is_staff, user.is_suspended, user.has_relations)
        == (was.username, was.is_staff, was.is_suspended, was.has_relations)
    )


def app_from_hash(client_id: str, h: Mapping[str, str]) -> OAuthApp | None:
    """Build an OAuthApp from a decoded app hash, or None when there is none."""
    if not h.get("secret"):
        return None
    return OAuthApp(
        client_id=client_id,
        name=h.get("name") or "",
        website=h.get("website") or "",
        redirect_uris=tuple((h.get("redirect_uris") or "").split()),
        scopes=tuple((h.get("scopes") or "").split()),
        secret_digest=h["secret"],
        created=as_int(h.get("created")) or 0,
    )


def token_from_hash(token_digest: str, h: Mapping[str, str]) -> AccessToken | None:
    """Build an AccessToken from a decoded token hash, or None when there is none."""
    if not h.get("client_id"):
        return None
    return AccessToken(
        digest=token_digest,
        client_id=h["client_id"],
        user_id=as_int(h.get("user_id")),
        scopes=tuple((h.get("scopes") or "").split()),
        created=as_int(h.get("created")) or 0,
    )


class OAuthStore(RepositoryBase):
    """Apps, codes and tokens of the client API."""

    def __init__(
        self, client: Client, *, audit: AuditStore, **config: Unpack[StoreSettings]
    ) -> None:
        super().__init__(client, **config)
        self.audit = audit

    # --- Apps -------------------------------------------------------------------------------

    def register_app(
        self,
        name: str,
        redirect_uris: Sequence[str],
        scopes: Sequence[str],
        website: str = "",
        *,
        at: int | None = None,
    ) -> tuple[OAuthApp, str]:
        """Register an app; return it and its client secret (shown once, stored hashed).

        The caller has validated every field (social/api/forms.py); they are cut to their
        bounds here too. Unused, the app expires after a day (keys.OAUTH_APP_UNUSED_TTL).
        """
        ts = now() if at is None else at
        client_id = secrets.token_urlsafe(CLIENT_ID_BYTES)
        secret = secrets.token_urlsafe(CLIENT_ID_BYTES)
        app = OAuthApp(
            client_id=client_id,
            name=name[:NAME_MAX],
            website=website[:WEBSITE_MAX],
            redirect_uris=tuple(uri[:REDIRECT_URI_MAX] for uri in redirect_uris)[
                :REDIRECT_URIS_MAX
            ],
            scopes=tuple(scopes),
            secret_digest=digest(secret),
            created=ts,
        )
        pipe = self._pipe()
        key = keys.oauth_app(client_id)
        pipe.hset(
            key,
            mapping={
                "name": app.name,
                "website": app.website,
                "redirect_uris": "\n".join(app.redirect_uris),
                "scopes": " ".join(app.scopes),
                "secret": app.secret_digest,
                "created": ts,
            },
        )
        pipe.expire(key, keys.OAUTH_APP_UNUSED_TTL)
        pipe.execute()
        return app, secret

    def get_app(self, client_id: str) -> OAuthApp | None:
        """Return the app registered as client_id, or None (also for a malformed id)."""
        if not is_client_id(client_id):
            return None
        return app_from_hash(client_id, decode_hash(self.r.hgetall(keys.oauth_app(client_id))))

    def _apps(self, client_ids: Iterable[str]) -> dict[str, OAuthApp]:
        """Return {client_id: app} for those that exist, in one round trip."""
        ids = [c for c in dict.fromkeys(client_ids) if is_client_id(c)]
        if not ids:
            return {}
        pipe = self._pipe()
        for client_id in ids:
            pipe.hgetall(keys.oauth_app(client_id))
        found = {c: app_from_hash(c, decode_hash(h)) for c, h in zip(ids, pipe.execute())}
        return {c: app for c, app in found.items() if app is not None}

    # --- Codes ------------------------------------------------------------------------------

    def save_code(self, code: str, grant: AuthCode) -> None:
        """Keep an authorization code for keys.OAUTH_CODE_TTL seconds."""
        key = keys.oauth_code(digest(code))
        pipe = self._pipe()
        pipe.hset(
            key,
            mapping={
                "client_id": grant.client_id,
                "user_id": grant.user_id,
                "redirect_uri": grant.redirect_uri,
                "scopes": " ".join(grant.scopes),
                "challenge": grant.challenge,
                "challenge_method": grant.challenge_method,
            },
        )
        pipe.expire(key, keys.OAUTH_CODE_TTL)
        pipe.execute()

    def take_code(self, code: str) -> AuthCode | None:
        """Return the grant code stands for and delete it, or None: a code is used once,
        even by two exchanges at the same moment (RepositoryBase._take_hash)."""
        if not code or len(code) > 256:
            return None
        h = self._take_hash(keys.oauth_code(digest(code))) or {}
        user_id = as_int(h.get("user_id"))
        if not h.get("client_id") or user_id is None:
            return None
        return AuthCode(
            client_id=h["client_id"],
            user_id=user_id,
            redirect_uri=h.get("redirect_uri") or "",
            scopes=tuple((h.get("scopes") or "").split()),
            challenge=h.get("challenge") or "",
            challenge_method=h.get("challenge_method") or "",
        )

    # --- Tokens -----------------------------------------------------------------------------

    def save_token(
        self,
        token: str,
        client_id: str,
        user_id: int | None,
        scopes: Sequence[str],
        *,
        at: int | None = None,
    ) -> AccessToken:
        """Store an access token (hashed) and return it.

        A user's token is listed in their oauth_user_tokens and its app is kept for good
        (PERSIST); past keys.OAUTH_TOKENS_CAP the user's oldest tokens are revoked (one
        round trip more). An app's own token (user_id None) expires after
        keys.OAUTH_APP_TOKEN_TTL. The token hash goes first: a token listed is always one
        that works until revoked.
        """
        ts = now() if at is None else at
        stored = AccessToken(digest(token), client_id, user_id, tuple(scopes), ts)
        key = keys.oauth_token(stored.digest)
        pipe = self._pipe()
        pipe.hset(
            key,
            mapping={
                "client_id": client_id,
                "user_id": "" if user_id is None else user_id,
                "scopes": " ".join(scopes),
                "created": ts,
            },
        )
        if user_id is None:
            pipe.expire(key, keys.OAUTH_APP_TOKEN_TTL)
            pipe.execute()
            return stored
        pipe.persist(keys.oauth_app(client_id))
        pipe.zadd(keys.oauth_user_tokens(user_id), {stored.digest: ts})
        pipe.zcard(keys.oauth_user_tokens(user_id))
        size = pipe.execute()[-1]
        if size > keys.OAUTH_TOKENS_CAP:
            self._drop_oldest(user_id, size - keys.OAUTH_TOKENS_CAP)
        return stored

    def _drop_oldest(self, user_id: int, count: int) -> None:
        """Revoke user_id's `count` oldest tokens."""
        oldest = members(self.r.zrange(keys.oauth_user_tokens(user_id), 0, count - 1))
        self._revoke_digests(user_id, oldest)

    def authenticate(self, token: str) -> tuple[AccessToken | None, User | None]:
        """Return the token stored for `token` and its user (None for an app's own token or
        a missing user). One round trip when this process has seen the token (its user's
        hash is read with it; cache.tokens), two otherwise. The token hash is read every
        time: it is the truth (revoking deletes it)."""
        if not token or len(token) > 256:
            return None, None
        token_digest = digest(token)
        known = self.cache.tokens.get(token_digest)
        guess = known.user.id if known is not None else None
        reads = self.reads()
        reads.hgetall("token", keys.oauth_token(token_digest))
        if guess is not None:
            reads.hgetall("user", keys.user(guess))
        got = reads.execute()
        stored = token_from_hash(token_digest, decode_hash(cast(Mapping, got["token"])))
        if stored is None or stored.user_id is None:
            self.cache.tokens.discard(token_digest)
            return stored, None
        if stored.user_id != guess:
            raw = cast(Mapping, self.r.hgetall(keys.user(stored.user_id)))
        else:
            raw = cast(Mapping, got["user"])
        user = user_from_hash(stored.user_id, decode_hash(raw))
        if user is None:
            self.cache.tokens.discard(token_digest)
        else:
            self.cache.tokens.put(token_digest, RememberedToken(stored, user))
        return stored, user

    def remembered(self, token: str) -> RememberedToken | None:
        """The token and user this process last read for `token`, unchecked (no round
        trip): only for a read that checks it on its own first pipeline (token_holds)."""
        if not token or len(token) > 256:
            return None
        return self.cache.tokens.get(digest(token))

    def revoke(self, token: str) -> bool:
        """Revoke one token (RFC 7009: revoking an unknown token is no error); return
        whether it existed."""
        if not token or len(token) > 256:
            return False
        token_digest = digest(token)
        raw = decode_hash(self.r.hgetall(keys.oauth_token(token_digest)))
        stored = token_from_hash(token_digest, raw)
        if stored is None:
            return False
        if stored.user_id is None:
            self.r.delete(keys.oauth_token(token_digest))
        else:
            self._revoke_digests(stored.user_id, [token_digest])
        return True

    def _revoke_digests(self, user_id: int, digests: Sequence[str]) -> None:
        """Delete user_id's tokens by digest, and take them off the user's list."""
        if not digests:
            return
        pipe = self._pipe()
        for token_digest in digests:
            pipe.delete(keys.oauth_token(token_digest))
        pipe.zrem(keys.oauth_user_tokens(user_id), *digests)
        pipe.execute()

    def revoke_all(self, user_id: int) -> int:
        """Revoke every token user_id holds (their account is deleted, or its password reset
        by mail link): the token hashes and the list go. Return how many. Two round trips
        (the list is at most keys.OAUTH_TOKENS_CAP)."""
        held = members(self.r.zrange(keys.oauth_user_tokens(user_id), 0, -1))
        self._revoke_digests(user_id, held)
        if held:
            self.r.delete(keys.oauth_user_tokens(user_id))
        return len(held)

    def user_tokens(self, user_id: int) -> list[AccessToken]:
        """Return user_id's tokens, newest first (two round trips; tokens listed but gone
        are skipped)."""
        listed = members(self.r.zrevrange(keys.oauth_user_tokens(user_id), 0, -1))
        if not listed:
            return []
        pipe = self._pipe()
        for token_digest in listed:
            pipe.hgetall(keys.oauth_token(token_digest))
        found = [token_from_hash(d, decode_hash(h)) for d, h in zip(listed, pipe.execute())]
        return [t for t in found if t is not None and t.user_id == user_id]

    def authorisations(self, user_id: int) -> list[Authorisation]:
        """Return the apps user_id authorised, most recently first (three round trips)."""
        tokens = self.user_tokens(user_id)
        apps = self._apps(t.client_id for t in tokens)
        grouped: dict[str, list[AccessToken]] = {}
        for token in tokens:
            grouped.setdefault(token.client_id, []).append(token)
        result = []
        for client_id, held in grouped.items():
            app = apps.get(client_id)
            scopes = dict.fromkeys(scope for t in held for scope in t.scopes)
            result.append(
                Authorisation(
                    client_id=client_id,
                    name=app.name if app else "",
                    website=app.website if app else "",
                    scopes=tuple(scopes),
                    tokens=len(held),
                    first=min(t.created for t in held),
                    last=max(t.created for t in held),
                )
            )
        return result

    def revoke_app(self, user_id: int, client_id: str) -> int:
        """Revoke every token user_id gave client_id; return how many there were."""
        held = [t.digest for t in self.user_tokens(user_id) if t.client_id == client_id]
        self._revoke_digests(user_id, held)
        return len(held)

    def staff_revoke_app(self, user_id: int, client_id: str, actor: User, reason: str = "") -> int:
        """Revoke, as staff, every token user_id gave client_id, logged in the audit log
        (the entry names the app); return how many there were. Raise UserNotFound."""
        target = self.user_of(user_id)
        if target is None:
            raise UserNotFound(user_id)
        held = [t.digest for t in self.user_tokens(user_id) if t.client_id == client_id]
        if not held:
            return 0
        app = self.get_app(client_id)
        named = (
            f"{app.name if app else client_id}: {reason}"
            if reason
            else (app.name if app else client_id)
        )
        draft = AuditDraft(actor, "revoke_app", target.id, target.username, reason=named)

        def queue(pipe: redis.client.Pipeline, ts: int) -> None:
            for token_digest in held:
                pipe.delete(keys.oauth_token(token_digest))
            pipe.zrem(keys.oauth_user_tokens(user_id), *held)

        self.audit.run_audited([draft], queue)
        return len(held)

    def user_of(self, user_id: int) -> User | None:
        """Return the user with this id, or None (the token endpoint's grant check)."""
        return user_from_hash(user_id, decode_hash(self.r.hgetall(keys.user(user_id))))
