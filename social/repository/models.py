"""Small frozen dataclasses the repository returns: decoded once, never raw bytes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import ClassVar, Generic, Literal, NamedTuple, TypeVar, overload

T = TypeVar("T")


@overload
def as_datetime(ts: float) -> datetime: ...
@overload
def as_datetime(ts: float | None) -> datetime | None: ...
def as_datetime(ts: float | None) -> datetime | None:
    """Return the aware UTC datetime for unix time ts, or None."""
    return None if ts is None else datetime.fromtimestamp(ts, tz=UTC)


@dataclass(frozen=True)
class User:
    """A registered user; quacks like Django's user for mixins and templates."""

    id: int
    username: str
    signup_time: int | None = None
    is_staff: bool = False
    is_suspended: bool = False
    last_login: int | None = None
    last_login_ip: str = ""
    suspended_reason: str = ""
    is_deleted: bool = False  # deleted by its owner (is_suspended is set too: hidden alike)
    unread_mentions: int = 0  # posts mentioning them since they last saw their mentions
    # They block or mute someone, or someone blocks them (the user hash's `relations`
    # flag, set before the first such write and never cleared): only then do their pages
    # read those sets (reader.py).
    has_relations: bool = False
    unread_notifications: int = 0  # events since they last saw their notifications
    # The profile (profiles.py; user-hash fields added to the reference layout): a display
    # name (plain text, "" when none), the bio as typed with what its @mentions and #tags
    # meant when saved (as a post's), and the tokens of the avatar and header pictures
    # (social/media.py names their files; "" when none).
    display_name: str = ""
    note: str = ""
    note_mentions: tuple[tuple[str, int], ...] = ()
    note_tags: tuple[str, ...] = ()
    avatar: str = ""
    header: str = ""
    # Another server's account (repository/federation/actors.py): its domain, and
    # `username` is name@domain; "" for an account of this site.
    domain: str = ""

    # Literal: `if user.is_authenticated` tells the checker which of the two a user is.
    is_authenticated: ClassVar[Literal[True]] = True
    is_anonymous: ClassVar[Literal[False]] = False

    @property
    def pk(self) -> int:
        return self.id

    @property
    def shown_name(self) -> str:
        """The display name, or the username when there is none."""
        return self.display_name or self.username

    @property
    def is_active(self) -> bool:
        return not self.is_suspended

    @property
    def signup_at(self) -> datetime | None:
        return as_datetime(self.signup_time)

    @property
    def last_login_at(self) -> datetime | None:
        return as_datetime(self.last_login)

    def get_username(self) -> str:
        return self.username

    def __str__(self) -> str:
        return self.username


class AnonymousUser:
    """The visitor with no valid `auth` cookie."""

    id = None
    pk = None
    username = ""
    is_authenticated: ClassVar[Literal[False]] = False
    is_anonymous: ClassVar[Literal[True]] = True
    is_staff = False
    is_active = False
    is_suspended = False

    def get_username(self) -> str:
        return ""

    def __str__(self) -> str:
        return "AnonymousUser"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnonymousUser)

    def __hash__(self) -> int:
        return 1


@dataclass(frozen=True)
class Credentials:
    """What login needs: the user and the stored password field (hash or legacy plain)."""

    user: User
    password: str


@dataclass(frozen=True)
class AccessToken:
    """An access token as stored: for a user, or (user_id None) for an app itself."""

    digest: str
    client_id: str
    user_id: int | None
    scopes: tuple[str, ...]
    created: int

    @property
    def created_at(self) -> datetime | None:
        return as_datetime(self.created)


@dataclass(frozen=True)
class RememberedToken:
    """A token and its user as this process last read them (cache.tokens): a guess, never
    trusted alone. A read of a page may use it and check it on its own first pipeline
    (oauth.queue_token_check, oauth.token_holds), answering nothing before the check."""

    token: AccessToken
    user: User


