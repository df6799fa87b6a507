"""Remote posts: which of our post ids holds another server's object (a Note kept here, or
the Announce by which a remote account reposted a post), and the edit of such a note.

An object's id (a URL) is claimed for one post id, once (keys.remote_object, SET when
absent), before the post is written: two deliveries of one note make one post, and a job
run again after a crash finds its claim and writes the post it claimed (ObjectClaim). The
entry stays when the post is deleted, so a late Like or Update of it finds a deleted post
and is dropped, instead of a note being written again.

A remote note's post hash has the fields of a local post (`body` is its plain text: what
search, notifications and a page without HTML show) and these: `uri` (its id), `url`
(its page there), `html` (its sanitised HTML), `remote_media` (JSON: its attachments as
links, activities.RemoteAttachment), `in_reply_to_uri` (the post it answers when that is
none we keep), `edited_at` (unix s of its last Update).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeGuard, cast

from redis.typing import EncodableT, FieldT

from social import keys
from social.federation.activities import ATTACHMENTS_MAX, NoteDocument

from ..accounts.profile_changes import queue_profile_change
from ..base import Fields, RepositoryBase, as_int, now, s
from ..models import RemoteMedia, RemoteNote

# KEYS[1]: keys.remote_object(uri). ARGV[1]: a post id. Returns the id the object has:
# the one held already, else ARGV[1], now held.
CLAIM_SCRIPT = """
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
"""

# What a remote post hash holds beyond a local post's.
REMOTE_FIELDS = ("uri", "url", "html", "remote_media", "in_reply_to_uri", "edited_at")


@dataclass(frozen=True)
class ObjectClaim:
    """Who holds an object's id: post_id, and whether its hash is written (False: a claim
    whose writer stopped before the post; the next delivery writes it under this id)."""

    post_id: int
    written: bool


@dataclass(frozen=True)
class StoredObject:
    """A remote object as kept: its post id, author, whether deleted, what it reposts."""

    post_id: int
    author_id: int
    deleted: bool
    repost_of: int | None


def note_fields(note: NoteDocument) -> dict[str, str]:
    """The remote fields of a post hash for note (REMOTE_FIELDS)."""
    fields = {"uri": note.uri, "url": note.url, "html": note.html}
    if note.attachments:
        media = [item.as_dict() for item in note.attachments]
        fields["remote_media"] = json.dumps(media, separators=(",", ":"))
    return {name: value for name, value in fields.items() if value}


# Mastodon's attachment types by the media type's kind, else by the ActivityStreams type.
MEDIA_KINDS = {"image": "image", "video": "video", "audio": "audio"}
ACTIVITY_KINDS = {"Image": "image", "Video": "video", "Audio": "audio"}
KIND_ACTIVITY = {kind: name for name, kind in ACTIVITY_KINDS.items()}  # kept as decoded


def remote_note_of(h: dict[str, str]) -> RemoteNote | None:
    """The RemoteNote a decoded post hash holds (REMOTE_FIELDS), or None when it has no
    `uri` (a local post). Links that are not http(s) are left out: what is stored was
    checked at ingest, but these become a page's hrefs."""
    uri = h.get("uri") or ""
    if not _web(uri):
        return None
    url = h.get("url") or ""
    return RemoteNote(
        uri=uri,
        url=url if _web(url) else "",
        html=h.get("html") or "",
        media=decode_remote_media(h.get("remote_media")),
        edited_at=as_int(h.get("edited_at")),
        in_reply_to_uri=reply_uri if _web(reply_uri := h.get("in_reply_to_uri") or "") else "",
    )


def remote_note_fields(note: RemoteNote) -> dict[str, str]:
    """The post-hash fields note was decoded from (remote_note_of's inverse)."""
    media = [
        {"url": m.url, "media_type": m.media_type, "type": KIND_ACTIVITY.get(m.kind, "Document"),
         "description": m.description,
         "blurhash": m.blurhash, "width": m.width, "height": m.height}
        for m in note.media
    ]  # fmt: skip
    return {
        "uri": note.uri,
        "url": note.url,
        "html": note.html,
        "remote_media": json.dumps(media, separators=(",", ":")) if media else "",
        "edited_at": "" if note.edited_at is None else str(note.edited_at),
        "in_reply_to_uri": note.in_reply_to_uri,
    }


