"""Mastodon's JSON shapes (entities) built from the repository's dataclasses: Account,
Status, Relationship, Context, Notification, NotificationGroup, Marker, Tag, Filter,
FilterKeyword, FilterResult. Ids are strings, times ISO 8601 with milliseconds in UTC,
`content` the site's own escaped HTML of a post (social.templating.links' post_text, its
links made absolute; another server's post: its HTML as stored, sanitised). Pure
functions: what they need is read before, in bulk (social/repository/), never per item.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from social import media
from social.federation import documents as doc
from social.repository import Post, PostCounts, User
from social.repository.accounts.users import AccountRow, Relationship
from social.repository.federation.actors import RemoteActor
from social.repository.live.markers import Marker
from social.repository.live.notification_events import MASTODON_TYPES, Event, group_key
from social.repository.live.notifications import NotificationGroup
from social.repository.models import Attachment, Counts, RemoteMedia, RemoteNote
from social.repository.posts.attachments import FULL, KIND, SMALL
from social.repository.posts.tags import TagUse
from social.repository.relations.filters import FilterHit, Keyword, WordFilter
from social.templating.faces import bio
from social.templating.links import post_text, profile_url, url

from . import avatars

SAMPLE_ACCOUNTS = 8  # accounts a notification group names (Mastodon's sample size)


def iso(ts: int | float | None) -> str:
    """Unix seconds as Mastodon writes times: 2026-01-02T03:04:05.000Z."""
    moment = datetime.fromtimestamp(ts or 0, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_or_none(ts: int | None) -> str | None:
    """iso(ts), or None for no time."""
    return None if ts is None else iso(ts)


@dataclass
class Render:
    """What every entity of one response shares: the site's base URL and the accounts
    read for it (by id), and the ids of accounts answered by name (a reply's parent)."""

    base: str
    accounts: dict[int, AccountRow] = field(default_factory=dict)
    names: dict[str, int] = field(default_factory=dict)
    built: dict[int, dict] = field(default_factory=dict)  # accounts already built
    # What federation keeps of the remote accounts among them (their own URLs, bio, counts
    # as their servers report them): read with them (common.render_for).
    remote: dict[int, RemoteActor] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return self.base + path

    def account(self, user_id: int, fallback: User | None = None, *, source: bool = False):
        """The Account of user_id (built once a response: a page names few authors)."""
        if not source and user_id in self.built:
            return self.built[user_id]
        row = self.accounts.get(user_id)
        if row is None and fallback is not None:
            row = AccountRow(fallback, Counts())
        if row is None:
            return None
        built = account(self, row, source=source, remote=self.remote.get(user_id))
        if not source:
            self.built[user_id] = built
        return built


def account(
    render: Render, row: AccountRow, *, source: bool = False, remote: RemoteActor | None = None
) -> dict[str, Any]:
    """An Account (with `source` for verify_credentials); a remote account's with what
    federation keeps of it (remote_account)."""
    user, counts = row.user, row.counts
    if user.avatar:
        avatar = absolute(render, media.url("avatar", user.avatar, "400"))
    else:  # the coloured initial the pages draw, as a picture (avatars.py)
        avatar = render.url(avatars.avatar_path(user.id, user.display_name, user.username))
    header = absolute(render, media.url("header", user.header, "1500")) if user.header else ""
    # As every ActivityPub address, from SITE_URL, not the request's host: a client that
    # reached the site by another name is given the ids other servers know.
    profile = doc.profile_page(user)
    data: dict[str, Any] = {
        "id": str(user.id),
        "username": user.username,
        "acct": user.username,
        "display_name": user.display_name,
        "locked": False,
        "bot": False,
        "discoverable": True,
        "indexable": True,
        "group": False,
        "noindex": False,
        "created_at": iso(user.signup_time),
        "note": note_html(render, user),
        "url": profile,
        "uri": profile if user.domain else doc.actor_id(user.id),
        "avatar": avatar,
        "avatar_static": avatar,
        "header": header,
        "header_static": header,
        "followers_count": counts.followers,
        "following_count": counts.following,
        "statuses_count": counts.posts,
        "last_status_at": None,
        "hide_collections": False,
        "emojis": [],
        "fields": [],
        "roles": [],
    }
    if user.domain:
        remote_account(data, user, remote)
    if user.is_suspended:
        data["suspended"] = True
    if source:
        data["source"] = {
            "privacy": "public",
            "sensitive": False,
            "language": "",
            "note": user.note,
            "fields": [],
            "follow_requests_count": 0,
        }
    return data


def remote_account(data: dict[str, Any], user: User, remote: RemoteActor | None) -> None:
    """Make data (an Account) a remote account's, as Mastodon shows one: `acct` is
    name@domain and `username` the name; then, when read (remote): `url` its page there,
    `uri` its actor, its bio (sanitised when stored), its pictures' remote addresses, its
    counts as its server reports them, `locked`, `bot`, `group` (not read: `url` and `uri`
    its page here)."""
    data["username"] = user.username.partition("@")[0]
    data["acct"] = user.username
    if remote is None:
        return
    data.update(url=remote.profile_url, uri=remote.uri, note=remote.summary_html)
    data.update(locked=remote.locked, bot=remote.is_bot, group=remote.is_group)
    if remote.avatar_url and not user.avatar:
        data.update(avatar=remote.avatar_url, avatar_static=remote.avatar_url)
    if remote.header_url and not user.header:
        data.update(header=remote.header_url, header_static=remote.header_url)
    for field_name, value in (
        ("followers_count", remote.followers_count),
        ("following_count", remote.following_count),
        ("statuses_count", remote.statuses_count),
    ):
        if value is not None:
            data[field_name] = value


def absolute(render: Render, address: str) -> str:
    """Return a picture's URL absolute (a bucket's already is)."""
    return render.url(address) if address.startswith("/") else address


def note_html(render: Render, user: User) -> str:
    """The bio as the profile shows it (escaped, links absolute), in a paragraph; "" when
    there is none."""
    if not user.note:
        return ""
    html = str(bio(user)).replace('href="/', f'href="{render.base}/')
    return f"<p>{html}</p>"


def content(render: Render, post: Post) -> str:
    """The post's text as the site renders it, in a paragraph, its links absolute."""
    return _content(render.base, post.id, post.body, post.mentions, post.tags)


@lru_cache(maxsize=20_000)
def _content(base: str, post_id: int, body: str, mentions: tuple, tags: tuple) -> str:
    """Remembered by everything the text depends on (a post's text never changes; its id
    is in the key only to keep apart two posts with one text and different links)."""
    post = Post(post_id, 0, "", 0, body, mentions=mentions, tags=tags)
    html = str(post_text(post)).replace('href="/', f'href="{base}/')
    return f"<p>{html}</p>"


def status(
    render: Render, post: Post, counts: Mapping[int, PostCounts], *, text: bool = False
) -> dict:
    """A Status: a post, or a repost as Mastodon's reblog (the reposter's status holding
    the shared one in `reblog`). `text` (the source) only for a status just deleted, as
    Mastodon does. counts: by post id, the shared post's too."""
    if post.repost_of is not None:
        return reblog(render, post, counts)
    own = counts.get(post.id, PostCounts())
    parent_account = render.names.get(post.reply_to_name) if post.reply_to else None
    data = {
        "id": str(post.id),
        "uri": doc.post_id(post.id),  # its Note's id (SITE_URL's, as every id)
        "url": doc.permalink(post.id),
        "created_at": iso(post.time),
        "account": render.account(post.author_id, User(post.author_id, post.author_name)),
        "content": content(render, post),
        "visibility": "public",
        "sensitive": post.sensitive,
        "spoiler_text": post.spoiler_text,
        "media_attachments": [media_attachment(render, item) for item in post.media],
        "application": None,
        "mentions": [mention(render, name, user_id) for name, user_id in post.mentions],
        "tags": [tag(render, name) for name in post.tags],
        "emojis": [],
        "reblogs_count": own.reposts,
        "favourites_count": own.likes,
        "replies_count": own.replies,
        "quotes_count": 0,
        "in_reply_to_id": str(post.reply_to) if post.reply_to else None,
        "in_reply_to_account_id": str(parent_account) if parent_account else None,
        "reblog": None,
        "text": post.body if text else None,
        "favourited": own.liked,
        "reblogged": own.reposted,
        **what_the_site_has_not(),
    }
    if own.filtered:
        data["filtered"] = filter_results(own.filtered)
    if post.remote is not None:
        remote_status(data, post, post.remote)
    return data


def mention(render: Render, name: str, user_id: int) -> dict[str, str]:
    """A Mention: the account a post names, `acct` name@domain for another server's
    (its page there as `url` when the response read it, else its page here)."""
    remote = render.remote.get(user_id)
    here = doc.absolute(profile_url(name) or url("social:home"))
    return {
        "id": str(user_id),
        "username": name.partition("@")[0],
        "acct": name,
        "url": remote.profile_url if remote is not None else here,
    }


def remote_status(data: dict[str, Any], post: Post, note: RemoteNote) -> None:
    """Make data (a Status) a remote post's, as Mastodon shows one: `uri` its id there,
    `url` its page there, `content` its HTML (sanitised when stored), its attachments as
    their server's links, and when it was last edited."""
    data.update(uri=note.uri, url=note.link, content=note.html)
    data["edited_at"] = iso_or_none(note.edited_at)
    data["media_attachments"] = [
        remote_attachment(post.id * 10 + number, item) for number, item in enumerate(note.media)
    ]


def remote_attachment(number: int, item: RemoteMedia) -> dict:
    """A MediaAttachment of another server's post: its file there (never fetched here),
    `meta` from the size its server gave; `number` stands for the id it has none of (the
    post's id and its place: a post has at most four)."""
    original: dict[str, Any] = {}
    if item.width and item.height:
        aspect = round(item.width / item.height, 4)
        original = {"width": item.width, "height": item.height, "aspect": aspect}
        original["size"] = f"{item.width}x{item.height}"
    return {
        "id": str(number),
        "type": item.kind,
        "url": item.url,
        "preview_url": item.url if item.kind == "image" else None,
        "remote_url": item.url,
        "preview_remote_url": None,
        "text_url": None,
        "meta": {"original": original} if original else {},
        "description": item.description or None,
        "blurhash": item.blurhash or None,
    }


def media_attachment(render: Render, item: Attachment) -> dict:
    """A MediaAttachment (an image: the site keeps no other kind)."""

    def size(width: int, height: int) -> dict:
        aspect = round(width / height, 4) if height else 0
        return {"width": width, "height": height, "size": f"{width}x{height}", "aspect": aspect}

    return {
        "id": item.id,
        "type": "image",
        "url": absolute(render, media.url(KIND, item.id, FULL)),
        "preview_url": absolute(render, media.url(KIND, item.id, SMALL)),
        "remote_url": None,
        "preview_remote_url": None,
        "text_url": None,
        "meta": {
            "original": size(item.width, item.height),
            "small": size(item.small_width, item.small_height),
        },
        "description": item.alt or None,
        "blurhash": item.blurhash or None,
    }


def what_the_site_has_not() -> dict:
    """A Status's fields for what the site has not (polls, cards, edits, bookmarks...), as
    Mastodon gives them for a status without them (a new dict: the caller's to keep)."""
    return {
        "poll": None,
        "card": None,
        "language": None,
        "edited_at": None,
        "muted": False,
        "bookmarked": False,
        "pinned": False,
        "filtered": [],
    }


def reblog(render: Render, repost: Post, counts: Mapping[int, PostCounts]) -> dict:
    """A repost as Mastodon shows a reblog: the reposter's own status (its id, time and
    account), empty but for `reblog`, the shared post; None there when the read path did
    not give the shared post (the caller loads it: a repost read by itself)."""
    shared = repost.original
    inner = status(render, shared, counts) if shared is not None else None
    own = counts.get(shared.id, PostCounts()) if shared is not None else PostCounts()
    return {
        "id": str(repost.id),
        # Its Announce's id, as Mastodon's reblog `uri` is (/statuses/<id>/activity): what
        # another server that took the Announce knows it by.
        "uri": doc.activity_id(repost.id),
        "url": doc.permalink(repost.id),
        "created_at": iso(repost.time),
        "account": render.account(repost.author_id, User(repost.author_id, repost.author_name)),
        "content": "",
        "visibility": "public",
        "sensitive": False,
        "spoiler_text": "",
        "media_attachments": [],
        "application": None,
        "mentions": [],
        "tags": [],
        "emojis": [],
        "reblogs_count": 0,
        "favourites_count": 0,
        "replies_count": 0,
        "quotes_count": 0,
        "in_reply_to_id": None,
        "in_reply_to_account_id": None,
        "reblog": inner,
        "text": None,
        "favourited": own.liked,
        "reblogged": own.reposted,
        **what_the_site_has_not(),
        "filtered": inner["filtered"] if inner is not None else [],
    }


def tag(render: Render, name: str, posts: int | None = None) -> dict:
    """A Tag (with a day of history when the number of its recent posts is known)."""
    data: dict[str, Any] = {
        "name": name,
        "url": render.url(url("social:tag", name)),
    }
    if posts is not None:
        data["history"] = [{"day": str(int(datetime.now(UTC).timestamp()) // 86400 * 86400),
                            "uses": str(posts), "accounts": "0"}]  # fmt: skip
        data["following"] = False
    return data


def relationship(rel: Relationship) -> dict:
    """A Relationship."""
    return {
        "id": str(rel.id),
        "following": rel.following,
        "showing_reblogs": rel.following,
        "notifying": False,
        "languages": None,
        "followed_by": rel.followed_by,
        "blocking": rel.blocking,
        "blocked_by": rel.blocked_by,
        "muting": rel.muting,
        "muting_notifications": rel.muting,
        "requested": False,
        "requested_by": False,
        "domain_blocking": False,
        "endorsed": False,
        "note": "",
    }


def notification(
    render: Render, group: NotificationGroup, event: Event, counts: Mapping[int, PostCounts]
) -> dict | None:
    """A Notification: one event of a group (a group of one, when nothing is grouped),
    or None when its account is not there to show. `group_key` is the event's group
    under the usual grouping, as Mastodon gives it."""
    actor = render.account(event.actor_id)
    if actor is None:
        return None
    data: dict[str, Any] = {
        "id": str(event.id),
        "type": MASTODON_TYPES[group.kind],
        "created_at": iso(event.time),
        "account": actor,
        "group_key": group_key(event),
    }
    if group.post is not None:
        data["status"] = status(render, group.post, counts)
    return data


def notification_group(group: NotificationGroup, *, paged: bool) -> dict:
    """A NotificationGroup (its accounts and status are beside it, by id); paged: with
    the page's own ids and time, as a page of groups gives them."""
    newest, oldest = group.events[0], group.events[-1]
    data: dict[str, Any] = {
        "group_key": group.key,
        "notifications_count": len(group.events),
        "type": MASTODON_TYPES[group.kind],
        "most_recent_notification_id": str(newest.id),
        "sample_account_ids": [str(u.id) for u in group.accounts[:SAMPLE_ACCOUNTS]],
    }
    if paged:
        data["page_min_id"] = str(oldest.id)
        data["page_max_id"] = str(newest.id)
        data["latest_page_notification_at"] = iso(newest.time)
    if group.post is not None:
        data["status_id"] = str(group.post.id)
    return data


def marker(saved: Marker) -> dict:
    """A Marker."""
    return {
        "last_read_id": str(saved.last_read_id),
        "version": saved.version,
        "updated_at": iso(saved.updated),
    }


def statuses(render: Render, posts: Iterable[Post], counts: Mapping[int, PostCounts]) -> list:
    """Statuses, in the order given."""
    return [status(render, post, counts) for post in posts]


def filter_json(f: WordFilter, *, rules: bool = True) -> dict[str, Any]:
    """A Filter (with its keywords and statuses when rules: not inside a FilterResult)."""
    data: dict[str, Any] = {
        "id": str(f.id),
        "title": f.title,
        "context": list(f.context),
        "expires_at": iso(f.expires) if f.expires is not None else None,
        "filter_action": f.action,
    }
    if rules:
        data["keywords"] = [keyword_json(k) for k in f.keywords]
        data["statuses"] = []
    return data


def keyword_json(k: Keyword) -> dict[str, Any]:
    """A FilterKeyword."""
    return {"id": str(k.id), "keyword": k.keyword, "whole_word": k.whole_word}


def filter_results(found: tuple[FilterHit, ...]) -> list[dict[str, Any]]:
    """A Status's `filtered`: a FilterResult for each of the reader's filters it matches."""
    return [
        {"filter": filter_json(h.filter, rules=False), "keyword_matches": list(h.keywords),
         "status_matches": None}
        for h in found
    ]  # fmt: skip


def tag_use(render: Render, use: TagUse, *, following: bool | None = False) -> dict[str, Any]:
    """A Tag with its history (Mastodon's: a day's midnight, uses and distinct accounts,
    as strings, today first); `following` for a user's call (None: a visitor's, left
    out)."""
    data: dict[str, Any] = {
        "name": use.name,
        "url": render.url(url("social:tag", use.name)),
        "history": [
            {"day": str(d.day), "uses": str(d.uses), "accounts": str(d.accounts)}
            for d in use.history
        ],
    }
    if following is not None:
        data["following"] = following
    return data
