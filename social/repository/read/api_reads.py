"""What the client API reads besides pages of posts (which it reads on the read path): the
position of a post in a list (Mastodon pages by id, the read path by offset; the source
finds it, Source.position, which may bisect a list), and a page from there with the
accounts it names. (Accounts with their counts and relationships are the user store's:
users.py; the instance's figures are stats.py's.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Unpack

from ..accounts.users import AccountRow, accounts_from, names_from, queue_accounts
from ..base import Client, RepositoryBase, StoreSettings
from ..clients.oauth import RememberedToken, StaleToken, queue_token_check, token_holds
from ..models import Post
from .reader import NamedReads, PageAt, PageRead, PageReader
from .sources import ListPolicy, PageExtras, Source
from .visibility import Viewer


@dataclass
class AccountsNamed(PageExtras):
    """What a page of the API reads beside its posts: the accounts they name (by id and
    by name) and the caller's token, when it is remembered (checked with the page)."""

    ids: tuple[int, ...]
    names: tuple[str, ...]
    check: RememberedToken | None

    def first(self, reads: NamedReads) -> None:
        queue_accounts(reads, self.ids, self.names)
        if self.check is not None:
            queue_token_check(reads, self.check)


class ApiReadStore(RepositoryBase):
    """The client API's reads (see the module docstring)."""

    def __init__(
        self, client: Client, *, reader: PageReader, **config: Unpack[StoreSettings]
    ) -> None:
        super().__init__(client, **config)
        self.reader = reader

    def position(self, source: Source, post_id: int) -> tuple[int, bool] | None:
        """Where post_id is in source's list, as the source finds it (Source.position)."""
        return self.reader.run(source.position(post_id))

    def page_from(
        self,
        source: Source,
        viewer: Viewer,
        offset: int,
        count: int,
        check: RememberedToken | None = None,
        *,
        shows: ListPolicy,
        at: PageAt | None = None,
        keep: Callable[[Post], bool] | None = None,
        below: int | None = None,
        above: int | None = None,
    ) -> tuple[PageRead, dict[int, AccountRow], dict[str, int]]:
        """Read `count` posts of source from `offset` on (or, at, up to a place), on the
        read path, a full page whenever the list holds that many the reader may see (its
        `fill`; keep, below, above: as there); and the accounts the posts this process
        last listed there name (their authors, those of the posts their reposts share,
        and those their replies answer, by name), read on the page's first pipeline: when
        the page lists what it listed last, its accounts cost no round trip more. check:
        the caller's token as remembered, checked on the same pipeline (raise StaleToken
        when it no longer holds: nothing was shown)."""
        remembered = self.reader.last_listed(source, 1, count, offset=offset, at=at)
        authors = list(dict.fromkeys(post.author_id for post in remembered))
        named = {post.author_name for post in remembered}
        replied = (p.reply_to_name for p in remembered if p.reply_to_name not in named)
        names = [name for name in dict.fromkeys(replied) if name]
        wanted = remembered or check is not None
        read = self.reader.page(
            source, viewer, 1, count, shows=shows, offset=offset, at=at, fill=True, keep=keep,
            below=below, above=above,
            extras=AccountsNamed(tuple(authors), tuple(names), check) if wanted else None,
        )  # fmt: skip
        if check is not None and not token_holds(check, read.got):
            self.cache.tokens.discard(check.token.digest)
            raise StaleToken(check.token.digest)
        return read, accounts_from(read.got, authors), names_from(read.got, names)
