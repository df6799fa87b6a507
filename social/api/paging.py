"""Mastodon's paging (`max_id`, `since_id`, `min_id`, `limit`, and the `Link` header) over
the read path's offsets.

A list of posts is read from the position of `max_id` (or up to that of `min_id`) in its
Redis list: one LPOS (or ZREVRANK) finds it, then `repo.reader` reads the page from there
(its `offset`, or backward from `at`), so blocks, mutes, filters and visibility apply
exactly as on the pages, and a page holds `limit` posts whenever there are that many.
Lists of accounts (followers, blocks...) are paged by number, their `max_id` an opaque
page cursor, as Mastodon's own are opaque to clients.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest

from social.repository import ListPolicy, Post, PostCounts, Repository, Source, Viewer
from social.repository.accounts.users import AccountRow
from social.repository.clients.oauth import RememberedToken
from social.repository.read.reader import PageAt

from .forms import limit_param, number_param

CURSORS = ("max_id", "since_id", "min_id")


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
    """Read the page of source the cursors in params ask for (see the module docstring):
    `limit` posts whenever the list holds that many the reader may see past max_id (or
    since_id), or before min_id, the read path filling in for those it leaves out
    (reader.py's fill: bounded round trips). keep: a further filter (exclude_replies),
    applied as the page is filled. check: the caller's token as remembered, checked on
    the page's first pipeline (StaleToken when it no longer holds).

    The next page's max_id is the list entry the page read last, so the next page starts
    right after it: no post skipped or shown twice, however many were left out. A list
    not in id order (a user's likes) is paged by position alone."""
    limit = limit_param(params, default, most)
    max_id, since_id, min_id = (cursor(params, name) for name in CURSORS)
    offset, at = 0, None
    if max_id is not None:
        found = repo.api_reads.position(source, max_id)
        if found is None:
            return PostsPage()
        offset = found[0] + (1 if found[1] else 0)
    elif min_id is not None:
        found = repo.api_reads.position(source, min_id)
        if found is None or found[0] == 0:
            return PostsPage(prev_min=min_id)
        at = PageAt(before=found[0])  # the `limit` posts just newer than min_id
    read, accounts, names = repo.api_reads.page_from(
        source, viewer, offset, limit, check, shows=shows, at=at, keep=keep,
        below=max_id if source.newest_first else None,
        above=min_id if min_id is not None else since_id,
    )  # fmt: skip
    posts = read.page.items
    return PostsPage(
        posts=posts,
        counts=read.page.counts,
        accounts=accounts,
        names=names,
        next_max=read.last_id if read.page.has_next and min_id is None else None,
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
