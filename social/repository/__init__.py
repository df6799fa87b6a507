"""The one repository: every Redis call the site makes goes through here.

`Repository` is composed of small stores, one job each, each given the client, the feed
shapes, the process cache and the other stores it uses, nothing more.

- Writing: `repo.users`, `repo.posts` (posting, deleting), `repo.attachments` (pictures
  in posts), `repo.fanouts`, `repo.graph`, `repo.relations` (blocks, mutes),
  `repo.filters`, `repo.notifications` (and reading them, grouped), `repo.markers`,
  `repo.likes`, `repo.reposts`, `repo.notices`, `repo.accounts`.
- Reading pages of posts: `repo.pages`, every one through the one read path `repo.reader`
  (reader.py, from the sources of sources.py, with visibility.py's policy); pages of
  accounts through `repo.account_reader` (account_reader.py, the same policy): the lists a
  person reads (followers, likers, blocks...) are `repo.account_lists`';
  `repo.trending`, `repo.search`.
- The client API (social/api/): `repo.oauth` (apps, codes, tokens), `repo.live` (what a
  streaming listener reads for its reader, live.py), `repo.api_reads` (positions in
  lists), `repo.instance` (the server's rules and description), `repo.tags` (a tag's
  use), `repo.people` (the directory, familiar followers); accounts and relationships in
  bulk are `repo.users`'.
- Staff and operators: `repo.audit`, `repo.reports`, `repo.moderation`, `repo.staff_pages`,
  `repo.stats`, `repo.directory`, `repo.bulk`, `repo.repair`, `repo.media_files` (the
  pictures' lifecycle), `repo.backup`, `repo.limits`.
- The worker tier (social/work/): `repo.jobs` (durable queues on Redis Streams).
- Federation (social/federation/): `repo.federation_keys` (our actors' key pairs),
  `repo.remote_actors` (remote accounts: federation/actors.py).
"""

from __future__ import annotations

from typing import Unpack

from django.conf import settings

from social.redis_client import get_redis

from .accounts.account import AccountStore
from .accounts.emails import EmailStore, EmailTaken
from .accounts.people import PeopleStore
from .accounts.profiles import ProfileStore
from .accounts.users import UserStore
from .base import Client, FeedShape, StoreSettings
from .cache import ProcessCache
from .clients.instance import InstanceStore
from .clients.oauth import OAuthStore
from .errors import (
    CannotFollowSelf,
    NotAllowed,
    PostNotFound,
    PostPending,
    Refused,
    RepositoryError,
    UsernameTaken,
    UserNotFound,
)
from .federation.actors import RemoteActorStore
from .federation.deliveries import DeliveryStore
from .federation.domains import DomainBlockStore
from .federation.inbox import InboxStore
from .federation.key_pairs import KeyPairStore
from .federation.objects import RemoteObjectStore
from .live.live import LiveStore
from .live.markers import MarkerStore
from .live.notices import NoticeStore
from .live.notifications import NotificationStore
from .models import (
    AnonymousUser,
    Counts,
    FollowEntry,
    HomePage,
    Page,
    Post,
    PostCounts,
    Profile,
    User,
)
from .moderation.actions import ModerationStore
from .moderation.audit import AuditStore
from .moderation.directory import DirectoryStore
from .moderation.limits import LimitStore
from .moderation.reports import ReportStore
from .moderation.staff_pages import StaffPageStore
from .moderation.stats import StatsStore
from .operations.backup import BackupStore
from .operations.bulk import BulkStore
from .operations.repair import RepairStore
from .posts.attachments import AttachmentStore, MediaNotFound
from .posts.fanout import FanoutStore
from .posts.likes import LikeStore
from .posts.media_files import MediaFileStore
from .posts.posting import PostStore
from .posts.reposts import RepostStore
from .posts.tags import TagStore
from .posts.trending import TrendingStore
from .read.account_lists import AccountListStore
from .read.account_reader import AccountReader, AccountSource
from .read.api_reads import ApiReadStore
from .read.front import FrontStore
from .read.loading import PostLoader
from .read.pages import Conversation, PageStore
from .read.reader import PageReader
from .read.search import SearchStore
from .read.sources import (
    CONVERSATION,
    HOME,
    MENTIONS,
    PLAIN,
    PROFILE,
    PUBLIC,
    WITH_HIDDEN,
    HomeFeed,
    Liked,
    Listed,
    ListPolicy,
    Mentions,
    OwnPosts,
    Replies,
    Source,
    TagPosts,
    Timeline,
)
from .read.suggestions import Suggestions
from .read.visibility import (
    ANONYMOUS,
    STAFF,
    StaleViewer,
    Viewer,
    ViewerCheck,
    hidden_by_filter,
    may_see_account,
)
from .relations.blocks import RelationStore
from .relations.filters import FilterStore
from .relations.graph import GraphStore
from .work.jobs import JobStore


