"""Moderation and the staff side: roles, suspensions, notes, reports, the audit log, daily
statistics, rate limits and the server's own words."""

from __future__ import annotations

from datetime import date


def staff_users() -> str:
    """Sorted set: usernames of staff, scored by the time staff was granted."""
    return "staff_users"


def suspended_users() -> str:
    """Sorted set: usernames of suspended users, scored by the time of suspension."""
    return "suspended_users"


def moderation_notes(user_id: int) -> str:
    """List: JSON staff notes on an account, newest first, capped."""
    return f"notes:{int(user_id)}"


def next_report_id() -> str:
    """String counter (INCR): the last report id handed out."""
    return "next_report_id"


def report(report_id: int) -> str:
    """Hash: post_id, reporter_id, reason, text, time, status, resolved_by, resolved_at."""
    return f"report:{int(report_id)}"


def open_reports() -> str:
    """Sorted set: ids of open reports scored by report time (oldest first)."""
    return "reports:open"


def resolved_reports() -> str:
    """Sorted set: ids of resolved reports scored by resolution time."""
    return "reports:resolved"


def post_reports(post_id: int) -> str:
    """Hash: reporter user id -> open report id; HSETNX keeps one open report per user."""
    return f"post_reports:{int(post_id)}"


def user_reported(user_id: int) -> str:
    """Sorted set: ids of posts user_id holds an open report on, by report time."""
    return f"user_reported:{int(user_id)}"


def user_reports(user_id: int) -> str:
    """Sorted set: ids of reports against posts by user_id, scored by report time."""
    return f"user_reports:{int(user_id)}"


def audit_log() -> str:
    """Stream: one entry per staff action (actor, action, target user/post, reason)."""
    return "audit"


def audit_by_actor(user_id: int) -> str:
    """Sorted set: audit stream ids of entries by staff member user_id (score = ms time)."""
    return f"audit:actor:{int(user_id)}"


def audit_by_target(user_id: int) -> str:
    """Sorted set: audit stream ids of entries whose target user is user_id (score = ms)."""
    return f"audit:target:{int(user_id)}"


def audit_by_action(action: str) -> str:
    """Sorted set: audit stream ids of entries of one action (score = ms time)."""
    if not action.replace("_", "").isalnum():
        raise ValueError(f"bad audit action name {action!r}")
    return f"audit:action:{action}"


def daily_counter(metric: str, day: date) -> str:
    """String counter (INCR) of `metric` events on `day`; expires after STATS_TTL_DAYS."""
    if not metric.isalpha():
        raise ValueError(f"bad metric name {metric!r}")
    return f"stats:{metric}:{day:%Y%m%d}"


def daily_active(day: date) -> str:
    """HyperLogLog of user ids active (logged in or posted) on `day`; expires like counters."""
    return f"stats:active:{day:%Y%m%d}"


STATS_TTL_DAYS = 90  # counters and HyperLogLogs older are let go (the dashboard shows 60)


def rate_limit(scope: str, subject: str) -> str:
    """String counter (INCR) of attempts in the current window; expires with it (scopes:
    social/auth.py). `subject` is built by the caller from validated, bounded parts."""
    if not scope.replace("_", "").isalpha():
        raise ValueError(f"bad rate-limit scope {scope!r}")
    return f"ratelimit:{scope}:{subject[:64]}"


def report_quota(user_id: int, day: date) -> str:
    """String counter (INCR) of reports user_id filed on `day`; expires after two days."""
    return f"report_quota:{int(user_id)}:{day:%Y%m%d}"


def owners() -> str:
    """Sorted set: ids of the staff who are owners (alone grant and revoke staff), by when."""
    return "staff_owners"


def instance_about() -> str:
    """Hash: the server's rules and extended description, as staff wrote them."""
    return "instance:about"
