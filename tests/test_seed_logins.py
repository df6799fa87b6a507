"""Seeded demo data includes past logins, so the dashboard and account pages are not empty."""

from datetime import UTC, datetime

from django.core.management import call_command


def test_seeding_records_past_logins_in_counters_and_user_hashes(repo, r):
    call_command("seed", "--users", "40", "--follows", "100", "--posts", "200", "--seed", "3")
    logins = sum(int(r.get(k)) for k in r.scan_iter("stats:logins:*"))
    users_logged_in = [
        h for h in (r.hgetall(f"user:{i}") for i in r.hvals("users")) if "last_login" in h
    ]
    assert logins >= len(users_logged_in) > 0
    for h in users_logged_in:
        assert int(h["last_login"]) >= int(h["signup"])
        assert h["last_login_ip"].startswith(("198.51.100.", "203.0.113."))
    assert all(0 < r.ttl(k) <= 90 * 86400 for k in r.scan_iter("stats:logins:*"))
    for key in r.scan_iter("stats:logins:*"):
        day = key.rsplit(":", 1)[1]
        assert r.pfcount(f"stats:active:{day}") >= 1  # whoever logged in that day was active
    assert datetime.now(tz=UTC).strftime("%Y%m%d") >= min(
        k.rsplit(":", 1)[1] for k in r.scan_iter("stats:logins:*")
    )
