"""Moderation, reports and the audit log: the repository contract, on real Redis and fakeredis.

Each staff action is checked for the Redis state it leaves and the audit entry it appends.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from social import keys
from social.repository import NotAllowed, PostNotFound, Repository, User, UserNotFound
from social.repository.moderation import actions as moderation
from social.repository.moderation.reports import REPORTS_PER_DAY, AlreadyReported
from tests.conftest import make_staff

T0 = 1_700_000_000
DAY = datetime.fromtimestamp(T0, tz=UTC).date()


def people(repo: Repository, *names: str) -> list[User]:
    return [repo.users.create_user(name, "h", at=T0) for name in names]


def last_entry(r) -> dict:
    """Return the newest audit entry's fields plus its id."""
    ((entry_id, fields),) = r.xrevrange("audit", count=1)
    return {"id": entry_id, **fields}


def assert_indexed(r, entry: dict, actor: int, action: str, target: int | None) -> None:
    """The entry id is in its actor, action (and target) indexes, scored by its ms time."""
    ms = int(entry["id"].split("-")[0])
    assert r.zscore(f"audit:actor:{actor}", entry["id"]) == ms
    assert r.zscore(f"audit:action:{action}", entry["id"]) == ms
    if target is not None:
        assert r.zscore(f"audit:target:{target}", entry["id"]) == ms


@pytest.fixture
def cast(any_repo):
    """sam (staff and an owner: owners alone grant and revoke staff), alice and bob."""
    sam = make_staff(any_repo, at=T0)
    any_repo.moderation.grant_owner(sam.id, moderation.SYSTEM_ACTOR, at=T0)
    alice, bob = people(any_repo, "alice", "bob")
    return sam, alice, bob


def test_the_added_key_names_are_pinned():
    assert keys.report_quota(7, date(2026, 11, 21)) == "report_quota:7:20261121"
    assert keys.follows_total() == "stats:follows"


# --- staff flag ---------------------------------------------------------------------------


def test_granting_staff_sets_the_flag_the_index_and_logs_it(any_repo, any_r, cast):
    sam, alice, _ = cast

    assert any_repo.moderation.grant_staff(alice.id, sam, "helps out", at=T0 + 1) is True

    assert any_r.hget(f"user:{alice.id}", "staff") == "1"
    assert any_r.zscore("staff_users", "alice") == T0 + 1
    assert any_repo.users.get_user(alice.id).is_staff
    entry = last_entry(any_r)
    assert entry | {"id": ""} == {
        "id": "",
        "actor": str(sam.id),
        "actor_name": "sam",
        "action": "grant_staff",
        "user": str(alice.id),
        "user_name": "alice",
        "post": "",
        "report": "",
        "reason": "helps out",
        "time": str(T0 + 1),
    }
    assert_indexed(any_r, entry, sam.id, "grant_staff", alice.id)


def test_granting_staff_twice_is_a_no_op_that_logs_nothing(any_repo, any_r, cast):
    sam, alice, _ = cast
    any_repo.moderation.grant_staff(alice.id, sam)
    length = any_r.xlen("audit")

    assert any_repo.moderation.grant_staff(alice.id, sam) is False
    assert any_r.xlen("audit") == length


def test_revoking_staff_clears_the_flag_and_the_index(any_repo, any_r, cast):
    sam, alice, _ = cast
    any_repo.moderation.grant_staff(alice.id, sam)

    assert any_repo.moderation.revoke_staff(alice.id, sam, "stepped down") is True

    assert any_r.hget(f"user:{alice.id}", "staff") is None
    assert any_r.zscore("staff_users", "alice") is None
    entry = last_entry(any_r)
    assert (entry["action"], entry["user"], entry["reason"]) == (
        "revoke_staff",
        str(alice.id),
        "stepped down",
    )
    assert_indexed(any_r, entry, sam.id, "revoke_staff", alice.id)


