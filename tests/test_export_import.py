"""`manage.py export` and `manage.py import`
(social/repository/operations/backup.py, backup_format.py).

A round trip from the suite's server into a second redis-server of our own reproduces the
database: every key, its type, its value byte for byte and its TTL (give or take the seconds
the test takes). Exports read a batch of keys at a time; imports write as they read.
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from datetime import UTC, datetime
from io import StringIO

import pytest
import redis
from django.core.cache import cache
from django.core.management import call_command
from django.core.management.base import CommandError

from social import keys
from social.repository import Repository, get_repository
from social.repository.moderation.limits import Limit
from social.repository.operations.backup import TargetNotEmpty
from social.repository.operations.backup_format import BadBackup, Record, decode_blob, encode_blob
from social.repository.relations.filters import LEGACY_CONTEXT, FilterDraft
from tests.conftest import CLUSTER, cache_settings, raw_client
from tests.counting import CountingConnection, RoundTrips
from tests.redis_server import RedisServer

TTL_SLACK_MS = 10_000  # a TTL read after the import may be this much off the one before


@pytest.fixture(scope="module")
def second_server():
    """A second redis-server of our own: where imports go."""
    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture
def target(second_server) -> redis.Redis:
    """A raw (bytes) client on the second server, emptied for each test."""
    client = redis.Redis.from_url(second_server.url)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def source(redis_url):
    """A raw (bytes) client on the suite's server, where exports come from."""
    client = raw_client(redis_url)
    yield client
    client.close()


def use_target(settings, second_server) -> None:
    """Point the site (and so `manage.py import`) at the second server."""
    settings.REDIS_CLUSTER = False
    settings.CACHES = cache_settings(second_server.url)


def snapshot(client) -> dict[bytes, tuple[str, object, int]]:
    """Return {key: (type, value, PTTL)} of every key, read with plain commands.

    Scores are compared as Redis spells them; a stream with its last-generated-id.
    """
    out = {}
    for key in client.scan_iter(count=1000):
        kind = client.type(key).decode()
        if kind == "string":
            value = client.get(key)
        elif kind == "hash":
            value = client.hgetall(key)
        elif kind == "list":
            value = client.lrange(key, 0, -1)
        elif kind == "set":
            value = client.smembers(key)
        elif kind == "zset":
            value = client.zrange(key, 0, -1, withscores=True, score_cast_func=bytes)
        else:
            value = (client.xrange(key), client.xinfo_stream(key)["last-generated-id"])
        out[key] = (kind, value, client.pttl(key))
    return out


def assert_same(before: dict, after: dict) -> None:
    """Assert two snapshots hold the same keys, types, values and (nearly) the same TTLs."""
    assert {k: v[:2] for k, v in after.items()} == {k: v[:2] for k, v in before.items()}
    for key, (_, _, ttl) in before.items():
        got = after[key][2]
        if ttl < 0:
            assert got == ttl, key
        else:
            assert 0 < got <= ttl + TTL_SLACK_MS and got >= ttl - TTL_SLACK_MS, key


def seed_everything(repo, r, alice, bob, charlie, sam) -> None:
    """Write what the site writes (staff data, reports, the audit log, notices, stats with
    TTLs, a rate-limit window) plus what it never writes but a backup must carry exactly."""
    repo.graph.follow(alice.id, bob.id)
    repo.graph.follow(charlie.id, bob.id)
    kept = repo.posts.create_post(bob.id, "héllo ✓ 🎉 <b>bold</b>")
    doomed = repo.posts.create_post(bob.id, "buy now")
    repo.posts.create_post(alice.id, "alice here")
    repo.reports.report_post(alice, doomed, "spam", "clearly")
    repo.reports.report_post(charlie, kept, "other")
    repo.moderation.delete_posts([doomed], sam, "spam")  # audit entry, notice, report closed
    repo.moderation.add_note(charlie.id, sam, "watch this one")
    repo.moderation.suspend(charlie.id, sam, "abuse")
    repo.users.record_login(alice.id, "10.0.0.1")  # daily counter and HyperLogLog, with TTLs
    repo.filters.add(alice.id, "spoiler", "never")  # a filter in the first form, and in JSON
    repo.filters.create(
        alice.id, FilterDraft("Dragons", ("home",), "warn", 3600, True, (("Dragon", False),))
    )
    repo.limits.hit([(Limit("login_ip", 20, 900), "10.0.0.9")])  # a 15-minute window
    r.set(b"test:bin\xff", b"\x00\xff\xfe not UTF-8", px=123_456)
    r.set("test:empty", "")
    r.sadd("test:ints", 1, 2, 3)
    r.zadd(
        "test:scores",
        {"sum": 0.1 + 0.2, "tiny": 1e-300, "top": float("inf"), "bottom": float("-inf")},
    )
    r.xadd("test:stream", {"a": "1"}, id="5-1")
    r.xadd("test:stream", {"b": "2"}, id="7-0")
    r.xdel("test:stream", "7-0")  # its last-generated-id is now past its last entry
    r.xgroup_create("test:empty-stream", "g", "$", mkstream=True)
    r.xgroup_destroy("test:empty-stream", "g")


