"""Searching the text of posts without a search cluster, as Mastodon searches them with
one: a person finds the posts they wrote, liked, reposted, replied to or were mentioned in,
newest first; no one else's.

Nothing is indexed when a post is written (posting costs nothing more). A search reads the
newest LIST_SCAN ids of each of the reader's own lists, `user_posts` (their posts and
replies), `user_likes`, `user_reposts` and `mentions`, on the search's first pipeline; then
the text (body and content warning) of those posts in one pipeline, and of the posts their
replies answer in one more (a post this process remembers is not read again: its text
never changes; a purge that empties it moves the visibility version, and the read path
checks again). The texts are matched in Python (social/search_words.py: every term starts
a word), and the newest matches are read through the read path (reader.py) as a list of
posts named by id: deleted posts, suspended, deleted and blocked authors' posts are left out
exactly as on every page. Bounded whatever the data: at most 5 x LIST_SCAN texts, three
round trips before the read path's own.

Why scan rather than index: a per-reader word index would cost every post written a
write per word for its author and each account it mentions, and every like and repost as
many for the liker (and their undoing as many again), for a search most people rarely
run. Scanning costs only the search, and reads the lists every page already keeps, so an
unlike, an undone repost or a deleted post leave it at once. Its limit: posts older than
the newest LIST_SCAN of each list are not searched.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Unpack

from redis.cluster import RedisCluster

from social import keys
from social.search_words import holds

from ..base import (
    Fields,
    NamedReads,
    Replies,
    RepositoryBase,
    StoreSettings,
    as_int,
    batched,
    s,
)
from ..models import Page, Post
from .reader import PageReader
from .sources import PLAIN, Listed
from .visibility import Viewer

LIST_SCAN = 250  # newest ids read of each of the reader's lists
# Where each list's ids are read on the first pipeline (names apart from the people's).
OWN, OTHERS = "posts:own", ("posts:liked", "posts:reposted", "posts:mentioned")
TEXT_FIELDS = ("body", "spoiler_text", "reply_to", "repost_of")
SCRIPT_KEYS = 100  # posts one TEXTS_SCRIPT reads: about 0.2-0.5 ms of Redis's time
# Every post's TEXT_FIELDS in one command (one server only: the posts' keys are in many
# cluster slots, where each is an HMGET of its own). KEYS: post:<id> for each post.
# Returns the fields in fours, nil where absent.
TEXTS_SCRIPT = """
local out = {}
for i = 1, #KEYS do
  local f = redis.call('HMGET', KEYS[i], 'body', 'spoiler_text', 'reply_to', 'repost_of')
  for j = 1, 4 do out[#out + 1] = f[j] end
end
return out
"""


@dataclass(frozen=True)
class Text:
    """What a search reads of a post: its text (body and content warning), what it
    answers, what it shares."""

    text: str
    reply_to: int | None
    repost_of: int | None


class PostSearch(RepositoryBase):
    """Posts by their text, among the reader's own lists (see the module docstring)."""

    def __init__(self, client, *, reader: PageReader, **config: Unpack[StoreSettings]) -> None:
        super().__init__(client, **config)
        self.reader = reader

    @staticmethod
    def queue_lists(reads: NamedReads, reader_id: int) -> None:
        """Queue the newest LIST_SCAN ids of each list the reader's search looks in."""
        last = LIST_SCAN - 1
        reads.lrange(OWN, keys.own_posts(reader_id), 0, last)
        reads.zrevrange(OTHERS[0], keys.user_likes(reader_id), 0, last)
        reads.zrevrange(OTHERS[1], keys.user_reposts(reader_id), 0, last)
        reads.zrevrange(OTHERS[2], keys.mentions(reader_id), 0, last)

    def matching(self, got: Replies, terms: Sequence[str]) -> list[int]:
        """Return the ids, newest first, of the posts in the lists queue_lists read (and
        those the reader's replies answer) whose text holds every term (one or two round
        trips; none when the process remembers every post)."""
        own = [int(i) for i in got.members(OWN)]
        others = [int(i) for name in OTHERS for i in got.members(name)]
        texts = self._texts([*own, *others])
        written = [i for i in own if i in texts and texts[i].repost_of is None]
        answered = [t.reply_to for i in written if (t := texts[i]).reply_to is not None]
        texts.update(self._texts([i for i in answered if i not in texts]))
        found = {i for i in (*written, *others, *answered) if i in texts}
        wanted = list(terms)
        return sorted((i for i in found if holds(wanted, texts[i].text)), reverse=True)

    def page(self, ids: Sequence[int], viewer: Viewer, offset: int, limit: int) -> Page[Post]:
        """Return the posts of ids (newest first) from offset, at most limit, as viewer
        may see them listed: read for up to limit more, to fill in for those left out."""
        if offset >= len(ids):
            return Page(items=[], number=1, has_next=False, per_page=limit)
        read = self.reader.page(
            Listed(tuple(ids), spare=limit), viewer, 1, limit, shows=PLAIN, offset=offset
        )
        return read.page

    def _texts(self, ids: Iterable[int]) -> dict[int, Text]:
        """Return {id: Text} for the posts of ids that exist: those the process remembers
        from memory, the others in one round trip (none when there are none)."""
        texts: dict[int, Text] = {}
        unread = []
        for post_id in dict.fromkeys(ids):
            known = self.cache.posts.get(post_id)
            if known is None:
                unread.append(post_id)
                continue
            post = known.post
            texts[post_id] = Text(f"{post.body} {post.spoiler_text}", post.reply_to, post.repost_of)
        if not unread:
            return texts
        for post_id, (body, spoiler, reply_to, repost_of) in zip(unread, self._read(unread)):
            if body is None and repost_of is None:
                continue  # no such post (or purged: nothing to find in it)
            text = f"{s(body) or ''} {s(spoiler) or ''}"
            texts[post_id] = Text(text, as_int(reply_to), as_int(repost_of))
        return texts

    def _read(self, ids: Sequence[int]) -> list[Fields]:
        """The TEXT_FIELDS of each post of ids, in one round trip: on one server one
        command per SCRIPT_KEYS posts (TEXTS_SCRIPT, a raw EVAL as loading.py's counts;
        Redis serves other clients between them), an HMGET each on a cluster."""
        pipe = self._pipe()
        if isinstance(self.r, RedisCluster):
            for post_id in ids:
                pipe.hmget(keys.post(post_id), TEXT_FIELDS)
            return pipe.execute()
        for chunk in batched(ids, SCRIPT_KEYS):
            post_keys = [keys.post(post_id) for post_id in chunk]
            pipe.execute_command("EVAL", TEXTS_SCRIPT, len(post_keys), *post_keys)
        flat = [value for reply in pipe.execute() for value in reply]
        n = len(TEXT_FIELDS)
        return [flat[i : i + n] for i in range(0, len(flat), n)]
