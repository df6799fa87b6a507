"""Search: people by name, tags by prefix, and the reader's posts by their text.

People: the exact username first, then usernames starting with the query, then display
names with a word starting with each word of the query (any script, ignoring case and
accents: name_words.py), then usernames holding it (the staff's trigram index); legacy names
included; listed as account_reader.py lists accounts (suspended, deleted and blocked ones
left out). Tags by prefix. Posts: those the reader wrote, liked, reposted, replied to or
was mentioned in (post_search.py), through the read path.

Bounded work whatever the data size: every index read is a range of at most PEOPLE_MAX + 1
entries (users_lex, tags_lex by prefix; the trigram index), the display-name index one
script that looks at SCAN_CAP entries at most, the posts at most 5 x LIST_SCAN texts. The
first pipeline carries every kind's first reads; a bare word searched by a logged-in reader
costs ten round trips at most whatever the data (tests/test_search.py pins them;
docs/benchmarks.md, "Search").
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Unpack

from social import keys
from social.search_words import terms as query_terms
from social.text import normal_tag

from ..accounts.name_words import queue_name_search
from ..accounts.users import AccountRow, UserStore
from ..base import NamedReads, Replies, RepositoryBase, StoreSettings, as_int, s
from ..federation.actors import RemoteActorStore, acct_key, reported_counts
from ..models import Counts, Page, Post, User
from ..moderation.directory import CONTAINS_MIN, CONTAINS_RE, PREFIX_RE, DirectoryStore
from .account_reader import AccountReader, AccountSource
from .post_search import PostSearch
from .reader import PageReader
from .visibility import Viewer

SEARCH_LIMIT = 20  # people, tags and posts shown for one query (the API: its limit)
PEOPLE_MAX = 80  # people, and tags, one query can page through (offset + limit)
QUERY_MAX = 50
KINDS = ("accounts", "hashtags", "statuses")  # what a search looks for (the API's `type`)
NAMES = ("accounts", "hashtags")  # what it looks for unless asked (the API's account search)
BAD = ("Cc", "Cs", "Cn")  # left out of a query: control characters (NUL), lone surrogates


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


def no_posts() -> Page[Post]:
    return Page(items=[], number=1, has_next=False)


@dataclass(frozen=True)
class SearchResults:
    """What a query found. `words`: whether it holds anything to search by name or text
    (letters or digits); `posts_searched`: whether the reader's posts were looked in (a
    logged-in reader, a query that is not "@name" or "#tag")."""

    query: str
    people: list[PersonResult] = field(default_factory=list)
    tags: list[TagResult] = field(default_factory=list)
    posts: Page[Post] = field(default_factory=no_posts)
    words: bool = True
    posts_searched: bool = False


@dataclass(frozen=True)
class Query:
    """A query taken apart: the text searched, the name and tag it may be, its terms."""

    text: str
    name: str
    tag: str
    terms: list[str]

    @classmethod
    def of(cls, query: str) -> Query:
        """Cut to QUERY_MAX characters, without control characters (a NUL) or lone
        surrogates (what Redis could not be sent) first."""
        kept = "".join(c for c in query[: QUERY_MAX * 4] if unicodedata.category(c) not in BAD)
        text = " ".join(kept.split())[:QUERY_MAX]
        bare = text.lstrip("@#").strip()
        return cls(text, text.lstrip("@").strip(), normal_tag(bare), query_terms(bare))


class SearchStore(RepositoryBase):
    """People, tags and the reader's posts."""

    def __init__(
        self,
        client,
        *,
        directory: DirectoryStore,
        users: UserStore,
        accounts: AccountReader,
        reader: PageReader,
        remote_actors: RemoteActorStore,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.remote_actors = remote_actors
        self.directory = directory
        self.users = users
        self.accounts = accounts
        self.posts = PostSearch(client, reader=reader, **config)

    def search(
        self,
        query: str,
        viewer: Viewer,
        *,
        kinds: Collection[str] = NAMES,
        limit: int = SEARCH_LIMIT,
        offset: int = 0,
        resolved: Sequence[int] = (),
    ) -> SearchResults:
        """Return what query finds of `kinds` (KINDS; posts only when asked for): "@name"
        people only, "#tag" tags only; each kind from `offset`, at most `limit`.
        "@name@domain" finds that remote account when it is known here; `resolved`: the
        ids of accounts another server was just asked for (resolve.py), listed first. A URL
        finds those alone (its words are no name, tag or post's)."""
        if query.strip()[:8].lower().startswith(("http://", "https://")):
            found = SearchResults(query=Query.of(query).text, words=True)
            if "accounts" in kinds and resolved and offset == 0:
                found.people.extend(self._rows(list(resolved)[:limit], viewer))
            return found
        q = Query.of(query)
        limit, offset = max(0, limit), max(0, offset)
        wanted = min(offset + limit, PEOPLE_MAX)
        people = "accounts" in kinds and not q.text.startswith("#") and offset < wanted
        tags = "hashtags" in kinds and not q.text.startswith("@") and bool(q.tag)
        tags = tags and offset < wanted
        posts = (
            "statuses" in kinds
            and viewer.id is not None
            and bool(q.terms)
            and not q.text.startswith(("@", "#"))
        )
        reads = self.reads()
        if people and q.name:
            self._queue_people(reads, q, wanted)
        if tags:
            low = b"[" + q.tag.encode()
            reads.zrangebylex("tags", keys.tag_index(), low, low + b"\xff", 0, wanted)
        if posts and viewer.id is not None:
            self.posts.queue_lists(reads, viewer.id)
        got = reads.execute() if len(reads.pipe) else Replies()
        found = SearchResults(query=q.text, words=bool(q.terms), posts_searched=posts)
        if people and (q.name or resolved):
            ids = [*resolved, *(self._people_ids(q, got, wanted) if q.name else [])]
            rows = self._rows(list(dict.fromkeys(ids)), viewer)
            found.people.extend(self._known_address(rows, q, got)[offset:wanted])
        if tags:
            found.tags.extend(self._tags(got)[offset:wanted])
        if not posts:
            return found
        matched = self.posts.matching(got, q.terms)
        page = self.posts.page(matched, viewer, offset, limit)
        return SearchResults(found.query, found.people, found.tags, page, found.words, True)

    def _queue_people(self, reads: NamedReads, q: Query, wanted: int) -> None:
        """Queue the first reads of a people search: whether legacy names are to be
        claimed first, the name as typed and ignoring case, names starting with it, and
        display names with its words."""
        lower = q.name.lower()
        reads.get("checked", keys.usernames_lower_checked())
        reads.get("top", keys.next_user_id())
        reads.hget("exact", keys.users(), q.name)  # a legacy name, as the reference wrote it
        reads.hget("claimed", keys.usernames_lower(), lower)
        remote = acct_key(q.name) if "@" in q.name else None
        if remote is not None:  # a remote account known here (federation/actors.py)
            reads.get("remote", remote)
        if PREFIX_RE.match(lower):
            low = b"[" + lower.encode()
            reads.zrangebylex("prefix", keys.username_index(), low, low + b"\xff", 0, wanted)
        if q.terms:
            queue_name_search(reads, "named", q.terms, wanted * 2)

    def _people_ids(self, q: Query, got: Replies, wanted: int) -> list[int]:
        """The ids of the accounts found, in order (exact, prefix, display name,
        contains), at most twice `wanted` (some may be left out when listed)."""
        if (as_int(got.value("top")) or 0) > (as_int(got.value("checked")) or 0):
            self.users.claim_legacy_names()  # accounts the reference wrote: findable too
            reads = self.reads()
            self._queue_people(reads, q, wanted)
            got = reads.execute()
        lower = q.name.lower()
        # The name itself is "claimed" already: looked up again only for the others.
        names = [n for n in map(s, got.members("prefix") if "prefix" in got else []) if n != lower]
        named = [as_int(i) for i in got.members("named")] if "named" in got else []
        contains: list[int] = []
        if len(lower) >= CONTAINS_MIN and CONTAINS_RE.fullmatch(lower):
            rows = self.directory.users_page(lower, match="contains", per_page=wanted).items
            contains = [row.user.id for row in rows]
        by_name: list[int | None] = []
        if names:
            pipe = self._pipe()
            for name in names:
                pipe.hget(keys.usernames_lower(), name)
            by_name = [as_int(i) for i in pipe.execute()]
        remote = as_int(got.value("remote")) if "remote" in got else None
        ids = [remote, as_int(got.value("exact")), as_int(got.value("claimed")), *by_name, *named]
        every = (i for i in [*ids, *contains] if i is not None)
        return list(dict.fromkeys(every))[: wanted * 2]

    @staticmethod
    def _known_address(rows: list[PersonResult], q: Query, got: Replies) -> list[PersonResult]:
        """rows without the account the address index pointed to when it no longer bears
        that address (the index is a pointer, checked when read)."""
        pointed = as_int(got.value("remote")) if "remote" in got else None
        wanted = acct_key(q.name) if pointed is not None else None
        return [
            row for row in rows if row.user.id != pointed or acct_key(row.user.username) == wanted
        ]

    def _rows(self, ids: Sequence[int], viewer: Viewer) -> list[PersonResult]:
        """The accounts among ids a reader may find, with their counts (one round trip:
        account_reader.py; none for no ids); a remote account's as its server reports them
        (one round trip more, only when there is one)."""
        if not ids:
            return []
        found = self.accounts.page(AccountSource.given(ids), viewer, 1, len(ids), counts=True)
        rows = [
            PersonResult(e.user, e.counts, e.viewer_follows)
            for e in found.items
            if e.counts is not None
        ]
        remote = self.remote_actors.get_many(row.user.id for row in rows if row.user.domain)
        return [
            replace(row, counts=reported_counts(row.counts, remote[row.user.id]))
            if row.user.id in remote
            else row
            for row in rows
        ]

    def _tags(self, got: Replies) -> list[TagResult]:
        """The tags the first pipeline found, with their posts (one round trip)."""
        found = [s(t) for t in got.members("tags")]
        if not found:
            return []
        pipe = self._pipe()
        for tag in found:
            pipe.llen(keys.tag_posts(tag))
        return [TagResult(t, n) for t, n in zip(found, pipe.execute()) if n]
