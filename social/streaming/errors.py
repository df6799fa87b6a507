"""The streaming API's refusals, as Mastodon's streaming server words them (its
RequestError is a 400, its AuthenticationError a 401)."""

from __future__ import annotations


class Refused(Exception):
    """A request answered with Mastodon's error: an HTTP status and its message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class BadRequest(Refused):
    """A malformed request (an unknown stream, a hashtag stream without a tag): a 400."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)
