"""Checks more than one part uses."""

from __future__ import annotations


def _checked_digest(digest: str) -> str:
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ValueError(f"bad digest {digest!r}")
    return digest
