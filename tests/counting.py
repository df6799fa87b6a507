"""Count Redis round trips: every command or pipeline sent on a connection is one."""

from __future__ import annotations

import redis


class RoundTrips:
    """A counter of packets sent to Redis (a pipeline's commands go in one)."""

    count = 0

    @classmethod
    def reset(cls) -> None:
        cls.count = 0


class CountingConnection(redis.Connection):
    """A redis-py connection that counts each send as one round trip."""

    def send_packed_command(self, command, check_health: bool = True) -> None:
        RoundTrips.count += 1
        super().send_packed_command(command, check_health)
