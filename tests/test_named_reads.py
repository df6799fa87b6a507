"""NamedReads: a pipeline's replies read by name, on real Redis and on fakeredis."""

from __future__ import annotations

import pytest


def test_named_reads_hand_back_each_reply_by_its_name(any_repo):
    any_repo.r.rpush("l", "a", "b")
    reads = any_repo.posts.reads()
    reads.lrange("items", "l", 0, -1)
    reads.llen("length", "l")
    reads.get("missing", "nothing-here")

    assert reads.execute() == {"items": [b"a", b"b"], "length": 2, "missing": None}
    assert any_repo.posts.reads().execute() == {}


def test_a_name_read_twice_in_one_pipeline_is_refused(any_repo):
    reads = any_repo.posts.reads()
    reads.get("x", "a")

    with pytest.raises(ValueError):
        reads.get("x", "b")
