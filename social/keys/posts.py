"""Posts and what hangs on them: own posts, replies, mentions, tags, trending, likes,
reposts, fan-out, pictures (bytes in Django's storage, named by a random token)."""

from __future__ import annotations

import re


def own_posts(user_id: int) -> str:
    """List: ids of the posts user_id wrote, newest first (the profile page). Uncapped."""
    return f"user_posts:{int(user_id)}"


def celebrities() -> str:
    """Sorted set: ids of the fan-out-on-read authors, by when they joined."""
    return "celebrities"


def fanouts_in_progress() -> str:
    """Sorted set: ids of posts whose fan-out began and has not ended, by its start."""
    return "fanouts"


def post_token(user_id: int, token: str) -> str:
    """String: the id of the post a form submission's one-off token created (a day).
    `token` is validated by the caller (URL-safe, at most 64 characters)."""
    return f"post_token:{int(user_id)}:{token[:64]}"


def replies(post_id: int) -> str:
    """List: ids of the direct replies to post_id, oldest first (RPUSH). Uncapped."""
    return f"replies:{int(post_id)}"


def mentions(user_id: int) -> str:
    """Sorted set: ids of posts that @mention user_id, by post time; MENTIONS_CAP kept."""
    return f"mentions:{int(user_id)}"


MENTIONS_CAP = 1000


def _checked_tag(tag: str) -> str:
    if not tag or len(tag) > 50 or not tag.replace("_", "").isalnum():
        raise ValueError(f"bad tag {tag!r}")
    return tag


def tag_posts(tag: str) -> str:
    """List: ids of the newest posts with #tag (text.normal_tag), newest first; TAG_CAP."""
    return f"tag:{_checked_tag(tag)}"


TAG_CAP = 1000


TAG_PATTERN = "tag:*"  # SCAN's match for every tag's post list (manage.py repair)


def trending_hour(hour: str) -> str:
    """Sorted set: tag -> posts with it in that UTC hour ("yyyymmddhh"); 25 hours."""
    if not (len(hour) == 10 and hour.isdigit()):
        raise ValueError(f"bad hour {hour!r}")
    return f"{{trending}}:{hour}"


def trending_day() -> str:
    """Sorted set: the last 24 hourly buckets summed (ZUNIONSTORE); two minutes."""
    return "{trending}:day"


def likes(post_id: int) -> str:
    """Sorted set: ids of users who like post_id, scored by when. Bounded by users."""
    return f"likes:{int(post_id)}"


def user_likes(user_id: int) -> str:
    """Sorted set: ids of posts user_id likes, scored by when (the Likes tab)."""
    return f"user_likes:{int(user_id)}"


def tag_index() -> str:
    """Sorted set, all scores 0: every tag a post was filed under (search by prefix)."""
    return "tags_lex"


def reposts(post_id: int) -> str:
    """Sorted set: ids of the accounts that repost post_id, scored by their repost's id."""
    return f"reposts:{int(post_id)}"


def user_reposts(user_id: int) -> str:
    """Sorted set: ids of the posts user_id reposts, scored by the repost's id."""
    return f"user_reposts:{int(user_id)}"


# The bytes live in Django's storage; a picture is named by a random token (16 hex digits).

IMAGE_TOKEN_RE = r"[0-9a-f]{16}"


def image(token: str) -> str:
    """Hash: one stored picture (owner, kind, state, sizes...: docs/data-layout.md)."""
    if not re.fullmatch(IMAGE_TOKEN_RE, token):
        raise ValueError(f"not an image token: {token!r}")
    return f"image:{token}"


IMAGE_PATTERN = "image:*"  # SCAN's match for every image hash (manage.py repair)


MEDIA_PER_POST = 4


MEDIA_ALT_MAX = 1500


def media_unattached() -> str:
    """Sorted set: tokens of post pictures not yet in a post, by upload time."""
    return "media_unattached"


def user_media(user_id: int) -> str:
    """Sorted set: tokens of every post picture user_id uploaded, by upload time."""
    return f"user_media:{int(user_id)}"


def post_draft(token: str) -> str:
    """String (JSON): a composer's post waiting for its pictures (attachments.py); a day."""
    if not re.fullmatch(IMAGE_TOKEN_RE, token):
        raise ValueError(f"not a draft token: {token!r}")
    return f"post_draft:{token}"


POST_DRAFT_TTL = 24 * 60 * 60
