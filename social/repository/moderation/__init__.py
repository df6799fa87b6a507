"""Moderation: staff actions, reports, the audit log, staff pages, statistics and rate limits."""
