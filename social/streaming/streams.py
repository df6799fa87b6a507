"""The streams a client may subscribe to, in Mastodon's names, and how a request names one.

Every account here is local, so `public:local` tells what `public` tells, and
`hashtag:local` what `hashtag` tells (Mastodon's shapes, our one server's meaning).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from social.text import normal_tag

from .errors import BadRequest

NOTIFICATION_STREAMS = ("user", "user:notification")
PUBLIC_STREAMS = ("public", "public:local")
TAG_STREAMS = ("hashtag", "hashtag:local")
NAMES = (*NOTIFICATION_STREAMS, *PUBLIC_STREAMS, *TAG_STREAMS)

# The server-sent-events paths under /api/v1/streaming/ and the stream each serves.
PATHS = {
    "user": "user",
    "user/notification": "user:notification",
    "public": "public",
    "public/local": "public:local",
    "hashtag": "hashtag",
    "hashtag/local": "hashtag:local",
}

UNKNOWN = "Unknown stream type"
NO_TAG = "Missing tag name parameter"
TAG_MAX = 100  # characters of a tag parameter read (a tag holds at most 50)


@dataclass(frozen=True)
class Stream:
    """A stream as subscribed: its name and, for a hashtag stream, the tag as filed."""

    name: str
    tag: str = ""
    given_tag: str = ""  # as the client wrote it: named back in each message's `stream`

    @property
    def public(self) -> bool:
        return self.name in PUBLIC_STREAMS or self.name in TAG_STREAMS

    @property
    def tells_updates(self) -> bool:
        return self.name != "user:notification"

    @property
    def label(self) -> list[str]:
        """The message's `stream` field: the name, and the tag for a hashtag stream."""
        return [self.name, self.given_tag] if self.tag else [self.name]


def stream_from(name: object, params: Mapping[str, object]) -> Stream:
    """Return the stream name and params (its `tag`) ask for; raise BadRequest with
    Mastodon's message for an unknown stream or a hashtag stream without a tag."""
    if not isinstance(name, str) or name not in NAMES:
        raise BadRequest(UNKNOWN)
    if name not in TAG_STREAMS:
        return Stream(name)
    given = params.get("tag")
    given = given[:TAG_MAX] if isinstance(given, str) else ""
    tag = normal_tag(given.lstrip("#"))
    if not tag:
        raise BadRequest(NO_TAG)
    return Stream(name, tag, given)