@pytest.mark.parametrize("method", ["grant_staff", "revoke_staff", "suspend", "force_logout"])
def test_staff_cannot_act_on_themselves(any_repo, any_r, cast, method):
    sam, _, _ = cast
    length = any_r.xlen("audit")

    with pytest.raises(NotAllowed):
        getattr(any_repo.moderation, method)(sam.id, sam, "why not")

    assert any_r.hget(f"user:{sam.id}", "staff") == "1"
    assert any_r.xlen("audit") == length


def test_actions_on_a_missing_user_raise(any_repo, cast):
    sam, _, _ = cast
    with pytest.raises(UserNotFound):
        any_repo.moderation.suspend(999, sam, "gone")


# --- suspension -----------------------------------------------------------------------------


def test_suspending_marks_the_user_rotates_the_secret_and_logs_it(any_repo, any_r, cast):
    sam, alice, _ = cast
    old_secret = any_repo.users.record_login(alice.id, "10.0.0.1")

    assert any_repo.moderation.suspend(alice.id, sam, "spam links", at=T0 + 5) is True

    h = any_r.hgetall(f"user:{alice.id}")
    assert h["status"] == "suspended"
    assert h["suspended_reason"] == "spam links"
    assert h["suspended_by"] == str(sam.id) and h["suspended_at"] == str(T0 + 5)
    assert h["auth"] != old_secret
    assert any_r.hget("auths", old_secret) is None
    assert any_r.hget("auths", h["auth"]) == str(alice.id)
    assert any_repo.users.user_for_secret(old_secret) is None
    assert any_r.zscore("suspended_users", "alice") == T0 + 5
    entry = last_entry(any_r)
    assert (entry["action"], entry["user"], entry["reason"]) == (
        "suspend",
        str(alice.id),
        "spam links",
    )
    assert_indexed(any_r, entry, sam.id, "suspend", alice.id)


def test_suspending_keeps_everything_the_user_wrote(any_repo, any_r, cast):
    sam, alice, bob = cast
    any_repo.graph.follow(bob.id, alice.id)
    post_id = any_repo.posts.create_post(alice.id, "still here")

    any_repo.moderation.suspend(alice.id, sam, "rude")

    assert any_r.hget(f"post:{post_id}", "body") == "still here"
    assert any_r.lrange(f"posts:{bob.id}", 0, -1) == [str(post_id)]
    assert any_r.lrange("timeline", 0, -1) == [str(post_id)]
    assert any_r.zscore(f"followers:{alice.id}", bob.id) is not None


def test_staff_cannot_be_suspended_before_losing_staff(any_repo, any_r, cast):
    sam, alice, _ = cast
    any_repo.moderation.grant_staff(alice.id, sam)

    with pytest.raises(NotAllowed):
        any_repo.moderation.suspend(alice.id, sam, "oops")
    assert any_r.hget(f"user:{alice.id}", "status") is None


def test_suspending_twice_logs_once_and_repairs_the_index(any_repo, any_r, cast):
    sam, alice, _ = cast
    any_repo.moderation.suspend(alice.id, sam, "once")
    any_r.zrem("suspended_users", "alice")  # as if the index write had been lost
    length = any_r.xlen("audit")

    assert any_repo.moderation.suspend(alice.id, sam, "twice") is False

    assert any_r.xlen("audit") == length
    assert any_r.zscore("suspended_users", "alice") is not None


def test_unsuspending_clears_the_marks_and_the_user_can_log_in_again(any_repo, any_r, cast):
    sam, alice, _ = cast
    any_repo.moderation.suspend(alice.id, sam, "spam")

    assert any_repo.moderation.unsuspend(alice.id, sam, "appeal accepted") is True

    h = any_r.hgetall(f"user:{alice.id}")
    assert not {"status", "suspended_reason", "suspended_at", "suspended_by"} & h.keys()
    assert any_r.zscore("suspended_users", "alice") is None
    secret = any_repo.users.record_login(alice.id)
    assert any_repo.users.user_for_secret(secret).id == alice.id
    entry = last_entry(any_r)
    assert (entry["action"], entry["reason"]) == ("unsuspend", "appeal accepted")
    assert_indexed(any_r, entry, sam.id, "unsuspend", alice.id)


