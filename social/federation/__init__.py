"""ActivityPub federation: discovery, actors, HTTP signatures, the inbox and deliveries.

Every ActivityPub URL is built from `SITE_URL` (never from a request's `Host`); every
outgoing request goes through `fetch.py`'s one client; incoming documents are a stranger's
data: verified (`signatures.py`), bounded and sanitised (`sanitise.py`) before use.
"""
