"""Pictures in posts: uploads (keys.image, kind `post`), claimed by one post each.

An upload is stored first: as sent (begin_upload: media.save_original, then its hash in
state "processing" in one pipeline with its entries in keys.media_unattached and
keys.user_media), and the worker (social/work_handlers/media.py) makes its sizes and turns
it "unattached", or "failed" with the reason; upload() stores one already processed (the
seed's). A composer's post with pictures is a draft (keys.post_draft) until the worker has
processed them all: the worker then writes it through PostStore.create_post, as any post.

A post claims its uploads before it is written: one single-key script
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
from dataclasses import dataclass

from social import keys, media
from social.images import Variant

from ..base import RepositoryBase, as_int, decode_hash, now, s
from ..errors import RepositoryError
from ..live.notices import NoticeStore
from ..models import Attachment, Upload
from .media_files import SWEPT_STATES, forget, queue_processing

KIND = "post"
UNATTACHED = "unattached"
ATTACHED = "attached"
PROCESSING, FAILED = "processing", "failed"  # media_files's
FULL, SMALL = "1600", "640"  # the sizes' names (images.POST_SIZES)
# A notice's English text (pages show its kind in the reader's language: home.html).
UNPUBLISHED = "Your post could not be published: %(reason)s What you wrote: %(body)s"

# KEYS: image:<token>; ARGV: owner id, post id. Claims an unattached picture of the owner's
# for the post; returns {sizes, alt, blurhash, full_bytes}, {"processing"} for one of theirs
# the worker has not processed yet, or {} when it is not claimable.
CLAIM_SCRIPT = """
local f = redis.call('HMGET', KEYS[1], 'owner', 'kind', 'state', 'sizes', 'alt', 'blurhash',
                     'full_bytes')
if f[1] == ARGV[1] and f[2] == 'post' and f[3] == 'processing' then return {'processing'} end
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
# owner's, processed or not (Mastodon: only those); 1 when done, 0 when not theirs or
# already in a post.
DESCRIBE_SCRIPT = """
local f = redis.call('HMGET', KEYS[1], 'owner', 'kind', 'state')
if f[1] ~= ARGV[1] or f[2] ~= 'post' or (f[3] ~= 'unattached' and f[3] ~= 'processing') then
  return 0
end
redis.call('HSET', KEYS[1], 'alt', ARGV[2])
return 1
"""


class MediaNotFound(RepositoryError):
    """Pictures that are not the author's unattached uploads (missing, someone else's,
    or already in a post); `ids` names them."""

    def __init__(self, ids: Sequence[str]) -> None:
        super().__init__(", ".join(ids))
        self.ids = list(ids)


class MediaProcessing(MediaNotFound):
    """Pictures of the author's the worker has not processed yet (Mastodon's 422 "try again
    in a moment"); `ids` names them."""


