"""The event envelope and its hash (docs/ledger-format.md is the byte-level spec).

An event's ``hash`` is ``sha256(EVENT_HASH_DOMAIN || JCS(header))`` where ``header`` is
the JSON object of every envelope field except the payload itself, which enters through
``payload_hash = sha256(payload bytes)``. The domain prefix keeps event hashes from ever
colliding with Merkle leaf/node hashes or blob hashes computed over the same bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ledger.canonical import canonical_json, canonical_text, sha256_hex
from ledger.errors import PayloadError

__all__ = [
    "EVENT_HASH_DOMAIN",
    "GENESIS_HASH",
    "NewEvent",
    "RecordedEvent",
    "event_hash",
    "validate_stream",
    "validate_type",
]

GENESIS_HASH = "0" * 64
EVENT_HASH_DOMAIN = b"aborist.ledger.event.v1\n"
MAX_STREAM_LEN = 400
MAX_TYPE_LEN = 200
_TYPE_RE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
_CONTROL = re.compile(r"[\x00-\x1f]")


def validate_stream(stream: str) -> str:
    if not isinstance(stream, str) or not stream.strip():
        raise PayloadError("stream name must be a non-empty string")
    if len(stream) > MAX_STREAM_LEN:
        raise PayloadError(f"stream name is {len(stream)} characters; at most {MAX_STREAM_LEN}")
    if stream != stream.strip() or _CONTROL.search(stream):
        raise PayloadError(
            f"stream name {stream!r} has surrounding whitespace or control characters"
        )
    return stream


def validate_type(type_: str) -> str:
    if not isinstance(type_, str) or not _TYPE_RE.match(type_) or len(type_) > MAX_TYPE_LEN:
        raise PayloadError(
            f"event type {type_!r} must be a dotted lower-case name such as 'qa.run_started'"
        )
    return type_


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to append. ``payload`` must be representable as RFC 8785 JSON."""

    type: str
    payload: dict[str, Any]
    type_version: int = 1
    event_id: str | None = None

    def canonical_payload(self) -> str:
        validate_type(self.type)
        if not isinstance(self.payload, dict):
            raise PayloadError(f"payload must be a JSON object, not {type(self.payload).__name__}")
        if not isinstance(self.type_version, int) or self.type_version < 1:
            raise PayloadError(
                f"type_version must be a positive integer, not {self.type_version!r}"
            )
        return canonical_text(self.payload)


def event_hash(
    *,
    seq: int,
    event_id: str,
    stream: str,
    stream_seq: int,
    type: str,
    type_version: int,
    recorded_at: str,
    payload_hash: str,
    prev_hash: str,
) -> str:
    """The chained hash of one event (docs/ledger-format.md, "Event hash")."""
    header = {
        "event_id": event_id,
        "payload_hash": payload_hash,
        "prev_hash": prev_hash,
        "recorded_at": recorded_at,
        "seq": seq,
        "stream": stream,
        "stream_seq": stream_seq,
        "type": type,
        "type_version": type_version,
    }
    return sha256_hex(EVENT_HASH_DOMAIN + canonical_json(header))


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """One row of the ``events`` table, exactly as stored."""

    seq: int
    event_id: str
    stream: str
    stream_seq: int
    type: str
    type_version: int
    recorded_at: str
    payload: str
    payload_hash: str
    prev_hash: str
    hash: str

    @property
    def data(self) -> dict[str, Any]:
        """The payload parsed back into Python objects."""
        parsed: dict[str, Any] = json.loads(self.payload)
        return parsed

    def expected_hash(self) -> str:
        return event_hash(
            seq=self.seq,
            event_id=self.event_id,
            stream=self.stream,
            stream_seq=self.stream_seq,
            type=self.type,
            type_version=self.type_version,
            recorded_at=self.recorded_at,
            payload_hash=self.payload_hash,
            prev_hash=self.prev_hash,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "event_id": self.event_id,
            "stream": self.stream,
            "stream_seq": self.stream_seq,
            "type": self.type,
            "type_version": self.type_version,
            "recorded_at": self.recorded_at,
            "payload": self.payload,
            "payload_hash": self.payload_hash,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }
