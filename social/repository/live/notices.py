"""Notices shown to a user on their home page (e.g. "your post was removed")."""

from __future__ import annotations

import json

from social import keys

from ..base import RepositoryBase, now

NOTICES_CAP = 50  # a user never needs more than the latest few; older ones fall off


def decode_notices(raw: list) -> list[dict]:
    """Decode LRANGE'd JSON notices, skipping any that do not parse."""
    out = []
    for item in raw:
        try:
            notice = json.loads(item)
        except (TypeError, ValueError):
            continue
        if isinstance(notice, dict):
            out.append(notice)
    return out


class NoticeStore(RepositoryBase):
    """Per-user notices, newest first, capped."""

    def queue_notice(
        self, pipe, user_id: int, text: str, *, at: int | None = None, **fields: str
    ) -> None:
        """Queue a notice for user_id onto pipe: its English `text`, and `fields` a page can
        say it with in the reader's language (kind="post_removed", snippet, reason: the
        home page's template; older notices have the text alone)."""
        ts = now() if at is None else at
        pipe.lpush(keys.notices(user_id), json.dumps({**fields, "text": text, "time": ts}))
        pipe.ltrim(keys.notices(user_id), 0, NOTICES_CAP - 1)

    def dismiss_notices(self, user_id: int) -> None:
        """Remove every notice of user_id (the home page reads them in its own pipeline)."""
        self.r.delete(keys.notices(user_id))
