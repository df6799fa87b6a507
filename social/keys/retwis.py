"""The reference Retwis layout: these keep their exact names, types and fields so that a
database written by the PHP Retwis works here and the PHP Retwis can read ours."""

from __future__ import annotations


def next_user_id() -> str:
    """String counter (INCR): the last user id handed out."""
    return "next_user_id"


def user(user_id: int) -> str:
    """Hash: username, password (Django hash; legacy plain text), auth (secret), plus ours."""
    return f"user:{int(user_id)}"


def user_key_prefix() -> str:
    """What user(id) puts before the id (for pages.MUTUALS_SCRIPT, one server only)."""
    return "user:"


def users() -> str:
    """Hash: username (as typed at sign-up) -> user id."""
    return "users"


def auths() -> str:
    """Hash: auth secret -> user id. May hold stale secrets; user:<id>.auth is the truth."""
    return "auths"


def users_by_time() -> str:
    """Sorted set: username scored by sign-up unix time."""
    return "users_by_time"


def followers(user_id: int) -> str:
    """Sorted set: ids of users following user_id, scored by unix time of the follow."""
    return f"followers:{int(user_id)}"


def following(user_id: int) -> str:
    """Sorted set: ids of users user_id follows, scored by unix time of the follow."""
    return f"following:{int(user_id)}"


def next_post_id() -> str:
    """String counter (INCR): the last post id handed out."""
    return "next_post_id"


def post(post_id: int) -> str:
    """Hash: user_id, time (unix seconds), body; plus ours (docs/data-layout.md)."""
    return f"post:{int(post_id)}"


def home_feed(user_id: int) -> str:
    """List: post ids of the user's home feed (own + followed), newest first, capped."""
    return f"posts:{int(user_id)}"


def timeline() -> str:
    """List: post ids of the global timeline, newest first, exactly the newest 1000."""
    return "timeline"
