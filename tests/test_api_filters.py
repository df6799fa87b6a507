"""Word filters through the client API (/api/v2/filters, its keywords, /api/v1/filters):
Mastodon's shapes over the site's own filters, so a filter made in an app acts on the
pages and one made on the site shows in apps; `filtered` on statuses where a filter warns,
none where it hides; every bad input refused with a 422 (or 404) having written nothing."""

from __future__ import annotations

import html
import json
import math
import time

import pytest
from django.test import Client

from social import keys
from social.repository import Viewer
from tests.api import Api, token_for
from tests.conftest import CLUSTER, login

SPOILERS = {
    "title": "Spoilers",
    "context": ["home", "thread"],
    "filter_action": "warn",
    "keywords_attributes": [
        {"keyword": "Dragon", "whole_word": True},
        {"keyword": "GoT", "whole_word": False},
    ],
}


def stored(r, user) -> list[tuple[dict | str, float]]:
    """The members of the user's filters key, JSON ones decoded, with their scores."""
    return [
        (json.loads(m) if m.startswith("{") else m, score)
        for m, score in r.zrange(keys.filters(user.id), 0, -1, withscores=True)
    ]


@pytest.fixture
def api(repo, alice):
    return Api(token_for(repo, alice))


@pytest.fixture
def feed(repo, alice, bob):
    """alice follows bob, who wrote about a dragon and about lunch."""
    repo.graph.follow(alice.id, bob.id)
    dragon = repo.posts.create_post(bob.id, "The dragon wins in the end")
    lunch = repo.posts.create_post(bob.id, "lunch time")
    return dragon, lunch


def test_a_filter_is_created_with_its_keywords_and_stored_in_one_member(api, r, alice):
    before = time.time()
    made = api.post("/api/v2/filters", {**SPOILERS, "expires_in": 3600}, as_json=True)

    assert made.status_code == 200, made.content
    data = made.json()
    assert {k: data[k] for k in ("id", "title", "context", "filter_action", "statuses")} == {
        "id": "1", "title": "Spoilers", "context": ["home", "thread"],
        "filter_action": "warn", "statuses": [],
    }  # fmt: skip
    assert data["keywords"] == [
        {"id": "1", "keyword": "Dragon", "whole_word": True},
        {"id": "2", "keyword": "GoT", "whole_word": False},
    ]
    assert data["expires_at"].endswith("Z")
    ((member, expires),) = stored(r, alice)
    assert member == {
        "id": 1, "title": "Spoilers", "context": ["home", "thread"], "action": "warn",
        "keywords": [[1, "Dragon", True], [2, "GoT", False]],
    }  # fmt: skip
    assert before + 3600 - 2 <= expires <= time.time() + 3600
    assert r.hget(keys.user(alice.id), "relations") == "1"  # the pages read them now


def test_filters_are_listed_shown_updated_and_deleted(api, r, alice):
    fid = api.post("/api/v2/filters", {**SPOILERS, "expires_in": 60}, as_json=True).json()["id"]
    assert [f["id"] for f in api.get("/api/v2/filters").json()] == [fid]
    assert api.get(f"/api/v2/filters/{fid}").json()["title"] == "Spoilers"

    changed = api.put(
        f"/api/v2/filters/{fid}",
        {
            "title": "Dragons",
            "context": ["public", "home"],
            "filter_action": "hide",
            "expires_in": None,
            "keywords_attributes": [
                {"id": "1", "keyword": "wyvern"},
                {"id": "2", "_destroy": True},
                {"keyword": "drake", "whole_word": False},
            ],
        },
    ).json()

    assert changed["title"] == "Dragons" and changed["filter_action"] == "hide"
    assert changed["context"] == ["home", "public"]  # Mastodon's order of contexts
    assert changed["expires_at"] is None
    assert changed["keywords"] == [
        {"id": "1", "keyword": "wyvern", "whole_word": True},
        {"id": "3", "keyword": "drake", "whole_word": False},
    ]
    ((member, expires),) = stored(r, alice)
    assert member["keywords"] == [[1, "wyvern", True], [3, "drake", False]]
    assert math.isinf(expires)

    assert api.delete(f"/api/v2/filters/{fid}").json() == {}
    assert r.exists(keys.filters(alice.id)) == 0
    assert api.delete(f"/api/v2/filters/{fid}").status_code == 404