def test_unsuspending_someone_not_suspended_is_a_no_op(any_repo, any_r, cast):
    sam, alice, _ = cast
    length = any_r.xlen("audit")
    assert any_repo.moderation.unsuspend(alice.id, sam) is False
    assert any_r.xlen("audit") == length


def test_a_suspended_user_cannot_be_made_staff(any_repo, cast):
    sam, alice, _ = cast
    any_repo.moderation.suspend(alice.id, sam, "spam")
    with pytest.raises(NotAllowed):
        any_repo.moderation.grant_staff(alice.id, sam)


# --- logout and notes -----------------------------------------------------------------------


def test_forcing_logout_rotates_the_secret_and_logs_it(any_repo, any_r, cast):
    sam, alice, _ = cast
    old = any_repo.users.record_login(alice.id)

    any_repo.moderation.force_logout(alice.id, sam, "lost phone")

    new = any_r.hget(f"user:{alice.id}", "auth")
    assert new != old and any_r.hget("auths", old) is None
    assert any_repo.users.user_for_secret(old) is None
    assert any_repo.users.user_for_secret(new).id == alice.id
    entry = last_entry(any_r)
    assert (entry["action"], entry["user"]) == ("force_logout", str(alice.id))
    assert_indexed(any_r, entry, sam.id, "force_logout", alice.id)


def test_notes_are_kept_newest_first_capped_and_logged(any_repo, any_r, cast, monkeypatch):
    sam, alice, _ = cast
    monkeypatch.setattr(moderation, "NOTES_CAP", 3)
    for i in range(5):
        any_repo.moderation.add_note(alice.id, sam, f"note {i}", at=T0 + i)

    raw = any_r.lrange(f"notes:{alice.id}", 0, -1)
    assert [json.loads(n)["text"] for n in raw] == ["note 4", "note 3", "note 2"]
    assert json.loads(raw[0]) == {"text": "note 4", "by": sam.id, "by_name": "sam", "time": T0 + 4}
    assert [n.text for n in any_repo.staff_pages.account(alice.id).notes] == [
        "note 4",
        "note 3",
        "note 2",
    ]
    entry = last_entry(any_r)
    assert (entry["action"], entry["reason"]) == ("add_note", "note 4")
    assert any_r.zcard("audit:action:add_note") == 5


# --- deleting posts -------------------------------------------------------------------------


def test_deleting_a_post_marks_it_drops_it_from_the_timeline_and_tells_the_author(
    any_repo, any_r, cast
):
    sam, alice, bob = cast
    any_repo.graph.follow(bob.id, alice.id)
    keep = any_repo.posts.create_post(alice.id, "fine")
    gone = any_repo.posts.create_post(alice.id, "spammy spam")

    assert any_repo.moderation.delete_posts([gone], sam, "spam", at=T0 + 9) == [gone]

    h = any_r.hgetall(f"post:{gone}")
    assert h["body"] == "spammy spam"  # soft delete: the content stays for the record
    assert (h["deleted"], h["deleted_reason"], h["deleted_by"], h["deleted_at"]) == (
        "1",
        "spam",
        str(sam.id),
        str(T0 + 9),
    )
    assert any_r.lrange("timeline", 0, -1) == [str(keep)]
    notice = json.loads(any_r.lindex(f"notices:{alice.id}", 0))
    assert "removed by moderators" in notice["text"] and "spam" in notice["text"]
    entry = last_entry(any_r)
    assert (entry["action"], entry["user"], entry["post"], entry["reason"]) == (
        "delete_post",
        str(alice.id),
        str(gone),
        "spam",
    )
    assert_indexed(any_r, entry, sam.id, "delete_post", alice.id)
    assert [p.id for p in any_repo.pages.home(bob.id).feed.items] == [keep]


def test_deleting_many_posts_logs_one_entry_each_and_skips_the_already_deleted(
    any_repo, any_r, cast
):
    sam, alice, bob = cast
    a = any_repo.posts.create_post(alice.id, "a")
    b = any_repo.posts.create_post(bob.id, "b")
    any_repo.moderation.delete_posts([a], sam, "first")
    length = any_r.xlen("audit")

    assert any_repo.moderation.delete_posts([a, b, 999], sam, "sweep") == [b]

    assert any_r.xlen("audit") == length + 1
    assert any_r.hget(f"post:{a}", "deleted_reason") == "first"


