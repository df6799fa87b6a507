"""The streaming process's ASGI entry point: `granian --interface asgi
social.streaming.asgi:application` (scripts/launch.py starts it)."""

from __future__ import annotations

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "retwis_site.settings")
django.setup()

from social.streaming.app import StreamingApp  # noqa: E402  (after Django is set up)

application = StreamingApp()
