"""Every key string is pinned: the reference Retwis names must never drift."""

from datetime import date
from fnmatch import fnmatchcase

import pytest

from social import keys

DIGEST = "ab" * 32  # a SHA-256 hex digest


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        (keys.next_user_id(), "next_user_id"),
        (keys.user(7), "user:7"),
        (keys.users(), "users"),
        (keys.auths(), "auths"),
        (keys.users_by_time(), "users_by_time"),
        (keys.followers(7), "followers:7"),
        (keys.following(7), "following:7"),
        (keys.next_post_id(), "next_post_id"),
        (keys.post(42), "post:42"),
        (keys.home_feed(7), "posts:7"),
        (keys.timeline(), "timeline"),
    ],
)
def test_it_keeps_the_reference_retwis_key_names(built, expected):
    assert built == expected


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        (keys.usernames_lower(), "users_lower"),
        (keys.username_index(), "users_lex"),
        (keys.own_posts(7), "user_posts:7"),
        (keys.staff_users(), "staff_users"),
        (keys.suspended_users(), "suspended_users"),
        (keys.visibility_version(), "visibility_version"),
        (keys.profile_changes(), "{visibility_version}:profile_changes"),
        (keys.profile_newest(), "{visibility_version}:profile_newest"),
        (keys.celebrities(), "celebrities"),
        (keys.fanouts_in_progress(), "fanouts"),
        (keys.post_token(7, "abc_DEF-123"), "post_token:7:abc_DEF-123"),
        (keys.replies(42), "replies:42"),
        (keys.mentions(7), "mentions:7"),
        (keys.tag_posts("redis"), "tag:redis"),
        (keys.tag_posts("日本語"), "tag:日本語"),
        (keys.trending_hour("2026112203"), "{trending}:2026112203"),
        (keys.trending_day(), "{trending}:day"),
        (keys.likes(42), "likes:42"),
        (keys.user_likes(7), "user_likes:7"),
        (keys.user_reported(7), "user_reported:7"),
        (keys.deleted_users(), "deleted_users"),
        (keys.notices(7), "notices:7"),
        (keys.moderation_notes(7), "notes:7"),
        (keys.next_report_id(), "next_report_id"),
        (keys.report(3), "report:3"),
        (keys.open_reports(), "reports:open"),
        (keys.resolved_reports(), "reports:resolved"),
        (keys.post_reports(42), "post_reports:42"),
        (keys.live_events(), "live:events"),
        (keys.job_stream("mail"), "jobs:{mail}:ready"),
        (keys.job_delayed("mail"), "jobs:{mail}:delayed"),
        (keys.job_dead("media"), "jobs:{media}:dead"),
        (keys.job_totals("media"), "jobs:{media}:totals"),
        (keys.job_destination("deliver", "social.example"), "jobs:{deliver}:dest:social.example"),
        (keys.job_leases("deliver", "social.example"), "jobs:{deliver}:leases:social.example"),
        (keys.job_destinations("deliver"), "jobs:{deliver}:backoff"),
        (keys.user_reports(7), "user_reports:7"),
        (keys.audit_log(), "audit"),
        (keys.audit_by_actor(7), "audit:actor:7"),
        (keys.audit_by_target(7), "audit:target:7"),
        (keys.audit_by_action("delete_post"), "audit:action:delete_post"),
        (keys.daily_counter("posts", date(2026, 1, 2)), "stats:posts:20260102"),
        (keys.daily_active(date(2026, 1, 2)), "stats:active:20260102"),
        (keys.usernames_lower_checked(), "users_lower_checked"),
        (keys.owners(), "staff_owners"),
        (keys.blocks(7), "blocks:7"),
        (keys.blocked_by(7), "blocked_by:7"),
        (keys.mutes(7), "mutes:7"),
        (keys.muted_by(7), "muted_by:7"),
        (keys.oauth_app("abcDEF_123-xyz789"), "oauth:app:abcDEF_123-xyz789"),
        (keys.oauth_code(DIGEST), "oauth:code:" + DIGEST),
        (keys.oauth_token(DIGEST), "oauth:token:" + DIGEST),
        (keys.oauth_user_tokens(7), "oauth:user:7"),
        (keys.reposts(42), "reposts:42"),
        (keys.user_reposts(7), "user_reposts:7"),
        (keys.notifications(7), "notifications:7"),
        (keys.notified(7), "notified:7"),
        (keys.markers(7), "markers:7"),
        (keys.image("0123456789abcdef"), "image:0123456789abcdef"),
        (keys.post_draft("0123456789abcdef"), "post_draft:0123456789abcdef"),
        (keys.user_key_prefix() + "7", keys.user(7)),
        (keys.emails(), "emails"),
        (keys.email_confirmation(DIGEST), "email_confirm:" + DIGEST),
        (keys.password_reset(DIGEST), "password_reset:" + DIGEST),
        (keys.mail_sent("0123456789abcdef" * 2), "mail_sent:" + "0123456789abcdef" * 2),
    ],
)
def test_it_names_the_additions_as_documented(built, expected):
    assert built == expected


