"""No input reaches a 500 or an HTML page on the client API. Every API route (resolved
from the URLconf, so a new one is attacked too) is called with hostile values in each id,
limit and cursor position (path, query, form, JSON and multipart bodies), as a visitor and
with a token: each answers Mastodon's JSON error or JSON, with a status from a small set,
and writes nothing to Redis. Then the precise answers (400, 404, 422) where a value is
read; deep JSON; Django's own 400s; an unexpected error. (The site's pages:
test_pages_bad_input.py.)"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from social import keys
from social.api import urls as api_urls
from social.api.instance import InstanceV1View
from social.views import TimelineView
from tests.api import Api, all_keys, token_for

# Values an id, a limit or a cursor may never be. Each is refused, none reaches int().
HOSTILE = [
    "²",  # str.isdigit() takes it, int() refuses it
    "١٢",  # digits of another script: int() takes them, Redis does not
    "01" + "0" * 5000,  # more digits than int() converts (4,300)
    "9" * 20,  # more than 19 digits
    "9" * 19,  # 19 digits, above Redis's integer range
    "-1",
    " 7",
    "7 ",
    "1_0",  # int() takes underscores
    "1.0",
    "1e3",
    "0x1",
    "abc",
    "\x00",
]
# The sweep over every route takes the most telling of them.
SWEEP = ["²", "١٢", "01" + "0" * 5000, "9" * 20, "9" * 19, "-1", "1_0", "\x00"]
QUERY_NAMES = ("limit", "max_id", "since_id", "min_id", "id[]", "id", "offset")
BODY_NAMES = ("in_reply_to_id", "limit", "max_id", "id", "id[]", "last_read_id")
# Statuses an API call may answer with; never 500, never a page.
ALLOWED = {200, 400, 401, 403, 404, 405, 413, 422}
DEEP = "[" * 1100 + "]" * 1100  # 2 KB of JSON, deeper than Python's recursion limit
NOT_FOUND = {"error": "Record not found"}
NEVER_USED = "987654321"  # an id no record has: writes on it find nothing to act on

# The only writes allowed: a rate-limit counter of the caller's, where a write with a valid
# but unknown id counts the attempt before it finds no such record.
COUNTED = {"v2/filters/<str:filter_id>": ("relation_user",)}

# The precise answers where a value is read: (path, parameter) -> status.
READ_PARAMS = {
    "/api/v1/timelines/home": ("limit", "max_id", "since_id", "min_id"),
    "/api/v1/timelines/public": ("limit", "max_id", "since_id", "min_id"),
    "/api/v1/timelines/tag/hello": ("limit", "max_id", "since_id", "min_id"),
    "/api/v1/favourites": ("limit", "max_id", "since_id", "min_id"),
    "/api/v1/notifications": ("limit", "max_id", "since_id", "min_id"),
    "/api/v1/accounts/{alice}/statuses": ("limit", "max_id", "since_id", "min_id"),
    "/api/v1/accounts/{alice}/followers": ("limit", "max_id"),
    "/api/v1/accounts/{alice}/following": ("limit", "max_id"),
    "/api/v1/blocks": ("limit", "max_id"),
    "/api/v1/mutes": ("limit", "max_id"),
    "/api/v1/statuses/{post}/favourited_by": ("limit", "max_id"),
    "/api/v1/statuses/{post}/reblogged_by": ("limit", "max_id"),
    "/api/v1/accounts/relationships": ("id[]", "id"),
    "/api/v2/search": ("limit",),
}
BASE_QUERY = {"/api/v2/search": {"q": "al"}}


def api_routes() -> list[URLPattern]:
    """Every route under /api/ in the site's URLconf, but the catch-all 404."""
    (api,) = [
        p
        for p in get_resolver().url_patterns
        if isinstance(p, URLResolver) and p.urlconf_module is api_urls
    ]
    included = [p for p in api.url_patterns if isinstance(p, URLResolver)]
    assert len(included) == 1 and str(included[0].pattern) == "api/"
    return [p for p in included[0].url_patterns if str(p.pattern) != "^(?P<rest>.*)$"]


def route_path(route: URLPattern, values: dict[str, str]) -> str:
    """The route's path with each parameter given its value (URL-quoted); a regex
    route's alternatives are taken at their first."""
    text = str(route.pattern)
    if text.startswith("^"):
        text = text.strip("^$").replace("/?", "/")
        text = re.sub(r"\(\?P<action>([^|)]+)[^)]*\)", r"\1", text)
        text = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<\1>", text)
    filled = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: quote(values[m[1]], safe=""), text)
    return "/api/" + filled