@dataclass(frozen=True)
class Draft:
    """A composer's post waiting for its pictures (keys.post_draft): what create_post
    takes, and `token`, the one-off token it is written under (a run twice posts once)."""

    id: str
    author: int
    body: str
    media: tuple[str, ...]
    post_token: str
    reply_to: int | None = None
    spoiler_text: str = ""
    sensitive: bool = False
    time: int = 0


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

    def begin_upload(
        self, owner_id: int, data: bytes, *, alt: str = "", draft: str = "",
        at: int | None = None,
    ) -> Upload:  # fmt: skip
        """Store a picture as sent (its header checked: images.inspect) as owner_id's
        upload for the worker to process: the bytes first, then its hash ("processing")
        and its two lists in one pipeline (a failure takes the bytes back). draft: the
        composer's post waiting for it. The caller queues its job."""
        token = media.new_token()
        ts = now() if at is None else at
        alt = alt[: keys.MEDIA_ALT_MAX]
        original = media.save_original(token, data)
        try:
            pipe = self._pipe()
            fields = {"alt": alt, "draft": draft} if draft else {"alt": alt}
            queue_processing(pipe, token, owner_id, KIND, original, ts, **fields)
            pipe.zadd(keys.media_unattached(), {token: ts})
            pipe.zadd(keys.user_media(owner_id), {token: ts})
            pipe.execute()
        except Exception:
            media.delete_names([original])
            raise
        return Upload(attachment_from(token, "", alt, ""), owner_id, PROCESSING, None, 0, ts)

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
        return self.own_loose(owner_id, token, (UNATTACHED,))

    def own_loose(
        self, owner_id: int, token: str, states: Sequence[str] = (PROCESSING, UNATTACHED, FAILED)
    ) -> Upload | None:
        """Return owner_id's picture token names while no post has it (processing,
        processed, or refused by the worker), or None."""
        found = self.get(token)
        if found is None or found.owner != owner_id or found.state not in states:
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
        refused = [token for token, got in zip(tokens, replies) if len(got) < 4]
        if refused:
            self.unclaim([t for t, got in zip(tokens, replies) if len(got) == 4], post_id)
            waiting = [token for token, got in zip(tokens, replies) if len(got) == 1]
            if waiting and len(waiting) == len(refused):
                raise MediaProcessing(waiting)
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
        """Delete owner_id's uploads no post has now (processed or not: a form that
        uploaded them and then failed, a draft given up): their hashes, list entries and
        files. Others' or attached ones are left."""
        mine = [u.id for t in tokens if (u := self.own_loose(owner_id, t)) is not None]
        forget(self, mine, states=SWEPT_STATES)

    # --- A composer's post waiting for its pictures -----------------------------------------

    def draft_post(
        self,
        author_id: int,
        body: str,
        pictures: Sequence[tuple[bytes, str]],
        *,
        post_token: str | None = None,
        reply_to: int | None = None,
        spoiler_text: str = "",
        sensitive: bool = False,
        at: int | None = None,
    ) -> Draft:
        """Store a post and its pictures as sent, (bytes, alt) each, for the worker: each
        picture through begin_upload, then the draft (keys.post_draft, a day). The caller
        queues one job a picture; the last one to finish writes the post (create_post,
        under post_token, else the draft's id: a job run twice posts once)."""
        ts = now() if at is None else at
        draft_id = media.new_token()
        tokens: list[str] = []
        try:
            for data, alt in pictures:
                tokens.append(self.begin_upload(author_id, data, alt=alt, draft=draft_id, at=ts).id)
            draft = Draft(draft_id, author_id, body, tuple(tokens), post_token or draft_id,
                          reply_to, spoiler_text, sensitive, ts)  # fmt: skip
            self.r.set(
                keys.post_draft(draft_id), json.dumps(draft.__dict__), ex=keys.POST_DRAFT_TTL
            )
        except Exception:
            self.discard(author_id, tokens)
            raise
        return draft

    def draft(self, draft_id: str) -> Draft | None:
        """Return the draft draft_id names, or None (written, given up, or expired)."""
        if not valid_token(draft_id):
            return None
        raw = self.r.get(keys.post_draft(draft_id))
        try:
            fields = json.loads(s(raw) or "null")
            return Draft(**{**fields, "media": tuple(fields["media"])}) if fields else None
        except (TypeError, ValueError, KeyError):
            return None

    def states(self, tokens: Sequence[str]) -> list[str]:
        """Return the state of each picture tokens name ("" when gone), in one round trip."""
        pipe = self._pipe()
        for token in tokens:
            pipe.hget(keys.image(token), "state")
        return [s(state) or "" for state in pipe.execute()] if tokens else []

    def end_draft(self, draft_id: str) -> bool:
        """Delete a draft; return whether this call did (of runs ending it at once, one)."""
        return bool(self.r.delete(keys.post_draft(draft_id)))

    def refuse_draft(self, draft: Draft, reason: str, notices: NoticeStore) -> None:
        """Give a draft up because its post cannot be written, and tell its author why,
        with what they wrote (a notice on their home page: nothing typed is lost). Of runs
        doing this at once, the one that ends the draft tells."""
        if self.end_draft(draft.id):
            pipe = self._pipe()
            text = UNPUBLISHED % {"reason": reason, "body": draft.body}
            notices.queue_notice(pipe, draft.author, text, kind="post_unpublished",
                                 reason=reason, body=draft.body)  # fmt: skip
            pipe.execute()
        self.discard(draft.author, draft.media)

    def drop_draft(self, draft: Draft) -> None:
        """Give a draft up: delete it and its pictures (the queue refused their jobs)."""
        self.end_draft(draft.id)
        self.discard(draft.author, draft.media)

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
