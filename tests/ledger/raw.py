"""Rows written around the library, by raw SQL, with hashes that hold: what an insider
with ordinary write access (no trigger dropped) can append at the head of a ledger."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from ledger.canonical import sha256_hex
from ledger.envelope import GENESIS_HASH, event_hash
from ledger.errors import PayloadError
from ledger.store import Ledger

_INSERT = text(
    "INSERT INTO events (seq, event_id, stream, stream_seq, type, type_version, recorded_at, "
    "payload, payload_hash, prev_hash, hash) VALUES (:seq, :event_id, :stream, :stream_seq, "
    ":type, :type_version, :recorded_at, :payload, :payload_hash, :prev_hash, :hash)"
)
_EVENT_ID = "0000{:04x}-0000-4000-8000-00000000beef"


def append_raw(lg: Ledger, **fields: Any) -> dict[str, Any]:
    """Append one row after the head, chained and hashed as the ledger would (the header
    hashed by :func:`ledger.envelope.event_hash` whatever the types of its fields), with
    ``fields`` overriding the defaults (a well-formed ``test.raw_written`` event in stream
    ``raw``). Returns the row as written."""
    with lg.engine.connect() as conn:
        head = conn.execute(
            text("SELECT seq, hash, recorded_at FROM events ORDER BY seq DESC LIMIT 1")
        ).first()
        stream = fields.get("stream", "raw")
        pos = conn.execute(
            text("SELECT MAX(stream_seq) FROM events WHERE stream = :s"), {"s": stream}
        ).scalar()
    seq = int(head[0]) + 1 if head else 1
    row: dict[str, Any] = {
        "seq": seq,
        "event_id": _EVENT_ID.format(seq % 0xFFFF),
        "stream": stream,
        "stream_seq": int(pos or 0) + 1 if isinstance(pos, int) or pos is None else 1,
        "type": "test.raw_written",
        "type_version": 1,
        "recorded_at": str(head[2]) if head else "2026-11-29T19:35:33.123456Z",
        "payload": '{"raw":true}',
        "prev_hash": str(head[1]) if head else GENESIS_HASH,
    }
    row.update(fields)
    payload = row["payload"]
    data = payload.encode("utf-8", "surrogatepass") if isinstance(payload, str) else payload
    row.setdefault("payload_hash", sha256_hex(data))
    names = ("seq", "event_id", "stream", "stream_seq", "type", "type_version", "recorded_at",
             "payload_hash", "prev_hash")  # fmt: skip
    header = {k: row[k] for k in names}
    if "hash" not in row:
        try:
            row["hash"] = event_hash(**header)
        except PayloadError:  # a header JCS cannot hold: no hash can match
            row["hash"] = "f" * 64
    with lg.engine.begin() as conn:
        conn.execute(_INSERT, row)
    return row