def test_keywords_are_listed_added_changed_and_deleted_one_by_one(api, r, alice):
    fid = api.post("/api/v2/filters", SPOILERS, as_json=True).json()["id"]
    assert [k["keyword"] for k in api.get(f"/api/v2/filters/{fid}/keywords").json()] == [
        "Dragon",
        "GoT",
    ]
    added = api.post(f"/api/v2/filters/{fid}/keywords", {"keyword": "  ice   wall "})
    assert added.json() == {"id": "3", "keyword": "ice wall", "whole_word": True}
    assert api.get("/api/v2/filters/keywords/3").json()["keyword"] == "ice wall"
    assert api.put("/api/v2/filters/keywords/3", {"whole_word": False}).json() == {
        "id": "3", "keyword": "ice wall", "whole_word": False,
    }  # fmt: skip
    assert api.delete("/api/v2/filters/keywords/1").json() == {}

    ((member, _),) = stored(r, alice)
    assert member["keywords"] == [[2, "GoT", False], [3, "ice wall", False]]
    assert api.get("/api/v2/filters/keywords/1").status_code == 404
    assert api.get(f"/api/v2/filters/{fid}/statuses").json() == []


def test_the_v1_api_shows_each_keyword_as_a_filter_of_one_phrase(api, r, alice):
    made = api.post(
        "/api/v1/filters",
        {"phrase": "Winter", "context[]": ["home", "notifications"], "irreversible": "true",
         "whole_word": "false", "expires_in": "86400"},
    )  # fmt: skip
    assert made.status_code == 200, made.content
    one = made.json()
    assert {k: one[k] for k in ("phrase", "context", "whole_word", "irreversible")} == {
        "phrase": "Winter", "context": ["home", "notifications"], "whole_word": False,
        "irreversible": True,
    }  # fmt: skip
    api.post("/api/v2/filters", SPOILERS, as_json=True)
    assert [f["phrase"] for f in api.get("/api/v1/filters").json()] == ["Dragon", "GoT", "Winter"]

    changed = api.put(f"/api/v1/filters/{one['id']}", {"phrase": "Summer", "irreversible": False})
    assert changed.json()["phrase"] == "Summer" and changed.json()["irreversible"] is False
    v2 = api.get(f"/api/v2/filters/{one['id']}").json()
    assert v2["title"] == "Summer" and v2["filter_action"] == "warn"

    # A keyword of a filter with several: its filter's settings are v2's to change.
    refused = api.put("/api/v1/filters/2", {"phrase": "Wyrm", "context": ["public"]})
    assert refused.status_code == 422
    assert api.get("/api/v2/filters/keywords/2").json()["keyword"] == "Dragon"

    assert api.delete(f"/api/v1/filters/{one['id']}").json() == {}  # its only keyword
    assert [m["title"] for m, _ in stored(r, alice)] == ["Spoilers"]


def test_a_filter_made_on_the_site_is_listed_in_apps_in_the_first_form(repo, r, api, alice):
    r.zadd(keys.filters(alice.id), {"7|redis": "+inf"})  # as the site stored them before
    client = login(Client(), repo, alice)
    client.post(
        "/settings/filters/",
        {"phrase": "Lunch", "expiry": "never", "action": "warn", "context": ["home"]},
    )

    listed = api.get("/api/v2/filters").json()

    assert [(f["id"], f["title"], f["filter_action"]) for f in listed] == [
        ("8", "lunch", "warn"),
        ("7", "redis", "hide"),
    ]
    assert listed[1]["context"] == ["home", "notifications", "public", "thread"]
    assert listed[1]["keywords"] == [{"id": "7", "keyword": "redis", "whole_word": True}]
    assert [f["id"] for f in api.get("/api/v1/filters").json()] == ["8", "7"]
    members = [m for m, _ in stored(r, alice)]
    assert "7|redis" in members  # untouched by the write beside it
    assert {"id": 8, "title": "lunch", "context": ["home"], "action": "warn",
            "keywords": [[8, "lunch", True]]} in members  # fmt: skip


def test_a_warning_filter_made_in_an_app_folds_on_the_site_and_marks_the_status(
    repo, api, alice, feed
):
    dragon, lunch = feed
    api.post("/api/v2/filters", SPOILERS, as_json=True)

    home = api.get("/api/v1/timelines/home").json()
    assert [s["id"] for s in home] == [str(lunch), str(dragon)]
    assert home[0]["filtered"] == []
    (result,) = home[1]["filtered"]
    assert result["keyword_matches"] == ["Dragon"]
    assert result["filter"]["id"] == "1" and "keywords" not in result["filter"]
    page = login(Client(), repo, alice).get("/").content.decode()
    assert "Hidden: it contains “Dragon”, which you filter. Show it" in html.unescape(page)
    # Not in the public timeline: the filter acts only where it says.
    assert repo.pages.timeline(Viewer(alice.id)).posts.counts[dragon].folded == ""


