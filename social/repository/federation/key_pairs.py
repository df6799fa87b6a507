"""The RSA key pairs our actors sign with: one for each local account and one for the
instance actor (docs/federation.md), made when first needed and never changed.

Making one takes about 0.1 s of CPU, once in an account's life: the first fetch of its
actor (or its first signed delivery) pays it. Two processes that race each make one and
the script below keeps the first written, so both sign with the same key. The private key
leaves this module only in ActorKeyPair.private_pem, which its repr never shows; nothing
here logs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from social import keys
from social.federation.signatures import generate_key_pair

from ..base import Fields, NamedReads, Reply, RepositoryBase, as_int, queue_users, s, users_from
from ..models import User

# KEYS[1]: an actor's key pair hash (keys.actor_key, keys.instance_actor_key).
# ARGV[1], ARGV[2], ARGV[3]: the new public key, private key (PEM) and the time (unix s).
# Writes them unless the hash holds a pair already (HSETNX on `private` claims it, in one
# script: no reader sees a private key without its public one), then returns the pair the
# hash holds: public, private, created.
CLAIM_SCRIPT = """
if redis.call('HSETNX', KEYS[1], 'private', ARGV[2]) == 1 then
  redis.call('HSET', KEYS[1], 'public', ARGV[1], 'created', ARGV[3])
end
return redis.call('HMGET', KEYS[1], 'public', 'private', 'created')
"""

PUBLIC_KEY = Reply[Fields]("public key")


@dataclass(frozen=True)
class ActorKeyPair:
    """An actor's key pair as stored, PEM text (signatures.py signs with it): `owner` a
    local account's id, or None for the instance actor. The private key is kept out of
    repr (and so of logs and tracebacks that print the pair)."""

    owner: int | None
    public_pem: str
    private_pem: str = field(repr=False)
    created: int = 0


class KeyPairStore(RepositoryBase):
    """Our actors' key pairs (keys.actor_key, keys.instance_actor_key)."""

    def for_account(self, user_id: int) -> ActorKeyPair:
        """Return user_id's key pair, made now when it has none. One round trip once made;
        the caller checks the account exists (a key is never needed for no one)."""
        return self._key_pair(keys.actor_key(user_id), user_id)

    def for_instance(self) -> ActorKeyPair:
        """Return the instance actor's key pair, made now when there is none."""
        return self._key_pair(keys.instance_actor_key(), None)

    def account_and_public_key(self, user_id: int) -> tuple[User | None, str]:
        """Return user_id's account (None: no such account) and its public key ("" when
        none is made yet: for_account makes it), in one round trip: what its actor
        document shows."""
        reads = NamedReads(self._pipe())
        queue_users(reads, (user_id,))
        reads.hmget(PUBLIC_KEY, keys.actor_key(user_id), ["public"])
        got = reads.execute()
        return users_from(got, (user_id,)).get(user_id), s(got[PUBLIC_KEY][0]) or ""

    def _key_pair(self, key: str, owner: int | None) -> ActorKeyPair:
        public, private, created = self.r.hmget(key, ["public", "private", "created"])
        if not (public and private):
            made = generate_key_pair()  # RSA-2048, as Mastodon makes
            public, private, created = self.r.execute_command(
                "EVAL", CLAIM_SCRIPT, 1, key, made.public_pem, made.private_pem, int(time.time())
            )
        return ActorKeyPair(owner, s(public), s(private), as_int(created) or 0)
