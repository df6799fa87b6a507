"""What the endpoints that answer with entities share: the reader as a Viewer, the bulk
read of the accounts a response names, one status or account as the reader may see it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from django.http import HttpResponse

from social.repository import Post, PostCounts, Repository, User, Viewer, may_see_account
from social.repository.accounts.users import AccountRow
from social.repository.clients.oauth import RememberedToken, StaleToken
from social.repository.models import FollowEntry, Page

from . import entities
from .base import ApiError, ApiView, json_response
from .forms import id_param
from .paging import PostsPage, link_header


def render_for(
    repo: Repository,
    viewer: Viewer,
    base: str,
    posts: Iterable[Post] = (),
    user_ids: Iterable[int] = (),
    read: Mapping[int, AccountRow] | None = None,
    read_names: Mapping[str, int] | None = None,
) -> entities.Render:
    """The Render for entities naming posts and accounts, as viewer may see them (see
    EntityView.render; the streaming API renders with it too)."""
    posts = list(posts)
    posts += [p.original for p in posts if p.original is not None]
    known = {p.author_name: p.author_id for p in posts}  # names fixed with the post
    ids = [*(p.author_id for p in posts), *user_ids]
    rows = {i: read[i] for i in ids if read and i in read}
    named = {**(read_names or {}), **known}
    names = [p.reply_to_name for p in posts if p.reply_to_name and p.reply_to_name not in named]
    more, found = repo.users.accounts([i for i in ids if i not in rows], names)
    rows.update(more)
    found.update(read_names or {})
    found.update(
        (p.reply_to_name, known[p.reply_to_name]) for p in posts if p.reply_to_name in known
    )
    rows = {i: row for i, row in rows.items() if may_see_account(viewer, row.user)}
    # Remote accounts' own URLs, bio and counts: one round trip, only when there are some.
    remote = repo.remote_actors.get_many(i for i, row in rows.items() if row.user.domain)
    return entities.Render(base, rows, found, remote=remote)


class EntityView(ApiView):
    """An API view answering with Mastodon entities."""

    @property
    def token_check(self) -> RememberedToken | None:
        """The caller's token as remembered, for the page read to check (see
        ApiView.authenticate)."""
        return getattr(self.request, "token_check", None)

    def confirm_token(self) -> None:
        """Before an answer that reads no page: a remembered token is checked first."""
        if self.token_check is not None:
            raise StaleToken(self.token_check.token.digest)

    @property
    def viewer(self) -> Viewer:
        return Viewer.of(self.user)

    def base_url(self) -> str:
        return self.request.build_absolute_uri("/").rstrip("/")

    def render(
        self,
        posts: Iterable[Post] = (),
        user_ids: Iterable[int] = (),
        read: Mapping[int, AccountRow] | None = None,
        read_names: Mapping[str, int] | None = None,
    ) -> entities.Render:
        """The Render for a response naming posts and accounts: their accounts (with
        counts) and the accounts replied to, in one round trip; none when `read` and
        `read_names` (what the page's own pipeline read) hold them all."""
        return render_for(
            self.repo, self.viewer, self.base_url(), posts, user_ids, read, read_names
        )

    def statuses_response(self, page: PostsPage, headers: dict | None = None) -> HttpResponse:
        """A page of statuses, with its Link header."""
        render = self.render(page.posts, read=page.accounts, read_names=page.names)
        data = entities.statuses(render, page.posts, page.counts)
        link = link_header(self.request, page.next_max, page.prev_min)
        return json_response(data, headers={**(headers or {}), **link})

    def visible_post(
        self, post_id: object, *, to_act: bool = False, shared: bool = False
    ) -> tuple[Post, PostCounts]:
        """The post the path names, as the reader may open it (to_act: act on it), or 404.
        shared: a reblog's id names the status it shares (what an action on it acts on),
        404 unless the reader may open both."""
        return self.repo.pages.post(id_param(post_id), self.viewer, to_act=to_act, shared=shared)

    def status_json(self, post_id: object, *, text: bool = False) -> dict:
        """One status as the reader sees it now (a repost with the post it shares)."""
        post, counts = self.visible_post(post_id)
        numbers = {post.id: counts}
        if post.repost_of is not None:
            shared, shared_counts = self.visible_post(post.repost_of)
            post = replace(post, original=shared)
            numbers[shared.id] = shared_counts
        return entities.status(self.render([post]), post, numbers, text=text)

    def target(self, account_id: object, *, hidden_ok: bool = False) -> AccountRow:
        """The account the path names, or 404 (missing; suspended, unless staff, or
        hidden_ok: undoing a block or mute of a suspended account)."""
        row = self.repo.users.account(id_param(account_id))
        if row is None or row.user.username == "":
            raise ApiError(404, "Record not found")
        if not hidden_ok and not may_see_account(self.viewer, row.user):
            raise ApiError(404, "Record not found")
        return row

    def account_json(self, row: AccountRow) -> dict:
        """One account (read by target), with what federation keeps of a remote one."""
        render = self.render(user_ids=[row.user.id], read={row.user.id: row})
        return render.account(row.user.id) or entities.account(render, row)

    def accounts_json(self, users: Sequence[User]) -> list[dict]:
        """Accounts, with their counts read in one round trip."""
        render = self.render(user_ids=[u.id for u in users])
        return [account for u in users if (account := render.account(u.id)) is not None]

    def listed_accounts(self, rows: Mapping[int, AccountRow]) -> list[dict]:
        """The accounts a list read with their counts (AccountReader.page's counts, search),
        in its order: no round trip more."""
        render = self.render(user_ids=list(rows), read=rows)
        return [account for uid in rows if (account := render.account(uid)) is not None]

    def accounts_response(self, page: Page[FollowEntry]) -> HttpResponse:
        """A page of accounts as the account read path listed them for the reader (with
        their counts: AccountReader.page's counts), with the Link to the next page (its
        number as the cursor)."""
        accounts = self.listed_accounts(
            {e.user.id: AccountRow(e.user, e.counts) for e in page.items if e.counts}
        )
        link = link_header(self.request, page.number + 1 if page.has_next else None)
        return json_response(accounts, headers=link)

    def me(self) -> User:
        """The calling user (the endpoints that need one check their scope first)."""
        user = self.user
        if user is None:
            raise ApiError(422, "This method requires an authenticated user")
        return user