class Repository:
    """All reads and writes of the site's state, store by store."""

    def __init__(
        self, client: Client, *, cache: ProcessCache | None = None, **shape: Unpack[FeedShape]
    ) -> None:
        """Build every store on client; `shape` is the feed shapes RepositoryBase takes
        (home_feed_cap, timeline_cap, fanout_batch, fanout_read_threshold), its defaults
        where left out."""
        self.r = client
        # One cache for all the stores; a repository made without one gets its own, so
        # nothing is shared by accident (get_repository passes the process's).
        self.cache = cache if cache is not None else ProcessCache()
        config: StoreSettings = {**shape, "cache": self.cache}
        self.users = UserStore(client, **config)
        self.notices = NoticeStore(client, **config)
        self.attachments = AttachmentStore(client, **config)
        self.posts = PostStore(
            client, notices=self.notices, users=self.users, attachments=self.attachments,
            **config,
        )  # fmt: skip
        self.fanouts = FanoutStore(client, **config)
        self.account_reader = AccountReader(client, **config)
        accounts = self.account_reader
        self.account_lists = AccountListStore(client, accounts=accounts, **config)
        self.graph = GraphStore(client, **config)
        self.likes = LikeStore(client, **config)
        self.reposts = RepostStore(client, **config)
        self.relations = RelationStore(client, graph=self.graph, reposts=self.reposts, **config)
        self.filters = FilterStore(client, **config)
        self.trending = TrendingStore(client, **config)
        loader = PostLoader(client, **config)
        self.reader = PageReader(client, loader=loader, users=self.users, **config)
        self.notifications = NotificationStore(client, reader=self.reader, **config)
        self.markers = MarkerStore(client, **config)
        self.pages = PageStore(
            client, reader=self.reader, users=self.users,
            suggestions=Suggestions(client, reader=self.reader, **config), **config,
        )  # fmt: skip
        self.limits = LimitStore(client, **config)
        self.audit = AuditStore(client, **config)
        self.profiles = ProfileStore(client, users=self.users, audit=self.audit, **config)
        self.reports = ReportStore(
            client, audit=self.audit, posts=self.posts, reader=self.reader, **config
        )
        self.moderation = ModerationStore(
            client, audit=self.audit, posts=self.posts, reports=self.reports,
            users=self.users, reader=self.reader, profiles=self.profiles, **config,
        )  # fmt: skip
        self.staff_pages = StaffPageStore(
            client, reports=self.reports, reader=self.reader, **config
        )
        self.stats = StatsStore(client, **config)
        self.front = FrontStore(client, **config)
        self.directory = DirectoryStore(client, **config)
        self.remote_actors = RemoteActorStore(client, **config)
        self.federation_deliveries = DeliveryStore(
            client, audit=self.audit, remote_actors=self.remote_actors, **config
        )
        self.search = SearchStore(
            client, directory=self.directory, users=self.users, accounts=accounts,
            reader=self.reader, remote_actors=self.remote_actors, **config,
        )  # fmt: skip
        self.bulk = BulkStore(client, posts=self.posts, users=self.users, **config)
        self.repair = RepairStore(client, **config)
        self.media_files = MediaFileStore(client, **config)
        self.oauth = OAuthStore(client, audit=self.audit, **config)
        self.emails = EmailStore(client, audit=self.audit, **config)
        self.accounts = AccountStore(
            client, audit=self.audit, users=self.users, reposts=self.reposts,
            oauth=self.oauth, emails=self.emails, profiles=self.profiles, **config,
        )  # fmt: skip
        self.backup = BackupStore(client, **config)
        self.jobs = JobStore(client, audit=self.audit, **config)
        self.api_reads = ApiReadStore(client, reader=self.reader, **config)
        self.live = LiveStore(
            client, reader=self.reader, notifications=self.notifications, **config
        )
        # The client API's server pages and lists (social/api/): the server's rules and
        # description, tags' use, the profile directory and familiar followers.
        self.instance = InstanceStore(client, audit=self.audit, **config)
        self.tags = TagStore(client, **config)
        self.people = PeopleStore(client, accounts=accounts, users=self.users, **config)
        self.federation_keys = KeyPairStore(client, **config)
        self.federation_domains = DomainBlockStore(
            client, audit=self.audit, graph=self.graph, **config
        )
        self.federation_inbox = InboxStore(client, **config)
        self.remote_objects = RemoteObjectStore(client, **config)


