"""Issue 11, the staff line: confirmed actions from the reports queue (delete the post,
suspend its author), the open-report count on the Staff link, "contains" user search, and
staff pages that use the window's width.

Behaviour and the resulting Redis state are both asserted. The repository's parts also run
on a three-node cluster (RETWIS_TEST_CLUSTER=1).
"""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from social import keys
from social.repository import PROCESS_CACHE, NotAllowed
from social.repository.moderation import actions as moderation
from social.repository.moderation import directory as directory_module
from social.repository.moderation import reports as reports_module
from social.repository.moderation.directory import name_member, name_trigrams
from tests.conftest import CLUSTER, login, make_staff, make_user

T0 = 1_700_000_000


def messages_of(response) -> list[str]:
    """Return the texts of the messages the page shows (base.html's list), unescaped."""
    shown = re.search(r'<ul class="messages">(.*?)</ul>', response.content.decode(), re.S)
    return [html.unescape(m) for m in re.findall(r"<li[^>]*>(.*?)</li>", shown[1])] if shown else []


def text_of(response) -> str:
    return html.unescape(response.content.decode())


@pytest.fixture
def reported(repo, alice, bob, charlie):
    """alice's post, reported by bob and by charlie; alice's other post, reported by bob.
    Returns (post id, the first report's id, the other post's id, its report's id)."""
    post_id = repo.posts.create_post(alice.id, "buy cheap followers at example.com")
    other_id = repo.posts.create_post(alice.id, "and more spam")
    first = repo.reports.report_post(bob, post_id, "spam", "a scam link")
    repo.reports.report_post(charlie, post_id, "abuse")
    other_report = repo.reports.report_post(bob, other_id, "spam")
    return post_id, first, other_id, other_report


def all_keys(r, pattern: str) -> list[str]:
    """Return the keys matching pattern, on every primary of a cluster."""
    if CLUSTER:
        return r.keys(pattern, target_nodes=r.PRIMARIES)
    return r.keys(pattern)


def audit_entries(r, after: int = 0) -> list[dict]:
    """Return the audit entries' fields, oldest first, past the first `after`."""
    return [fields for _, fields in r.xrange("audit")][after:]


# --- 1. Deleting a reported post goes through a confirmation ------------------------------


def test_the_queue_offers_delete_as_a_link_to_a_confirmation_not_a_button(reported, sam_client):
    post_id, first, _, _ = reported
    page = sam_client.get("/staff/reports/").content.decode()

    assert f'href="/staff/reports/{first}/delete/?next=/staff/reports/"' in page
    assert 'value="deleted"' not in page  # no button that deletes in one click
    assert f'action="/staff/reports/{first}/resolve/"' in page  # dismissing stays one step


def test_the_delete_confirmation_shows_the_post_and_a_reason_and_changes_nothing(
    reported, r, sam_client
):
    post_id, first, _, _ = reported
    before = (r.zcard("reports:open"), r.xlen("audit"))

    response = sam_client.get(f"/staff/reports/{first}/delete/?next=/staff/reports/")

    page = text_of(response)
    assert response.status_code == 200
    assert "Delete this post?" in page and "buy cheap followers at example.com" in page
    assert "a scam link" in page and "2 open reports on this post" in page
    assert re.search(r'<form[^>]*method="post"[^>]*action="/staff/reports/\d+/delete/"', page)
    assert 'name="csrfmiddlewaretoken"' in page
    assert 'name="reason"' in page and 'value="Spam or scam"' in page  # the default, shown
    assert (r.zcard("reports:open"), r.xlen("audit")) == before
    assert r.hget(f"post:{post_id}", "deleted") is None