def test_deleting_a_post_closes_its_open_reports(any_repo, any_r, cast):
    sam, alice, bob = cast
    post_id = any_repo.posts.create_post(alice.id, "bad")
    report_id = any_repo.reports.report_post(bob, post_id, "spam")

    any_repo.moderation.delete_posts([post_id], sam, "bad")

    assert any_r.zcard("reports:open") == 0
    assert any_r.hget(f"report:{report_id}", "outcome") == "deleted"
    assert any_r.exists(f"post_reports:{post_id}") == 0


# --- reports --------------------------------------------------------------------------------


def test_reporting_a_post_files_one_open_report(any_repo, any_r, cast):
    _, alice, bob = cast
    post_id = any_repo.posts.create_post(alice.id, "meh")

    report_id = any_repo.reports.report_post(bob, post_id, "abuse", "rude to me", at=T0 + 3)

    assert any_r.hgetall(f"report:{report_id}") == {
        "post_id": str(post_id),
        "reporter_id": str(bob.id),
        "reporter_name": "bob",
        "author_id": str(alice.id),
        "reason": "abuse",
        "text": "rude to me",
        "time": str(T0 + 3),
        "status": "open",
    }
    assert any_r.zscore("reports:open", report_id) == T0 + 3
    assert any_r.zscore(f"user_reports:{alice.id}", report_id) == T0 + 3
    assert any_r.hgetall(f"post_reports:{post_id}") == {str(bob.id): str(report_id)}
    quota = keys.report_quota(bob.id, DAY)
    assert any_r.get(quota) == "1" and 0 < any_r.ttl(quota) <= 2 * 86400


def test_a_user_has_one_open_report_per_post(any_repo, any_r, cast):
    _, alice, bob = cast
    post_id = any_repo.posts.create_post(alice.id, "meh")
    any_repo.reports.report_post(bob, post_id, "spam")

    with pytest.raises(AlreadyReported):
        any_repo.reports.report_post(bob, post_id, "abuse")

    assert any_r.zcard("reports:open") == 1


def test_reporting_your_own_post_is_refused(any_repo, any_r, cast):
    _, alice, _ = cast
    post_id = any_repo.posts.create_post(alice.id, "mine")
    with pytest.raises(NotAllowed):
        any_repo.reports.report_post(alice, post_id, "spam")
    assert any_r.zcard("reports:open") == 0


def test_deleted_or_missing_posts_cannot_be_reported(any_repo, cast):
    sam, alice, bob = cast
    post_id = any_repo.posts.create_post(alice.id, "x")
    any_repo.moderation.delete_posts([post_id], sam, "x")
    for target in (post_id, 999):
        with pytest.raises(PostNotFound):
            any_repo.reports.report_post(bob, target, "spam")


def test_a_user_can_file_only_so_many_reports_a_day(any_repo, any_r, cast):
    _, alice, bob = cast
    posts = [any_repo.posts.create_post(alice.id, f"p{i}") for i in range(REPORTS_PER_DAY + 1)]
    for post_id in posts[:REPORTS_PER_DAY]:
        any_repo.reports.report_post(bob, post_id, "spam", at=T0)

    with pytest.raises(NotAllowed):
        any_repo.reports.report_post(bob, posts[-1], "spam", at=T0)
    any_repo.reports.report_post(bob, posts[-1], "spam", at=T0 + 86400)  # a new day


def test_a_claim_left_by_a_crash_is_taken_over(any_repo, any_r, cast):
    _, alice, bob = cast
    post_id = any_repo.posts.create_post(alice.id, "x")
    any_r.hset(f"post_reports:{post_id}", bob.id, 77)  # a claim whose report was never written

    report_id = any_repo.reports.report_post(bob, post_id, "spam")

    assert any_r.hget(f"post_reports:{post_id}", bob.id) == str(report_id)
    assert any_r.zscore("reports:open", report_id) is not None


