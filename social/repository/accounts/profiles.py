"""Profiles: a display name, a bio, an avatar and a header, kept in the user hash.

Fields added to the reference layout's user hash (a reference reader ignores them):
`display_name` (plain text, up to 50 characters), `note` (the bio as typed, up to 500),
`note_mentions` and `note_tags` (what its @mentions and #tags meant when saved, encoded as
a post's), `avatar` and `header` (the token of a stored picture: social/media.py names its
files, keys.image(token) says what it is). They ride on every read of the user hash (a
card's author check in loading.py reads `display_name` and `avatar`), so showing them costs
no round trip. A change of what cards show (the display name, the avatar) is numbered
after it, in a round trip of its own (profile_changes.py): every web process checks that
author's remembered posts again, and their cards, whose memo key holds the author's display
name and avatar, are rendered anew; no other post is read again, and the visibility
version stays. A bio or header shows on the profile alone, read with it: nothing to number.

A picture uploaded on the settings page or through update_credentials is processed by the
worker (social/work_handlers/media.py): begin_picture stores it as sent with its hash
("processing") and names it in `avatar_pending` or `header_pending`; the worker makes its
sizes, marks it "live" and adopt() moves it into `avatar` or `header` if it is still the
one pending (a newer upload, or a removal, wins), then the replaced picture goes.

Pictures are stored before Redis names them: the files first (media.save), then one
pipeline writes the user hash fields and the picture's metadata, then the replaced
picture's files and metadata go. A crash between leaves files (and at worst an `image:`
hash) no user hash names, never a name without its files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from redis.typing import EncodableT, FieldT

from social import keys, media
from social.images import Variant
from social.text import encode_mentions, hashtags, mentioned_names

from ..base import STATUS_DELETED, Pipe, RepositoryBase, now, s
from ..errors import UserNotFound
from ..live.notices import NoticeStore
from ..models import User
from ..moderation.audit import AuditDraft, AuditStore
from ..posts.media_files import forget, queue_processing
from .name_words import queue_name_words
from .profile_changes import queue_profile_change
from .users import UserStore

DISPLAY_NAME_MAX = 50
NOTE_MAX = 500
TEXT_FIELDS = ("display_name", "note")
PICTURES = media.KINDS  # avatar, header
# What staff may remove (an audit action each: audit.ACTIONS).
REMOVABLE = (*TEXT_FIELDS, *PICTURES)
# What a post's card shows of its author: a change is numbered (profile_changes.py).
ON_CARDS = ("display_name", "avatar")
PENDING = {kind: f"{kind}_pending" for kind in PICTURES}  # user hash: the one being processed

# KEYS: user:<id>; ARGV: kind, token. Makes a processed picture the profile's if it is still
# the one pending: returns {1, the token it replaces or ""}; {0} when another (or none) is.
ADOPT_SCRIPT = """
local pending = ARGV[1] .. '_pending'
if redis.call('HGET', KEYS[1], pending) ~= ARGV[2] then return {0} end
local old = redis.call('HGET', KEYS[1], ARGV[1]) or ''
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HDEL', KEYS[1], pending)
return {1, old}
"""
# KEYS: user:<id>; ARGV: kind, token. Forgets a pending picture: 1 if it was the one pending.
UNPEND_SCRIPT = """
if redis.call('HGET', KEYS[1], ARGV[1] .. '_pending') ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1] .. '_pending')
return 1
"""
# A notice's English text (pages show its kind in the reader's language: home.html).
PICTURE_REFUSED = "Your new %(kind)s could not be used: %(reason)s"


@dataclass(frozen=True)
class Picture:
    """A processed upload (social/images.py) about to be stored as a picture of kind."""

    kind: str
    variants: Sequence[Variant]


class ProfileStore(RepositoryBase):
    """Display names, bios, avatars and headers."""

    def __init__(self, client, *, users: UserStore, audit: AuditStore, **config) -> None:
        super().__init__(client, **config)
        self.users = users
        self.audit = audit

    def update(
        self,
        user_id: int,
        *,
        display_name: str | None = None,
        note: str | None = None,
        pictures: Sequence[Picture] = (),
        remove: Sequence[str] = (),
        at: int | None = None,
    ) -> None:
        """Change what is given of user_id's profile ("" clears a text field; None leaves
        it; `pictures` replace, `remove` names pictures to drop); raise UserNotFound for no
        such (or a deleted) account. Texts are taken as the form cleaned them (plain text:
        escaped wherever shown)."""
        remove = [kind for kind in remove if kind in PICTURES]
        old = self._current(user_id)
        fields: dict[FieldT, EncodableT] = {}
        if display_name is not None:
            fields["display_name"] = display_name[:DISPLAY_NAME_MAX]
        if note is not None:
            fields.update(self._note_fields(note[:NOTE_MAX]))
        stored: list[tuple[str, str]] = []  # (kind, token) written to storage
        try:
            for picture in pictures:
                token = media.new_token()
                media.save(picture.kind, token, picture.variants)
                stored.append((picture.kind, token))
                fields[picture.kind] = token
            pipe = self._pipe()
            if fields:
                pipe.hset(keys.user(user_id), mapping=fields)
            if display_name is not None:  # found by its words (name_words.py)
                queue_name_words(pipe, user_id, str(fields["display_name"]))
            if remove:  # a picture still being processed goes too
                pipe.hdel(keys.user(user_id), *remove, *[PENDING[kind] for kind in remove])
            ts = now() if at is None else at
            for (kind, token), picture in zip(stored, pictures):
                self._queue_image(pipe, user_id, kind, token, picture.variants, ts)
            if not fields and not remove:
                return
            self.send(pipe)
        except Exception:
            for kind, token in stored:  # nothing names them: take them back
                media.delete(kind, token)
            raise
        if any(field in fields or field in remove for field in ON_CARDS):
            self._cards_changed(user_id)
        replaced = [kind for kind, _ in stored] + list(remove)
        self._forget([(kind, old[kind]) for kind in dict.fromkeys(replaced) if old[kind]])

    def begin_picture(self, user_id: int, kind: str, data: bytes, *, at: int | None = None) -> str:
        """Store a picture as sent (its header checked: images.inspect) as user_id's
        pending avatar or header, for the worker; return its token (the caller queues its
        job). The bytes first, then its hash and the pending field in one pipeline (a
        failure takes the bytes back); one pending before is left to its job, which finds
        itself replaced."""
        token = media.new_token()
        original = media.save_original(token, data)
        try:
            pipe = self._pipe()
            queue_processing(pipe, token, user_id, kind, original, now() if at is None else at)
            pipe.hset(keys.user(user_id), PENDING[kind], token)
            pipe.execute()
        except Exception:
            media.delete_names([original])
            raise
        return token

    def pending(self, user_id: int) -> list[str]:
        """Return the kinds of user_id's pictures being processed (the settings page)."""
        found = self.r.hmget(keys.user(user_id), list(PENDING.values()))
        return [kind for kind, token in zip(PENDING, found) if token]

    def adopt(self, user_id: int, kind: str, token: str) -> bool:
        """Make a processed picture user_id's `kind` if it is still the one pending, and
        forget the one it replaces; else forget it (replaced or removed meanwhile). Return
        whether it was adopted. Run again, it finds nothing pending and forgets nothing of
        the profile's: one adopted picture is never taken back."""
        pipe = self._pipe()
        pipe.execute_command("EVAL", ADOPT_SCRIPT, 1, keys.user(user_id), kind, token)
        adopted, *old = self.send(pipe)[0]
        if int(adopted) == 1 and kind in ON_CARDS:
            self._cards_changed(user_id)
        if int(adopted) != 1:
            if s(self.r.hget(keys.user(user_id), kind)) != token:
                forget(self, [token])
            return False
        replaced = s(old[0]) if old else ""
        if replaced and replaced != token:
            self._forget([(kind, replaced)])
        return True

    def give_up(
        self,
        user_id: int,
        kind: str,
        token: str,
        reason: str = "",
        notices: NoticeStore | None = None,
    ) -> None:
        """Forget a pending picture (its hash, its bytes as sent) and, if it was still the
        one pending, clear that; with notices, tell its owner why the worker refused it (a
        notice on their home page)."""
        was_pending = self.r.eval(UNPEND_SCRIPT, 1, keys.user(user_id), kind, token)
        forget(self, [token])
        if was_pending and notices is not None:
            pipe = self._pipe()
            text = PICTURE_REFUSED % {"kind": kind, "reason": reason}
            notices.queue_notice(pipe, user_id, text, kind="picture_refused", picture=kind,
                                 reason=reason)  # fmt: skip
            pipe.execute()

    def remove(self, actor: User, target: User, field: str, reason: str = "") -> None:
        """Remove one part of target's profile for breaking the rules (staff), with its
        audit entry; raise ValueError for a field that is not one of REMOVABLE."""
        if field not in REMOVABLE:
            raise ValueError(field)
        old = self._current(target.id)
        draft = AuditDraft(
            actor=actor,
            action=f"remove_{field}",
            target_id=target.id,
            target_name=target.username,
            reason=reason,
        )

        def queue(pipe: Pipe, ts: int) -> None:
            drop = ["note", "note_mentions", "note_tags"] if field == "note" else [field]
            pipe.hdel(keys.user(target.id), *drop)
            if field == "display_name":
                queue_name_words(pipe, target.id, "")  # no longer found by it

        self.audit.run_audited([draft], queue)
        if field in ON_CARDS:
            self._cards_changed(target.id)
        if field in PICTURES and old[field]:
            self._forget([(field, old[field])])

    def forget_pictures(self, user_id: int) -> None:
        """Delete the stored pictures of user_id and their fields (a purged account)."""
        old = self._current(user_id, deleted_too=True)
        pictures = [(kind, old[kind]) for kind in PICTURES if old[kind]]
        waiting = [old[PENDING[kind]] for kind in PICTURES if old[PENDING[kind]]]
        if pictures or waiting:
            self.r.hdel(keys.user(user_id), *PICTURES, *PENDING.values())
            self._forget(pictures)
            forget(self, waiting)

    def _cards_changed(self, user_id: int) -> None:
        """Number a change of what user_id's cards show, after it (profile_changes.py)."""
        pipe = self._pipe()
        queue_profile_change(pipe, user_id)
        pipe.execute()

    def _current(self, user_id: int, *, deleted_too: bool = False) -> dict[str, str]:
        """Return the account's name, status and picture tokens; raise UserNotFound."""
        wanted = ("username", "status", *PICTURES, *PENDING.values())
        found = dict(zip(wanted, (s(v) or "" for v in self.r.hmget(keys.user(user_id), wanted))))
        if not deleted_too and (not found["username"] or found["status"] == STATUS_DELETED):
            raise UserNotFound(user_id)
        return found

    def _note_fields(self, note: str) -> dict[str, str]:
        """Return the bio's fields: the text and what its @mentions and #tags meant."""
        names = mentioned_names(note)
        ids = self.users.user_ids_for_names(names) if names else []
        mentions = {name: uid for name, uid in zip(names, ids) if uid is not None}
        return {
            "note": note,
            "note_mentions": encode_mentions(mentions),
            "note_tags": " ".join(hashtags(note)),
        }

    def _queue_image(
        self, pipe: Pipe, user_id: int, kind: str, token: str, variants, ts: int
    ) -> None:
        """Queue the metadata of a stored picture (keys.image)."""
        pipe.hset(
            keys.image(token),
            mapping={
                "owner": user_id,
                "kind": kind,
                "state": "live",
                "sizes": " ".join(f"{v.name}:{v.width}x{v.height}" for v in variants),
                "bytes": sum(len(v.data) for v in variants),
                "time": ts,
            },
        )

    def _forget(self, pictures: Sequence[tuple[str, str]]) -> None:
        """Delete replaced or removed pictures: their metadata, then their files."""
        if not pictures:
            return
        pipe = self._pipe()  # one DEL each: on a cluster the keys are on several nodes
        for _, token in pictures:
            pipe.delete(keys.image(token))
        pipe.execute()
        for kind, token in pictures:
            media.delete(kind, token)
