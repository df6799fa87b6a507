"""The pictures' lifecycle: their files and `image:<token>` hashes go when nothing can show
them again, and `manage.py repair` finds the two kinds of orphan.

- A deleted post (by its author, by staff, or its author's account purged): each picture's
  hash, its entry in its owner's keys.user_media and its files (the post hash keeps its
  `media` field for the record, as it keeps its body).
- An unattached upload older than UNATTACHED_MAX_AGE (keys.media_unattached, oldest first):
  deleted by `manage.py repair` (every five minutes in docs/deploy.md), only while it is
  still unattached (or still processing, or refused by the worker): the check and the DEL
  are one single-key script, so a post claiming it at that moment (attachments.CLAIM_SCRIPT,
  on the same key) either wins or is refused.
- Processing (the worker tier: social/work_handlers/media.py): an upload's bytes are kept
  as sent (media.save_original, named by the hash's `original`) with its hash in state
  `processing`; the worker makes its sizes, then marks it ready (finish) or refused (fail),
  each a single-key script that acts only on a picture still processing, and deletes the
  original. Forgetting a picture deletes its original too.
- Orphans: a file whose hash is gone (a process died between storing and naming it, or
  between forgetting and deleting) once older than a grace period; a hash whose files are
  gone (a bucket or disk restored from an older copy). Both reported, and mended unless
  --dry-run: the file deleted; the hash deleted and taken off the lists naming it.

Every script and transaction touches one key, so all of it runs on a cluster.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import cast

from django.core.files.base import ContentFile
from django.core.files.storage import storages
from redis.typing import EncodableT, FieldT

from social import keys, media

from ..accounts.profile_changes import queue_profile_change
from ..base import Members, Pipe, RepositoryBase, as_int, batched, decode_hash, now, s

log = logging.getLogger(__name__)
UNATTACHED = "unattached"  # attachments.UNATTACHED
PROCESSING, FAILED, LIVE = "processing", "failed", "live"
# What an unattached upload may be when the day-old sweep deletes it.
SWEPT_STATES = (UNATTACHED, PROCESSING, FAILED)
STUCK_GRACE = 15 * 60  # seconds a picture may wait for its job before repair queues another
UNATTACHED_MAX_AGE = 24 * 60 * 60
ORPHAN_FILE_GRACE = 60 * 60  # a file younger than this may be an upload being named
BATCH = 500
KIND_DIRS = {f"{kind}s": kind for kind in ("avatar", "header", "post")}

# KEYS: image:<token>; ARGV: the states it may be in (none: any). Deletes the hash and
# returns {owner, kind, original}; {} when it is missing or in another state.
FORGET_SCRIPT = """
local f = redis.call('HMGET', KEYS[1], 'owner', 'kind', 'state', 'original')
if not f[2] then return {} end
if #ARGV > 0 then
  local allowed = false
  for _, state in ipairs(ARGV) do if f[3] == state then allowed = true end end
  if not allowed then return {} end