@dataclass(frozen=True)
class Attachment:
    """A picture of a post as its card shows it: the post hash's `media` field carries
    these (attachments.encode_media), so cards read them with the post. `id` is its token
    (social/media.py names its files: sizes "1600" and "640")."""

    id: str
    width: int
    height: int
    small_width: int
    small_height: int
    alt: str = ""
    blurhash: str = ""
    size: int = 0  # bytes of the full size's file


@dataclass(frozen=True)
class RemoteMedia:
    """An attachment of another server's post, as that server described it: a link,
    never fetched here (federation/activities.py's RemoteAttachment, as stored). `kind`
    is Mastodon's type: image, gifv, video, audio or unknown."""

    url: str
    kind: str = "unknown"
    media_type: str = ""
    description: str = ""
    blurhash: str = ""
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True)
class RemoteNote:
    """What a post of another server's account has beyond a local post's
    (federation/objects.py): its id there, its page there, its HTML (sanitised when
    stored: the one field a card shows unescaped), its attachments as links, and when it
    was last edited (unix s, or None)."""

    uri: str
    url: str = ""
    html: str = ""
    media: tuple[RemoteMedia, ...] = ()
    edited_at: int | None = None
    in_reply_to_uri: str = ""  # the post it answers when that is none we keep

    @property
    def link(self) -> str:
        """Where a reader sees it on its server: its page, else its id."""
        return self.url or self.uri

    @property
    def edited(self) -> datetime | None:
        return as_datetime(self.edited_at)


@dataclass(frozen=True)
class Upload:
    """A post's picture as keys.image holds it: its owner, whether a post has it yet
    (`state` "unattached" or "attached", and that post's id), and what a card shows."""

    attachment: Attachment
    owner: int
    state: str
    post_id: int | None = None
    bytes: int = 0
    time: int = 0

    @property
    def id(self) -> str:
        return self.attachment.id


@dataclass(frozen=True)
class Post:
    """One status update with its author's name resolved."""

    id: int
    author_id: int
    author_name: str
    time: int
    body: str
    is_deleted: bool = False
    author_suspended: bool = False
    deleted_reason: str = ""
    deleted_by_author: bool = False  # deleted by its author, not by moderators
    # A reply: the post it answers and that post's author's name (both fixed at writing).
    reply_to: int | None = None
    reply_to_name: str = ""
    # What the text meant when written (social/text.py): ((name as typed, user id), ...)
    # for the @mentions of existing users, and the normalised #tags.
    mentions: tuple[tuple[str, int], ...] = ()
    tags: tuple[str, ...] = ()
    # A repost (reposts.py): the id of the post it shares; and, as the read path lists it,
    # that post itself (the card shows it, "reposted by" this post's author).
    repost_of: int | None = None
    original: Post | None = None
    # The author's display name and avatar token as last read with the post (loading.py):
    # part of what a card shows, so part of its memo key (templating/cards.py).
    author_display: str = ""
    author_avatar: str = ""
    # Its pictures (fixed when written), a content warning folding body and pictures
    # behind it, and whether the pictures alone are blurred until clicked.
    media: tuple[Attachment, ...] = ()
    spoiler_text: str = ""
    sensitive: bool = False
    # A post of another server's account (loading.py sets it only when the author is
    # one): its HTML, links and attachments there. None for a post of this site.
    remote: RemoteNote | None = None

    @cached_property
    def created(self) -> datetime:
        return as_datetime(self.time)

    @property
    def is_hidden(self) -> bool:
        """Deleted, or by a suspended or deleted account: listed for no one but staff
        (visibility.py decides who sees what)."""
        return self.is_deleted or self.author_suspended