def test_confirming_deletes_the_post_closes_its_reports_and_logs_it(
    repo, reported, r, alice, sam, sam_client
):
    post_id, first, other_id, other_report = reported
    before = r.xlen("audit")  # sam's grant of staff

    response = sam_client.post(
        f"/staff/reports/{first}/delete/", {"reason": "scam link", "next": "/staff/reports/"}
    )

    assert response.status_code == 302 and response["Location"] == "/staff/reports/"
    assert r.hget(f"post:{post_id}", "deleted") == "1"
    assert r.hget(f"post:{post_id}", "deleted_reason") == "scam link"
    assert r.zrange("reports:open", 0, -1) == [str(other_report)]  # the other post's stays
    closed = [r.hgetall(f"report:{i}") for i in r.zrange("reports:resolved", 0, -1)]
    assert [(h["outcome"], h["resolved_by"]) for h in closed] == [("deleted", str(sam.id))] * 2
    assert r.hlen(f"post_reports:{post_id}") == 0
    (entry,) = audit_entries(r, before)
    assert (entry["action"], entry["post"], entry["report"], entry["reason"]) == (
        "delete_post",
        str(post_id),
        str(first),
        "scam link",
    )
    assert "scam link" in r.lindex(f"notices:{alice.id}", 0)  # the author is told
    follow = sam_client.get(response["Location"])
    assert "Post deleted; its reports are closed." in messages_of(follow)


@pytest.mark.parametrize("reason", ["", "  ", "ab", "x" * 501])
def test_deleting_needs_a_reason_and_shows_the_page_again(reported, r, sam_client, reason):
    post_id, first, _, _ = reported
    before = r.xlen("audit")

    response = sam_client.post(f"/staff/reports/{first}/delete/", {"reason": reason})

    assert response.status_code == 400 and b'class="error"' in response.content
    assert b"buy cheap followers" in response.content
    assert r.hget(f"post:{post_id}", "deleted") is None and r.zcard("reports:open") == 3
    assert r.xlen("audit") == before


@pytest.mark.parametrize("action", ["delete", "suspend"])
def test_the_confirmed_actions_need_a_csrf_token(repo, reported, r, sam, action):
    post_id, first, _, _ = reported
    client = login(Client(enforce_csrf_checks=True), repo, sam)
    before = r.xlen("audit")

    response = client.post(f"/staff/reports/{first}/{action}/", {"reason": "spam account"})

    assert response.status_code == 403
    assert r.zcard("reports:open") == 3 and r.xlen("audit") == before
    assert r.hget(f"post:{post_id}", "deleted") is None and r.hget("user:1", "status") is None


@pytest.mark.parametrize("action", ["delete", "suspend"])
def test_the_confirmed_actions_are_for_staff_only(reported, r, client, bob_client, action):
    _, first, _, _ = reported
    url = f"/staff/reports/{first}/{action}/"
    before = r.xlen("audit")

    assert client.get(url).status_code == 302  # to the login page
    assert client.post(url, {"reason": "spam"})["Location"].startswith("/login/")
    assert bob_client.get(url).status_code == 403
    assert bob_client.post(url, {"reason": "spam"}).status_code == 403
    assert r.zcard("reports:open") == 3 and r.xlen("audit") == before
    assert r.hget("user:1", "status") is None


@pytest.mark.parametrize("action", ["delete", "suspend"])
def test_a_resolved_or_unknown_report_has_nothing_to_confirm(
    repo, reported, r, sam, sam_client, action
):
    _, first, _, _ = reported
    repo.reports.resolve_report(first, sam, "dismissed")
    before = r.xlen("audit")
    assert sam_client.get(f"/staff/reports/{first + 100}/{action}/").status_code == 404

    response = sam_client.get(f"/staff/reports/{first}/{action}/")
    posted = sam_client.post(f"/staff/reports/{first}/{action}/", {"reason": "spam"})

    assert response.status_code == posted.status_code == 302
    assert "Someone already resolved that report." in messages_of(sam_client.get("/"))
    assert r.hget("user:1", "status") is None and r.xlen("audit") == before
    assert r.hget("post:1", "deleted") is None