def test_the_tag_pattern_matches_every_tag_s_post_list_and_no_other_key():
    assert keys.TAG_PATTERN == "tag:*"
    lists = [keys.tag_posts("redis"), keys.tag_posts("日本語"), keys.tag_posts("a_1")]
    others = [keys.tag_index(), keys.trending_day(), keys.user(7), keys.image("0" * 16)]
    assert [fnmatchcase(key, keys.TAG_PATTERN) for key in lists] == [True] * 3
    assert [fnmatchcase(key, keys.TAG_PATTERN) for key in others] == [False] * 4


@pytest.mark.parametrize(
    "build", [keys.user, keys.followers, keys.following, keys.post, keys.home_feed, keys.own_posts]
)
def test_it_refuses_a_non_numeric_id(build):
    with pytest.raises(ValueError):
        build("1:evil")


def test_it_normalises_a_numeric_string_id():
    assert keys.user("12") == "user:12"


@pytest.mark.parametrize("bad", ["posts:x", "post s", ""])
def test_it_refuses_a_bad_metric_name(bad):
    with pytest.raises(ValueError):
        keys.daily_counter(bad, date(2026, 1, 2))


@pytest.mark.parametrize("bad", ["delete:post", "a b", "x*"])
def test_it_refuses_a_bad_audit_action_name(bad):
    with pytest.raises(ValueError):
        keys.audit_by_action(bad)


@pytest.mark.parametrize("bad", ["", "ab" * 31, "AB" * 32, "zz" * 32, "ab" * 32 + ":x"])
def test_it_refuses_anything_but_a_sha256_hex_digest_in_oauth_keys(bad):
    with pytest.raises(ValueError):
        keys.oauth_token(bad)
    with pytest.raises(ValueError):
        keys.oauth_code(bad)
    with pytest.raises(ValueError):
        keys.email_confirmation(bad)
    with pytest.raises(ValueError):
        keys.password_reset(bad)


@pytest.mark.parametrize("bad", ["", "ab" * 15, "AB" * 16, "zz" * 16, "ab" * 16 + ":x", "*"])
def test_it_refuses_anything_but_32_hex_digits_as_a_mail_id(bad):
    with pytest.raises(ValueError):
        keys.mail_sent(bad)


@pytest.mark.parametrize("bad", ["short", "x" * 65, "abc:defghijklmnopq", "abc defghijklmnopq"])
def test_it_refuses_a_malformed_client_id(bad):
    with pytest.raises(ValueError):
        keys.oauth_app(bad)


@pytest.mark.parametrize("bad", ["", "Mail", "mail:x", "{mail}", "m" * 33, "1mail"])
def test_a_queue_name_is_checked_before_it_builds_a_key(bad):
    with pytest.raises(ValueError):
        keys.job_stream(bad)


@pytest.mark.parametrize("bad", ["", "Social.Example", "a b", "x" * 256, "evil}{x"])
def test_a_destination_is_checked_before_it_builds_a_key(bad):
    with pytest.raises(ValueError):
        keys.job_destination("deliver", bad)
