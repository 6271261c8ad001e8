"""The event envelope and its hash (docs/ledger-format.md is the byte-level spec).

An event's ``hash`` is ``sha256(EVENT_HASH_DOMAIN || JCS(header))`` where ``header`` is
the JSON object of every envelope field except the payload itself, which enters through
``payload_hash = sha256(payload bytes)``. The domain prefix keeps event hashes from ever
colliding with Merkle leaf/node hashes or blob hashes computed over the same bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from ledger.canonical import canonical_json, canonical_string, canonical_text, sha256_hex
from ledger.errors import PayloadError
from ledger.jsonsafe import MAX_DEPTH, check_bounds, parse_canonical

__all__ = [
    "EVENT_HASH_DOMAIN",
    "GENESIS_HASH",
    "NewEvent",
    "RecordedEvent",
    "event_hash",
    "header_hash",
    "validate_stream",
    "validate_type",
]

GENESIS_HASH = "0" * 64
_MAX_SAFE_INT = 2**53 - 1
_HEADER = (
    '{"event_id":%s,"payload_hash":%s,"prev_hash":%s,"recorded_at":%s,"seq":%d,'
    '"stream":%s,"stream_seq":%d,"type":%s,"type_version":%d}'
)
EVENT_HASH_DOMAIN = b"aborist.ledger.event.v1\n"
MAX_STREAM_LEN = 400
MAX_TYPE_LEN = 200
_TYPE_RE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


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
        try:
            text = canonical_text(self.payload)
        except RecursionError:
            raise PayloadError(f"payload nests deeper than {MAX_DEPTH} levels") from None
        except UnicodeEncodeError:
            raise PayloadError("payload holds a lone surrogate: no RFC 8785 form") from None
        check_bounds(text)  # what every reader accepts (ledger/jsonsafe.py)
        return text


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
    """The chained hash of one event (docs/ledger-format.md, "Event hash").

    The header is written by a serializer of its fixed shape: the nine members in JCS
    order, each string through :func:`~ledger.canonical.canonical_string`, each integer in
    plain digits, which is the RFC 8785 text of the header object byte for byte
    (``tests/ledger/test_canonical_fixed.py`` checks it against the ``rfc8785`` package)
    without sorting keys or walking values on every append and every replayed event.
    Anything else (an integer outside the I-JSON range, a value of another type) goes
    through :func:`~ledger.canonical.canonical_json`, which refuses it."""
    return header_hash(
        seq, event_id, stream, stream_seq, type, type_version, recorded_at, payload_hash,
        prev_hash,
    )  # fmt: skip


def header_hash(
    seq: int, event_id: str, stream: str, stream_seq: int, type: str, type_version: int,
    recorded_at: str, payload_hash: str, prev_hash: str,
) -> str:  # fmt: skip
    """:func:`event_hash` with positional arguments (the call every replayed event makes;
    the types are tested inline rather than by generators, the same tests)."""
    if (
        event_id.__class__ is str and payload_hash.__class__ is str
        and prev_hash.__class__ is str and recorded_at.__class__ is str
        and stream.__class__ is str and type.__class__ is str
        and seq.__class__ is int and -_MAX_SAFE_INT <= seq <= _MAX_SAFE_INT
        and stream_seq.__class__ is int and -_MAX_SAFE_INT <= stream_seq <= _MAX_SAFE_INT
        and type_version.__class__ is int and -_MAX_SAFE_INT <= type_version <= _MAX_SAFE_INT
    ):  # fmt: skip
        q = canonical_string
        text = _HEADER % (
            q(event_id), q(payload_hash), q(prev_hash), q(recorded_at), seq,
            q(stream), stream_seq, q(type), type_version,
        )  # fmt: skip
        return sha256(EVENT_HASH_DOMAIN + text.encode("utf-8")).hexdigest()
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
        """The payload parsed back into Python objects, by the ledger's one bounded parse
        (:func:`ledger.jsonsafe.parse_canonical`; :class:`~ledger.jsonsafe.JSONRefusedError`
        for a payload that is not its own RFC 8785 form, too large or too deep)."""
        parsed: dict[str, Any] = parse_canonical(self.payload)
        return parsed

    def expected_hash(self) -> str:
        return header_hash(
            self.seq, self.event_id, self.stream, self.stream_seq, self.type,
            self.type_version, self.recorded_at, self.payload_hash, self.prev_hash,
        )  # fmt: skip

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
