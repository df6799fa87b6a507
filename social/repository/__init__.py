"""The one repository: every Redis call the site makes goes through here.

`Repository` is assembled from one mixin per aggregate (users, posts, graph, notices,
moderation, stats) so no module grows past a readable size; they share one client.
"""

from __future__ import annotations

from django.conf import settings

from social.redis_client import get_redis

from .bulk import BulkStore
from .cache import ProcessCache
from .errors import (
    CannotFollowSelf,
    NotAllowed,
    PostNotFound,
    RepositoryError,
    UsernameTaken,
    UserNotFound,
)
from .graph import GraphStore
from .limits import LimitStore
from .models import AnonymousUser, Counts, FollowEntry, HomePage, Page, Post, Profile, User
from .moderation import ModerationStore
from .notices import NoticeStore
from .posts import PostStore
from .stats import StatsStore
from .users import UserStore


class Repository(
    UserStore,
    PostStore,
    GraphStore,
    NoticeStore,
    LimitStore,
    BulkStore,
    ModerationStore,
    StatsStore,
):
    """All reads and writes of the site's state."""


# One per process: every request's repository shares what earlier requests learnt.
PROCESS_CACHE = ProcessCache(
    posts=settings.RETWIS_POST_CACHE_SIZE, secrets=settings.RETWIS_SECRET_CACHE_SIZE
)


def get_repository() -> Repository:
    """Return a Repository on the configured Redis client and the process's cache."""
    return Repository(
        get_redis(),
        home_feed_cap=settings.RETWIS_HOME_FEED_CAP,
        timeline_cap=settings.RETWIS_TIMELINE_CAP,
        fanout_batch=settings.RETWIS_FANOUT_BATCH,
        cache=PROCESS_CACHE,
    )


__all__ = [
    "AnonymousUser",
    "CannotFollowSelf",
    "Counts",
    "FollowEntry",
    "HomePage",
    "NotAllowed",
    "Page",
    "Post",
    "PROCESS_CACHE",
    "PostNotFound",
    "Profile",
    "Repository",
    "RepositoryError",
    "User",
    "UserNotFound",
    "UsernameTaken",
    "get_repository",
]
