"""Pictures in posts: uploads (keys.image, kind `post`), claimed by one post each.

An upload is stored first (its files through social/media.py, then one pipeline writes its
`image:<token>` hash, `state` "unattached", and files it in keys.media_unattached and
keys.user_media). A post claims its uploads before it is written: one single-key script
per picture (so it works on a cluster) turns an unattached picture of the author's into
"attached" with the post's id, and hands back what its card shows; PostStore copies that
into the post hash's `media` field (encode_media), so cards read their pictures with the
post and cost no round trip. A picture is in one post at most: a claim refused for any of
a post's pictures gives the others back and posts nothing.

The file lifecycle (deleting a deleted post's files, unattached uploads after a day,
orphans) starts from post_deleted() and keys.media_unattached.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from social import keys, media
from social.images import Variant

from .base import RepositoryBase, as_int, decode_hash, now
from .errors import RepositoryError
from .media_files import forget
from .models import Attachment, Upload

KIND = "post"
UNATTACHED = "unattached"
ATTACHED = "attached"
FULL, SMALL = "1600", "640"  # the sizes' names (images.POST_SIZES)

# KEYS: image:<token>; ARGV: owner id, post id. Claims an unattached picture of the owner's
# for the post; returns {sizes, alt, blurhash, full_bytes}, or {} when it is not claimable.
CLAIM_SCRIPT = """
local f = redis.call('HMGET', KEYS[1], 'owner', 'kind', 'state', 'sizes', 'alt', 'blurhash',
                     'full_bytes')
if f[1] ~= ARGV[1] or f[2] ~= 'post' or f[3] ~= 'unattached' then return {} end
redis.call('HSET', KEYS[1], 'state', 'attached', 'post', ARGV[2])
return {f[4] or '', f[5] or '', f[6] or '', f[7] or '0'}
"""
# KEYS: image:<token>; ARGV: post id. Gives back a claim of that post's (a post refused).
UNCLAIM_SCRIPT = """
if redis.call('HGET', KEYS[1], 'post') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'state', 'unattached')
  redis.call('HDEL', KEYS[1], 'post')
end
return 1
"""
# KEYS: image:<token>; ARGV: owner id, alt text. Describes an unattached picture of the
# owner's (Mastodon: only those); 1 when done, 0 when not theirs or already in a post.
DESCRIBE_SCRIPT = """
local f = redis.call('HMGET', KEYS[1], 'owner', 'kind', 'state')
if f[1] ~= ARGV[1] or f[2] ~= 'post' or f[3] ~= 'unattached' then return 0 end
redis.call('HSET', KEYS[1], 'alt', ARGV[2])
return 1
"""


class MediaNotFound(RepositoryError):
    """Pictures that are not the author's unattached uploads (missing, someone else's,
    or already in a post); `ids` names them."""

    def __init__(self, ids: Sequence[str]) -> None:
        super().__init__(", ".join(ids))
        self.ids = list(ids)


def valid_token(token: str) -> bool:
    return bool(re.fullmatch(keys.IMAGE_TOKEN_RE, token))


def parse_sizes(sizes: str) -> dict[str, tuple[int, int]]:
    """Return {size name: (width, height)} from an image hash's `sizes`."""
    found = {}
    for item in sizes.split():
        name, _, box = item.partition(":")
        w, _, h = box.partition("x")
        if w.isdigit() and h.isdigit():
            found[name] = (int(w), int(h))
    return found


def attachment_from(
    token: str, sizes: str, alt: str, blurhash: str, full_bytes: str = "0"
) -> Attachment:
    by_name = parse_sizes(sizes)
    width, height = by_name.get(FULL, (0, 0))
    small_width, small_height = by_name.get(SMALL, (width, height))
    size = as_int(full_bytes) or 0
    return Attachment(token, width, height, small_width, small_height, alt, blurhash, size)


