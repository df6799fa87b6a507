"""What the client API reads besides pages of posts (which it reads on the read path): the
position of a post in a list (Mastodon pages by id, the read path by offset), a page from
there with the accounts it names, and the instance's figures. (Accounts with their counts
and relationships are the user store's: users.py.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Unpack, cast

from social import keys

from .base import Client, RepositoryBase, StoreSettings, as_int
from .oauth import RememberedToken, StaleToken, queue_token_check, token_holds
from .reader import NamedReads, PageRead, PageReader
from .sources import Source
from .users import AccountRow, accounts_from, names_from, queue_accounts
from .visibility import Viewer

BISECT_STEPS = 64


@dataclass(frozen=True)
class Shifted(Source):
    """Another source read from `offset` on: a page that starts at a post (max_id) rather
    than at a page boundary. Everything else (visibility, mutes) is the inner source's."""

    inner: Source
    offset: int

    # The inner source's rules (ClassVars there; read per instance here).
    @property
    def staff_sees_hidden(self) -> bool:  # type: ignore[override]
        return self.inner.staff_sees_hidden

    @property
    def hides_muted(self) -> bool:  # type: ignore[override]
        return self.inner.hides_muted

    @property
    def folds_muted(self) -> bool:  # type: ignore[override]
        return self.inner.folds_muted

    @property
    def context(self) -> str:  # type: ignore[override]
        return self.inner.context

    @property
    def zset(self) -> bool:  # type: ignore[override]
        return self.inner.zset

    @property
    def has_reposts(self) -> bool:  # type: ignore[override]
        return self.inner.has_reposts

    reads_ids: ClassVar[bool] = True

    def list_key(self) -> str | None:
        return self.inner.list_key()

    def queue(self, reads: NamedReads, start: int, stop: int, reader: PageReader) -> None:
        self.inner.queue(reads, start + self.offset, stop + self.offset, reader)

    def ids(self, got: dict, start: int, stop: int, reader: PageReader) -> list[int]:
        return self.inner.ids(got, start + self.offset, stop + self.offset, reader)


class ApiReadStore(RepositoryBase):
    """The client API's reads (see the module docstring)."""

    def __init__(
        self, client: Client, *, reader: PageReader, **config: Unpack[StoreSettings]
    ) -> None:
        super().__init__(client, **config)
        self.reader = reader

    def position(self, source: Source, post_id: int) -> tuple[int, bool] | None:
        """Return where post_id is in source's list (its index, True), or would be (the
        number of ids newer than it, False), or None when that cannot be known (a sorted
        set that no longer holds it, a source with no list). One round trip when it is
        there (LPOS, ZREVRANK); else at most BISECT_STEPS probes of a list ordered newest
        (highest id) first."""
        key = source.list_key()
        if key is None:
            return None
        if source.zset:
            rank = cast(int | None, self.r.zrevrank(key, post_id))
            return None if rank is None else (int(rank), True)
        found = cast(int | None, self.r.lpos(key, str(post_id)))
        if found is not None:
            return int(found), True
        low, high = 0, int(self.r.llen(key))
        for _ in range(BISECT_STEPS):
            if low >= high:
                break
            middle = (low + high) // 2
            value = as_int(self.r.lindex(key, middle))
            if value is not None and value > post_id:
                low = middle + 1
            else:
                high = middle
        return low, False

    def page_from(
        self,
        source: Source,
        viewer: Viewer,
        offset: int,
        count: int,
        check: RememberedToken | None = None,
    ) -> tuple[PageRead, dict[int, AccountRow], dict[str, int]]:
        """Read `count` posts of source from `offset` on, on the read path; and the
        accounts the posts this process last listed there name (their authors, those of
        the posts their reposts share, and those their replies answer, by name), read on
        the page's first pipeline: when the page lists what it listed last, its accounts
        cost no round trip more. check: the caller's token as remembered, checked on the
        same pipeline (raise StaleToken when it no longer holds: nothing was shown)."""
        shifted = Shifted(source, offset)
        remembered = [
            known.post
            for post_id in self.cache.shown.get((shifted, 1, count)) or ()
            if (known := self.cache.posts.get(post_id)) is not None
        ]
        remembered += [
            known.post
            for post in remembered
            if post.repost_of is not None
            and (known := self.cache.posts.get(post.repost_of)) is not None
        ]
        authors = list(dict.fromkeys(post.author_id for post in remembered))
        named = {post.author_name for post in remembered}
        replied = (p.reply_to_name for p in remembered if p.reply_to_name not in named)
        names = [name for name in dict.fromkeys(replied) if name]

        def first(reads: NamedReads) -> None:
            queue_accounts(reads, authors, names)
            if check is not None:
                queue_token_check(reads, check)

        wanted = remembered or check is not None
        read = self.reader.page(shifted, viewer, 1, count, first=first if wanted else None)
        if check is not None and not token_holds(check, read.got):
            self.cache.tokens.discard(check.token.digest)
            raise StaleToken(check.token.digest)
        return read, accounts_from(read.got, authors), names_from(read.got, names)

    def instance_figures(self) -> tuple[int, int]:
        """(accounts, posts) on this server, for /api/v1/instance (one round trip)."""
        pipe = self._pipe()
        pipe.hlen(keys.users())
        pipe.get(keys.next_post_id())
        users, posts = pipe.execute()
        return int(users), as_int(posts) or 0
