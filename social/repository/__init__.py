"""The one repository: every Redis call the site makes goes through here.

`Repository` is composed of small stores, one per aggregate, each given the client, the
feed shapes, the process cache and the other stores it uses, nothing more:
`repo.users`, `repo.posts`, `repo.graph`, `repo.notices`, `repo.limits`, `repo.audit`,
`repo.reports`, `repo.moderation`, `repo.stats`, `repo.directory`, `repo.bulk`,
`repo.repair`.
"""

from __future__ import annotations

import redis
from django.conf import settings

from social.redis_client import get_redis

from .audit import AuditStore
from .bulk import BulkStore
from .cache import ProcessCache
from .directory import DirectoryStore
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
from .repair import RepairStore
from .reports import ReportStore
from .stats import StatsStore
from .users import UserStore


class Repository:
    """All reads and writes of the site's state, store by store."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        home_feed_cap: int = 1000,
        timeline_cap: int = 1000,
        fanout_batch: int = 1000,
        cache: ProcessCache | None = None,
    ) -> None:
        self.r = client
        # Facts that never change, remembered between requests (cache.py); a repository
        # made without one gets its own, so nothing is shared by accident.
        self.cache = cache if cache is not None else ProcessCache()
        config = {
            "home_feed_cap": home_feed_cap,
            "timeline_cap": timeline_cap,
            "fanout_batch": fanout_batch,
            "cache": self.cache,
        }
        self.users = UserStore(client, **config)
        self.notices = NoticeStore(client, **config)
        self.posts = PostStore(client, notices=self.notices, **config)
        self.graph = GraphStore(client, posts=self.posts, users=self.users, **config)
        self.limits = LimitStore(client, **config)
        self.audit = AuditStore(client, **config)
        self.reports = ReportStore(client, audit=self.audit, posts=self.posts, **config)
        self.moderation = ModerationStore(
            client, audit=self.audit, posts=self.posts, reports=self.reports,
            users=self.users, **config,
        )  # fmt: skip
        self.stats = StatsStore(client, **config)
        self.directory = DirectoryStore(client, **config)
        self.bulk = BulkStore(client, posts=self.posts, users=self.users, **config)
        self.repair = RepairStore(client, **config)


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