def export_to(path, **options) -> str:
    """Run `manage.py export path`; return what it said on stderr."""
    err = StringIO()
    call_command("export", str(path), stderr=err, **options)
    return err.getvalue()


def run_import(source: str, **options) -> str:
    out = StringIO()
    call_command("import", source, stdout=out, **options)
    return out.getvalue()


# --- Round trips ------------------------------------------------------------------------------


def test_a_round_trip_through_a_file_reproduces_every_key(
    settings, tmp_path, repo, r, source, target, second_server, alice, bob, charlie, sam
):
    seed_everything(repo, r, alice, bob, charlie, sam)
    if not CLUSTER:  # django-redis's cache is the single server's: pickled bytes with a TTL
        cache.set("greeting", {"bytes": b"\xff"}, 300)
    before = snapshot(source)
    assert {kind for kind, _, _ in before.values()} == {
        "string", "hash", "list", "set", "zset", "stream"
    }  # fmt: skip
    assert sum(ttl > 0 for _, _, ttl in before.values()) >= 5
    path = tmp_path / "backup.jsonl.gz"

    said = export_to(path, batch_size=7)

    assert f"Exported {len(before)} keys" in said
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # password hashes and secrets
    assert [p.name for p in tmp_path.iterdir()] == ["backup.jsonl.gz"]  # no partial file
    use_target(settings, second_server)
    assert f"Imported {len(before)} keys" in run_import(str(path))
    assert_same(before, snapshot(target))
    # What bob was told of comes back with its expiry: following again tells no one again.
    assert target.zcard(keys.notified(bob.id)) == 2 and target.ttl(keys.notified(bob.id)) > 0
    today = datetime.now(UTC).date()
    assert target.pfcount(keys.daily_active(today)) == 2  # alice and bob: posted
    assert get_repository().users.get_user_by_name("charlie").is_suspended
    audit = target.xrange(keys.audit_log())
    actions = [fields[b"action"] for _, fields in audit]
    assert actions == [b"grant_staff", b"delete_post", b"add_note", b"suspend"]
    filters = get_repository().filters.filters(alice.id)
    assert [(f.title, f.action, f.context) for f in filters] == [
        ("Dragons", "warn", ("home",)),
        ("spoiler", "hide", LEGACY_CONTEXT),
    ]


def test_collections_bigger_than_a_chunk_are_split_and_restored_whole(r, repo, source, target):
    r.rpush("test:list", *range(25))
    r.rpush("test:list10", *range(10))  # exactly one chunk: the next read finds nothing
    long = "x" * 100  # past hash-max-listpack-value: a hashtable, which HSCAN pages through
    r.hset("test:hash", mapping={f"f{i}": f"{long}{i}" for i in range(300)})
    r.sadd("test:set", *[f"m{i}" for i in range(600)])
    r.zadd("test:zset", {f"m{i}": i / 7 for i in range(300)})
    for i in range(25):
        r.xadd("test:stream", {"i": i}, id=f"{i + 1}-0")
    r.pexpire("test:hash", 60_000)
    before = snapshot(source)

    lines = list(repo.backup.export_lines(batch=3, chunk=10))

    records = [json.loads(line) for line in lines[1:-1]]
    parts = Counter(record["key"] for record in records)
    assert (parts["test:list"], parts["test:list10"], parts["test:stream"]) == (3, 1, 3)
    assert min(parts["test:hash"], parts["test:set"], parts["test:zset"]) > 1
    for key in parts:  # each key's records follow one another, only the first not continued
        mine = [i for i, record in enumerate(records) if record["key"] == key]
        assert mine == list(range(mine[0], mine[0] + len(mine)))
        assert [bool(records[i].get("continued")) for i in mine] == [False] + [True] * (
            len(mine) - 1
        )
    assert json.loads(lines[-1]) == {"end": True, "keys": 6, "records": len(records)}
    summary = Repository(target).backup.import_lines(lines, batch=4)
    assert (summary.keys, summary.records) == (6, len(records))
    assert_same(before, snapshot(target))


