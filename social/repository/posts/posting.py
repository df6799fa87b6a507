"""Writing posts: creating them (with their fan-out and conversation), and deleting them
(by moderators or by their author). Reading them is the read path's (reader.py).

A new post is written in three steps (docs/architecture.md, "The write path"):
resolve_post settles what it means (its id, mentions, parent, the blocks that refuse it)
into a ResolvedPost; write_post writes it in one pipeline (the hash, the lists, the
conversation, the notifications, the live event); FanoutStore.deliver copies it into the
followers' home feeds in batches. create_post runs them for a local author; an incoming
post from another server resolves its own way and runs the last two.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Unpack, cast

from django.utils.translation import gettext_noop

from social import keys
from social.text import encode_mentions, hashtags, mentions_of

from ..accounts.users import UserStore
from ..base import (
    HIDDEN_STATUSES,
    Client,
    Fields,
    Pipe,
    RepositoryBase,
    StoreSettings,
    as_int,
    now,
    queue_hiding,
    queue_visibility_version,
    s,
)
from ..errors import NotAllowed, PostNotFound, PostPending, Refused
from ..federation.actors import RemoteActorStore, acct_key
from ..live.bus import DELETE, UPDATE, queue_event
from ..live.notices import NoticeStore
from ..live.notification_writes import queue_notification
from ..models import User
from ..moderation.audit import REASON_MAX
from ..read.front import queue_front_change
from ..read.relations_of import actor_relations
from ..read.visibility import BLOCKED, BLOCKING, Relations, interaction_refused
from .attachments import AttachmentStore, decode_media, encode_media
from .fanout import (
    Delivery,
    FanoutStore,
    Reach,
    delivery_of,
    new_post_id,
    queue_fanout_record,
    queue_first_batch,
    queue_new_post_id,
    queue_promotion,
)

# What a reply reads of the post it answers (a repost's: the post it shares is answered).
PARENT_FIELDS = ("user_id", "deleted", "ancestors", "repost_of")
# A reply keeps the ids of this many posts above it (its permalink shows them).
ANCESTORS_KEPT = 5
TRENDING_HOUR_TTL = 25 * 60 * 60

# How long a form submission's token stands for its post (keys.post_token).
POST_TOKEN_TTL = 24 * 60 * 60
DELETED_BY_AUTHOR = "Deleted by its author."
REFUSED = {
    BLOCKED: gettext_noop("This account does not let you reply to it."),
    BLOCKING: gettext_noop("You block this account: unblock it to reply to it."),
}


def queue_post_deletion(
    pipe: Pipe, post_id: int, by: int, reason: str, ts: int, *, keep_text: bool = True
) -> None:
    """Queue flagging a post deleted: the one way a post hash is marked so (by a moderator,
    its author, or the purge of its author's account). by: who deleted it (the author's
    own id: "deleted by its author"). The hash keeps its content for the record unless
    keep_text is False; readers skip it by the flag. Marks the pipeline as hiding, so
    send() moves the visibility version once it has run; tells the live bus (live.py)."""
    pipe.hset(
        keys.post(post_id),
        mapping={"deleted": "1", "deleted_reason": reason[:REASON_MAX], "deleted_by": by,
                 "deleted_at": ts},
    )  # fmt: skip
    if not keep_text:
        pipe.hdel(keys.post(post_id), "body", "mentions", "tags")
    queue_event(pipe, DELETE, post_id=post_id)
    queue_hiding(pipe)


@dataclass(frozen=True)
class ResolvedPost:
    """A new post as settled before anything of it is written: its id (ours) and reach,
    its author and time, its text and the rest of its hash, and whom it tells. resolve_post
    settles a local author's; an incoming post is settled by its own handler (its ids
    ours, its mentions and parent looked up and checked) and written by the same
    write_post and FanoutStore.deliver."""

    id: int
    author: User  # the steps read its id
    body: str
    ts: int
    reach: Reach
    # More of the post hash (queue_post_writes): a reply's reply_to, reply_to_user,
    # reply_to_name and ancestors (_reply_fields); mentions, tags, media, spoiler_text,
    # sensitive. The conversation and the notifications read the reply and the tags here.
    fields: Mapping[str, str] = field(default_factory=dict)
    # The accounts it names that are told (mentions: those who block the author are not).
    told: Mapping[str, int] = field(default_factory=dict)
    media: tuple[str, ...] = ()  # the author's picture tokens it holds, claimed for it

    @property
    def reply_to(self) -> int | None:
        """The post it answers, or None."""
        return as_int(self.fields.get("reply_to"))

    @property
    def parent_author(self) -> int | None:
        """The author of the post it answers (told of the reply), or None."""
        return as_int(self.fields.get("reply_to_user"))

    @property
    def tags(self) -> tuple[str, ...]:
        """Its #tags, as filed."""
        return tuple(self.fields.get("tags", "").split())


