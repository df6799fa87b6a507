"""Relations between accounts besides the reference follows: blocks, mutes, word filters
and the follows' total."""

from __future__ import annotations


def follows_total() -> str:
    """String counter: follow edges in the graph (INCR on follow, DECR on unfollow)."""
    return "stats:follows"


def blocks(user_id: int) -> str:
    """Sorted set: ids of the accounts user_id blocks, by when; at most RELATIONS_CAP."""
    return f"blocks:{int(user_id)}"


def blocked_by(user_id: int) -> str:
    """Sorted set: ids of the accounts that block user_id, by when."""
    return f"blocked_by:{int(user_id)}"


def mutes(user_id: int) -> str:
    """Sorted set: ids of the accounts user_id mutes, by when; at most RELATIONS_CAP."""
    return f"mutes:{int(user_id)}"


def muted_by(user_id: int) -> str:
    """Sorted set: ids of the accounts that mute user_id, by when."""
    return f"muted_by:{int(user_id)}"


RELATIONS_CAP = 5000


def filters(user_id: int) -> str:
    """Sorted set: user_id's word filters (two forms: filters.py) by expiry (+inf: never)."""
    return f"filters:{int(user_id)}"


FILTERS_CAP = 100


FILTER_KEYWORDS_CAP = 100  # keywords of all of a user's filters together


FILTER_MAX = 100  # characters of one phrase, keyword or title


# Where a filter acts (Mastodon's contexts; the filters page names them: forms.FILTER_PLACES).
FILTER_CONTEXTS = ("home", "notifications", "public", "thread", "account")
