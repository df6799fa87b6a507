"""Federation's data (ActivityPub, docs/federation.md): the key pairs our actors sign with
(key_pairs.py). The protocol itself, with no Redis, is social/federation/."""
