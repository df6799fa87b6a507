"""Mastodon's paging (`max_id`, `since_id`, `min_id`, `limit`, and the `Link` header) over
the read path's offsets.

A list of posts is read from the position of `max_id` (or up to that of `min_id`) in its
Redis list: one LPOS (or ZREVRANK) finds it, then `repo.reader` reads the page from there
(its `offset`), so blocks, mutes, filters and visibility
apply exactly as on the pages. Lists of accounts (followers, blocks...) are paged by
number, their `max_id` an opaque page cursor, as Mastodon's own are opaque to clients.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest

from social.repository import ListPolicy, Post, PostCounts, Repository, Source, Viewer
from social.repository.oauth import RememberedToken
from social.repository.users import AccountRow

from .forms import limit_param, number_param

CURSORS = ("max_id", "since_id", "min_id")
RETRIES = 5  # pages read past ones whose every post is hidden, before answering empty


def cursor(params: Mapping[str, Any], name: str) -> int | None:
    """A cursor parameter as a number, or None (absent, empty or 0: no cursor); ApiError
    400 when it is not a number (forms.number_param). It need not be an id that exists:
    a max_id above every id pages from the newest, a since_id above every id finds none."""
    return number_param(params, name) or None


@dataclass
class PostsPage:
    """A page of posts as a client sees it, and the cursors of its neighbours."""

    posts: list[Post] = field(default_factory=list)
    counts: dict[int, PostCounts] = field(default_factory=dict)
    accounts: dict[int, AccountRow] = field(default_factory=dict)  # read with the page
    names: dict[str, int] = field(default_factory=dict)  # ... and accounts by name
    next_max: int | None = None
    prev_min: int | None = None


def read_posts(
    repo: Repository, source: Source, viewer: Viewer, params: Mapping[str, Any], *,
    shows: ListPolicy, default: int = 20, most: int = 40,
    keep: Callable[[Post], bool] | None = None, check: RememberedToken | None = None,
) -> PostsPage:  # fmt: skip
    """Read the page of source the cursors in params ask for (see the module docstring).
    keep: a further filter (exclude_replies). check: the caller's token as remembered,
    checked on the page's first pipeline (StaleToken when it no longer holds)."""
    limit = limit_param(params, default, most)
    max_id, since_id, min_id = (cursor(params, name) for name in CURSORS)
    offset, count = 0, limit
    if max_id is not None:
        found = repo.api_reads.position(source, max_id)
        if found is None:
            return PostsPage()
        offset = found[0] + (1 if found[1] else 0)
    elif min_id is not None:
        found = repo.api_reads.position(source, min_id)
        if found is None or found[0] == 0:
            return PostsPage(prev_min=min_id)
        offset = max(0, found[0] - limit)
        count = found[0] - offset
    floor = min_id if min_id is not None else since_id
    for _ in range(RETRIES):
        read, accounts, names = repo.api_reads.page_from(
            source, viewer, offset, count, check, shows=shows
        )
        posts = [
            post
            for post in read.page.items
            if (max_id is None or post.id < max_id)
            and (floor is None or post.id > floor)
            and (keep is None or keep(post))
        ]
        older = [i for i in read.loaded if floor is None or i > floor]
        if posts or not read.page.has_next or not older or min_id is not None:
            break
        offset += count
    # The page's own ids: those loaded, but the posts its reposts share (older, mostly).
    shared = {p.repost_of for p in read.loaded.values() if p.repost_of is not None}
    listed = [i for i in read.loaded if i not in shared] or list(read.loaded)
    more = read.page.has_next and bool(listed)
    return PostsPage(
        posts=posts,
        counts=read.page.counts,
        accounts=accounts,
        names=names,
        next_max=min(listed) if more and min_id is None else None,
        prev_min=max(p.id for p in posts) if posts else None,
    )


LIST_MAX = 20  # parameters, and values of a list parameter (types[]...), a link keeps


def link_header(
    request: HttpRequest, next_max: object = None, prev_min: object = None
) -> dict[str, str]:
    """The headers that carry a page's Link (none when there is no other page): rel="next"
    with max_id, rel="prev" with min_id, the request's other parameters kept, lists
    included. The one Link rule of the API: statuses, notifications, accounts."""
    kept = [
        (name, value)
        for name, listed in list(request.GET.lists())[:LIST_MAX]
        if name not in CURSORS
        for value in listed[:LIST_MAX]
    ]
    base = request.build_absolute_uri(request.path)
    found = []
    if next_max is not None:
        found.append(f'<{base}?{urlencode([*kept, ("max_id", next_max)])}>; rel="next"')
    if prev_min is not None:
        found.append(f'<{base}?{urlencode([*kept, ("min_id", prev_min)])}>; rel="prev"')
    return {"Link": ", ".join(found)} if found else {}


def page_number(params: Mapping[str, Any]) -> int:
    """The page an account list's cursor names (its `max_id`: the next page's number)."""
    value = cursor(params, "max_id")
    return min(value, 1000) if value is not None else 1
