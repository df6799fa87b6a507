"""/api/v2/filters (filters, their keywords) and /api/v1/filters (one phrase a filter, as
Mastodon's v1 showed each keyword): the site's word filters (repository/relations/filters.py), so a
filter made in an app acts on the pages and one made on /settings/filters/ shows in apps.
Every input is bounded and refused with Mastodon's 422 before anything is written;
another account's filter, or an id that is not one, is 404. Expired filters are gone
(Mastodon lists them until deleted). Filters of statuses are not kept: a filter's
`statuses` is always empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext

from social import auth
from social.keys import FILTER_CONTEXTS, FILTER_KEYWORDS_CAP, FILTER_MAX
from social.numbers import id_number, whole_number
from social.repository import NotAllowed
from social.repository.relations.filters import ACTIONS, FilterDraft, Keyword, WordFilter

from .base import ApiError, json_response
from .common import EntityView
from .entities import filter_json, iso, keyword_json
from .forms import flag, invalid, text_param

EXPIRES_MAX = 10 * 365 * 86400  # seconds: ten years (longer: never expires)


def ident(value: object) -> int:
    """A path's id (social.numbers.id_number: not "²"), else 404."""
    number = id_number(value) if isinstance(value, str) else None
    if number is None:
        raise ApiError(404, "Record not found")
    return number


def values(params: Mapping[str, Any], name: str) -> list | None:
    """A list parameter from JSON (a list, or one value) or a form (`name[]` or `name`);
    None when absent."""
    if hasattr(params, "getlist"):
        for key in (f"{name}[]", name):
            if key in params:
                return params.getlist(key)
        return None
    value = params.get(name, params.get(f"{name}[]"))
    if value is None:
        return None
    return value if isinstance(value, list) else [value]


def context_param(params: Mapping[str, Any], *, required: bool) -> tuple[str, ...] | None:
    """`context`: some of FILTER_CONTEXTS (in their order), or 422."""
    given = values(params, "context")
    if given is None and not required:
        return None
    wanted = [c.strip() for c in given or [] if isinstance(c, str) and c.strip()]
    if len(given or []) > 2 * len(FILTER_CONTEXTS) or not wanted:
        raise invalid("Context can't be blank")
    if any(c not in FILTER_CONTEXTS for c in wanted) or len(wanted) != len(given or []):
        raise invalid("Context contains an invalid value")
    return tuple(c for c in FILTER_CONTEXTS if c in wanted)


def action_param(params: Mapping[str, Any], name: str = "filter_action") -> str | None:
    action = text_param(params, name, 20)
    if action and action not in ACTIONS:
        raise invalid("Filter action is not included in the list")
    return action or None


def expires_param(params: Mapping[str, Any]) -> tuple[bool, int | None]:
    """`expires_in`: (sent, seconds or None for never), or 422 (not a whole number of
    seconds, not positive, over EXPIRES_MAX)."""
    if "expires_in" not in params:
        return False, None
    value = params.get("expires_in")
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None or value == "":
        return True, None
    seconds = whole_number(value)
    if seconds is None:
        raise invalid("Expires in is not a number")
    if not 0 < seconds <= EXPIRES_MAX:
        raise invalid(f"Expires in must be between 1 and {EXPIRES_MAX} seconds")
    return True, seconds


def keyword_text(value: object, *, required: bool = True) -> str | None:
    """A keyword: 1 to FILTER_MAX characters once spaces are collapsed, or 422."""
    if value is None and not required:
        return None
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise invalid("Keyword must be a string")
    text = " ".join(str(value).split())
    if not text:
        raise invalid("Keyword can't be blank")
    if len(text) > FILTER_MAX:
        raise invalid(f"Keyword is too long (maximum is {FILTER_MAX} characters)")
    return text


def title_param(params: Mapping[str, Any], *, required: bool) -> str | None:
    if "title" not in params and not required:
        return None
    title = " ".join(text_param(params, "title", FILTER_MAX * 4).split())
    if not title:
        raise invalid("Title can't be blank")
    if len(title) > FILTER_MAX:
        raise invalid(f"Title is too long (maximum is {FILTER_MAX} characters)")
    return title


