"""Accounts as apps browse them: the profile directory (/api/v1/directory), the accounts
the reader follows that follow someone (/api/v1/accounts/familiar_followers) and an
account's featured tags (none: the site features no tags). Every account is listed by the
account read path (repository/accounts/people.py), so suspended accounts and those a block keeps
apart from the reader are left out, as from every list."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from social.repository.accounts.users import AccountRow
from social.repository.models import FollowEntry

from .base import ApiError, json_response
from .common import EntityView
from .forms import first_ids, limit_param, number_param, text_param

ORDERS = ("active", "new")
OFFSET_MAX = 100_000  # past it a directory page is empty (Redis's ranges take 64-bit ints)
FAMILIAR_IDS = 20  # accounts asked about at once (the first ones given)


class DirectoryView(EntityView):
    """GET /api/v1/directory: accounts, `order=active` (the default: the authors of the
    newest posts, the most recent poster first) or `new` (by sign-up, newest first);
    `offset`, `limit` (40, at most 80); `local` changes nothing (every account is)."""

    scopes = {"get": "read:accounts"}
    public = frozenset({"get"})

    def get(self, request: HttpRequest) -> HttpResponse:
        order = text_param(request.GET, "order", 20) or "active"
        if order not in ORDERS:
            raise ApiError(400, "order must be active or new")
        limit = limit_param(request.GET, 40, 80)
        offset = number_param(request.GET, "offset") or 0
        if offset > OFFSET_MAX:
            return json_response([])
        people = self.repo.people
        read = people.newest if order == "new" else people.recently_active
        return json_response(self.entries_json(read(self.viewer, offset, limit)))

    def entries_json(self, entries: list[FollowEntry]) -> list[dict]:
        """Accounts the account read path listed, with their counts, in its order."""
        return self.listed_accounts(
            {e.user.id: AccountRow(e.user, e.counts) for e in entries if e.counts is not None}
        )


class FamiliarFollowersView(DirectoryView):
    """GET /api/v1/accounts/familiar_followers?id[]=: for each account asked about (the
    first FAMILIAR_IDS; unknown, suspended or blocked ones left out, as Mastodon leaves
    out what it does not find), the accounts the reader follows that follow it
    (repository/accounts/people.py: a bounded number of round trips whatever the ids)."""

    scopes = {"get": "read:follows"}
    public = frozenset()

    def get(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        ids = first_ids(request, FAMILIAR_IDS)
        found = self.repo.people.familiar_followers(me.id, ids)
        everyone = [*ids, *(f for followers in found.values() for f in followers)]
        listed = {e.user.id: e for e in self.repo.people.listed(everyone, self.viewer)}
        accounts = {a["id"]: a for a in self.entries_json(list(listed.values()))}  # built once each
        return json_response(
            [
                {
                    "id": str(uid),
                    "accounts": [accounts[str(f)] for f in found[uid] if str(f) in accounts],
                }
                for uid in ids
                if uid in listed
            ]
        )


class FeaturedTagsView(EntityView):
    """GET /api/v1/accounts/:id/featured_tags: none (the site features no tags); 404 for
    an account the reader may not see, as every account's path."""

    scopes = {"get": "read:accounts"}
    public = frozenset({"get"})

    def get(self, request: HttpRequest, account_id: str) -> HttpResponse:
        self.target(account_id)
        return json_response([])
