"""Trending tags: the hourly buckets summed over the last day, remembered a minute."""

from __future__ import annotations

import time

from social import keys

from ..base import RepositoryBase, s

TRENDING_SHOWN = 10
TRENDING_REFRESH = 60  # seconds a process keeps the trending tags before summing again


class TrendingStore(RepositoryBase):
    """The tags used most in the last 24 hours."""

    def trending(self, *, at: float | None = None) -> tuple[tuple[str, int], ...]:
        """Return the TRENDING_SHOWN tags used most in the last 24 hours, with counts.

        The hourly buckets (keys.trending_hour) are summed with one ZUNIONSTORE into
        keys.trending_day, at most once a minute per process: one round trip then, none
        the rest of the minute.
        """
        clock = time.time() if at is None else at
        remembered = self.cache.trending
        if remembered is not None and clock - remembered[0] < TRENDING_REFRESH:
            return remembered[1]
        hour = int(clock) // 3600 * 3600
        buckets = [
            keys.trending_hour(time.strftime("%Y%m%d%H", time.gmtime(hour - h * 3600)))
            for h in range(24)
        ]
        pipe = self._pipe()
        pipe.zunionstore(keys.trending_day(), buckets)
        pipe.expire(keys.trending_day(), 2 * TRENDING_REFRESH)
        pipe.zrevrange(keys.trending_day(), 0, TRENDING_SHOWN - 1, withscores=True)
        top = tuple((s(tag), int(score)) for tag, score in pipe.execute()[-1])
        self.cache.trending = (clock, top)
        return top