def encode_media(items: Sequence[Attachment]) -> str:
    """Return the post hash's `media` field: a JSON list, one
    [token, width, height, small width, small height, alt, blurhash, bytes of the full
    size] a picture."""
    rows = [[a.id, a.width, a.height, a.small_width, a.small_height, a.alt, a.blurhash, a.size]
            for a in items]  # fmt: skip
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":")) if rows else ""


def decode_media(value: str | None) -> tuple[Attachment, ...]:
    """Return the Attachments of a post hash's `media` field (junk: none)."""
    if not value:
        return ()
    try:
        rows = json.loads(value)
        return tuple(
            Attachment(str(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]), str(r[5]),
                       str(r[6]), int(r[7]) if len(r) > 7 else 0)
            for r in rows
            if valid_token(str(r[0]))
        )  # fmt: skip
    except (ValueError, TypeError, IndexError, KeyError):
        return ()


class AttachmentStore(RepositoryBase):
    """Uploading, describing and claiming the pictures of posts."""

    def upload(
        self,
        owner_id: int,
        variants: Sequence[Variant],
        *,
        alt: str = "",
        blurhash: str = "",
        at: int | None = None,
    ) -> Upload:
        """Store a processed picture (social/images.py, POST_SIZES) as owner_id's
        unattached upload: files first, then its hash and its two lists in one pipeline
        (a failure takes the files back)."""
        token = media.new_token()
        ts = now() if at is None else at
        sizes = " ".join(f"{v.name}:{v.width}x{v.height}" for v in variants)
        size = sum(len(v.data) for v in variants)
        full_bytes = next((len(v.data) for v in variants if v.name == FULL), 0)
        alt = alt[: keys.MEDIA_ALT_MAX]
        media.save(KIND, token, variants)
        try:
            pipe = self._pipe()
            pipe.hset(
                keys.image(token),
                mapping={"owner": owner_id, "kind": KIND, "state": UNATTACHED, "sizes": sizes,
                         "bytes": size, "time": ts, "alt": alt, "blurhash": blurhash,
                 "full_bytes": full_bytes},
            )  # fmt: skip
            pipe.zadd(keys.media_unattached(), {token: ts})
            pipe.zadd(keys.user_media(owner_id), {token: ts})
            pipe.execute()
        except Exception:
            media.delete(KIND, token)
            raise
        item = attachment_from(token, sizes, alt, blurhash, str(full_bytes))
        return Upload(item, owner_id, UNATTACHED, None, size, ts)

    def get(self, token: str) -> Upload | None:
        """Return the post picture token names, or None (no such, or not a post's)."""
        if not valid_token(token):
            return None
        h = decode_hash(self.r.hgetall(keys.image(token)))
        owner = as_int(h.get("owner"))
        if h.get("kind") != KIND or owner is None:
            return None
        item = attachment_from(
            token, h.get("sizes", ""), h.get("alt", ""), h.get("blurhash", ""),
            h.get("full_bytes", "0"),
        )  # fmt: skip
        return Upload(
            item,
            owner,
            h.get("state", ""),
            as_int(h.get("post")),
            as_int(h.get("bytes")) or 0,
            as_int(h.get("time")) or 0,
        )

    def own_unattached(self, owner_id: int, token: str) -> Upload | None:
        """Return owner_id's unattached picture token names, or None (Mastodon shows and
        changes only those)."""
        found = self.get(token)
        if found is None or found.owner != owner_id or found.state != UNATTACHED:
            return None
        return found

    def describe(self, owner_id: int, token: str, alt: str) -> Upload | None:
        """Set the alt text of owner_id's unattached picture; None when there is none."""
        if not valid_token(token):
            return None
        done = self.r.eval(
            DESCRIBE_SCRIPT, 1, keys.image(token), owner_id, alt[: keys.MEDIA_ALT_MAX]
        )
        return self.get(token) if done else None

    def claim(self, owner_id: int, tokens: Sequence[str], post_id: int) -> list[Attachment]:
        """Attach owner_id's unattached pictures to post_id (one round trip) and return
        what its card shows, in order; raise MediaNotFound naming those that are not
        theirs to attach (the rest are given back: one round trip more)."""
        bad = [t for t in tokens if not valid_token(t)]
        if bad:
            raise MediaNotFound(bad)
        pipe = self._pipe()
        for token in tokens:
            pipe.execute_command("EVAL", CLAIM_SCRIPT, 1, keys.image(token), owner_id, post_id)
        replies = pipe.execute()
        refused = [token for token, got in zip(tokens, replies) if not got]
        if refused:
            self.unclaim([t for t, got in zip(tokens, replies) if got], post_id)
            raise MediaNotFound(refused)
        return [
            attachment_from(token, *(v.decode() if isinstance(v, bytes) else v for v in got))
            for token, got in zip(tokens, replies)
        ]

    def unclaim(self, tokens: Sequence[str], post_id: int) -> None:
        """Give back pictures claimed for post_id (a post that was not written)."""
        if not tokens:
            return
        pipe = self._pipe()
        for token in tokens:
            pipe.execute_command("EVAL", UNCLAIM_SCRIPT, 1, keys.image(token), post_id)
        pipe.execute()

    def queue_attached(self, pipe, tokens: Sequence[str]) -> None:
        """Queue striking claimed pictures off keys.media_unattached (with the post)."""
        if tokens:
            pipe.zrem(keys.media_unattached(), *tokens)

    def discard(self, owner_id: int, tokens: Sequence[str]) -> None:
        """Delete owner_id's unattached uploads now (a form that uploaded them and then
        failed): their hashes, list entries and files. Others' or attached ones are left."""
        mine = [u for t in tokens if (u := self.own_unattached(owner_id, t)) is not None]
        if not mine:
            return
        pipe = self._pipe()
        for upload in mine:
            pipe.delete(keys.image(upload.id))
        pipe.zrem(keys.media_unattached(), *[u.id for u in mine])
        pipe.zrem(keys.user_media(owner_id), *[u.id for u in mine])
        pipe.execute()
        for upload in mine:
            media.delete(KIND, upload.id)

    def post_deleted(self, post_id: int, items: Sequence[Attachment]) -> list[str]:
        """The one hook a post's deletion calls for its pictures: delete them, hashes and
        files (media_files.forget; the post hash keeps `media` for the record, as it keeps
        its body), and return the storage names of their files."""
        forget(self, [item.id for item in items])
        return [name for item in items for name in media.file_names(KIND, item.id)]

    def attach_seeded(
        self,
        rows: Sequence[tuple[int, int, Sequence[tuple[Sequence[Variant], str, str]]]],
        at: int,
        batch: int = 50,
    ) -> int:
        """Give posts pictures as if posted with them (manage.py seed): each row is (post
        id, its author, [(variants, alt, blurhash), ...]). Files first, then one pipeline a
        batch of posts for the image hashes (attached), user_media and the posts' `media`.
        Returns the pictures stored."""
        stored = 0
        for start in range(0, len(rows), batch):
            pipe = self._pipe()
            for post_id, owner, pictures in rows[start : start + batch]:
                items = []
                for variants, alt, blurhash in pictures:
                    token = media.new_token()
                    media.save(KIND, token, variants)
                    sizes = " ".join(f"{v.name}:{v.width}x{v.height}" for v in variants)
                    full = next((len(v.data) for v in variants if v.name == FULL), 0)
                    pipe.hset(
                        keys.image(token),
                        mapping={"owner": owner, "kind": KIND, "state": ATTACHED,
                                 "post": post_id, "sizes": sizes,
                                 "bytes": sum(len(v.data) for v in variants), "time": at,
                                 "alt": alt, "blurhash": blurhash, "full_bytes": full},
                    )  # fmt: skip
                    pipe.zadd(keys.user_media(owner), {token: at})
                    items.append(attachment_from(token, sizes, alt, blurhash, str(full)))
                pipe.hset(keys.post(post_id), "media", encode_media(items))
                stored += len(items)
            pipe.execute()
        return stored
