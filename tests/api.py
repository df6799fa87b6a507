"""Helpers of the client API's tests: a token for a persona (made through the repository,
as an authorisation would), and a test client that sends it."""

from __future__ import annotations

import json
import secrets
from typing import Any, cast
from urllib.parse import urlencode

import redis
from django.test import Client
from redis.cluster import RedisCluster

from social.repository import Repository, User

OOB = "urn:ietf:wg:oauth:2.0:oob"


def token_for(repo: Repository, user: User | None, scopes: str = "read write follow") -> str:
    """Register an app and give user (None: the app itself) a token with scopes."""
    app, _ = repo.oauth.register_app("Test app", [OOB], ["read", "write", "follow", "push"])
    token = secrets.token_urlsafe(32)
    repo.oauth.save_token(token, app.client_id, user.id if user else None, scopes.split())
    return token


class Api:
    """A test client calling the API with a Bearer token (None: as a visitor)."""

    def __init__(self, token: str | None) -> None:
        self.client = Client()
        self.headers: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}

    def get(self, path: str, params: dict | None = None, **extra):
        return self.client.get(path, params or {}, **self.headers, **extra)

    def post(self, path: str, data: dict | None = None, *, as_json: bool = False, **extra):
        if as_json:
            return self.client.post(
                path, json.dumps(data or {}), content_type="application/json",
                **self.headers, **extra,
            )  # fmt: skip
        return self.client.post(path, data or {}, **self.headers, **extra)

    def put(self, path: str, data: dict | None = None, *, as_json: bool = True, **extra):
        if as_json:
            body, kind = json.dumps(data or {}), "application/json"
        else:
            body, kind = urlencode(data or {}, doseq=True), "application/x-www-form-urlencoded"
        return self.client.put(path, body, content_type=kind, **self.headers, **extra)

    def delete(self, path: str, **extra):
        return self.client.delete(path, **self.headers, **extra)


def all_keys(r: redis.Redis | RedisCluster, pattern: str) -> list[str]:
    """The keys matching pattern on the test server, on every primary of a cluster."""
    if isinstance(r, RedisCluster):
        return cast(list[str], r.keys(pattern, target_nodes=RedisCluster.PRIMARIES))
    return cast(list[str], r.keys(pattern))