def keyword_rows(params: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """`keywords_attributes`: a JSON list (or an object of rows by index), or a form's
    `keywords_attributes[][keyword]` / `keywords_attributes[0][keyword]` fields; at most
    FILTER_KEYWORDS_CAP rows."""
    raw = params.get("keywords_attributes")
    if raw is None and hasattr(params, "getlist"):
        raw = form_rows(params)
    if isinstance(raw, dict):
        raw = list(raw.values())
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(row, dict) for row in raw):
        raise invalid("Keywords attributes must be a list of keywords")
    if len(raw) > FILTER_KEYWORDS_CAP:
        raise invalid(f"Keywords: at most {FILTER_KEYWORDS_CAP}")
    return raw


def form_rows(params: Any) -> list[dict] | None:
    """The rows a form encodes, Rails's way (see keyword_rows)."""
    rows: dict[str, dict] = {}
    fields = ("keyword", "whole_word", "id", "_destroy")
    for key in list(params.keys())[: 8 * FILTER_KEYWORDS_CAP]:
        if not key.startswith("keywords_attributes["):
            continue
        index, _, name = key[len("keywords_attributes[") :].partition("][")
        name = name.rstrip("]")
        if name not in fields or len(index) > 3 or (index and not index.isdecimal()):
            raise invalid("Keywords attributes must be a list of keywords")
        if index:
            rows.setdefault(index, {})[name] = params.get(key)
        else:  # `[]`: the n-th value of each field is the n-th row's
            for n, value in enumerate(params.getlist(key)[: FILTER_KEYWORDS_CAP + 1]):
                rows.setdefault(f"n{n}", {})[name] = value
    return list(rows.values()) if rows else None


def whole_word(row: Mapping[str, Any], default: bool | None = True) -> bool | None:
    return flag(row, "whole_word") if row.get("whole_word") not in (None, "") else default


def draft(params: Mapping[str, Any], *, creating: bool) -> FilterDraft:
    """POST /api/v2/filters or PUT /api/v2/filters/:id: the filter (or the changes) as
    sent, validated."""
    sent, seconds = expires_param(params)
    new, edits, drop = [], [], []
    for row in keyword_rows(params):
        if not any(v not in (None, "") for v in row.values()):
            continue  # Rails's reject_if: :all_blank
        row_id = row.get("id")
        if row_id not in (None, "") and not creating:
            kid = ident(str(row_id))
            if flag(row, "_destroy"):
                drop.append(kid)
            else:
                text = keyword_text(row.get("keyword"), required=False)
                edits.append((kid, text, whole_word(row, None)))
        elif not flag(row, "_destroy"):
            new.append((keyword_text(row.get("keyword")) or "", bool(whole_word(row))))
    return FilterDraft(
        title=title_param(params, required=creating),
        context=context_param(params, required=creating),
        action=action_param(params) or ("warn" if creating else None),
        expires_in=seconds,
        expiry_given=sent,
        keywords=tuple(new),
        edits=tuple(edits),
        drop=tuple(drop),
    )


def v1_json(f: WordFilter, k: Keyword) -> dict[str, Any]:
    """A V1::Filter: one keyword with its filter's context, expiry and action."""
    return {
        "id": str(k.id),
        "phrase": k.keyword,
        "context": list(f.context),
        "whole_word": k.whole_word,
        "expires_at": iso(f.expires) if f.expires is not None else None,
        "irreversible": f.action == "hide",
    }