# One per process: every request's repository shares what earlier requests learnt.
PROCESS_CACHE = ProcessCache(
    posts=settings.RETWIS_POST_CACHE_SIZE,
    secrets=settings.RETWIS_SECRET_CACHE_SIZE,
    tokens=settings.RETWIS_TOKEN_CACHE_SIZE,
    names=settings.RETWIS_NAME_CACHE_SIZE,
    shown=settings.RETWIS_SHOWN_CACHE_SIZE,
)


_built: tuple[Client, tuple[int, int, int, int], Repository] | None = None


def get_repository() -> Repository:
    """Return the Repository on the configured Redis client and the process's cache.

    Stores hold no per-request state, so one Repository serves every request and thread
    while the client and the feed shapes stay the same (tests change both); building the
    stores anew for each request and for its middleware cost about 36 µs a page.
    """
    global _built
    client = get_redis()
    shape = (
        settings.RETWIS_HOME_FEED_CAP,
        settings.RETWIS_TIMELINE_CAP,
        settings.RETWIS_FANOUT_BATCH,
        settings.RETWIS_FANOUT_READ_THRESHOLD,
    )
    built = _built
    if built is not None and built[0] is client and built[1] == shape:
        return built[2]
    home_feed_cap, timeline_cap, fanout_batch, fanout_read_threshold = shape
    repo = Repository(
        client,
        home_feed_cap=home_feed_cap,
        timeline_cap=timeline_cap,
        fanout_batch=fanout_batch,
        fanout_read_threshold=fanout_read_threshold,
        cache=PROCESS_CACHE,
    )
    _built = (client, shape, repo)
    return repo


__all__ = [
    "Refused",
    "AccountSource",
    "ANONYMOUS",
    "STAFF",
    "AnonymousUser",
    "Conversation",
    "CannotFollowSelf",
    "Counts",
    "FollowEntry",
    "HomePage",
    "NotAllowed",
    "Page",
    "Post",
    "PROCESS_CACHE",
    "PostNotFound",
    "PostCounts",
    "PostPending",
    "Profile",
    "Repository",
    "RepositoryError",
    "User",
    "UserNotFound",
    "UsernameTaken",
    "EmailTaken",
    "StaleViewer",
    # The sources of the read path (repo.reader.page(Timeline(), viewer, ..., shows=PUBLIC)).
    "Source",
    "ListPolicy",
    "HOME",
    "PUBLIC",
    "PROFILE",
    "MENTIONS",
    "CONVERSATION",
    "PLAIN",
    "WITH_HIDDEN",
    "HomeFeed",
    "Liked",
    "Listed",
    "MediaNotFound",
    "Mentions",
    "OwnPosts",
    "Replies",
    "TagPosts",
    "Timeline",
    "Viewer",
    "ViewerCheck",
    "get_repository",
    "hidden_by_filter",
    "may_see_account",
]