def test_a_hiding_filter_leaves_the_post_out_where_it_acts_and_only_there(
    repo, api, alice, bob, feed
):
    dragon, lunch = feed
    reply = repo.posts.create_post(bob.id, "a dragon again", reply_to=lunch)
    hide = {**SPOILERS, "filter_action": "hide", "context": ["home", "thread"]}
    api.post("/api/v2/filters", hide, as_json=True)

    assert [s["id"] for s in api.get("/api/v1/timelines/home").json()] == [str(lunch)]
    public = api.get("/api/v1/timelines/public").json()
    assert str(dragon) in [s["id"] for s in public]  # not a context of the filter
    assert api.get(f"/api/v1/statuses/{lunch}/context").json()["descendants"] == []
    # The site folds it in the conversation (a conversation never loses a reply).
    talk = repo.pages.conversation(lunch, Viewer(alice.id))
    assert talk.counts[reply].folded == "Dragon"
    assert "The dragon wins" not in login(Client(), repo, alice).get("/").content.decode()


def test_a_filter_that_hides_in_notifications_drops_the_mention(repo, api, alice, bob):
    repo.posts.create_post(bob.id, "@alice the dragon is here")
    assert len(api.get("/api/v1/notifications").json()) == 1
    api.post(
        "/api/v2/filters",
        {**SPOILERS, "filter_action": "hide", "context": ["notifications"]},
        as_json=True,
    )
    assert api.get("/api/v1/notifications").json() == []


def test_an_expired_filter_stops_acting_and_is_dropped_on_the_next_write(repo, r, api, alice, feed):
    dragon, _ = feed
    past = int(time.time()) - 10
    r.zadd(
        keys.filters(alice.id),
        {json.dumps({"id": 4, "title": "old", "context": ["home"], "action": "hide",
                     "keywords": [[4, "dragon", True]]}): past},
    )  # fmt: skip
    assert str(dragon) in [s["id"] for s in api.get("/api/v1/timelines/home").json()]
    assert api.get("/api/v2/filters").json() == []
    assert api.get("/api/v2/filters/4").status_code == 404
    api.post("/api/v2/filters", SPOILERS, as_json=True)
    assert [m["title"] for m, _ in stored(r, alice)] == ["Spoilers"]


def test_another_accounts_filters_are_not_found_and_left_alone(repo, r, api, alice, bob):
    theirs = Api(token_for(repo, bob))
    fid = theirs.post("/api/v2/filters", SPOILERS, as_json=True).json()["id"]
    before = stored(r, bob)
    answers = [
        api.get(f"/api/v2/filters/{fid}"),
        api.put(f"/api/v2/filters/{fid}", {"title": "mine"}),
        api.delete(f"/api/v2/filters/{fid}"),
        api.get(f"/api/v2/filters/{fid}/keywords"),
        api.post(f"/api/v2/filters/{fid}/keywords", {"keyword": "x"}),
        api.get("/api/v2/filters/keywords/2"),
        api.put("/api/v2/filters/keywords/2", {"keyword": "x"}),
        api.delete("/api/v2/filters/keywords/2"),
        api.get("/api/v1/filters/2"),
        api.put("/api/v1/filters/2", {"phrase": "x"}),
        api.delete("/api/v1/filters/2"),
    ]
    assert [a.status_code for a in answers] == [404] * len(answers)
    assert {a.json()["error"] for a in answers} == {"Record not found"}
    assert stored(r, bob) == before and r.exists(keys.filters(alice.id)) == 0


@pytest.mark.parametrize("bad", ["%C2%B2", "1%C2%B2", "0", "12345678901234567890", "-1", "x"])
def test_an_id_that_is_not_one_is_not_found(api, r, alice, bad):
    api.post("/api/v2/filters", SPOILERS, as_json=True)
    before = stored(r, alice)
    for path in (f"/api/v2/filters/{bad}", f"/api/v2/filters/keywords/{bad}",
                 f"/api/v1/filters/{bad}", f"/api/v2/filters/{bad}/keywords"):  # fmt: skip
        assert api.get(path).status_code == 404
        # A filter's keywords are listed and added, never deleted whole: DELETE is not allowed.
        assert api.delete(path).status_code == (405 if path.endswith("/keywords") else 404)
    assert stored(r, alice) == before


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"context": ["home", "everywhere"]}, "Context contains an invalid value"),
        ({"context": []}, "Context can't be blank"),
        ({"context": "nowhere"}, "Context contains an invalid value"),
        ({"title": "   "}, "Title can't be blank"),
        ({"title": "t" * 101}, "Title is too long"),
        ({"filter_action": "blur"}, "Filter action is not included in the list"),
        ({"expires_in": 10**12}, "Expires in must be between"),
        ({"expires_in": "1" * 25}, "Expires in is not a number"),
        ({"expires_in": "³"}, "Expires in is not a number"),
        ({"expires_in": -5}, "Expires in is not a number"),
        ({"expires_in": 0}, "Expires in must be between"),
        ({"keywords_attributes": [{"keyword": "  "}]}, "Keyword can't be blank"),
        ({"keywords_attributes": [{"keyword": "k" * 101}]}, "Keyword is too long"),
        ({"keywords_attributes": [{"keyword": ["a"]}]}, "Keyword must be a string"),
        ({"keywords_attributes": "dragon"}, "must be a list of keywords"),
        ({"keywords_attributes": [{"keyword": f"w{i}"} for i in range(101)]}, "at most 100"),
    ],
)
def test_bad_input_is_refused_with_a_422_and_writes_nothing(api, r, alice, change, says):
    refused = api.post("/api/v2/filters", {**SPOILERS, **change}, as_json=True)

    assert refused.status_code == 422, refused.content
    assert says in refused.json()["error"]
    assert r.exists(keys.filters(alice.id)) == 0


