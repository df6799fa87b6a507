"""Backup and restore: the whole database as JSON lines (`manage.py export` and `import`).

The site owns its Redis, so an export is every key in it (the django-redis cache entries
too), read with SCAN in batches: never KEYS, and never more than one batch of keys (and at
most `chunk` elements of each) in memory. It is not a point-in-time snapshot: keys written
while it runs may or may not be in it (docs/reliability.md compares it with RDB and AOF).

The format: social/repository/operations/backup_format.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

import redis
from redis.cluster import RedisCluster

from ..base import NamedReads, Pipe, RepositoryBase, batched, s
from ..errors import RepositoryError
from .backup_format import FORMAT, VERSION, BadBackup, Pair, Record, parse_line

BATCH = 500  # keys per SCAN and per pipeline, on export; records per pipeline, on import
CHUNK = 1000  # elements of one collection per record (and per read)
READ_ATTEMPTS = 3  # a key whose type changes under a batch's reads is read again
# Hash, set and sorted set are read with their SCAN command: no element present for the
# whole read is missed however the collection changes meanwhile (a list has no such command:
# it is read by index, and a push during a long read shifts it).
SCANS = {"hash": "hscan", "set": "sscan", "zset": "zscan"}


class TargetNotEmpty(RepositoryError):
    """An import into a database that already holds keys, without force."""

    def __init__(self, keys: int) -> None:
        super().__init__(f"the database holds {keys:,} keys")
        self.keys = keys


@dataclass(frozen=True)
class ImportSummary:
    """What an import read (and wrote, unless a dry run) and the header of its file."""

    keys: int
    records: int
    created: str
    exported_keys: int | None


# --- The store --------------------------------------------------------------------------------


class BackupStore(RepositoryBase):
    """Every key of the database out as JSON lines, and back in."""

    def key_count(self) -> int:
        """Return the number of keys in the database (every primary's, on a cluster)."""
        if isinstance(self.r, RedisCluster):
            return int(self.r.dbsize(target_nodes=RedisCluster.PRIMARIES))
        return int(self.r.dbsize())

    def export_lines(
        self,
        *,
        batch: int = BATCH,
        chunk: int = CHUNK,
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[str]:
        """Yield the export, line by line: the header, a record per key or chunk, the end.

        progress(keys so far) is called after each batch of keys.
        """
        created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        header = {"format": FORMAT, "version": VERSION, "created": created}
        yield json.dumps({**header, "keys": self.key_count()})
        keys_done = records = 0
        for record in self.records(batch=batch, chunk=chunk, progress=progress):
            keys_done += not record.continued
            records += 1
            yield record.to_json()
        yield json.dumps({"end": True, "keys": keys_done, "records": records})

    def records(
        self,
        *,
        batch: int = BATCH,
        chunk: int = CHUNK,
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[Record]:
        """Yield a Record per key of the database (more for big collections), batch by batch;
        progress(keys so far) is called after each batch.

        SCAN may return a key twice (when Redis resizes its table meanwhile); such a key is
        exported twice, and the import's second write replaces its first.
        """
        keys_done = 0
        for names in batched(self.r.scan_iter(count=batch), batch):
            for record in self._read_keys(names, chunk):
                keys_done += not record.continued
                yield record
            if progress is not None:
                progress(keys_done)

    def _read_keys(self, names: list, chunk: int, attempts: int = READ_ATTEMPTS):
        """Yield the records of the keys names in two round trips (their types; then their
        first chunks and TTLs), plus one per further chunk of a big collection.

        A key gone meanwhile is skipped. A key whose type changed between the two (deleted
        and written anew) is read again, at most `attempts` times in all.
        """
        pipe = self._pipe()
        for name in names:
            pipe.type(name)
        kinds = [s(kind) for kind in pipe.execute()]
        reads = self.reads()
        for i, (name, kind) in enumerate(zip(names, kinds)):
            if kind != "none":
                self._queue_first(reads, i, name, kind, chunk)
        got = reads.execute(raise_on_error=False)
        retry = []
        for i, (name, kind) in enumerate(zip(names, kinds)):
            if kind == "none":
                continue
            first, ttl, last = got[f"value{i}"], got[f"ttl{i}"], got.get(f"last{i}")
            if any(isinstance(reply, redis.ResponseError) for reply in (first, ttl, last)):
                retry.append(name)
            elif isinstance(ttl, int) and ttl != -2 and first is not None:  # -2: gone since TYPE
                yield from self._key_records(name, kind, first, ttl, last, chunk)
        if retry and attempts > 1:
            yield from self._read_keys(retry, chunk, attempts - 1)
        elif retry:
            raise RuntimeError(f"{len(retry)} key(s) kept changing type, e.g. {retry[0]!r}")

    def _queue_first(self, reads: NamedReads, i: int, name: bytes, kind: str, chunk: int):
        """Queue the first chunk of key name (of type kind) and its TTL on reads."""
        value = f"value{i}"
        if kind == "string":
            reads.get(value, name)
        elif kind == "list":
            reads.lrange(value, name, 0, chunk - 1)
        elif kind in SCANS:
            getattr(reads, SCANS[kind])(value, name, 0, count=chunk)
        elif kind == "stream":
            reads.xrange(value, name, "-", "+", count=chunk)
            reads.xinfo_stream(f"last{i}", name)
        else:  # a type the site never writes (a module's): the server's own serialisation
            reads.dump(value, name)
        reads.pttl(f"ttl{i}", name)

    def _key_records(self, name: bytes, kind: str, first, ttl: int, last, chunk: int):
        """Yield key name's first record from the first reply, then one per further chunk."""
        ttl_ms = ttl if ttl > 0 else None
        if kind in ("string", "dump"):
            yield Record(name, kind, first, ttl_ms)
            return
        last_id = s(last["last-generated-id"]) if kind == "stream" else None
        items = first[1] if kind in SCANS else first  # a SCAN's reply: (cursor, items)
        yield Record(name, kind, elements(kind, items), ttl_ms, last_id)
        for more in self._rest(name, kind, first, chunk):
            yield Record(name, kind, elements(kind, more), continued=True)

    def _rest(self, name: bytes, kind: str, first, chunk: int) -> Iterator:
        """Yield the elements of collection name after its first reply, one reply per chunk."""
        if kind in SCANS:
            cursor, scan = first[0], getattr(self.r, SCANS[kind])
            while cursor:
                cursor, items = scan(name, cursor, count=chunk)
                if items:
                    yield items
            return
        got, start = first, 0
        while len(got) == chunk:  # a full chunk: there may be more
            if kind == "list":
                start += chunk
                got = self.r.lrange(name, start, start + chunk - 1)
            else:  # stream: the entries after the last one read ("(" excludes it: 6.2+)
                got = self.r.xrange(name, b"(" + to_bytes(got[-1][0]), "+", count=chunk)
            if got:
                yield got

    def import_lines(
        self,
        lines: Iterable[str],
        *,
        batch: int = BATCH,
        force: bool = False,
        dry_run: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> ImportSummary:
        """Write the export in lines into this database; return what was read.

        Refuse (TargetNotEmpty) a database that holds keys unless force: then each key in
        the file replaces the one of its name and the others stay. Records go out `batch`
        to a pipeline; progress(keys so far) is called after each. Raise BadBackup at the
        first line that is not valid, or when the file ends without its closing line: what
        came before it is written (dry_run: nothing is ever written).
        """
        numbered = ((n, text) for n, text in enumerate(lines, 1) if text.strip())
        first = next(numbered, None)
        if first is None:
            raise BadBackup("the file is empty", line=1)
        header = parse_line(first[1], first[0])
        if header.get("format") != FORMAT:
            raise BadBackup("not a Retwis export (no retwis-export header)", line=first[0])
        if header.get("version") != VERSION:
            version = header.get("version")
            raise BadBackup(f"format version {version!r}; this site reads 1", line=first[0])
        if not dry_run and not force and (count := self.key_count()):
            raise TargetNotEmpty(count)
        loader = Loader(None if dry_run else self._pipe, batch, progress)
        number = first[0]
        try:
            for number, text in numbered:
                line = parse_line(text, number)
                if line.get("end") is True:
                    loader.close(line, number)
                    break
                try:
                    loader.add(Record.from_json(line))
                except ValueError as error:
                    raise BadBackup(str(error), line=number) from None
            else:
                raise BadBackup(
                    "the file ends without the export's closing line: it was cut short",
                    line=number,
                )
            extra = next(numbered, None)
            if extra is not None:
                raise BadBackup("more lines after the closing line", line=extra[0])
        except BadBackup as error:
            loader.finish()  # what came before the bad line is written, and said so
            error.keys_written = loader.keys
            raise
        exported = header.get("keys")
        return ImportSummary(
            loader.keys,
            loader.records,
            str(header.get("created", "?")),
            exported if isinstance(exported, int) else None,
        )


def elements(kind: str, reply) -> list:
    """Return a collection read's elements: a list of items, or of (field/member/id, value)."""
    if kind == "hash":
        return list(reply.items())
    if kind == "stream":
        # redis-py hands an entry's fields back as a dict: a field repeated within one entry
        # (which the site never writes) keeps its last value.
        return [(entry_id, list(fields.items())) for entry_id, fields in reply]
    return list(reply)


def to_bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


class Loader:
    """Records written in pipelines of `batch`, each key finished after its last record.

    A key's records follow one another, so only the key being written is remembered: its
    TTL and a stream's last id are set once its last chunk is in (a PEXPIRE before that
    could let it expire half-written). pipe_factory None: count and check, write nothing.
    """

    def __init__(self, pipe_factory, batch: int, progress: Callable[[int], None] | None):
        self.pipe_factory, self.batch, self.progress = pipe_factory, batch, progress
        self.pipe = pipe_factory() if pipe_factory else None
        self.queued = self.keys = self.records = 0
        self.current: Record | None = None  # the first record of the key being written
        self.entries = 0  # stream entries written for it

    def add(self, record: Record) -> None:
        """Queue record's writes (a new key's first record finishes the previous key)."""
        if record.continued:
            current = self.current
            if current is None or (current.key, current.type) != (record.key, record.type):
                raise ValueError(f"a continued {record.type} {record.key!r} follows another key")
        else:
            self._finish()
            self.current, self.entries = record, 0
            self.keys += 1
        self.records += 1
        if record.type == "stream":
            self.entries += len(record.value)
        if self.pipe is not None:
            write(self.pipe, record)
        self.queued += 1
        if self.queued >= self.batch:
            self.flush()

    def _finish(self) -> None:
        """Queue the TTL and stream id of the key just written."""
        record, self.current = self.current, None
        if record is None or self.pipe is None:
            return
        if record.type == "stream":
            if not self.entries:  # an empty stream exists only as a stream: make one
                self.pipe.xgroup_create(record.key, "retwis-import", "$", mkstream=True)
                self.pipe.xgroup_destroy(record.key, "retwis-import")
            if record.last_id and record.last_id != "0-0":
                self.pipe.execute_command("XSETID", record.key, record.last_id)
        if record.ttl_ms:
            self.pipe.pexpire(record.key, record.ttl_ms)

    def flush(self) -> None:
        """Send what is queued (one round trip) and report progress."""
        if self.pipe is not None and len(self.pipe):
            self.pipe.execute()
            self.pipe = self.pipe_factory()
        self.queued = 0
        if self.progress is not None:
            self.progress(self.keys)

    def finish(self) -> None:
        """Finish the key being written and send everything queued."""
        self._finish()
        self.flush()

    def close(self, end: dict, number: int) -> None:
        """Finish the last key and check the counts of the closing line end."""
        if (end.get("keys"), end.get("records")) != (self.keys, self.records):
            raise BadBackup(
                f"the closing line counts {end.get('keys')} keys in {end.get('records')} "
                f"records, but the file holds {self.keys} in {self.records}",
                line=number,
            )
        self.finish()


def write(pipe: Pipe, record: Record) -> None:
    """Queue the commands that write record onto pipe (a first record replaces its key).
    Its type says what its value holds (Value): each branch casts to that."""
    key, value = record.key, record.value
    if record.type == "string":
        pipe.set(key, cast(bytes, value))
        return
    if record.type == "dump":
        pipe.restore(key, 0, cast(bytes, value), replace=True)
        return
    if not record.continued:
        pipe.delete(key)
    if not value:
        return
    if record.type == "list":
        pipe.rpush(key, *cast(list[bytes], value))
    elif record.type == "set":
        pipe.sadd(key, *cast(list[bytes], value))
    elif record.type == "hash":
        pipe.hset(key, items=[part for pair in cast(list[Pair], value) for part in pair])
    elif record.type == "zset":
        pipe.zadd(key, dict(cast(list[tuple[bytes, float]], value)))
    else:
        for entry_id, fields in cast(list[tuple[bytes | str, list[Pair]]], value):
            pipe.xadd(key, dict(fields), id=entry_id)