def test_dismissing_closes_every_open_report_on_the_post(any_repo, any_r, cast):
    sam, alice, bob = cast
    (carol,) = people(any_repo, "carol")
    post_id = any_repo.posts.create_post(alice.id, "edgy")
    first = any_repo.reports.report_post(bob, post_id, "abuse")
    second = any_repo.reports.report_post(carol, post_id, "spam")

    assert any_repo.reports.resolve_report(first, sam, "dismissed", "fine", at=T0 + 50) is True

    for report_id in (first, second):
        h = any_r.hgetall(f"report:{report_id}")
        assert (h["status"], h["outcome"], h["resolved_by"]) == (
            "resolved",
            "dismissed",
            str(sam.id),
        )
        assert any_r.zscore("reports:resolved", report_id) == T0 + 50
    assert any_r.zcard("reports:open") == 0
    assert any_r.exists(f"post_reports:{post_id}") == 0
    assert any_r.hget(f"post:{post_id}", "deleted") is None
    entry = last_entry(any_r)
    assert (entry["action"], entry["post"], entry["report"], entry["user"]) == (
        "dismiss_report",
        str(post_id),
        str(first),
        str(alice.id),
    )
    assert_indexed(any_r, entry, sam.id, "dismiss_report", alice.id)
    # Resolved, bob may report the post again.
    assert any_repo.reports.report_post(bob, post_id, "other") > second


def test_resolving_by_deleting_removes_the_post_and_closes_the_reports(any_repo, any_r, cast):
    sam, alice, bob = cast
    post_id = any_repo.posts.create_post(alice.id, "scam link")
    report_id = any_repo.reports.report_post(bob, post_id, "spam")

    assert any_repo.reports.resolve_report(report_id, sam, "deleted") is True

    assert any_r.hget(f"post:{post_id}", "deleted") == "1"
    assert any_r.hget(f"post:{post_id}", "deleted_reason") == "Spam or scam"  # the default
    assert any_r.hget(f"report:{report_id}", "outcome") == "deleted"
    assert any_r.lrange("timeline", 0, -1) == []
    assert "removed" in json.loads(any_r.lindex(f"notices:{alice.id}", 0))["text"]
    entry = last_entry(any_r)
    assert (entry["action"], entry["post"], entry["report"]) == (
        "delete_post",
        str(post_id),
        str(report_id),
    )


def test_resolving_twice_does_nothing_the_second_time(any_repo, any_r, cast):
    sam, alice, bob = cast
    report_id = any_repo.reports.report_post(bob, any_repo.posts.create_post(alice.id, "x"), "spam")
    any_repo.reports.resolve_report(report_id, sam, "dismissed")
    length = any_r.xlen("audit")

    assert any_repo.reports.resolve_report(report_id, sam, "deleted") is False
    assert any_r.xlen("audit") == length


def test_open_reports_list_oldest_first_and_resolved_newest_first(any_repo, cast):
    sam, alice, bob = cast
    p1, p2, p3 = (any_repo.posts.create_post(alice.id, f"p{i}") for i in range(3))
    r1 = any_repo.reports.report_post(bob, p1, "spam", at=T0 + 1)
    r2 = any_repo.reports.report_post(bob, p2, "spam", at=T0 + 2)
    r3 = any_repo.reports.report_post(bob, p3, "spam", at=T0 + 3)
    any_repo.reports.resolve_report(r1, sam, "dismissed", at=T0 + 10)
    any_repo.reports.resolve_report(r3, sam, "dismissed", at=T0 + 11)

    open_page = any_repo.reports.reports_page("open")
    assert [r.id for r in open_page.items] == [r2]
    assert open_page.items[0].post.id == p2 and open_page.items[0].open_on_post == 1
    assert [r.id for r in any_repo.reports.reports_page("resolved").items] == [r3, r1]


# --- the audit log --------------------------------------------------------------------------


