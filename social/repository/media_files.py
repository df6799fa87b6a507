"""The pictures' lifecycle: their files and `image:<token>` hashes go when nothing can show
them again, and `manage.py repair` finds the two kinds of orphan.

- A deleted post (by its author, by staff, or its author's account purged): each picture's
  hash, its entry in its owner's keys.user_media and its files (the post hash keeps its
  `media` field for the record, as it keeps its body).
- An unattached upload older than UNATTACHED_MAX_AGE (keys.media_unattached, oldest first):
  deleted by `manage.py repair` (every five minutes in docs/deploy.md), only while it is
  still unattached: the check and the DEL are one single-key script, so a post claiming it
  at that moment (attachments.CLAIM_SCRIPT, on the same key) either wins or is refused.
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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import cast

from django.core.files.base import ContentFile
from django.core.files.storage import storages

from social import keys, media

from .base import Members, RepositoryBase, as_int, batched, now, queue_hiding, s

log = logging.getLogger(__name__)
UNATTACHED = "unattached"  # attachments.UNATTACHED
UNATTACHED_MAX_AGE = 24 * 60 * 60
ORPHAN_FILE_GRACE = 60 * 60  # a file younger than this may be an upload being named
BATCH = 500
KIND_DIRS = {f"{kind}s": kind for kind in ("avatar", "header", "post")}

# KEYS: image:<token>; ARGV: the state it must be in ("" for any). Deletes the hash and
# returns {owner, kind}; {} when it is missing or in another state.
FORGET_SCRIPT = """
local f = redis.call('HMGET', KEYS[1], 'owner', 'kind', 'state')
if not f[2] or (ARGV[1] ~= '' and f[3] ~= ARGV[1]) then return {} end
redis.call('DEL', KEYS[1])
return {f[1] or '', f[2]}
"""


@dataclass(frozen=True)
class Orphans:
    """What repair found: storage names of files no hash names, tokens of hashes whose
    files are gone."""

    files: list[str]
    hashes: list[str]


def forget(store: RepositoryBase, tokens: Sequence[str], *, state: str = "") -> list[str]:
    """Delete the pictures tokens name (only those in `state`, when given): their hashes,
    their owners' user_media and media_unattached entries, then their files. Return the
    tokens deleted. (A profile's pictures are profiles.py's: its field names them.)"""
    tokens = [t for t in dict.fromkeys(tokens) if valid_token(t)]
    if not tokens:
        return []
    pipe = store._pipe()
    for token in tokens:
        pipe.execute_command("EVAL", FORGET_SCRIPT, 1, keys.image(token), state)
    gone = [(t, [s(v) for v in got]) for t, got in zip(tokens, pipe.execute()) if got]
    pipe = store._pipe()
    pipe.zrem(keys.media_unattached(), *tokens)  # stale entries go too
    for token, (owner, _) in gone:
        if (owner_id := as_int(owner)) is not None:
            pipe.zrem(keys.user_media(owner_id), token)
    pipe.execute()
    for token, (_, kind) in gone:
        try:
            media.delete(kind, token)
        except Exception:  # the storage is down: repair deletes the orphan files later
            log.warning("picture %s's files not deleted", token, exc_info=True)
    return [token for token, _ in gone]


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

    def forget(self, tokens: Sequence[str], *, state: str = "") -> list[str]:
        """Delete the pictures tokens name (see forget)."""
        return forget(self, tokens, state=state)

    def forget_post(self, tokens: Sequence[str]) -> list[str]:
        """Delete a deleted post's pictures (the files too); return the tokens deleted."""
        return self.forget(tokens)

    def unattached_due(self, *, at: int | None = None, limit: int = BATCH) -> list[str]:
        """Return tokens of uploads in media_unattached older than UNATTACHED_MAX_AGE."""
        cutoff = (now() if at is None else at) - UNATTACHED_MAX_AGE
        due = self.r.zrangebyscore(keys.media_unattached(), "-inf", cutoff, start=0, num=limit)
        return [s(t) for t in cast(Members, due)]

    def sweep_unattached(self, *, at: int | None = None) -> list[str]:
        """Delete every upload left unattached past UNATTACHED_MAX_AGE; return the tokens.
        An entry for a picture a post took meanwhile only leaves the list."""
        deleted: list[str] = []
        while due := self.unattached_due(at=at):
            deleted += self.forget(due, state=UNATTACHED)
        return deleted

    def forget_account(self, user_id: int) -> int:
        """Delete every post picture user_id uploaded (see forget_account)."""
        return forget_account(self, user_id)

    # --- Orphans (manage.py repair) -------------------------------------------------------

    def orphans(self, *, grace: int = ORPHAN_FILE_GRACE, at: int | None = None) -> Orphans:
        """Return files no hash names (older than grace seconds) and hashes whose files
        are all gone."""
        storage = storages["default"]
        cutoff = (time.time() if at is None else at) - grace
        files: list[str] = []
        for batch in batched(stored_files(), BATCH):
            pipe = self._pipe()
            for _, _, token in batch:
                pipe.hget(keys.image(token), "kind")
            for (name, kind, _), known in zip(batch, pipe.execute()):
                if s(known) == kind:
                    continue
                modified = storage.get_modified_time(name)
                if modified.replace(tzinfo=modified.tzinfo or UTC).timestamp() <= cutoff:
                    files.append(name)
        hashes = [
            token
            for token, kind in self._image_kinds()
            if kind not in KIND_DIRS.values() or not media.exists(kind, token)
        ]
        return Orphans(files, hashes)

    def _image_kinds(self) -> Iterator[tuple[str, str]]:
        """Yield (token, kind) of every image hash (SCAN: every node of a cluster)."""
        found = (s(k) for k in self.r.scan_iter(keys.IMAGE_PATTERN, count=BATCH))
        for batch in batched(found, BATCH):
            pipe = self._pipe()
            for key in batch:
                pipe.hget(key, "kind")
            for key, kind in zip(batch, pipe.execute()):
                token = key.removeprefix(keys.IMAGE_PATTERN[:-1])
                if valid_token(token):
                    yield token, s(kind) or ""

    def mend_orphans(self, found: Orphans) -> None:
        """Delete orphan files, and orphan hashes with whatever names them."""
        media.delete_names(found.files)
        for batch in batched(found.hashes, BATCH):
            pipe = self._pipe()
            for token in batch:
                pipe.hmget(keys.image(token), ["owner", "kind"])
            owners = pipe.execute()
            pipe = self._pipe()
            for token, (owner, kind) in zip(batch, owners):
                owner_id, kind = as_int(owner), s(kind)
                pipe.execute_command("EVAL", FORGET_SCRIPT, 1, keys.image(token), "")
                pipe.zrem(keys.media_unattached(), token)
                if owner_id is None:
                    continue
                pipe.zrem(keys.user_media(owner_id), token)
                if kind in media.KINDS:  # the profile's field, if it still names it
                    pipe.execute_command("EVAL", UNSET_SCRIPT, 1, keys.user(owner_id), kind, token)
                    queue_hiding(pipe)  # cards show the avatar: rendered anew
            self.send(pipe)


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
