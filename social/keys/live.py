"""What changes and who is told: the versions readers check, the live bus, notifications,
markers and notices."""

from __future__ import annotations


def visibility_version() -> str:
    """String: a counter moved by every write that hides or shows listed posts; a web
    process trusts the posts it remembers only at the version it checked (cache.py)."""
    return "visibility_version"


def front_version() -> str:
    """String: a counter moved by every write that changes what the latest posts show."""
    return "front_version"


def profile_changes() -> str:
    """Sorted set: user id -> the number of the latest change of what their posts' cards
    show (display name, avatar); a web process checks again the posts it remembers of the
    authors numbered above what it took in (accounts/profile_changes.py)."""
    return "{visibility_version}:profile_changes"


def profile_newest() -> str:
    """String: the number of the newest profile change (profile_changes' top), read with
    visibility_version in one MGET on every page's first pipeline: the hash tag puts both
    profile keys in the version's slot (one node of a cluster, no other reached)."""
    return "{visibility_version}:profile_newest"


def notices(user_id: int) -> str:
    """List: JSON notices for a user (e.g. "your post was removed"), newest first, capped."""
    return f"notices:{int(user_id)}"


def notifications(user_id: int) -> str:
    """List: the user's notifications, newest first (notification_events.entry_of)."""
    return f"notifications:{int(user_id)}"


def notified(user_id: int) -> str:
    """Sorted set: each like, repost or follow told, by when (notification_writes.CLAIM_SCRIPT)."""
    return f"notified:{int(user_id)}"


NOTIFICATIONS_CAP = 1000


NOTIFICATIONS_DAYS = 90


def markers(user_id: int) -> str:
    """Hash: where the user stopped reading, per timeline, as Mastodon's markers."""
    return f"markers:{int(user_id)}"


def live_events() -> str:
    """Stream: one entry per event the streaming API tells (bus.py); ~LIVE_EVENTS_CAP."""
    return "live:events"


LIVE_EVENTS_CAP = 10000