def test_export_to_stdout_and_import_from_stdin_with_progress(
    settings, repo, alice, bob, target, second_server
):
    repo.graph.follow(alice.id, bob.id)
    out, err = StringIO(), StringIO()
    call_command("export", "-", stdout=out, stderr=err, batch_size=2, progress_every=1)
    text = out.getvalue()
    header = json.loads(text.splitlines()[0])
    assert (header["format"], header["version"]) == ("retwis-export", 1)
    assert "keys, " in err.getvalue()  # progress lines, on stderr: stdout is the export
    use_target(settings, second_server)

    said = run_import("-", stdin=StringIO(text), batch_size=3, progress_every=1)

    assert "Imported" in said and " keys, " in said
    assert target.hget(keys.user(alice.id), "username") == b"alice"
    assert target.zscore(keys.followers(bob.id), alice.id) is not None


def test_a_key_written_twice_in_one_file_keeps_its_last_write(target):
    """SCAN may hand a key back twice; the second record replaces the first, never adds."""
    first = Record(b"feed", "list", [b"1", b"2"]).to_json()
    again = Record(b"feed", "list", [b"3"], ttl_ms=50_000).to_json()
    header = json.dumps({"format": "retwis-export", "version": 1})
    end = json.dumps({"end": True, "keys": 2, "records": 2})

    Repository(target).backup.import_lines([header, first, again, end])

    assert target.lrange("feed", 0, -1) == [b"3"]
    assert 40_000 < target.pttl("feed") <= 50_000


# --- Refusals and bad files --------------------------------------------------------------------


def test_import_refuses_a_database_that_holds_keys(
    settings, tmp_path, alice, target, second_server
):
    path = tmp_path / "backup.jsonl"
    export_to(path)
    target.set("someone:else", "precious")
    use_target(settings, second_server)

    with pytest.raises(CommandError, match=r"already holds 1 key\(s\).*--force.*Nothing was"):
        run_import(str(path))

    assert target.dbsize() == 1
    assert target.get("someone:else") == b"precious"


def test_import_with_force_replaces_the_files_keys_and_keeps_the_others(
    settings, tmp_path, alice, target, second_server
):
    path = tmp_path / "backup.jsonl"
    export_to(path)
    target.set("someone:else", "kept")
    target.hset(keys.user(alice.id), "stale", "x")
    use_target(settings, second_server)

    run_import(str(path), force=True)

    assert target.get("someone:else") == b"kept"
    assert target.hget(keys.user(alice.id), "stale") is None  # the whole hash was replaced
    assert target.hget(keys.user(alice.id), "username") == b"alice"


def test_dry_run_checks_the_whole_file_and_writes_nothing(
    settings, tmp_path, alice, bob, target, second_server
):
    path = tmp_path / "backup.jsonl"
    export_to(path)
    use_target(settings, second_server)

    said = run_import(str(path), dry_run=True)

    assert "Checked" in said and "Nothing was written" in said
    assert target.dbsize() == 0


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda lines: ['{"hello": 1}'] + lines[1:], "line 1: not a Retwis export"),
        (lambda lines: lines[:2] + ["{oops"] + lines[3:], "line 3: not JSON"),
        (
            lambda lines: lines[:2] + ['{"key": "x", "type": "bogus", "value": 1}'] + lines[3:],
            "line 3: unknown type 'bogus'",
        ),
        (
            lambda lines: lines[:2] + ['{"key": "x", "type": "string", "value": {"base64": "!"}}'],
            "line 3: bad base64",
        ),
        (lambda lines: lines[:-1], "cut short. 3 keys were written before it"),
        (lambda lines: lines[:-1] + ['{"end": true, "keys": 9, "records": 9}'], "counts 9 keys"),
    ],
    ids=["not-an-export", "not-json", "unknown-type", "bad-base64", "cut-short", "bad-count"],
)
def test_import_stops_at_a_bad_line_saying_where_and_what_was_written(
    settings, tmp_path, source, target, second_server, damage, message
):
    for name in ("a", "b", "c"):
        source.set(f"test:{name}", name)
    lines = [
        json.dumps({"format": "retwis-export", "version": 1, "keys": 3}),
        *(Record(f"test:{n}".encode(), "string", n.encode()).to_json() for n in "abc"),
        json.dumps({"end": True, "keys": 3, "records": 3}),
    ]
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(damage(lines)) + "\n")
    use_target(settings, second_server)

    with pytest.raises(CommandError, match=message):
        run_import(str(path))

    written = {k: target.get(k) for k in target.scan_iter()}
    if "not-an-export" in message or "line 1" in message:
        assert written == {}
    elif "cut short" in message:
        assert written == {b"test:a": b"a", b"test:b": b"b", b"test:c": b"c"}