def test_confirming_goes_back_only_to_this_site(reported, sam_client):
    _, first, _, _ = reported
    response = sam_client.post(
        f"/staff/reports/{first}/delete/", {"reason": "spam", "next": "https://evil.example/"}
    )
    assert response["Location"] == "/staff/reports/"
    page = sam_client.get(f"/staff/reports/{first}/suspend/?next=//evil.example/").content
    assert b"evil.example" not in page


# --- 2. Suspending the author from a report -------------------------------------------------


def test_the_suspend_confirmation_shows_the_post_and_author_and_changes_nothing(
    reported, r, sam_client
):
    _, first, _, _ = reported

    response = sam_client.get(f"/staff/reports/{first}/suspend/")

    page = text_of(response)
    assert response.status_code == 200 and "Suspend @alice?" in page
    assert "buy cheap followers" in page and "@alice</a>" in page
    assert 'name="reason"' in page and "Yes, suspend the author" in page
    assert r.hget("user:1", "status") is None and r.zcard("reports:open") == 3


def test_suspending_from_a_report_suspends_and_closes_that_posts_reports(
    repo, reported, r, alice, sam, sam_client
):
    post_id, first, other_id, other_report = reported
    secret = r.hget(f"user:{alice.id}", "auth")
    version = r.get("visibility_version")
    before = r.xlen("audit")

    response = sam_client.post(
        f"/staff/reports/{first}/suspend/", {"reason": "spam account", "next": "/staff/reports/"}
    )

    assert response.status_code == 302 and response["Location"] == "/staff/reports/"
    user = r.hgetall(f"user:{alice.id}")
    assert (user["status"], user["suspended_reason"], user["suspended_by"]) == (
        "suspended",
        "spam account",
        str(sam.id),
    )
    assert user["auth"] != secret and r.hget("auths", secret) is None  # logged out
    assert r.zscore("suspended_users", "alice") is not None
    assert r.get("visibility_version") != version
    # This post's reports are closed as "suspended"; the post itself is kept.
    assert r.zrange("reports:open", 0, -1) == [str(other_report)]
    closed = [r.hgetall(f"report:{i}") for i in r.zrange("reports:resolved", 0, -1)]
    assert sorted(h["post_id"] for h in closed) == [str(post_id)] * 2
    assert {h["outcome"] for h in closed} == {"suspended"}
    assert r.hlen(f"post_reports:{post_id}") == 0
    assert r.hget(f"post:{post_id}", "deleted") is None
    # One log entry: the suspension, naming the post and the report.
    (entry,) = audit_entries(r, before)
    assert (entry["action"], entry["user"], entry["post"], entry["report"]) == (
        "suspend",
        str(alice.id),
        str(post_id),
        str(first),
    )
    ((entry_id, _),) = r.xrevrange("audit", count=1)
    assert r.zscore(f"audit:target:{alice.id}", entry_id) == int(entry_id.split("-")[0])
    follow = sam_client.get("/staff/reports/resolved/")
    assert "Author suspended by @sam" in text_of(follow)
    assert any("suspended and logged out" in m for m in messages_of(follow))


def test_the_queue_offers_suspension_until_the_author_is_suspended(
    repo, reported, alice, sam, sam_client
):
    _, first, _, other_report = reported
    page = sam_client.get("/staff/reports/").content.decode()
    assert f'href="/staff/reports/{first}/suspend/?next=' in page

    repo.moderation.suspend(alice.id, sam, "spam")

    page = sam_client.get("/staff/reports/").content.decode()
    assert "/suspend/?next=" not in page
    refused = text_of(sam_client.get(f"/staff/reports/{other_report}/suspend/"))
    assert "@alice is already suspended." in refused and 'name="reason"' not in refused


def test_a_staff_author_cannot_be_suspended_from_a_report(repo, r, bob, sam, olga, sam_client):
    post_id = repo.posts.create_post(olga.id, "a staff member's post")
    report_id = repo.reports.report_post(bob, post_id, "abuse")
    before = r.xlen("audit")

    page = text_of(sam_client.get(f"/staff/reports/{report_id}/suspend/"))
    response = sam_client.post(f"/staff/reports/{report_id}/suspend/", {"reason": "abuse"})

    assert moderation.OWNER_SUSPEND in page and 'name="reason"' not in page
    assert response.status_code == 302
    assert moderation.OWNER_SUSPEND in messages_of(sam_client.get("/"))
    assert r.hget(f"user:{olga.id}", "status") is None
    assert r.zrange("reports:open", 0, -1) == [str(report_id)] and r.xlen("audit") == before


