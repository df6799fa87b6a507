"""The export's format (`manage.py export` and `import`; the store: backup.py).

Format, version 1: one JSON object per line, ASCII only.

    {"format": "retwis-export", "version": 1, "created": "2025-01-31T12:00:00Z", "keys": 42}
    {"key": "user:1", "type": "hash", "value": [["username", "alice"], ...]}
    {"key": "ratelimit:login_ip:10.0.0.1", "type": "string", "value": "3", "ttl_ms": 899512}
    ...
    {"end": true, "keys": 42, "records": 43}

The header's `keys` is DBSIZE when the export began; the closing line's counts are what was
written, so an import knows a file that was cut short. A blob (key, value, field, member) is
a JSON string when its bytes are UTF-8, else {"base64": "..."} (HyperLogLogs, pickled cache
entries). `value` by type:

- string: a blob (a HyperLogLog is a string: its bytes restore it exactly);
- list, set: [blob, ...]; hash: [[field, value], ...];
- zset: [[member, score], ...], the score a JSON number written with Python's repr, which
  parses back to the same double, or "inf" / "-inf";
- stream: [[id, [[field, value], ...]], ...], restored with XADD at those exact ids; the
  key's first record also carries `last_id` (XINFO's last-generated-id, set with XSETID);
- dump: a DUMP payload, for a type the site never writes (RESTORE needs a server of the same
  Redis version or later).

`ttl_ms` (absent: no expiry) is the time left when the key was read; an import sets it with
PEXPIRE, so it counts from the import. A collection of more than `chunk` elements is split
into several records that follow one another, the later ones marked "continued": true.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

from ..base import s
from ..errors import RepositoryError

FORMAT = "retwis-export"
VERSION = 1

TYPES = ("string", "list", "set", "hash", "zset", "stream", "dump")
COLLECTIONS = ("list", "set", "hash", "zset", "stream")
STREAM_ID = re.compile(r"^\d{1,20}-\d{1,20}$")


class BadBackup(RepositoryError):
    """An import file that is not a whole, valid export; line is where it went wrong."""

    def __init__(self, message: str, *, line: int, keys_written: int = 0) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.keys_written = keys_written


# A record's value (the module docstring), as read or as decoded from a line: the bytes of a
# string or a dump, else the elements of a collection: members, (field, value) pairs,
# (member, score) pairs, (id, [(field, value), ...]) entries, as its type says.
Pair: TypeAlias = tuple[bytes, bytes]
Value: TypeAlias = bytes | Sequence[object]


@dataclass(frozen=True)
class Record:
    """One key, or one more chunk of a big collection (continued)."""

    key: bytes
    type: str
    value: Value
    ttl_ms: int | None = None
    last_id: str | None = None  # streams: last-generated-id, on the first record
    continued: bool = False

    def to_json(self) -> str:
        """Return this record as one line of the format (no newline)."""
        line: dict[str, object] = {"key": encode_blob(self.key), "type": self.type}
        line["value"] = encode_value(self.type, self.value)
        if self.ttl_ms is not None:
            line["ttl_ms"] = self.ttl_ms
        if self.last_id is not None:
            line["last_id"] = self.last_id
        if self.continued:
            line["continued"] = True
        return json.dumps(line, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: dict) -> Record:
        """Return the Record a parsed line describes; raise ValueError saying what is wrong."""
        kind = line.get("type")
        if kind not in TYPES:
            raise ValueError(f"unknown type {kind!r}")
        if "value" not in line:
            raise ValueError("no value")
        ttl_ms, last_id = line.get("ttl_ms"), line.get("last_id")
        if ttl_ms is not None and (type(ttl_ms) is not int or ttl_ms <= 0):
            raise ValueError(f"ttl_ms must be a positive integer, not {ttl_ms!r}")
        if last_id is not None and (kind != "stream" or not STREAM_ID.match(str(last_id))):
            raise ValueError(f"bad last_id {last_id!r}")
        continued = line.get("continued", False) is True
        if continued and kind not in COLLECTIONS:
            raise ValueError(f"a {kind} cannot be continued")
        value = decode_value(kind, line["value"])
        return cls(decode_blob(line.get("key")), kind, value, ttl_ms, last_id, continued)


# --- Encoding -------------------------------------------------------------------------------


def encode_blob(value: bytes | str) -> str | dict[str, str]:
    """Return bytes as a JSON string when they are UTF-8, else as {"base64": ...}."""
    if isinstance(value, str):  # a client that decodes replies
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(value).decode("ascii")}


def decode_blob(value: object) -> bytes:
    """Return the bytes encode_blob encoded; raise ValueError for anything else."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict) and set(value) == {"base64"} and isinstance(value["base64"], str):
        try:
            return base64.b64decode(value["base64"], validate=True)
        except binascii.Error as error:
            raise ValueError(f"bad base64 ({error})") from None
    raise ValueError(f"expected a string or {{'base64': ...}}, not {value!r:.60}")


def encode_score(score: float) -> float | str:
    """Return a sorted-set score for JSON: finite ones as numbers (exact: repr round-trips)."""
    return score if math.isfinite(score) else ("inf" if score > 0 else "-inf")


def decode_score(score: object) -> float:
    """Return the score encode_score wrote; raise ValueError for anything else."""
    if isinstance(score, str) and score in ("inf", "-inf"):
        return float(score)
    if isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score):
        return float(score)
    raise ValueError(f"bad score {score!r:.40}")


def encode_value(kind: str, value) -> object:
    """Return a record's value in its JSON shape (see the module docstring)."""
    if kind in ("string", "dump"):
        return encode_blob(value)
    if kind in ("list", "set"):
        return [encode_blob(item) for item in value]
    if kind == "hash":
        return [[encode_blob(f), encode_blob(v)] for f, v in value]
    if kind == "zset":
        return [[encode_blob(m), encode_score(score)] for m, score in value]
    return [[s(i), [[encode_blob(f), encode_blob(v)] for f, v in fields]] for i, fields in value]


def decode_value(kind: str, value: object) -> Value:
    """Return a record's value from its JSON shape; raise ValueError when it is malformed."""
    if kind in ("string", "dump"):
        return decode_blob(value)
    if not isinstance(value, list):
        raise ValueError(f"a {kind} value must be a list")
    if kind in ("list", "set"):
        return [decode_blob(item) for item in value]
    if not all(isinstance(pair, list) and len(pair) == 2 for pair in value):
        raise ValueError(f"a {kind} value must be a list of pairs")
    if kind == "hash":
        return [(decode_blob(f), decode_blob(v)) for f, v in value]
    if kind == "zset":
        return [(decode_blob(m), decode_score(score)) for m, score in value]
    entries = []
    for entry_id, fields in value:
        if not isinstance(entry_id, str) or not STREAM_ID.match(entry_id):
            raise ValueError(f"bad stream id {entry_id!r:.40}")
        if not isinstance(fields, list) or not all(
            isinstance(pair, list) and len(pair) == 2 for pair in fields
        ):
            raise ValueError(f"stream entry {entry_id} must hold [field, value] pairs")
        if not fields:
            raise ValueError(f"stream entry {entry_id} has no fields")
        entries.append((entry_id, [(decode_blob(f), decode_blob(v)) for f, v in fields]))
    return entries


def parse_line(text: str, number: int) -> dict:
    """Return one line's JSON object; raise BadBackup when it is not one."""
    try:
        line = json.loads(text)
    except ValueError as error:
        raise BadBackup(f"not JSON ({error})", line=number) from None
    if not isinstance(line, dict):
        raise BadBackup("not a JSON object", line=number)
    return line