class PostCounts(NamedTuple):
    """What changes about a post while it is listed, and the reader's relation to it:
    replies, likes, reposts, the reader's like, report and repost, and whether the card
    offers the reader its actions (reply, like, report, delete): visibility.may_act
    decides. A NamedTuple:
    a page builds one per listed post (a frozen dataclass cost 1.5 us each)."""

    replies: int = 0
    likes: int = 0
    liked: bool = False
    # The reader has an open report on it (post_reports:<post> names them): "Reported".
    reported: bool = False
    actionable: bool = True
    # Shown folded (one click opens it), and why: "muted" or a filtered keyword
    # (visibility.folded).
    folded: str = ""
    reposts: int = 0
    reposted: bool = False  # the reader reposts it
    # The reader's word filters that match it, whatever their context (visibility.py's
    # filter_hits; the client API's `filtered`).
    filtered: tuple = ()
    muted: bool = False  # the reader mutes its author: the card offers "Unmute"


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a newest-first list: its items and where the neighbours are."""

    items: list[T]
    number: int
    has_next: bool
    total: int | None = None
    per_page: int = 10
    # For pages of posts: each post's reply and like counts, by post id (PostStore.counts).
    counts: dict[int, PostCounts] = field(default_factory=dict)
    # A page that read past hidden posts (reader.py's fill): the list position the next
    # page starts at when not its number's own (None: it is), and the one the previous
    # page ends before (None: its number's own; 0: none, this page reached the head).
    # The pager's links carry them (?from=, ?before=).
    next_from: int | None = None
    previous_before: int | None = None

    @property
    def has_previous(self) -> bool:
        return self.number > 1 and self.previous_before != 0

    @property
    def next_number(self) -> int:
        return self.number + 1

    @property
    def previous_number(self) -> int:
        return self.number - 1

    @property
    def num_pages(self) -> int | None:
        if self.total is None:
            return None
        return max(1, -(-self.total // self.per_page))

    @property
    def past_the_end(self) -> bool:
        """Whether this is a page after the list's last one: not the first page, nothing
        on it and nothing after it (RepositoryMixin.checked_page answers 404 for it)."""
        return self.number > 1 and not self.items and not self.has_next


@dataclass(frozen=True)
class FollowEntry:
    """An account in a list of accounts (account_reader.py) and since when it is there (a
    follow's, a like's, a block's time; 0 when the list keeps none)."""

    user: User
    since: int
    # For a logged-in reader (False for visitors): whether the reader follows this user,
    # and whether this user follows the reader ("Follows you").
    viewer_follows: bool = False
    follows_viewer: bool = False
    counts: Counts | None = None  # when the list read them (AccountReader.page's counts)

    @property
    def since_at(self) -> datetime:
        return as_datetime(self.since)


@dataclass(frozen=True)
class Counts:
    """How many followers, followings and own posts a user has."""

    followers: int = 0
    following: int = 0
    posts: int = 0


@dataclass(frozen=True)
class HomePage:
    """Everything the logged-in home page shows, read in a fixed number of round trips."""

    feed: Page[Post]
    counts: Counts
    notices: list[dict] = field(default_factory=list)
    # People to follow, shown when the feed's first page is empty (PageStore.home).
    suggestions: list[User] = field(default_factory=list)


@dataclass(frozen=True)
class Profile:
    """Everything a profile page shows."""

    user: User
    posts: Page[Post]
    counts: Counts
    viewer_follows: bool
    mutual_names: tuple[str, ...]
    mutual_count: int
    follows_viewer: bool = False  # the user follows the reader ("Follows you")
    # The reader's blocks and mutes of this account, and whether it blocks the reader
    # (then the page says so and lists no posts).
    viewer_blocks: bool = False
    viewer_mutes: bool = False
    blocks_viewer: bool = False

    @property
    def mutual_more(self) -> int:
        """How many followers-you-follow are not named."""
        return max(0, self.mutual_count - len(self.mutual_names))


@dataclass(frozen=True)
class TimelinePage:
    """The global timeline page: latest posts plus the latest sign-ups."""

    posts: Page[Post]
    latest_users: tuple[str, ...]