def test_import_of_a_missing_file_says_so(settings, tmp_path, target, second_server):
    use_target(settings, second_server)
    with pytest.raises(CommandError, match="Cannot read .*nothing-here"):
        run_import(str(tmp_path / "nothing-here.jsonl"))
    assert target.dbsize() == 0


def test_the_store_refuses_a_non_empty_target_before_reading_a_record(target):
    target.set("x", "1")
    header = json.dumps({"format": "retwis-export", "version": 1})
    with pytest.raises(TargetNotEmpty):
        Repository(target).backup.import_lines([header, "never read"])
    with pytest.raises(BadBackup, match="line 2: not JSON"):  # force: it reads on
        Repository(target).backup.import_lines([header, "never read"], force=True)
    assert target.keys() == [b"x"]


# --- Bounded memory ----------------------------------------------------------------------------


def test_export_reads_one_batch_of_keys_at_a_time(target):
    target.mset({f"k{i}": i for i in range(300)})
    records = Repository(target).backup.records(batch=50)
    target.config_resetstat()

    next(records)

    stats = target.info("commandstats")
    assert stats["cmdstat_type"]["calls"] == 50  # one batch read, not the database
    assert stats["cmdstat_get"]["calls"] == 50
    assert len(list(records)) == 299
    assert target.info("commandstats")["cmdstat_type"]["calls"] == 300


def test_import_writes_as_it_reads(second_server):
    lines = [
        json.dumps({"format": "retwis-export", "version": 1}),
        *(Record(f"k{i}".encode(), "string", b"%d" % i).to_json() for i in range(300)),
        json.dumps({"end": True, "keys": 300, "records": 300}),
    ]
    client = redis.Redis.from_url(second_server.url, connection_class=CountingConnection)
    client.flushall()
    written_by_line_250 = []

    def reading():
        for number, line in enumerate(lines):
            if number == 250:
                written_by_line_250.append(client.dbsize())
            yield line

    RoundTrips.reset()
    Repository(client).backup.import_lines(reading(), batch=50)

    assert written_by_line_250 == [200]  # four pipelines of 50 went out before line 250
    assert client.dbsize() == 300
    assert RoundTrips.count <= 10  # DBSIZE, 6 pipelines and the check above; not 300
    client.close()


# --- The format --------------------------------------------------------------------------------


def test_blobs_are_text_when_utf8_and_base64_otherwise():
    assert encode_blob("héllo".encode()) == "héllo"
    assert encode_blob(b"\xff\x00") == {"base64": "/wA="}
    assert decode_blob({"base64": "/wA="}) == b"\xff\x00"
    assert decode_blob("héllo") == "héllo".encode()
    with pytest.raises(ValueError):
        decode_blob(5)


@pytest.mark.parametrize(
    "line, problem",
    [
        ({"key": "k", "type": "string", "value": "v", "ttl_ms": 0}, "ttl_ms"),
        ({"key": "k", "type": "string", "value": "v", "continued": True}, "cannot be continued"),
        ({"key": "k", "type": "zset", "value": [["m", "NaN"]]}, "bad score"),
        ({"key": "k", "type": "stream", "value": [["x", [["f", "v"]]]]}, "bad stream id"),
        ({"key": "k", "type": "stream", "value": [["1-0", []]]}, "no fields"),
        ({"key": "k", "type": "hash", "value": [["only-a-field"]]}, "pairs"),
    ],
)
def test_records_that_are_not_valid_are_refused(line, problem):
    with pytest.raises(ValueError, match=problem):
        Record.from_json(line)