def route_params(route: URLPattern) -> list[str]:
    text = str(route.pattern)
    return re.findall(r"<(?:\w+:)?(\w+)>", text) + re.findall(r"\(\?P<(\w+)>", text)


def methods(route: URLPattern) -> list[str]:
    view = getattr(route.callback, "view_class", None)
    if view is None:
        return ["get"]
    return [m for m in ("get", "post", "put", "patch", "delete") if hasattr(view, m)]


# A route and its twin with a trailing slash (urls.both) are one view: the twins are
# checked to be that, and attacked through their twin.
SLASHED = [r for r in api_routes() if str(r.pattern).endswith("/")]
ROUTES = [r for r in api_routes() if r not in SLASHED]


def snapshot(r) -> dict:
    """Every key and its serialized value (across a cluster's primaries)."""
    return {key: r.dump(key) for key in all_keys(r, "*")}


def check(response, where: str) -> None:
    """The answer every call must give: JSON, a status from ALLOWED, an error in
    Mastodon's shape when it is one."""
    assert response.status_code in ALLOWED, (where, response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json"), (where, response.content[:300])
    data = response.json()
    if response.status_code >= 400:
        assert isinstance(data, dict) and isinstance(data.get("error"), str), (where, data)


def send(api: Api, method: str, path: str, body: str | dict | None, kind: str = "form"):
    """One call: body as a form, JSON text or multipart."""
    client, headers = api.client, api.headers
    if method == "get":
        return client.get(path, body if isinstance(body, dict) else {}, **headers)
    call = getattr(client, method)
    if kind == "json":
        text = body if isinstance(body, str) else json.dumps(body or {})
        return call(path, text, content_type="application/json", **headers)
    if kind == "multipart":
        if method == "post":
            return client.post(path, body or {}, **headers)  # the test client's multipart
        return call(path, body or {}, **headers)
    encoded = "&".join(f"{quote(k)}={quote(v)}" for k, v in (body or {}).items())
    return call(path, encoded, content_type="application/x-www-form-urlencoded", **headers)


@pytest.fixture
def world(repo, alice, bob):
    """alice follows bob and has posted; bob replied and liked it. Returns the ids a
    route's path may name."""
    repo.graph.follow(alice.id, bob.id)
    post = repo.posts.create_post(alice.id, "hello #hello")
    repo.posts.create_post(bob.id, "@alice hi", reply_to=post)
    repo.likes.like(bob.id, post)
    return {"alice": str(alice.id), "bob": str(bob.id), "post": str(post)}


@pytest.fixture(params=["visitor", "token"])
def api(request, repo, alice) -> Api:
    return Api(token_for(repo, alice) if request.param == "token" else None)


@pytest.mark.parametrize("route", ROUTES, ids=lambda route: str(route.pattern))
def test_no_hostile_id_limit_or_cursor_reaches_a_500_or_writes(route, world, api, r):
    names = route_params(route)
    unknown = {n: NEVER_USED for n in names} | {"hashtag": "hello"}
    valid = {n: world["post"] if "status" in n else world["alice"] for n in names}
    valid["hashtag"] = "hello"
    assert get_resolver().resolve(route_path(route, unknown)).func is route.callback
    for method in methods(route):  # what a call without input does (clear notifications)
        send(api, method, route_path(route, unknown), None)
    before = snapshot(r)
    for method in methods(route):
        for value in SWEEP:
            for name in names:  # each position of the path
                path = route_path(route, {**unknown, name: value})
                response = send(api, method, path, None)
                check(response, f"{method} {path}")
                if name.endswith("_id"):  # no such record (a visitor may be refused first)
                    assert response.status_code in ((404,) if api.headers else (401, 404))
                    assert response.status_code == 401 or response.json() == NOT_FOUND
            if method == "get":  # each query parameter, the path naming records
                path = route_path(route, valid)
                for name in QUERY_NAMES:
                    check(api.get(path, {name: value}), f"{path}?{name}={value[:20]!r}")
            else:  # every body field at once, as a form, JSON and multipart
                path = route_path(route, unknown)
                for kind in ("form", "json", "multipart"):
                    body = dict.fromkeys(BODY_NAMES, value)
                    check(send(api, method, path, body, kind), f"{method} {path} {kind}")
        path = route_path(route, unknown)
        check(send(api, method, path, DEEP, "json"), f"{method} {path} deep JSON")
    after = snapshot(r)
    changed = {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}
    counted = COUNTED.get(str(route.pattern), ())
    assert changed == (
        {keys.rate_limit(s, world["alice"]) for s in counted} if api.headers else set()
    )


def test_every_route_with_a_trailing_slash_is_the_same_view():
    assert len(SLASHED) >= len(ROUTES) - 1  # the status actions' one regex takes both
    for route in SLASHED:
        path = route_path(route, dict.fromkeys(route_params(route), NEVER_USED))
        twin = get_resolver().resolve(path.rstrip("/"))
        assert twin.func.view_class is route.callback.view_class, path
        assert twin.func.view_initkwargs == route.callback.view_initkwargs, path


def bad_number(name: str) -> dict:
    return {"error": f"{name} must be a number: 1 to 19 digits 0-9"}


@pytest.mark.parametrize(
    ("path", "name"), [(path, name) for path, names in READ_PARAMS.items() for name in names]
)
def test_a_hostile_limit_cursor_or_id_list_is_a_400(repo, world, alice, r, path, name):
    api = Api(token_for(repo, alice))
    path, query = path.format(**world), BASE_QUERY.get(path, {})
    before = snapshot(r)

    for value in (v for v in HOSTILE if v != "9" * 19):
        response = api.get(path, {**query, name: value})

        assert response.status_code == 400, (value[:20], response.content[:300])
        assert response.json() == bad_number(name)
    assert snapshot(r) == before


@pytest.mark.parametrize(
    ("path", "name"), [(path, name) for path, names in READ_PARAMS.items() for name in names]
)
def test_nineteen_digits_are_a_number_above_every_id(repo, world, alice, path, name):
    api = Api(token_for(repo, alice))
    path, query = path.format(**world), BASE_QUERY.get(path, {})
    plain = api.get(path, query)

    response = api.get(path, {**query, name: "9" * 19})

    assert response.status_code == 200, response.content[:300]
    paged_by_number = path.endswith(("followers", "following", "_by", "blocks", "mutes"))
    if name == "limit" or name == "max_id" and not paged_by_number:
        assert response.json() == plain.json()  # older than any id: from the newest
    elif name in ("id", "id[]"):
        assert [r["id"] for r in response.json()] == ["9" * 19]
    else:  # newer than any id; a page number past the end
        assert response.json() == []


def test_a_hostile_in_reply_to_id_is_422_in_every_encoding(repo, r, alice, world):
    api = Api(token_for(repo, alice))
    before = snapshot(r)
    for value in HOSTILE:
        for kind in ("form", "json", "multipart"):
            body = {"status": "a reply", "in_reply_to_id": value}

            response = send(api, "post", "/api/v1/statuses", body, kind)

            assert response.status_code == 422, (value[:20], kind, response.content[:300])
            assert response.json() == {
                "error": "Validation failed: in_reply_to_id is not a valid id"
            }
    assert snapshot(r) == before


def test_json_ids_may_be_numbers_but_not_floats_or_booleans(repo, r, alice, world):
    api = Api(token_for(repo, alice))
    post = int(world["post"])
    for value in (float(post), True, [post], {"id": post}, -post, 2**63):
        body = {"status": "a reply", "in_reply_to_id": value}
        assert send(api, "post", "/api/v1/statuses", body, "json").status_code == 422, value
    assert r.llen(keys.own_posts(alice.id)) == 1
    reply = send(api, "post", "/api/v1/statuses", {"status": "hi", "in_reply_to_id": post}, "json")
    assert reply.status_code == 200 and reply.json()["in_reply_to_id"] == world["post"]
    assert r.llen(keys.own_posts(alice.id)) == 2


TOO_DEEP = {"error": "Invalid JSON in the request body: nested deeper than 32 levels"}


def nested(depth: int) -> str:
    """A JSON object whose arrays and objects nest depth levels (the object is one)."""
    return '{"status": "deep", "x": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


@pytest.mark.parametrize("path", ["/api/v1/apps", "/api/v1/statuses", "/oauth/token"])
def test_json_nested_too_deep_is_a_400_before_it_is_parsed(client, r, path):
    before = snapshot(r)
    for body in (DEEP, '{"a": ' * 1100 + "1" + "}" * 1100, nested(33), "[{" * 40):
        response = client.post(path, body, content_type="application/json")

        assert response.status_code == 400, response.content[:300]
        assert response.json() == TOO_DEEP
    assert snapshot(r) == before


def test_json_as_deep_as_allowed_and_brackets_in_strings_are_read(repo, r, alice):
    api = Api(token_for(repo, alice))
    brackets = '{"status": "[{ \\" [[[[' + "[{" * 100 + '"}'

    assert send(api, "post", "/api/v1/statuses", nested(32), "json").status_code == 200
    posted = send(api, "post", "/api/v1/statuses", brackets, "json")

    assert posted.status_code == 200, posted.content[:300]
    assert posted.json()["content"].count("[{") == 101
    assert r.llen(keys.own_posts(alice.id)) == 2


def test_json_that_python_cannot_hold_is_a_400(client, r):
    before = snapshot(r)
    app = '"redirect_uris": "urn:ietf:wg:oauth:2.0:oob", "client_name": '
    for body in (
        "{" + app + '"app \\ud800"}',  # a lone surrogate: no UTF-8 for Redis
        "{" + app + '"app", "\\udfff": 1}',
        "{" + app + '"app", "limit": 1' + "0" * 5000 + "}",  # past int()'s 4,300 digits
    ):
        response = client.post("/api/v1/apps", body, content_type="application/json")

        assert response.status_code == 400, response.content[:300]
        assert response.json() == {"error": "Invalid JSON in the request body"}
    assert snapshot(r) == before


def test_an_escaped_surrogate_pair_is_one_character(repo, alice):
    api = Api(token_for(repo, alice))
    response = send(api, "post", "/api/v1/statuses", '{"status": "\\ud83d\\ude00 hi"}', "json")
    assert response.status_code == 200
    assert "\U0001f600 hi" in response.json()["content"]


def test_djangos_own_refusals_answer_json_on_the_api(repo, r, alice):
    api = Api(token_for(repo, alice))
    before = snapshot(r)
    many = "&".join(f"id[]={i}" for i in range(1, 1002))  # DATA_UPLOAD_MAX_NUMBER_FIELDS
    form = "&".join(f"f{i}=1" for i in range(1001)) + "&status=hi"
    answers = {
        "Too many parameters": [
            api.client.get("/api/v1/accounts/relationships?" + many, **api.headers),
            api.client.post(
                "/api/v1/statuses",
                form,
                content_type="application/x-www-form-urlencoded",
                **api.headers,
            ),  # fmt: skip
        ],
        "Invalid multipart body": [
            Client().post("/api/v1/apps", "x", content_type="multipart/form-data"),
            api.client.post(
                "/api/v1/statuses",
                "x",
                content_type="multipart/form-data; boundary=" + "b" * 300,
                **api.headers,
            ),  # fmt: skip
        ],
        "Bad request": [Client().get("/api/v1/instance", HTTP_HOST="evil.example")],
    }
    for message, responses in answers.items():
        for response in responses:
            assert response.status_code == 400, (message, response.content[:300])
            assert response.json() == {"error": message}
            assert response["Access-Control-Allow-Origin"] == "*"
    assert snapshot(r) == before
    page = Client().get("/timeline/", HTTP_HOST="evil.example")
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")


def test_a_content_length_that_is_no_number_is_refused(repo, r):
    before = snapshot(r)
    for length in ("²", "9" * 5000, "-1"):
        response = Client().post("/api/v1/apps", {"client_name": "x"}, CONTENT_LENGTH=length)
        assert response.status_code == 413, response.content[:300]
        assert response.json() == {"error": "Request entity too large"}
    assert snapshot(r) == before


def test_relationships_answers_the_first_80_ids(repo, alice, bob):
    api = Api(token_for(repo, alice))
    repo.graph.follow(alice.id, bob.id)
    ids = [bob.id, *range(1000, 1099)]

    response = api.get("/api/v1/accounts/relationships", {"id[]": ids})

    assert response.status_code == 200
    assert [int(r["id"]) for r in response.json()] == ids[:80]
    assert response.json()[0]["following"] is True
    assert api.get("/api/v1/accounts/relationships", {"id[]": ""}).json() == []


def test_an_error_no_view_expects_is_a_logged_json_500(monkeypatch, caplog):
    def fail(*args, **kwargs):
        raise RuntimeError("unexpected")

    monkeypatch.setattr(InstanceV1View, "get", fail)
    monkeypatch.setattr(TimelineView, "get", fail)
    client = Client(raise_request_exception=False)

    response = client.get("/api/v1/instance")

    assert response.status_code == 500
    assert response.json() == {"error": "Internal server error"}
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "Internal Server Error: /api/v1/instance" in caplog.text
    assert "RuntimeError: unexpected" in caplog.text
    page = client.get("/timeline/")
    assert page.status_code == 500 and page["Content-Type"].startswith("text/html")