@pytest.fixture
def logged(any_repo, cast):
    """Six actions: sam and olga acting on alice and bob."""
    sam, alice, bob = cast
    olga = make_staff(any_repo, "olga", at=T0)
    any_repo.moderation.add_note(alice.id, sam, "1")
    any_repo.moderation.suspend(alice.id, sam, "2")
    any_repo.moderation.add_note(bob.id, olga, "3")
    any_repo.moderation.unsuspend(alice.id, olga, "4")
    any_repo.moderation.force_logout(bob.id, sam, "5")
    any_repo.moderation.add_note(alice.id, olga, "6")
    return sam, olga, alice, bob


def reasons(page) -> list[str]:
    return [e.reason for e in page.items]


def test_the_log_reads_newest_first(any_repo, logged):
    # then, by manage.py: olga made staff, sam made owner, sam made staff
    assert reasons(any_repo.audit.audit_page()) == ["6", "5", "4", "3", "2", "1", "", "", ""]


def test_the_unfiltered_log_pages_with_a_cursor(any_repo, logged):
    first = any_repo.audit.audit_page(per_page=3)
    assert reasons(first) == ["6", "5", "4"] and first.has_older
    second = any_repo.audit.audit_page(per_page=3, older_than=first.older_than)
    assert reasons(second) == ["3", "2", "1"]
    assert reasons(any_repo.audit.audit_page(per_page=3, older_than="junk")) == ["6", "5", "4"]


def test_the_log_filters_by_actor_action_and_target(any_repo, logged):
    sam, olga, alice, bob = logged
    assert reasons(any_repo.audit.audit_page(actor_id=sam.id)) == ["5", "2", "1"]
    assert reasons(any_repo.audit.audit_page(action="add_note")) == ["6", "3", "1"]
    assert reasons(any_repo.audit.audit_page(target_id=bob.id)) == ["5", "3"]
    assert reasons(any_repo.audit.audit_page(actor_id=olga.id, action="add_note")) == ["6", "3"]
    assert reasons(any_repo.audit.audit_page(actor_id=olga.id, target_id=alice.id)) == ["6", "4"]
    assert reasons(
        any_repo.audit.audit_page(actor_id=sam.id, action="add_note", target_id=alice.id)
    ) == ["1"]
    assert reasons(any_repo.audit.audit_page(action="revoke_staff")) == []


def test_a_filtered_log_pages_by_number(any_repo, logged):
    page1 = any_repo.audit.audit_page(action="add_note", per_page=2)
    page2 = any_repo.audit.audit_page(action="add_note", per_page=2, number=2)
    assert reasons(page1) == ["6", "3"] and page1.has_older and page1.total == 3
    assert reasons(page2) == ["1"] and not page2.has_older


def test_a_filtered_page_reads_only_its_own_entries(repo, r, sam):
    """On a real server: one exact XRANGE per entry shown, never a sweep of the stream."""
    (alice, bob) = people(repo, "alice", "bob")
    for i in range(40):
        repo.moderation.add_note(bob.id, sam, f"bob {i}")
    repo.moderation.add_note(alice.id, sam, "alice")
    r.config_resetstat()

    page = repo.audit.audit_page(target_id=alice.id, action="add_note")

    assert reasons(page) == ["alice"]
    stats = r.info("commandstats")
    assert stats["cmdstat_xrange"]["calls"] == 1
    assert "cmdstat_xrevrange" not in stats


def test_the_account_page_gathers_posts_reports_notes_and_history(any_repo, cast):
    sam, alice, bob = cast
    post_id = any_repo.posts.create_post(alice.id, "hello")
    any_repo.reports.report_post(bob, post_id, "spam", "why")
    any_repo.moderation.add_note(alice.id, sam, "watch this one")

    account = any_repo.staff_pages.account(alice.id)

    assert account.user.username == "alice"
    assert [p.id for p in account.posts] == [post_id]
    assert [(r.reason, r.text, r.post.body) for r in account.reports] == [("spam", "why", "hello")]
    assert account.reports_total == 1
    assert [n.text for n in account.notes] == ["watch this one"]
    assert [e.action for e in account.history] == ["add_note"]
    with pytest.raises(UserNotFound):
        any_repo.staff_pages.account(999)
