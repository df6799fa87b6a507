"""The one client factory: the seam tests replace.

The repository and django-redis (the cache) share one connection configuration, REDIS_URL,
so the site talks to exactly one Redis.
"""

from __future__ import annotations

import redis
from django_redis import get_redis_connection

# What "Redis is unavailable" looks like to redis-py: the site answers 503 for these.
UNAVAILABLE = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.BusyLoadingError,
)


def get_redis() -> redis.Redis:
    """Return the shared Redis client of the default cache."""
    return get_redis_connection("default")


def ping() -> bool:
    """Return whether Redis answers."""
    try:
        return bool(get_redis().ping())
    except (*UNAVAILABLE, redis.exceptions.ResponseError):
        return False
