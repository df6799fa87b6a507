"""The visitor's front page: what it was rendered at (social/front.py remembers it whole).

The page shows the newest posts of the timeline, their counts and their authors' names;
it changes when a post is written or hidden, a count moves or a card's author changes. The
hiding writes move visibility_version already (RepositoryBase.send); a profile change
moves this version with its number, after the change (accounts/profile_changes.py); the
rest queue queue_front_change() on the pipeline that makes the change, after it: on one
server a pipeline's commands run in order, so whoever reads the new version reads the
change too. On a cluster they do not (nodes run their parts in no set order), so nothing
is queued there and version() says None: the front page is rendered as any page is.
"""

from __future__ import annotations

from redis.cluster import ClusterPipeline

from social import keys

from ..base import Pipe, RepositoryBase


def queue_front_change(pipe: Pipe) -> None:
    """Queue moving the front page's version, after the change queued on pipe."""
    if not isinstance(pipe, ClusterPipeline):
        pipe.incr(keys.front_version())


class FrontStore(RepositoryBase):
    """The front page's version."""

    def version(self) -> tuple[object, object] | None:
        """Return (front_version, visibility_version) in one command (MGET); None on a
        cluster, or while the database has no visibility version (one the reference Retwis
        wrote: the first post or hiding write made here creates it). The visibility version
        starts at random (base.queue_visibility_version), so a database flushed or replaced
        under the process meets no remembered page."""
        if self.on_cluster:
            return None
        front, visibility = self.r.mget(keys.front_version(), keys.visibility_version())
        return None if visibility is None else (front, visibility)
