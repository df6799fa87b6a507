"""Loading posts by id: one pipeline for the hashes (or, for posts this process remembers,
only what can change), authors in one more when new, and each post's reply and like counts
read with it (fields of the post hash, kept in step by the writes).

The read path (reader.py) is the only caller for pages; it decides who sees what
(visibility.py). This module only turns ids into Posts, hidden ones included.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from redis.cluster import ClusterPipeline

from social import keys
from social.text import decode_mentions, encode_mentions

from ..base import HIDDEN_STATUSES as HIDDEN_STATUSES  # (posts/ and targets.py: from here)
from ..base import (
    NamedReads,
    Replies,
    RepositoryBase,
    as_int,
    decode_hash,
    s,
    user_from_hash,
)
from ..cache import UNREAD, MaybeVersion, RememberedPost
from ..federation.objects import remote_note_fields, remote_note_of
from ..models import Post, User
from ..posts.attachments import decode_media, encode_media

# The post hash's counters (additions to the reference layout; docs/data-layout.md):
# how many replies (LLEN replies:<id>), likes (ZCARD likes:<id>) and reposts (ZCARD
# reposts:<id>) it has, kept in step
# by the writes and mended by `manage.py repair`. Absent means 0.
COUNT_FIELDS = ("replies", "likes", "reposts")
# What a page reads of a post it remembers when the version moved: the checks (author,
# time, text: a database replaced under the process, or a purge, shows as a difference;
# a remote post's edit, numbered like a profile change, as its `edited_at`), the flag,
# the counts.
POST_CHECK_FIELDS = (
    "user_id", "time", "body", "edited_at", "deleted", "deleted_reason", "deleted_by",
    *COUNT_FIELDS,
)  # fmt: skip
# What it reads of that post's author: the name (a check), the status (suspended?), what
# the card shows of them (a profile change has them checked again: cache.py), and whether
# they are another server's (a remote post's HTML is shown only then).
AUTHOR_CHECK_FIELDS = ("username", "status", "display_name", "avatar", "domain")


def written_fields(post: Post) -> dict[str, str]:
    """Return the post-hash fields fixed when post was written (reply, mentions, tags; a
    remote post's as last edited), as stored: what a remembered post brings to a row
    instead of reading them again."""
    fields = {
        "reply_to": "" if post.reply_to is None else str(post.reply_to),
        "reply_to_name": post.reply_to_name,
        "mentions": encode_mentions(dict(post.mentions)),
        "tags": " ".join(post.tags),
        "repost_of": "" if post.repost_of is None else str(post.repost_of),
        "media": encode_media(post.media),
        "spoiler_text": post.spoiler_text,
        "sensitive": "1" if post.sensitive else "",
    }
    if post.remote is not None:
        fields.update(remote_note_fields(post.remote))
    return fields


def build_post(post_id: int, h: dict[str, str], users: dict[int, User]) -> Post | None:
    """Build a Post from a decoded post hash and its loaded author; None when the post or
    its author is missing (a dangling id: nothing to show)."""
    author_id = as_int(h.get("user_id"))
    author = users.get(author_id) if author_id is not None else None
    if author is None:
        return None
    deleted_by = h.get("deleted_by")
    return Post(
        id=int(post_id),
        author_id=author.id,
        author_name=author.username,
        time=as_int(h.get("time")) or 0,
        body=h.get("body") or "",
        is_deleted=h.get("deleted") == "1",
        author_suspended=author.is_suspended,
        deleted_reason=h.get("deleted_reason") or "",
        deleted_by_author=bool(deleted_by) and deleted_by == str(author.id),
        reply_to=as_int(h.get("reply_to")),
        reply_to_name=h.get("reply_to_name") or "",
        mentions=decode_mentions(h.get("mentions")),
        tags=tuple((h.get("tags") or "").split()),
        repost_of=as_int(h.get("repost_of")),
        author_display=author.display_name,
        author_avatar=author.avatar,
        media=decode_media(h.get("media")),
        spoiler_text=h.get("spoiler_text") or "",
        sensitive=h.get("sensitive") == "1",
        # Only an account of another server's post is one: its HTML is shown as it is.
        remote=remote_note_of(h) if author.domain else None,
    )


def count_of(value: bytes | str | None) -> int:
    """Return a counter field's value (absent or junk: 0; never below 0)."""
    return max(0, as_int(value) or 0)


@dataclass
class Loaded:
    """What load() read: the posts (hidden ones included, dangling ids left out), each
    loaded post's (replies, likes, reposts) when counts were asked for, and by name the
    replies of the reads the caller queued on the same pipeline."""

    posts: list[Post]
    counts: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    got: Replies = field(default_factory=Replies)
    # Whether load() sent a pipeline (the caller's reads went with it).
    sent: bool = False


# Every listed post's counter fields in one command (one server only: the posts' keys are
# in many cluster slots). KEYS: post:<id> for each post. Returns replies, likes, reposts
# in threes.
COUNTS_SCRIPT = """
local out = {}
for i = 1, #KEYS do
  local f = redis.call('HMGET', KEYS[i], 'replies', 'likes', 'reposts')
  out[#out + 1] = math.max(0, tonumber(f[1]) or 0)
  out[#out + 1] = math.max(0, tonumber(f[2]) or 0)
  out[#out + 1] = math.max(0, tonumber(f[3]) or 0)
end
return out
"""


def queue_post_counts(reads: NamedReads, ids: Sequence[int]) -> None:
    """Queue each post's counter fields (see post_counts_from): on one server one EVAL for
    the page (a 50-post timeline: one command, not 50); on a cluster, where the posts are
    on every node, one HMGET per post."""
    if not ids:
        return
    if isinstance(reads.pipe, ClusterPipeline):
        for post_id in ids:
            reads.hmget(f"counts:{post_id}", keys.post(post_id), COUNT_FIELDS)
    else:
        post_keys = [keys.post(post_id) for post_id in ids]
        reads.execute_command("counts", "EVAL", COUNTS_SCRIPT, len(post_keys), *post_keys)


def post_counts_from(got: dict, ids: Sequence[int]) -> dict[int, tuple[int, int, int]]:
    """Return {post id: (replies, likes, reposts)} from what queue_post_counts read."""
    if not ids:
        return {}
    if "counts" in got:
        flat = got["counts"]
        return dict(zip(ids, zip(flat[0::3], flat[1::3], flat[2::3])))
    counted = {}
    for post_id in ids:
        replies, likes, reposts = got[f"counts:{post_id}"]
        counted[post_id] = (count_of(replies), count_of(likes), count_of(reposts))
    return counted


class PostLoader(RepositoryBase):
    """Turns post ids into Posts, using what this process remembers (cache.py)."""

    def load(
        self,
        ids: Sequence[int],
        *,
        version: MaybeVersion = UNREAD,
        counts: bool = False,
        also: Callable[[NamedReads], None] | None = None,
        authors: dict[int, User] | None = None,
    ) -> Loaded:
        """Return the posts for ids (in order, hidden ones included) and, with counts,
        their reply and like counts.

        What this process remembers decides the cost:
        - every post remembered as checked at `version` (the visibility version the caller
          read with the ids): no round trip, or one when counts or `also` ask for reads;
        - otherwise one round trip that reads the version, checks remembered posts (HMGET
          of their flag, author, time and counts; HMGET of each author's name and status)
          and reads new ones whole; their authors in a second, unless given in `authors`.
        """
        ids = [int(i) for i in ids]
        unique = list(dict.fromkeys(ids))
        known = [self.cache.posts.get(post_id) for post_id in unique]
        if (
            version is not UNREAD
            and version is not None  # a database without one (e.g. the reference's)
            and all(k is not None and k.version == version for k in known)
        ):
            posts = [k.post for k in known if k is not None]
            if not counts and also is None:
                return Loaded(posts)
            reads = self.reads()
            if counts:
                queue_post_counts(reads, unique)
            if also is not None:
                also(reads)
            got = reads.execute()
            return Loaded(posts, post_counts_from(got, unique) if counts else {}, got, sent=True)
        return self._check_and_read(unique, known, version, also, authors)

    def _check_and_read(
        self,
        ids: list[int],
        known: list[RememberedPost | None],
        version: MaybeVersion,
        also: Callable[[NamedReads], None] | None,
        authors: dict[int, User] | None,
    ) -> Loaded:
        """Read what load() could not take from memory (see there)."""
        author_ids = list(dict.fromkeys(k.post.author_id for k in known if k is not None))
        read_at = self.cache.posts.tick  # before the authors are read (RememberedPosts)
        reads = self.reads()
        # First: the flags read after are at least as new.
        reads.get("_version", keys.visibility_version())
        for post_id, k in zip(ids, known):
            if k is None:
                reads.hgetall(f"_post:{post_id}", keys.post(post_id))
            else:
                reads.hmget(f"_post:{post_id}", keys.post(post_id), POST_CHECK_FIELDS)
        for author_id in author_ids:
            reads.hmget(f"_author:{author_id}", keys.user(author_id), AUTHOR_CHECK_FIELDS)
        if also is not None:  # the caller's reads, named as it likes ("_..." are these)
            also(reads)
        got = reads.execute()
        checked_at = got.value("_version")
        author_state = {a: tuple(map(s, got.fields(f"_author:{a}"))) for a in author_ids}
        rows: list[dict[str, str] | None] = []
        for post_id, k in zip(ids, known):
            if k is None:
                rows.append(decode_hash(got.hash(f"_post:{post_id}")))
                continue
            rows.append(self._checked_row(k.post, got.fields(f"_post:{post_id}"), author_state))
        stale = [post_id for post_id, row in zip(ids, rows) if row is None]
        if stale:  # rare: re-read whole what no longer matched what was remembered
            pipe = self._pipe()
            for post_id in stale:
                pipe.hgetall(keys.post(post_id))
            fresh = iter([decode_hash(h) for h in pipe.execute()])
            rows = [row if row is not None else next(fresh) for row in rows]

        users = dict(authors or {})
        for author_id, state in author_state.items():
            author = user_from_hash(author_id, dict(zip(AUTHOR_CHECK_FIELDS, state)))
            if author is not None:
                users[author_id] = author
        unknown = {
            uid
            for row in rows
            if row and "_checked" not in row and (uid := as_int(row.get("user_id"))) is not None
        }
        users.update(self._users_by_ids(unknown - users.keys()))
        # Remembered at the version the caller read in an earlier round trip when there is
        # one: it surely came before these flags were read. The one read in this pipeline
        # came first on one server, but on a cluster its node may answer after the posts'
        # nodes, and a change written between would be remembered at the newer version.
        at_version = checked_at if version is UNREAD else version
        posts, counted = [], {}
        for post_id, row in zip(ids, rows):
            if row is None or (post := build_post(post_id, row, users)) is None:
                continue
            posts.append(post)
            counted[post_id] = (
                count_of(row.get("replies")),
                count_of(row.get("likes")),
                count_of(row.get("reposts")),
            )
            self.cache.posts.put(post_id, RememberedPost(post, at_version, read_at))
        return Loaded(posts, counted, got, sent=True)

    def _checked_row(
        self, was: Post, fields: Sequence[bytes | None], authors: dict[int, tuple]
    ) -> dict[str, str] | None:
        """The row of a remembered post from its checked fields (POST_CHECK_FIELDS), or
        None (and forgotten) when they no longer match what was remembered."""
        user_id, ts, body, edited, deleted, reason, deleted_by, n_replies, n_likes, n_reposts = map(
            s, fields
        )
        name = authors[was.author_id][0]
        if (
            as_int(user_id) != was.author_id
            or as_int(ts) != was.time
            or name != was.author_name
            or (body or "") != was.body
            or as_int(edited) != (was.remote.edited_at if was.remote is not None else None)
        ):
            self.cache.posts.discard(was.id)  # another database: read it afresh
            return None
        return {"user_id": str(was.author_id), "time": str(was.time), "body": was.body,
                "deleted": deleted or "",
                "deleted_reason": reason or "", "deleted_by": deleted_by or "",
                "replies": n_replies or "", "likes": n_likes or "", "reposts": n_reposts or "",
                "_checked": "1", **written_fields(was)}  # fmt: skip