def test_bad_input_to_an_update_or_a_keyword_changes_nothing(api, r, alice):
    fid = api.post("/api/v2/filters", SPOILERS, as_json=True).json()["id"]
    before = stored(r, alice)
    answers = [
        api.put(f"/api/v2/filters/{fid}", {"context": ["home", "mars"]}),
        api.put(f"/api/v2/filters/{fid}", {"keywords_attributes": [{"id": "1", "keyword": ""}]}),
        api.post(f"/api/v2/filters/{fid}/keywords", {"keyword": ""}),
        api.put("/api/v2/filters/keywords/1", {"keyword": " "}),
        api.post("/api/v1/filters", {"phrase": "", "context[]": ["home"]}),
        api.post("/api/v1/filters", {"phrase": "x", "context[]": ["moon"]}),
    ]
    assert [a.status_code for a in answers] == [422] * len(answers)
    assert stored(r, alice) == before


def test_filters_and_keywords_are_bounded(repo, r, api, alice):
    for i in range(keys.FILTERS_CAP):
        repo.filters.add(alice.id, f"word{i}", "never")
    too_many = api.post("/api/v2/filters", {**SPOILERS, "keywords_attributes": []}, as_json=True)
    assert too_many.status_code == 422
    assert r.zcard(keys.filters(alice.id)) == keys.FILTERS_CAP
    # 100 keywords in all: one more, anywhere, is refused.
    more = api.post("/api/v2/filters/1/keywords", {"keyword": "one more"})
    assert more.status_code == 422 and "100 words" in more.json()["error"]
    assert r.zcard(keys.filters(alice.id)) == keys.FILTERS_CAP
    assert not any("one more" in str(m) for m, _ in stored(r, alice))


def test_the_filters_need_their_scopes_and_a_user(repo, alice):
    reader = Api(token_for(repo, alice, "read"))
    assert reader.get("/api/v2/filters").status_code == 200
    refused = reader.post("/api/v2/filters", SPOILERS, as_json=True)
    assert refused.status_code == 403
    assert Api(None).get("/api/v2/filters").status_code == 401
    assert Api(token_for(repo, None)).get("/api/v1/filters").status_code == 422
    assert (
        Api(token_for(repo, alice, "read:filters write:filters"))
        .post("/api/v2/filters", SPOILERS, as_json=True)
        .status_code
        == 200
    )


def test_a_form_encoded_filter_is_taken_as_rails_takes_it(api, alice):
    made = api.post(
        "/api/v2/filters",
        {
            "title": "Form",
            "context[]": ["public"],
            "keywords_attributes[0][keyword]": "alpha",
            "keywords_attributes[0][whole_word]": "false",
            "keywords_attributes[1][keyword]": "beta",
        },
    )
    assert made.status_code == 200, made.content
    assert [(k["keyword"], k["whole_word"]) for k in made.json()["keywords"]] == [
        ("alpha", False),
        ("beta", True),
    ]
    assert made.json()["filter_action"] == "warn"


def test_api_home_stays_at_one_warm_round_trip_with_filters(repo, api, alice, feed, round_trips):
    api.post("/api/v2/filters", SPOILERS, as_json=True)
    api.get("/api/v1/timelines/home")  # warm
    round_trips.reset()
    assert api.get("/api/v1/timelines/home").status_code == 200
    if not CLUSTER:
        assert round_trips.count == 1


def test_the_filters_endpoints_read_in_two_round_trips_whatever_their_number(
    repo, api, alice, round_trips
):
    paths = ("/api/v2/filters", "/api/v2/filters/1", "/api/v1/filters",
             "/api/v2/filters/1/keywords", "/api/v2/filters/keywords/2")  # fmt: skip
    costs = []
    for count in (1, 30):
        while len(api.get("/api/v2/filters").json()) < count:
            api.post("/api/v2/filters", {**SPOILERS, "title": f"f{count}"}, as_json=True)
        for path in paths:
            round_trips.reset()
            assert api.get(path).status_code == 200
            costs.append(round_trips.count)
    assert costs[:5] == costs[5:]
    if not CLUSTER:  # the token with its user, then the filters
        assert costs == [2] * 10
