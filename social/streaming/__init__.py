"""The streaming API (Mastodon's, docs/api.md): an ASGI app served by Granian in a process
beside the page workers (scripts/launch.py), telling each listener the live bus's events
(social/repository/live/live.py) that its reader may see."""
