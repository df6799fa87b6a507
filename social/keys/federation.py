"""Federation (ActivityPub, docs/federation.md): the key pairs our actors sign with."""

from __future__ import annotations


def actor_key(user_id: int) -> str:
    """Hash: a local account's RSA key pair: `public`, `private` (PEM), `created` (unix s);
    written once, by a one-key script, when first needed (repository/federation/keys.py)."""
    return f"ap:key:{int(user_id)}"


def instance_actor_key() -> str:
    """Hash: the instance actor's RSA key pair, as actor_key's (it signs our fetches)."""
    return "ap:key:instance"