def test_suspending_from_a_report_follows_the_user_pages_rules(any_repo, any_r):
    repo = any_repo
    owner = make_staff(repo, "owner", at=T0)
    repo.moderation.grant_owner(owner.id, moderation.SYSTEM_ACTOR, at=T0)
    mod = make_staff(repo, "mod", at=T0)
    writer = make_user(repo, "writer", at=T0)
    reporter = make_user(repo, "reporter", at=T0)
    own = repo.reports.report_post(reporter, repo.posts.create_post(mod.id, "mine"), "spam")
    staff = repo.reports.report_post(reporter, repo.posts.create_post(owner.id, "x"), "spam")
    plain = repo.reports.report_post(reporter, repo.posts.create_post(writer.id, "y"), "spam")
    before = any_r.xlen("audit")  # the grants

    with pytest.raises(NotAllowed, match="cannot suspend yourself"):
        repo.moderation.suspend_reported_author(own, mod, "spam")
    with pytest.raises(NotAllowed, match="ask an owner"):
        repo.moderation.suspend_reported_author(staff, mod, "spam")
    assert repo.moderation.suspension_refusal(mod.id, owner) == (
        "Revoke staff before suspending this account."
    )
    assert any_r.zcard("reports:open") == 3 and any_r.xlen("audit") == before

    assert repo.moderation.suspend_reported_author(plain, mod, "spam", at=T0 + 5) is True
    assert repo.moderation.suspend_reported_author(plain, mod, "spam") is False  # resolved
    assert any_r.hget(f"user:{writer.id}", "status") == "suspended"
    assert any_r.hget(f"report:{plain}", "outcome") == "suspended"
    assert any_r.zscore("reports:resolved", plain) == T0 + 5
    assert [f["action"] for f in audit_entries(any_r, before)] == ["suspend"]


# --- 3. The open-report count on the Staff link ---------------------------------------------


def staff_link(response) -> str:
    """Return the header's Staff link."""
    found = re.search(r'<a href="/staff/"[^>]*>Staff.*?</a>', response.content.decode(), re.S)
    assert found, "no Staff link"
    return found[0]


def test_staff_see_the_open_report_count_on_the_staff_link(reported, sam_client):
    link = staff_link(sam_client.get("/"))

    assert '<span class="count-badge">3<' in link and 'title="3 open reports"' in link


def test_there_is_no_count_when_nothing_is_open_and_no_link_for_others(
    repo, reported, sam, sam_client, bob_client
):
    for report_id in (reported[1], reported[3]):
        repo.reports.resolve_report(report_id, sam, "dismissed")

    assert staff_link(sam_client.get("/")).endswith(">Staff</a>")
    assert 'href="/staff/"' not in bob_client.get("/").content.decode()


def test_other_users_pages_never_read_the_count(reported, bob_client, round_trips):
    bob_client.get("/healthz")
    PROCESS_CACHE.clear()
    round_trips.reset()
    bob_client.get("/")
    cold = round_trips.count

    assert PROCESS_CACHE.open_reports is None  # nothing read, nothing remembered
    PROCESS_CACHE.clear()
    PROCESS_CACHE.open_reports = (0.0, 5)  # stale: a staff page would read the count again
    round_trips.reset()
    bob_client.get("/")
    assert round_trips.count == cold


def test_the_count_costs_staff_one_round_trip_and_none_while_remembered(
    reported, sam_client, round_trips
):
    sam_client.get("/")  # warm: posts, names, the count
    round_trips.reset()
    sam_client.get("/")
    remembered = round_trips.count

    PROCESS_CACHE.open_reports = None
    round_trips.reset()
    sam_client.get("/")

    assert round_trips.count == remembered + 1


