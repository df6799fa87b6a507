"""Search: people by name (the exact name first, then names starting with the query, then
names holding it; legacy names included; listed as account_reader.py lists accounts)
and tags by prefix, each with what a result row shows. Bounded work whatever the data size:
every read is an index range of at most SEARCH_LIMIT + 1 entries (users_lex by prefix, the
staff's trigram index for "contains", tags_lex by prefix), then one pipeline for those rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Unpack

from social import keys
from social.text import normal_tag

from .account_reader import AccountReader, AccountSource
from .base import RepositoryBase, StoreSettings, as_int, s
from .directory import CONTAINS_MIN, CONTAINS_RE, PREFIX_RE, DirectoryStore
from .models import Counts, User
from .users import AccountRow, UserStore
from .visibility import Viewer

SEARCH_LIMIT = 20  # people, and tags, shown for one query
QUERY_MAX = 50


@dataclass(frozen=True)
class PersonResult:
    """An account found: its counts and the reader's relation to it."""

    user: User
    counts: Counts
    viewer_follows: bool = False

    @property
    def posts(self) -> int:
        return self.counts.posts

    @property
    def followers(self) -> int:
        return self.counts.followers

    @property
    def row(self) -> AccountRow:
        """As the client API's entities take it."""
        return AccountRow(self.user, self.counts)


@dataclass(frozen=True)
class TagResult:
    """A tag found and how many recent posts it has (its list keeps keys.TAG_CAP)."""

    tag: str
    posts: int


@dataclass(frozen=True)
class SearchResults:
    query: str
    people: list[PersonResult] = field(default_factory=list)
    tags: list[TagResult] = field(default_factory=list)


class SearchStore(RepositoryBase):
    """People and tags by name."""

    def __init__(
        self,
        client,
        *,
        directory: DirectoryStore,
        users: UserStore,
        accounts: AccountReader,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.directory = directory
        self.users = users
        self.accounts = accounts

    def search(self, query: str, viewer: Viewer) -> SearchResults:
        """Return the people and tags for query ("@name", "#tag" or a bare word)."""
        text = query.strip()[:QUERY_MAX]
        name = text.lstrip("@").strip()
        tag = normal_tag(text.lstrip("#")) if text.lstrip("#") else ""
        people = [] if text.startswith("#") else self._people(name, viewer)
        tags = [] if text.startswith("@") or not tag else self._tags(tag)
        return SearchResults(query=text, people=people, tags=tags)

    def _people(self, name: str, viewer: Viewer) -> list[PersonResult]:
        if not name:
            return []
        lower = name.lower()
        reads = self.reads()
        reads.get("checked", keys.usernames_lower_checked())
        reads.get("top", keys.next_user_id())
        got = reads.execute()
        if (as_int(got.value("top")) or 0) > (as_int(got.value("checked")) or 0):
            self.users.claim_legacy_names()  # accounts the reference wrote: findable too
        reads = self.reads()
        reads.hget("exact", keys.users(), name)  # a legacy name, as the reference wrote it
        reads.hget("claimed", keys.usernames_lower(), lower)
        if PREFIX_RE.match(lower):
            low = b"[" + lower.encode()
            reads.zrangebylex("prefix", keys.username_index(), low, low + b"\xff", 0, SEARCH_LIMIT)
        got = reads.execute()
        names = [s(n) for n in got.members("prefix")] if "prefix" in got else []
        if len(lower) >= CONTAINS_MIN and CONTAINS_RE.fullmatch(lower):
            contains = self.directory.users_page(lower, match="contains", per_page=SEARCH_LIMIT)
            names += [row.user.username.lower() for row in contains.items]
        ids = [as_int(got.value("exact")), as_int(got.value("claimed"))]
        if names:
            pipe = self._pipe()
            for found in names:
                pipe.hget(keys.usernames_lower(), found)
            ids += [as_int(i) for i in pipe.execute()]
        ordered = list(dict.fromkeys(i for i in ids if i is not None))[: SEARCH_LIMIT * 2]
        return self._rows(ordered, viewer)[:SEARCH_LIMIT]

    def _rows(self, ids: list[int], viewer: Viewer) -> list[PersonResult]:
        """The accounts among ids a reader may find, with their counts (one round trip:
        account_reader.py)."""
        found = self.accounts.page(AccountSource.given(ids), viewer, 1, len(ids), counts=True)
        return [
            PersonResult(e.user, e.counts, e.viewer_follows)
            for e in found.items
            if e.counts is not None
        ]

    def _tags(self, prefix: str) -> list[TagResult]:
        """Tags starting with prefix, with their posts (two round trips)."""
        low = b"[" + prefix.encode()
        found = [
            s(t) for t in self.r.zrangebylex(keys.tag_index(), low, low + b"\xff", 0, SEARCH_LIMIT)
        ]
        if not found:
            return []
        pipe = self._pipe()
        for tag in found:
            pipe.llen(keys.tag_posts(tag))
        return [TagResult(t, n) for t, n in zip(found, pipe.execute()) if n]