class PostStore(RepositoryBase):
    """Writing posts (and soft-deleting them) and reading pages of them.

    Given the notices store, to tell an author their post was removed.
    """

    def __init__(
        self,
        client: Client,
        *,
        notices: NoticeStore,
        users: UserStore,
        attachments: AttachmentStore | None = None,
        fanouts: FanoutStore | None = None,
        remote_actors: RemoteActorStore | None = None,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.notices = notices
        self.users = users
        self.attachments = attachments or AttachmentStore(client, **config)
        self.fanouts = fanouts or FanoutStore(client, **config)
        self.remote_actors = remote_actors or RemoteActorStore(client, **config)

    def create_post(
        self,
        author_id: int,
        body: str,
        *,
        at: int | None = None,
        token: str | None = None,
        reply_to: int | None = None,
        media: Sequence[str] = (),
        spoiler_text: str = "",
        sensitive: bool = False,
    ) -> int:
        """Store a post, fan its id out to every follower's home feed, and return its id:
        the write path's three steps for a local author (resolve_post, write_post,
        FanoutStore.deliver), with between them what only a local post has, its form's
        token and its uploaded pictures.

        Round trips: one for the new id (with the author's follower count), one for the
        post and the author's lists, then one per batch of followers (each batch's pipeline
        also fetches the next batch of ids), so a user with 500,000 followers never has them
        all in memory.

        token: the form submission's one-off token (one more round trip). The first
        submission claims it for its post id; a retry of the same submission (after a
        timeout or a 503 that came once the post was stored) gets that post's id back and
        posts nothing (raises PostPending while the first has not written the post yet).

        media: tokens of the author's unattached pictures (attachments.py), claimed for
        this post in one round trip more (MediaNotFound, and nothing posted, when any is
        not theirs to attach) and copied into the hash's `media` field. The rest of the
        arguments: resolve_post's.
        """
        author = User(id=author_id, username="")  # the steps read only a local author's id
        post = self.resolve_post(
            author, body, at=at, reply_to=reply_to, media=media,
            spoiler_text=spoiler_text, sensitive=sensitive,
        )  # fmt: skip
        if token is not None:
            claimed = self._claim_token(author_id, token, post.id)
            if claimed != post.id:
                return claimed
        if media:
            try:
                attached = self.attachments.claim(author_id, media, post.id)
            except Exception:
                if token is not None:  # a retry may post again
                    self.r.delete(keys.post_token(author_id, token))
                raise
            post = replace(post, fields={**post.fields, "media": encode_media(attached)})
        self.fanouts.deliver(self.write_post(post))
        return post.id

    def resolve_post(
        self,
        author: User,
        body: str,
        *,
        at: int | None = None,
        reply_to: int | None = None,
        media: Sequence[str] = (),
        spoiler_text: str = "",
        sensitive: bool = False,
    ) -> ResolvedPost:
        """Settle what a new post of author's means before anything of it is written (the
        write path's first step, for a local author): its id and reach (fanout.Reach), and
        what its text means, once (social/text.py): the @names of existing accounts, the
        @name@domain addresses of remote accounts known here (_remote_mentions) and the
        #tags. reply_to makes it a reply (PostNotFound if that post is gone or hidden;
        a repost's id answers the post it shares, one round trip more; NotAllowed across a
        block with its author, either way). Those who block the author are not told of a
        mention, nor is a remote account (its server is: the fan-out delivers the post to
        it). media: the picture tokens it will hold (their claim is the caller's);
        spoiler_text (a content warning) and sensitive are fields of the hash only when
        set. One round trip (a parent whose author the process does not know, a legacy
        account's name, known remote addresses: one more each).
        """
        ts = now() if at is None else at
        written = mentions_of(body)
        names = [name for name in written if "@" not in name]
        # An address's entry in the index of remote accounts (by_acct's first read).
        entries = {a: key for a in written if "@" in a and (key := acct_key(a)) is not None}
        pipe = self._pipe()
        queue_new_post_id(pipe, author.id)
        for entry in entries.values():
            pipe.get(entry)
        for name in names:  # the one name rule (UserStore.user_ids_for_names): exact wins
            pipe.hget(keys.users(), name)
            pipe.hget(keys.usernames_lower(), name.lower())
        if names:  # accounts the reference Retwis wrote since names were last claimed?
            pipe.get(keys.usernames_lower_checked())
            pipe.get(keys.next_user_id())
        if names or reply_to is not None:  # who block the author: not told, not answered
            pipe.zrange(keys.blocked_by(author.id), 0, -1)
        if reply_to is not None:  # whom the author blocks: not answered
            pipe.zrange(keys.blocks(author.id), 0, -1)
            pipe.hmget(keys.post(reply_to), PARENT_FIELDS)
        replies = pipe.execute()
        post_id, reach = new_post_id(replies[:3], self.fanout_read_threshold)
        pointed, found = replies[3 : 3 + len(entries)], replies[3 + len(entries) :]
        parent = found.pop() if reply_to is not None else None
        blocks = frozenset(map(int, found.pop())) if reply_to is not None else frozenset()
        blockers = (
            frozenset(map(int, found.pop())) if names or reply_to is not None else frozenset()
        )
        fields: dict[str, str] = {}
        if reply_to is not None and parent is not None:
            fields = self._reply(reply_to, parent, blocks, blockers)
        local = self._mentions(names, found)
        remote = self._remote_mentions(entries, pointed)
        mentions = {**local, **dict(remote.values())}  # an address as its account's name
        tags = hashtags(body)
        if mentions:
            fields["mentions"] = encode_mentions(mentions)
        if tags:
            fields["tags"] = " ".join(tags)
        if spoiler_text:
            fields["spoiler_text"] = spoiler_text
        if sensitive or (media and spoiler_text):
            fields["sensitive"] = "1"  # Mastodon: a warning makes its pictures sensitive
        told = {name: uid for name, uid in local.items() if uid not in blockers}
        return ResolvedPost(post_id, author, body, ts, reach, fields, told, tuple(media))

    def _reply(
        self, reply_to: int, parent: Fields, blocks: frozenset[int], blockers: frozenset[int]
    ) -> dict[str, str]:
        """Return a reply's fields (_reply_fields) for the post reply_to (the post a repost
        shares: _answered), from its PARENT_FIELDS; raise NotAllowed across a block with its
        author (blocks: whom the replier blocks; blockers: who block the replier)."""
        apart = actor_relations(blocks, blockers)
        reply_to, parent = self._answered(reply_to, parent, apart)
        if why := interaction_refused(as_int(parent[0]) or 0, apart):
            raise Refused(REFUSED[why])
        return self._reply_fields(reply_to, parent)

    def _mentions(self, names: Sequence[str], found: list) -> dict[str, int]:
        """Return the names of existing accounts among names, with their ids, from
        resolve_post's replies (found: a pair a name, then the claims' mark and
        next_user_id); a legacy account's name not claimed yet costs one round trip more
        (UserStore.ids_after_claiming: "LegacyLee" mentioned as "@legacylee")."""
        if not names:
            return {}
        top = as_int(found.pop()) or 0  # next_user_id, then the claims' mark
        checked = as_int(found.pop()) or 0
        pairs = iter(found)
        mentions = {
            name: user_id
            for name, exact, lower in zip(names, pairs, pairs)
            if (user_id := as_int(exact if exact is not None else lower)) is not None
        }
        unknown = [name for name in names if name not in mentions]
        if unknown and top > checked:
            mentions.update(self.users.ids_after_claiming(unknown))
        return mentions

    def _remote_mentions(
        self, entries: Mapping[str, str], pointed: list
    ) -> dict[str, tuple[str, int]]:
        """Return {address: (its account's name@domain, id)} for the remote accounts known
        here among entries ({address: its index entry}), as RemoteActorStore.by_acct finds
        one, from resolve_post's replies (pointed: what each entry holds, in order). One
        round trip when any is known, none otherwise. Nothing is fetched: an address no one
        here has looked up stays text (Mastodon resolves it while posting; a page here
        waits on no other server). A suspended or gone account is no mention (its page
        is hidden)."""
        ids = {
            address: user_id
            for address, raw in zip(entries, pointed)
            if (user_id := as_int(raw)) is not None
        }
        actors = self.remote_actors.get_many(ids.values()) if ids else {}
        found = {}
        for address, user_id in ids.items():
            actor = actors.get(user_id)
            if actor is None or actor.is_suspended:
                continue
            if acct_key(actor.username) == entries[address]:  # an entry may be stale
                found[address] = (actor.username, user_id)
        return found

    def write_post(self, post: ResolvedPost) -> Delivery:
        """Write a resolved post in one pipeline (the write path's second step, for a local
        author or a remote one): its record as a fan-out begun (when copied: first, so a
        post half-written is always on record for `manage.py repair`), the hash and the
        author's own list, its pictures struck off the unattached, the conversation (the
        parent's replies, the mentions, the tags), the notifications (the parent's author
        of a reply, naming the reply, even when it begins with their @name; anyone else it
        names, of a mention), the author's home feed and the timeline, the front page's
        and the day's counters, the live event (once: a post names its author, never its
        followers), the author's promotion to fan-out on read when it reaches the
        threshold, and last the first batch of followers. Return the copies still to make
        (FanoutStore.deliver: the third step)."""
        author_id, post_id, ts = post.author.id, post.id, post.ts
        pipe = self._pipe()
        queue_fanout_record(pipe, post_id, post.reach, ts)
        self.queue_post_writes(pipe, post_id, author_id, post.body, ts, dict(post.fields))
        self.attachments.queue_attached(pipe, post.media)
        tags = list(post.tags)
        self.queue_conversation(pipe, post_id, author_id, ts, post.reply_to, dict(post.told), tags)
        parent_author = post.parent_author
        for mentioned in dict.fromkeys(post.told.values()):
            if mentioned != parent_author:
                queue_notification(pipe, mentioned, "mention", author_id, post_id, ts)
        if parent_author is not None:
            queue_notification(pipe, parent_author, "reply", author_id, post_id, ts)
        pipe.lpush(keys.home_feed(author_id), post_id)
        pipe.ltrim(keys.home_feed(author_id), 0, self.home_feed_cap - 1)
        pipe.lpush(keys.timeline(), post_id)
        pipe.ltrim(keys.timeline(), 0, self.timeline_cap - 1)
        queue_front_change(pipe)  # after the post, its parent's count and the timeline
        self._count_event(pipe, "posts", ts)
        self._mark_active(pipe, author_id, ts)
        queue_event(pipe, UPDATE, post_id=post_id, author_id=author_id, tags=tags)  # once
        if post.reach.promote:
            self.queue_promotion(pipe, author_id, ts)
        queue_first_batch(pipe, author_id, post.reach, self.fanout_batch)
        replies = self.send(pipe)  # a promotion moves the visibility version
        return delivery_of(post_id, author_id, post.reach, replies)

    def _claim_token(self, author_id: int, token: str, post_id: int) -> int:
        """Claim a submission's token for post_id; return the post id it stands for (ours,
        or an earlier submission's whose post is stored). One round trip, two when the
        token was claimed before."""
        key = keys.post_token(author_id, token)
        pipe = self._pipe()
        pipe.set(key, post_id, nx=True, ex=POST_TOKEN_TTL)
        pipe.get(key)
        _, holder = pipe.execute()
        claimed = int(holder) if holder is not None else post_id
        if claimed != post_id and not self.r.exists(keys.post(claimed)):
            raise PostPending(claimed)
        return claimed

    # Adding an author to keys.celebrities (fanout.queue_promotion): posts and reposts alike.
    queue_promotion = staticmethod(queue_promotion)

    def _answered(self, reply_to: int, parent: Fields, apart: Relations) -> tuple[int, Fields]:
        """Return the post a reply to reply_to answers and its PARENT_FIELDS: reply_to, or
        the post a repost shares (one round trip more). Raise PostNotFound for a deleted
        repost, or one whose author a block keeps apart from the replier (apart: the
        replier's blocks either way)."""
        shared = as_int(parent[3])
        if shared is None:
            return reply_to, parent
        if interaction_refused(as_int(parent[0]) or 0, apart) or s(parent[1]) == "1":
            raise PostNotFound(reply_to)
        return shared, cast(Fields, self.r.hmget(keys.post(shared), PARENT_FIELDS))

    def _reply_fields(self, reply_to: int, parent: Fields) -> dict[str, str]:
        """Return the post-hash fields of a reply to reply_to, from the parent's PARENT_FIELDS;
        raise PostNotFound when the parent is missing, deleted or by a suspended author."""
        author_id, deleted, ancestors = as_int(parent[0]), s(parent[1]), s(parent[2])
        known = self.cache.posts.get(int(reply_to))
        author: User | None = None
        if known is not None and known.post.author_id == author_id:
            author = User(id=author_id, username=known.post.author_name)
        elif author_id:
            author = self._users_by_ids([author_id]).get(author_id)
        if author_id is None or deleted == "1" or author is None:
            raise PostNotFound(reply_to)
        if known is None or known.post.author_suspended:
            state = self.r.hget(keys.user(author_id), "status")
            if s(state) in HIDDEN_STATUSES:
                raise PostNotFound(reply_to)
        chain = [*(ancestors or "").split(), str(reply_to)][-ANCESTORS_KEPT:]
        return {
            "reply_to": str(reply_to),
            "reply_to_user": str(author_id),
            "reply_to_name": author.username,
            "ancestors": " ".join(chain),
        }

    def queue_conversation(
        self,
        pipe: Pipe,
        post_id: int,
        author_id: int,
        ts: int,
        reply_to: int | None,
        mentions: dict[str, int],
        tags: list[str],
    ) -> None:
        """Queue filing post_id as a reply, in mentioned users' mentions and under tags."""
        if reply_to is not None:
            pipe.rpush(keys.replies(reply_to), post_id)
            # The parent's counter (loading.COUNT_FIELDS), after the list it counts.
            pipe.hincrby(keys.post(reply_to), "replies", 1)
        for user_id in dict.fromkeys(mentions.values()):
            if user_id == author_id:
                continue
            pipe.zadd(keys.mentions(user_id), {str(post_id): ts})
            pipe.zremrangebyrank(keys.mentions(user_id), 0, -keys.MENTIONS_CAP - 1)
            pipe.hincrby(keys.user(user_id), "unread_mentions", 1)
        hour = keys.trending_hour(time.strftime("%Y%m%d%H", time.gmtime(ts)))
        for tag in tags:
            pipe.lpush(keys.tag_posts(tag), post_id)
            pipe.ltrim(keys.tag_posts(tag), 0, keys.TAG_CAP - 1)
            pipe.zincrby(hour, 1, tag)
            pipe.zadd(keys.tag_index(), {tag: 0})  # found by search from now
        if tags:
            pipe.expire(hour, TRENDING_HOUR_TTL)

    def queue_post_writes(
        self,
        pipe,
        post_id: int,
        author_id: int,
        body: str,
        ts: int,
        fields: dict[str, str] | None = None,
        *,
        with_version: bool = True,
    ) -> None:
        """Queue the post hash and the author's own-posts entry (the hash first), and make
        sure the database has a visibility version (with_version=False: the caller queues
        queue_visibility_version once for a whole batch). fields: more of the hash (a
        reply's parent, mentions, tags)."""
        pipe.hset(
            keys.post(post_id),
            mapping={"user_id": author_id, "time": ts, "body": body, **(fields or {})},
        )
        pipe.lpush(keys.own_posts(author_id), post_id)
        if with_version:
            queue_visibility_version(pipe)

    def queue_soft_delete(
        self,
        pipe: Pipe,
        post_id: int,
        author_id: int,
        body: str,
        actor: User,
        reason: str,
        ts: int,
    ) -> None:
        """Queue marking a post deleted, dropping it from the timeline, and telling its author.

        The hash keeps its content for the record; readers skip it by the `deleted` flag, so
        home feeds and the author's own list keep the id. Only the timeline drops it (LREM on
        a list of 1000), so the global page stays full. The flag goes first: once it is
        written the post is gone everywhere, and a lost LREM or notice after it costs one
        short timeline page or one untold author, nothing a reader trips over. The caller
        sends the pipeline with send(), which then moves the visibility version.
        """
        queue_post_deletion(pipe, post_id, actor.id, reason, ts)
        pipe.lrem(keys.timeline(), 0, str(post_id))
        snippet = body if len(body) <= 40 else body[:39] + "…"
        self.notices.queue_notice(
            pipe,
            author_id,
            f"Your post “{snippet}” was removed by moderators. Reason: {reason}",
            at=ts,
            kind="post_removed",  # said in the reader's language (home.html)
            snippet=snippet,
            reason=reason,
        )

    def delete_own_post(self, user_id: int, post_id: int, *, at: int | None = None) -> list[str]:
        """Delete user_id's own post: gone from every feed, the timeline, its tags' lists and
        the mentions of those it named. Raise PostNotFound (missing, already deleted, or a
        repost: undone, never deleted) or NotAllowed (someone else's).

        The post hash is flagged, as moderators delete (readers skip it wherever it is
        still listed: home feeds, replies, likes), then the lists that show posts by recency
        drop it (the timeline, its tags, the author's own list, so the profile's count
        drops by one), and the visibility version moves so remembered posts are re-checked.
        One pipeline after one read. Returns the storage names of its pictures' files
        (attachments.post_deleted: the one media hook).
        """
        fields = ["user_id", "deleted", "tags", "mentions", "repost_of", "media"]
        author, deleted, tags, mentions, shared, pictures = map(
            s, self.r.hmget(keys.post(post_id), fields)
        )
        if as_int(author) is None or deleted == "1" or shared is not None:
            raise PostNotFound(post_id)  # a repost is undone (reposts.py), never deleted
        if as_int(author) != user_id:
            raise NotAllowed(gettext_noop("You can only delete your own posts."))
        ts = now() if at is None else at
        pipe = self._pipe()
        queue_post_deletion(pipe, post_id, user_id, DELETED_BY_AUTHOR, ts)
        pipe.lrem(keys.timeline(), 0, str(post_id))
        # Off the author's own list too: their profile's count and pages no longer hold it
        # (staff still reach it by its permalink and through reports).
        pipe.lrem(keys.own_posts(user_id), 0, str(post_id))
        for tag in (tags or "").split():
            pipe.lrem(keys.tag_posts(tag), 0, str(post_id))
        for item in (mentions or "").split():
            mentioned = item.partition(":")[0]
            if mentioned.isdigit():
                pipe.zrem(keys.mentions(int(mentioned)), post_id)
        self.send(pipe)
        return self.attachments.post_deleted(post_id, decode_media(pictures))