def decode_remote_media(raw: str | None) -> tuple[RemoteMedia, ...]:
    """The attachments a `remote_media` field lists (junk: none)."""
    try:
        items = json.loads(raw) if raw else []
    except ValueError:
        return ()
    if not isinstance(items, list):
        return ()
    return tuple(m for item in items[:ATTACHMENTS_MAX] if (m := _media(item)) is not None)


def _media(item: object) -> RemoteMedia | None:
    if not isinstance(item, dict) or not _web(url := item.get("url")):
        return None
    media_type, activity_type = _text(item.get("media_type")), _text(item.get("type"))
    kind = MEDIA_KINDS.get(media_type.partition("/")[0]) or ACTIVITY_KINDS.get(activity_type)
    return RemoteMedia(
        url=url,
        kind=kind or "unknown",
        media_type=media_type,
        description=_text(item.get("description")),
        blurhash=_text(item.get("blurhash")),
        width=_side(item.get("width")),
        height=_side(item.get("height")),
    )


def _web(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and value.startswith(("https://", "http://"))


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _side(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class RemoteObjectStore(RepositoryBase):
    """Remote objects' ids -> our post ids, and edits of remote notes."""

    def claim(self, uri: str, post_id: int) -> ObjectClaim:
        """Claim uri for post_id unless it has a post already; return who holds it (one
        script, then one HEXISTS when another id held it)."""
        held = int(
            self.r.execute_command("EVAL", CLAIM_SCRIPT, 1, keys.remote_object(uri), post_id)
        )
        if held == post_id:
            return ObjectClaim(held, False)
        return ObjectClaim(held, bool(self.r.hexists(keys.post(held), "user_id")))

    def index(self, uri: str, post_id: int) -> None:
        """Point uri at post_id unless it points somewhere already (an Announce's id at
        the repost written for it)."""
        self.r.set(keys.remote_object(uri), post_id, nx=True)

    def find(self, uri: str) -> StoredObject | None:
        """The post uri was kept as (deleted or not), or None: none, or never written."""
        return self.find_many([uri]).get(uri)

    def find_many(self, uris: Sequence[str]) -> dict[str, StoredObject]:
        """find for each of uris: two round trips (one with no claim among them)."""
        wanted = list(dict.fromkeys(uris))
        if not wanted:
            return {}
        pipe = self._pipe()  # GETs, not one MGET: on a cluster the keys are on many slots
        for uri in wanted:
            pipe.get(keys.remote_object(uri))
        held = [as_int(v) for v in cast(Fields, pipe.execute())]
        pairs = [(uri, post_id) for uri, post_id in zip(wanted, held) if post_id is not None]
        if not pairs:
            return {}
        pipe = self._pipe()
        for _, post_id in pairs:
            pipe.hmget(keys.post(post_id), ["user_id", "deleted", "repost_of"])
        found: dict[str, StoredObject] = {}
        for (uri, post_id), (author, deleted, shared) in zip(pairs, pipe.execute()):
            if (author_id := as_int(author)) is not None:
                found[uri] = StoredObject(post_id, author_id, s(deleted) == "1", as_int(shared))
        return found

    def edit_note(self, post_id: int, author_id: int, note: NoteDocument, *, at=None) -> None:
        """Write note's new content over post_id's (an Update of a remote note; the caller
        checked it is author_id's): its text, HTML, warning and attachments, and when it
        was edited; then number the change for author_id (profile_changes.py), so every
        web process checks that author's remembered posts again without the visibility
        version moving. Two round trips (the number must come after the change)."""
        ts = now() if at is None else at
        fields = {"body": note.text, "edited_at": str(ts), **note_fields(note)}
        fields["spoiler_text"] = note.summary
        fields["sensitive"] = "1" if note.sensitive else ""
        gone = [
            name
            for name in ("spoiler_text", "sensitive", "remote_media", "url")
            if not fields.get(name)
        ]
        kept: dict[FieldT, EncodableT] = {name: value for name, value in fields.items() if value}
        pipe = self._pipe()
        pipe.hset(keys.post(post_id), mapping=kept)
        if gone:
            pipe.hdel(keys.post(post_id), *gone)
        pipe.execute()
        pipe = self._pipe()
        queue_profile_change(pipe, author_id)
        pipe.execute()