end
redis.call('DEL', KEYS[1])
return {f[1] or '', f[2], f[4] or ''}
"""
# KEYS: image:<token>; ARGV: its new state, then field, value, ... Marks a picture being
# processed as done (ready, or refused) with those fields: 1; 0 when it is not processing
# (a run before this one settled it); -1 when it is gone (discarded meanwhile).
SETTLE_SCRIPT = """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return -1 end
if state ~= 'processing' then return 0 end
redis.call('HSET', KEYS[1], 'state', unpack(ARGV))
return 1
"""


@dataclass(frozen=True)
class Processing:
    """What the worker reads of a picture: its token, owner, kind and state; `original`,
    the storage name of its bytes as sent (until processed); `draft`, the composer's post
    waiting for it; `error`, why the worker refused it."""

    token: str
    owner: int
    kind: str
    state: str
    original: str = ""
    draft: str = ""
    error: str = ""


@dataclass(frozen=True)
class Orphans:
    """What repair found: storage names of files no hash names, tokens of hashes whose
    files are gone."""

    files: list[str]
    hashes: list[str]


def forget(
    store: RepositoryBase, tokens: Sequence[str], *, states: Sequence[str] = ()
) -> list[str]:
    """Delete the pictures tokens name (only those in one of `states`, when given): their
    hashes, their owners' user_media and media_unattached entries, then their files (and
    the bytes as sent of one not processed yet). Return the tokens deleted. (A profile's
    pictures are profiles.py's: its field names them.)"""
    tokens = [t for t in dict.fromkeys(tokens) if valid_token(t)]
    if not tokens:
        return []
    pipe = store._pipe()
    for token in tokens:
        pipe.execute_command("EVAL", FORGET_SCRIPT, 1, keys.image(token), *states)
    gone = [(t, [s(v) for v in got]) for t, got in zip(tokens, pipe.execute()) if got]
    pipe = store._pipe()
    pipe.zrem(keys.media_unattached(), *tokens)  # stale entries go too
    for token, (owner, *_) in gone:
        if (owner_id := as_int(owner)) is not None:
            pipe.zrem(keys.user_media(owner_id), token)
    pipe.execute()
    for token, (_, kind, original) in gone:
        try:
            media.delete(kind, token)
            if original:
                media.delete_names([original])
        except Exception:  # the storage is down: repair deletes the orphan files later
            log.warning("picture %s's files not deleted", token, exc_info=True)
    return [token for token, _ in gone]


def queue_processing(
    pipe: Pipe, token: str, owner_id: int, kind: str, original: str, ts: int, **fields: str
) -> None:
    """Queue the hash of an upload stored as sent (original) for the worker to process."""
    mapping: dict[FieldT, EncodableT] = {"owner": owner_id, "kind": kind, "state": PROCESSING,
                                         "original": original, "time": ts}  # fmt: skip
    mapping.update(fields)
    pipe.hset(keys.image(token), mapping=mapping)


def forget_account(store: RepositoryBase, user_id: int) -> int:
    """Delete every post picture user_id uploaded (a purged account); return how many."""
    count = 0
    while tokens := store.r.zrange(keys.user_media(user_id), 0, BATCH - 1):
        names = [s(t) for t in cast(Members, tokens)]
        count += len(forget(store, names))
        store.r.zrem(keys.user_media(user_id), *names)  # those whose hash was gone
    return count


def valid_token(token: str) -> bool:
    return bool(re.fullmatch(keys.IMAGE_TOKEN_RE, token))


class MediaFileStore(RepositoryBase):
    """Deleting pictures with what named them, sweeping old uploads, finding orphans."""

    def forget(self, tokens: Sequence[str], *, states: Sequence[str] = ()) -> list[str]:
        """Delete the pictures tokens name (see forget)."""
        return forget(self, tokens, states=states)

    def unattached_due(self, *, at: int | None = None, limit: int = BATCH) -> list[str]:
        """Return tokens of uploads in media_unattached older than UNATTACHED_MAX_AGE."""
        cutoff = (now() if at is None else at) - UNATTACHED_MAX_AGE
        due = self.r.zrangebyscore(keys.media_unattached(), "-inf", cutoff, start=0, num=limit)
        return [s(t) for t in cast(Members, due)]

    def sweep_unattached(self, *, at: int | None = None) -> list[str]:
        """Delete every upload left unattached past UNATTACHED_MAX_AGE (or processing, or
        refused by the worker); return the tokens. An entry for a picture a post took
        meanwhile only leaves the list."""
        deleted: list[str] = []
        while due := self.unattached_due(at=at):
            deleted += self.forget(due, states=SWEPT_STATES)
        return deleted

    # --- Processing (the worker tier) ------------------------------------------------------

    def processing(self, token: str) -> Processing | None:
        """Return what the worker needs of the picture token names, or None when gone."""
        if not valid_token(token):
            return None
        h = decode_hash(self.r.hgetall(keys.image(token)))
        owner = as_int(h.get("owner"))
        if owner is None or h.get("kind") not in KIND_DIRS.values():
            return None
        return Processing(
            token, owner, h["kind"], h.get("state", ""), h.get("original", ""),
            h.get("draft", ""), h.get("error", ""),
        )  # fmt: skip

    def finish(self, token: str, state: str, fields: Mapping[str, str | int]) -> int:
        """Mark a picture being processed ready (state: unattached for a post's, live for
        a profile's) with fields (its sizes...): 1; 0 when a run before settled it; -1
        when it is gone (the caller deletes the files it wrote)."""
        args = [state, *(x for pair in fields.items() for x in pair)]
        return int(cast(int, self.r.eval(SETTLE_SCRIPT, 1, keys.image(token), *args)))

    def fail(self, token: str, reason: str) -> int:
        """Mark a picture being processed refused, saying why (as finish answers)."""
        return self.finish(token, FAILED, {"error": reason[:500]})

    def drop_original(self, token: str, name: str) -> None:
        """Delete a processed picture's bytes as sent, then the field naming them."""
        if name:
            media.delete_names([name])
        self.r.hdel(keys.image(token), "original")

    def forget_account(self, user_id: int) -> int:
        """Delete every post picture user_id uploaded (see forget_account)."""
        return forget_account(self, user_id)

    # --- Orphans (manage.py repair) -------------------------------------------------------

    def orphans(self, *, grace: int = ORPHAN_FILE_GRACE, at: int | None = None) -> Orphans:
        """Return files no hash names (older than grace seconds: pictures' sizes, and
        uploads kept as sent) and hashes whose files are all gone (a picture not processed
        yet, or refused by the worker, has none)."""
        storage = storages["default"]
        cutoff = (time.time() if at is None else at) - grace

        def old(name: str) -> bool:
            modified = storage.get_modified_time(name)
            return modified.replace(tzinfo=modified.tzinfo or UTC).timestamp() <= cutoff

        files: list[str] = []
        for batch in batched(stored_files(), BATCH):
            pipe = self._pipe()
            for _, _, token in batch:
                pipe.hget(keys.image(token), "kind")
            for (name, kind, _), known in zip(batch, pipe.execute()):
                if s(known) != kind and old(name):
                    files.append(name)
        for names in batched(stored_originals(), BATCH):
            pipe = self._pipe()
            for _, token in names:
                pipe.hget(keys.image(token), "original")
            files += [n for (n, _), named in zip(names, pipe.execute()) if s(named) != n and old(n)]
        hashes = [
            token
            for token, kind, state in self._image_kinds()
            if kind not in KIND_DIRS.values()
            or (state not in (PROCESSING, FAILED) and not media.exists(kind, token))
        ]
        return Orphans(files, hashes)

    def stuck(self, *, grace: int = STUCK_GRACE, at: int | None = None) -> list[str]:
        """Return the tokens of pictures still processing grace seconds after they were
        uploaded: their job was lost (a web process died between storing the picture and
        queuing it) or is far behind. Queuing them again is safe: the job is idempotent."""
        cutoff = (time.time() if at is None else at) - grace
        stuck = []
        for token, (state, uploaded) in self._images("state", "time"):
            moment = as_int(uploaded)
            if state == PROCESSING and moment is not None and moment <= cutoff:
                stuck.append(token)
        return stuck

    def _image_kinds(self) -> Iterator[tuple[str, str, str]]:
        """Yield (token, kind, state) of every image hash (SCAN: every node of a cluster)."""
        for token, (kind, state) in self._images("kind", "state"):
            yield token, kind or "", state or ""

    def _images(self, *fields: str) -> Iterator[tuple[str, list[str | None]]]:
        """Yield (token, its fields' values) of every image hash with a well-formed token:
        SCAN (every node of a cluster), then an HMGET of each key of a batch on one
        pipeline."""
        found = (s(k) for k in self.r.scan_iter(keys.IMAGE_PATTERN, count=BATCH))
        prefix = keys.IMAGE_PATTERN.removesuffix("*")
        for batch in batched(found, BATCH):
            pipe = self._pipe()
            for key in batch:
                pipe.hmget(key, fields)
            for key, values in zip(batch, pipe.execute()):
                token = key.removeprefix(prefix)
                if valid_token(token):
                    yield token, [s(value) for value in values]

    def mend_orphans(self, found: Orphans) -> None:
        """Delete orphan files, and orphan hashes with whatever names them."""
        media.delete_names(found.files)
        for batch in batched(found.hashes, BATCH):
            pipe = self._pipe()
            for token in batch:
                pipe.hmget(keys.image(token), ["owner", "kind"])
            owners = pipe.execute()
            pipe = self._pipe()
            avatars: list[int] = []  # whose cards may show another avatar now
            for token, (owner, kind) in zip(batch, owners):
                owner_id, kind = as_int(owner), s(kind)
                pipe.execute_command("EVAL", FORGET_SCRIPT, 1, keys.image(token))
                pipe.zrem(keys.media_unattached(), token)
                if owner_id is None:
                    continue
                pipe.zrem(keys.user_media(owner_id), token)
                if kind in media.KINDS:  # the profile's field, if it still names it
                    pipe.execute_command("EVAL", UNSET_SCRIPT, 1, keys.user(owner_id), kind, token)
                    if kind == "avatar":
                        avatars.append(owner_id)
            self.send(pipe)
            if avatars:  # numbered after the change (profile_changes.py)
                pipe = self._pipe()
                for owner_id in dict.fromkeys(avatars):
                    queue_profile_change(pipe, owner_id)
                pipe.execute()


# KEYS: user:<id>; ARGV: field, token. Drops the field if it still names token.
UNSET_SCRIPT = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
"""


def stored_files() -> Iterator[tuple[str, str, str]]:
    """Yield (storage name, kind, token) of every picture file in storage."""
    storage = storages["default"]
    for folder, kind in KIND_DIRS.items():
        try:
            _, files = storage.listdir(folder)
        except FileNotFoundError:
            continue
        for file in files:
            name = f"{folder}/{file}"
            match = media.NAME_RE.fullmatch(name)
            if match and match.group(1) == kind:
                yield name, kind, match.group(2)


def stored_originals() -> Iterator[tuple[str, str]]:
    """Yield (storage name, token) of every upload kept as sent (media.save_original)."""
    try:
        _, files = storages["default"].listdir(media.ORIGINALS)
    except FileNotFoundError:
        return
    for file in files:
        name = f"{media.ORIGINALS}/{file}"
        if match := media.ORIGINAL_RE.fullmatch(name):
            yield name, match.group(1)


def copy_out(folder: Path) -> int:
    """Copy every picture file from storage into folder (same names: `avatars/...`);
    return how many (`manage.py export --with-files`)."""
    storage, count = storages["default"], 0
    for name, _, _ in stored_files():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with storage.open(name, "rb") as handle:
            target.write_bytes(handle.read())
        count += 1
    return count


def copy_in(folder: Path) -> tuple[int, int]:
    """Store every picture file under folder that storage lacks (only names of
    media.NAME_RE's shape: nothing else is ever served); return (copied, already there)."""
    storage, copied, present = storages["default"], 0, 0
    for path in sorted(folder.rglob("*.webp")):
        name = path.relative_to(folder).as_posix()
        if not media.NAME_RE.fullmatch(name):
            continue
        if storage.exists(name):
            present += 1
            continue
        storage.save(name, ContentFile(path.read_bytes()))
        copied += 1
    return copied, present