def test_the_count_is_remembered_for_30_seconds(repo, reported, sam, charlie, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(reports_module, "monotonic", lambda: clock[0])
    client = login(Client(), repo, sam)
    assert '"count-badge">3<' in staff_link(client.get("/"))
    new_post = repo.posts.create_post(sam.id, "reported later")
    # Filed by another process: this one does not know yet.
    reporter = make_user(repo, "dave")
    repo.reports.report_post(reporter, new_post, "spam")
    PROCESS_CACHE.open_reports = (clock[0], 3)

    clock[0] += 29.9
    assert '"count-badge">3<' in staff_link(client.get("/"))
    clock[0] += 0.2
    assert '"count-badge">4<' in staff_link(client.get("/"))


def test_a_moderators_own_actions_and_the_queue_show_at_once(repo, reported, r, sam_client):
    _, first, _, _ = reported
    assert '"count-badge">3<' in staff_link(sam_client.get("/"))

    sam_client.post(f"/staff/reports/{first}/delete/", {"reason": "spam link"})
    assert '"count-badge">1<' in staff_link(sam_client.get("/"))

    r.zadd("reports:open", {"999": T0})  # another process files one: the queue page reads it
    queue = sam_client.get("/staff/reports/")
    assert '"count-badge">2<' in staff_link(queue)
    assert re.search(r'Reports <span class="count-badge">2<', queue.content.decode())


# --- 4. "Contains" user search ------------------------------------------------------------


@pytest.fixture
def names(repo):
    """Accounts whose names hold "ank" at the start, in the middle and at the end."""
    for name in ("frank", "Ankara", "blankets", "hank_2", "anna", "tank", "bob"):
        make_user(repo, name, at=T0)


def listed(response) -> list[str]:
    return re.findall(r"<strong>@([^<]+)</strong>", response.content.decode())


def test_contains_finds_the_part_anywhere_in_the_name_sorted_by_name(names, sam_client):
    response = sam_client.get("/staff/users/?q=ank&match=contains")

    assert listed(response) == ["Ankara", "blankets", "frank", "hank_2", "tank"]
    assert "5 matches" in text_of(response) and "names containing “ank”" in text_of(response)
    assert listed(sam_client.get("/staff/users/?q=ank")) == ["Ankara"]  # prefix: the default
    assert listed(sam_client.get("/staff/users/?q=ank&match=prefix")) == ["Ankara"]


def test_contains_writes_a_trigram_index_in_one_slot(names, r, sam_client):
    sam_client.get("/staff/users/?q=ank&match=contains")

    # Sorted sets, all scores 0: in name order, which is the page's order.
    assert r.zrange("{names}:tri:ank", 0, -1, withscores=True) == [
        ("ankara 2", 0), ("blankets 3", 0), ("frank 1", 0), ("hank_2 4", 0), ("tank 6", 0),
    ]  # fmt: skip
    assert r.zrange("{names}:tri:k_2", 0, -1) == ["hank_2 4"]
    assert r.zrange("{names}:tri:sam", 0, -1) == ["sam 8"]
    assert r.get("{names}:checked") == r.get("next_user_id") == "8"  # sam too
    # A longer query reads the same sets and writes nothing.
    before = sorted(all_keys(r, "{names}:*"))
    assert len(before) > 10
    assert listed(sam_client.get("/staff/users/?q=lank&match=contains")) == ["blankets"]
    assert sorted(all_keys(r, "{names}:*")) == before


def test_a_short_contains_query_searches_the_start_and_says_so(names, r, sam_client):
    response = sam_client.get("/staff/users/?q=an&match=contains")

    assert listed(response) == ["Ankara", "anna"]
    assert "“Contains” needs at least 3 characters" in text_of(response)
    assert r.get("{names}:checked") is None  # the index was not needed


def test_a_longer_query_drops_names_with_its_pieces_but_not_the_query(repo, sam_client, settings):
    for name in ("zabcabz", "abcxbcab", "abcab", "abcabcab"):
        make_user(repo, name)

    response = sam_client.get("/staff/users/?q=abcab&match=contains")

    assert listed(response) == ["abcab", "abcabcab", "zabcabz"]  # abcxbcab: abc, bca, cab
    assert "3 matches" in text_of(response)
    settings.RETWIS_LIST_PAGE_SIZE = 2
    second = sam_client.get("/staff/users/?q=abcab&match=contains&page=2")
    assert listed(second) == ["zabcabz"] and "3 matches" in text_of(second)


def test_contains_combines_with_the_status_filter(repo, names, sam, sam_client):
    repo.moderation.suspend(repo.users.user_id_for_name("tank"), sam, "spam")

    assert listed(sam_client.get("/staff/users/?q=ank&match=contains&status=suspended")) == ["tank"]
    active = sam_client.get("/staff/users/?q=ank&match=contains&status=active")
    assert listed(active) == ["Ankara", "blankets", "frank", "hank_2"]


def test_contains_pages_by_name(repo, names, sam_client, settings):
    settings.RETWIS_LIST_PAGE_SIZE = 2

    pages = [
        listed(sam_client.get(f"/staff/users/?q=ank&match=contains&page={n}")) for n in (1, 2, 3)
    ]

    assert pages == [["Ankara", "blankets"], ["frank", "hank_2"], ["tank"]]


def test_a_purged_account_leaves_the_index_and_its_name_can_return(repo, names, r, sam_client):
    frank = repo.users.get_user_by_name("frank")
    sam_client.get("/staff/users/?q=ank&match=contains")  # indexed
    repo.accounts.delete_account(frank, at=T0)
    assert "frank" in listed(sam_client.get("/staff/users/?q=ank&match=contains"))  # in grace
    repo.accounts.purge_deleted_accounts(at=T0 + 31 * 86400)

    assert listed(sam_client.get("/staff/users/?q=ank&match=contains")) == [
        "Ankara", "blankets", "hank_2", "tank",
    ]  # fmt: skip
    for piece in ("fra", "ran", "ank"):
        assert r.zscore(f"{{names}}:tri:{piece}", "frank 1") is None

    again = make_user(repo, "frank")
    assert listed(sam_client.get("/staff/users/?q=ank&match=contains"))[2] == "frank"
    assert r.zscore("{names}:tri:fra", f"frank {again.id}") == 0


def test_accounts_the_reference_retwis_wrote_are_found(r, names, sam_client):
    user_id = r.incr("next_user_id")
    r.hset("users", "LegacyBanker", user_id)
    r.hset(f"user:{user_id}", mapping={"username": "LegacyBanker", "password": "x", "auth": "s"})

    assert "LegacyBanker" in listed(sam_client.get("/staff/users/?q=ank&match=contains"))


def test_the_index_catches_up_a_batch_per_search_and_says_what_is_left(repo, r, sam, monkeypatch):
    monkeypatch.setattr(directory_module, "INDEX_BATCH", 3)
    for i in range(6):
        make_user(repo, f"crank{i}")

    first = repo.directory.users_page("ank", match="contains")
    assert (len(first.items), first.unindexed) == (2, 4)  # ids 1-3: sam, crank0, crank1
    second = repo.directory.users_page("ank", match="contains")
    assert (len(second.items), second.unindexed) == (5, 1)
    assert repo.directory.index_new_names(limit=None) == 0  # what a command would run
    assert r.get("{names}:checked") == "7"
    assert len(repo.directory.users_page("ank", match="contains").items) == 6


def test_a_sign_up_in_flight_at_the_last_look_is_indexed_by_the_next(repo, r):
    repo.directory.index_new_names()
    in_flight = r.incr("next_user_id")  # its hash not written yet when the index looks
    repo.directory.index_new_names()
    r.hset(f"user:{in_flight}", "username", "spanker")
    make_user(repo, "later")

    assert [
        row.user.username for row in repo.directory.users_page("ank", match="contains").items
    ] == ["spanker"]


def pin(server: int, cluster: int) -> int:
    """Return the single-server count, or the cluster's under RETWIS_TEST_CLUSTER=1."""
    return cluster if CLUSTER else server


CONTAINS_CLUSTER = 6  # the page reaches two nodes, its rows three
CATCH_UP_CLUSTER = 12  # the names of 40 new ids and the rows reach every node


def test_contains_costs_the_same_for_5_accounts_as_for_50(repo, sam_client, round_trips):
    def cost() -> int:
        sam_client.get("/staff/users/?q=ank&match=contains")  # indexes what is new
        round_trips.reset()
        assert sam_client.get("/staff/users/?q=ank&match=contains").status_code == 200
        return round_trips.count

    for i in range(5):
        make_user(repo, f"tank{i}")
    few = cost()
    for i in range(5, 50):
        make_user(repo, f"tank{i}")
    many = cost()

    # The user hash (the secret's id is remembered), the count (remembered), the page (the
    # last id, the mark and the matches; on a cluster two nodes), its rows.
    assert few == many == pin(3, CONTAINS_CLUSTER)


def test_a_contains_search_that_catches_up_stays_within_the_staff_budget(
    repo, sam_client, round_trips
):
    for i in range(40):
        make_user(repo, f"tank{i}")
    sam_client.get("/healthz")
    PROCESS_CACHE.clear()
    round_trips.reset()

    assert sam_client.get("/staff/users/?q=ank&match=contains").status_code == 200
    # auth (2), the count, the page, the new ids' names, their trigrams with the page asked
    # again, its rows: within tests/test_staff_round_trips.py's BUDGET (8), and on a cluster
    # within tests/test_round_trips.py's CLUSTER_BUDGET (12).
    assert round_trips.count == pin(7, CATCH_UP_CLUSTER)


@pytest.mark.parametrize("query", ["ab", "a b", "x" * 21, "ÄNK"])
def test_the_repository_refuses_what_the_index_cannot_answer(any_repo, query):
    with pytest.raises(ValueError):
        any_repo.directory.users_page(query, match="contains")


def test_trigrams_are_the_pieces_a_query_can_hold():
    assert name_trigrams("Frank_2") == ["ank", "fra", "k_2", "nk_", "ran"]
    assert name_trigrams("a b-cde") == ["cde"]
    assert name_trigrams("ab") == []
    assert name_member("Frank", 7) == "frank 7"


def test_the_added_key_names_are_pinned():
    assert keys.name_trigram("ank") == "{names}:tri:ank"
    assert keys.name_trigrams_checked() == "{names}:checked"
    for bad in ("an", "ANK", "a:b", "ankk", "{x}"):
        with pytest.raises(ValueError):
            keys.name_trigram(bad)


@pytest.mark.skipif(not CLUSTER, reason="a cluster only")
def test_the_index_lives_in_one_cluster_slot(repo, names, r):
    repo.directory.users_page("ank", match="contains")
    written = all_keys(r, "{names}:*")
    assert len(written) > 10
    assert len({r.keyslot(key) for key in written}) == 1
    assert r.get_node_from_key("{names}:tri:ank").server_type == "primary"


# --- 5. Staff pages use the window's width ------------------------------------------------


def test_staff_pages_load_their_stylesheet_in_the_head(sam_client):
    page = sam_client.get("/staff/users/").content.decode()
    head = page[: page.index("</head>")]

    assert re.search(r'<link rel="stylesheet" href="/static/css/staff[^"]*\.css">', head)


def test_the_staff_stylesheet_widens_the_page_and_scrolls_tables():
    from pathlib import Path

    css = (Path(__file__).resolve().parents[1] / "static/css/staff.css").read_text()

    assert ".nav, .page, .footer { max-width: none; }" in css
    assert re.search(r"\.table-wrap \{ overflow-x: auto;", css)
    assert "table.stack" not in css  # rows no longer turn into cards that overflow