class FilterEndpoint(EntityView):
    """What the filter endpoints share: their scopes, the caller, the write limit."""

    scopes = {"get": "read:filters", "post": "write:filters", "put": "write:filters",
              "patch": "write:filters", "delete": "write:filters"}  # fmt: skip

    def limited(self) -> dict[str, str]:
        """Count a write against the site's filter limit (blocks, mutes and filters)."""
        return self.enforce(
            auth.relation_limits(self.me().id),
            gettext("You have added a lot of filters in a short time."),
        )

    def own(self, filter_id: str) -> WordFilter:
        found = self.repo.filters.get(self.me().id, ident(filter_id))
        if found is None:
            raise ApiError(404, "Record not found")
        return found

    def own_keyword(self, keyword_id: str) -> tuple[WordFilter, Keyword]:
        found = self.repo.filters.keyword(self.me().id, ident(keyword_id))
        if found is None:
            raise ApiError(404, "Record not found")
        return found

    @staticmethod
    def refused(error: NotAllowed) -> ApiError:
        """The caps (repository/relations/filters.py) as Mastodon's validation answer."""
        return invalid(gettext(str(error)) % {"cap": FILTER_KEYWORDS_CAP, "phrase": ""})


class FiltersView(FilterEndpoint):
    """GET /api/v2/filters: the reader's filters, newest first; POST: create one."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return json_response([filter_json(f) for f in self.repo.filters.filters(self.me().id)])

    def post(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        made = draft(self.request.params, creating=True)
        headers = self.limited()
        try:
            f = self.repo.filters.create(me.id, made)
        except NotAllowed as error:
            raise self.refused(error) from None
        return json_response(filter_json(f), headers=headers)


class FilterView(FilterEndpoint):
    """GET, PUT (PATCH) and DELETE /api/v2/filters/:id."""

    def get(self, request: HttpRequest, filter_id: str) -> HttpResponse:
        return json_response(filter_json(self.own(filter_id)))

    def put(self, request: HttpRequest, filter_id: str) -> HttpResponse:
        ident(filter_id)
        change = draft(self.request.params, creating=False)
        headers = self.limited()
        try:
            f = self.repo.filters.update(self.me().id, ident(filter_id), change)
        except NotAllowed as error:
            raise self.refused(error) from None
        if f is None:
            raise ApiError(404, "Record not found")
        return json_response(filter_json(f), headers=headers)

    patch = put

    def delete(self, request: HttpRequest, filter_id: str) -> HttpResponse:
        if not self.repo.filters.delete(self.me().id, ident(filter_id)):
            raise ApiError(404, "Record not found")
        return json_response({})


class KeywordsView(FilterEndpoint):
    """GET /api/v2/filters/:id/keywords; POST: add one (keyword, whole_word)."""

    def get(self, request: HttpRequest, filter_id: str) -> HttpResponse:
        return json_response([keyword_json(k) for k in self.own(filter_id).keywords])

    def post(self, request: HttpRequest, filter_id: str) -> HttpResponse:
        ident(filter_id)  # a path that names no filter is 404 first, as Mastodon's
        params = self.request.params
        text = keyword_text(params.get("keyword")) or ""
        added = FilterDraft(keywords=((text, bool(whole_word(params))),))
        headers = self.limited()
        try:
            f = self.repo.filters.update(self.me().id, ident(filter_id), added)
        except NotAllowed as error:
            raise self.refused(error) from None
        if f is None:
            raise ApiError(404, "Record not found")
        return json_response(keyword_json(f.keywords[-1]), headers=headers)


class KeywordView(FilterEndpoint):
    """GET, PUT and DELETE /api/v2/filters/keywords/:id."""

    def get(self, request: HttpRequest, keyword_id: str) -> HttpResponse:
        return json_response(keyword_json(self.own_keyword(keyword_id)[1]))

    def put(self, request: HttpRequest, keyword_id: str) -> HttpResponse:
        f, k = self.own_keyword(keyword_id)
        params = self.request.params
        text = keyword_text(params.get("keyword"), required=False)
        self.limited()
        changed = self.repo.filters.update(
            self.me().id, f.id, FilterDraft(edits=((k.id, text, whole_word(params, None)),))
        )
        kept = next((x for x in (changed.keywords if changed else ()) if x.id == k.id), None)
        if kept is None:
            raise ApiError(404, "Record not found")
        return json_response(keyword_json(kept))

    patch = put

    def delete(self, request: HttpRequest, keyword_id: str) -> HttpResponse:
        gone = self.repo.filters.delete_keyword(
            self.me().id, ident(keyword_id), last_takes_filter=False
        )
        if not gone:
            raise ApiError(404, "Record not found")
        return json_response({})


class FilterStatusesView(FilterEndpoint):
    """GET /api/v2/filters/:id/statuses: none (the site filters words, not statuses);
    POST: refused."""

    def get(self, request: HttpRequest, filter_id: str) -> HttpResponse:
        self.own(filter_id)
        return json_response([])

    def post(self, request: HttpRequest, filter_id: str) -> HttpResponse:
        self.own(filter_id)
        raise invalid("Filtering statuses is not supported on this server")


def v1_draft(params: Mapping[str, Any], *, creating: bool) -> tuple[FilterDraft, str | None]:
    """POST or PUT /api/v1/filters: phrase, context, irreversible, whole_word,
    expires_in; the draft and the phrase (None: unchanged)."""
    sent, seconds = expires_param(params)
    phrase = keyword_text(params.get("phrase"), required=creating)
    action = None
    if params.get("irreversible") not in (None, ""):
        action = "hide" if flag(params, "irreversible") else "warn"
    made = FilterDraft(
        title=phrase,
        context=context_param(params, required=creating),
        action=action or ("warn" if creating else None),
        expires_in=seconds,
        expiry_given=sent,
        keywords=((phrase, bool(whole_word(params))),) if creating and phrase else (),
    )
    return made, phrase


class FiltersV1View(FilterEndpoint):
    """GET /api/v1/filters: every keyword of the reader's filters as a v1 filter;
    POST: a filter of one phrase."""

    def get(self, request: HttpRequest) -> HttpResponse:
        found = self.repo.filters.filters(self.me().id)
        return json_response([v1_json(f, k) for f in found for k in f.keywords])

    def post(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        made, _ = v1_draft(self.request.params, creating=True)
        headers = self.limited()
        try:
            f = self.repo.filters.create(me.id, made)
        except NotAllowed as error:
            raise self.refused(error) from None
        return json_response(v1_json(f, f.keywords[0]), headers=headers)


class FilterV1View(FilterEndpoint):
    """GET, PUT and DELETE /api/v1/filters/:id (the id of a keyword). PUT changes the
    keyword, and its filter's context, action, expiry only when it is that filter's one
    keyword (Mastodon's rule); DELETE takes the filter with its last keyword."""

    def get(self, request: HttpRequest, filter_id: str) -> HttpResponse:
        return json_response(v1_json(*self.own_keyword(filter_id)))

    def put(self, request: HttpRequest, filter_id: str) -> HttpResponse:
        f, k = self.own_keyword(filter_id)
        change, phrase = v1_draft(self.request.params, creating=False)
        whole = whole_word(self.request.params, None)
        alone = len(f.keywords) == 1
        if not alone and (change.context or change.action or change.expiry_given):
            raise invalid("This filter has several keywords: change it with /api/v2/filters")
        title = phrase if alone and f.title == k.keyword else None
        self.limited()
        changed = self.repo.filters.update(
            self.me().id,
            f.id,
            FilterDraft(
                title,
                change.context,
                change.action,
                change.expires_in,
                change.expiry_given,
                edits=((k.id, phrase, whole),),
            ),  # fmt: skip
        )
        kept = next((x for x in (changed.keywords if changed else ()) if x.id == k.id), None)
        if changed is None or kept is None:
            raise ApiError(404, "Record not found")
        return json_response(v1_json(changed, kept))

    def delete(self, request: HttpRequest, filter_id: str) -> HttpResponse:
        gone = self.repo.filters.delete_keyword(
            self.me().id, ident(filter_id), last_takes_filter=True
        )
        if not gone:
            raise ApiError(404, "Record not found")
        return json_response({})
