"""What the site's header shows staff: the number of open reports on the Staff link.

A template global (social.templating.environment registers it), called by base.html only
inside `{% if user.is_staff %}`: other users' pages never ask, so they cost no round trip.
"""

from __future__ import annotations

from social.repository import get_repository


def open_report_count() -> int:
    """Return how many reports are open: at most one round trip, none while the process
    remembers the count (30 s at most; ReportStore.open_count)."""
    return get_repository().reports.open_count()
