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
from typing import cast

from redis.typing import EncodableT, FieldT

from social import keys
from social.federation.activities import NoteDocument

from ..accounts.profile_changes import queue_profile_change
from ..base import Fields, RepositoryBase, as_int, now, s

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
