"""Chain verification, pure: recompute every payload hash and event hash, check every
``prev_hash`` link, that ``seq`` is gapless from 1, and that each stream's ``stream_seq``
is gapless from 1. The first failure is reported with what was expected and found.

This module never touches a database, so the same code checks rows read from SQLite,
PostgreSQL, or an exported bundle.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ledger.canonical import sha256_hex
from ledger.envelope import GENESIS_HASH, RecordedEvent

__all__ = ["ChainFailure", "ChainReport", "verify_chain"]


@dataclass(frozen=True, slots=True)
class ChainFailure:
    """The first place the chain does not hold."""

    seq: int
    check: str  # seq | payload_hash | prev_hash | hash | stream_seq
    expected: str
    found: str

    def message(self) -> str:
        return (
            f"seq {self.seq}: {self.check} mismatch: expected {self.expected}, found {self.found}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "check": self.check,
            "expected": self.expected,
            "found": self.found,
        }


@dataclass(slots=True)
class ChainReport:
    events_checked: int = 0
    head_seq: int = 0
    head_hash: str = GENESIS_HASH
    failure: ChainFailure | None = None
    streams: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.failure is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "events_checked": self.events_checked,
            "head_seq": self.head_seq,
            "head_hash": self.head_hash,
            "streams": len(self.streams),
            "failure": self.failure.to_dict() if self.failure else None,
        }


def verify_chain(
    events: Iterable[RecordedEvent],
    *,
    start_seq: int = 1,
    start_prev_hash: str = GENESIS_HASH,
    check_streams: bool = True,
) -> ChainReport:
    """Check ``events`` (in the order given) as a contiguous piece of the chain.

    ``start_seq`` / ``start_prev_hash`` let a caller check a suffix (``replay --since``);
    stream positions are then only checked for being strictly consecutive.
    """
    report = ChainReport(head_seq=start_seq - 1, head_hash=start_prev_hash)
    expected_seq = start_seq
    prev = start_prev_hash
    streams = report.streams
    for ev in events:
        failure = _check_one(ev, expected_seq, prev, streams, check_streams, start_seq == 1)
        if failure is not None:
            report.failure = failure
            return report
        report.events_checked += 1
        report.head_seq = ev.seq
        report.head_hash = ev.hash
        streams[ev.stream] = ev.stream_seq
        prev = ev.hash
        expected_seq += 1
    return report


def _check_one(
    ev: RecordedEvent,
    expected_seq: int,
    prev: str,
    streams: dict[str, int],
    check_streams: bool,
    from_genesis: bool,
) -> ChainFailure | None:
    if ev.seq != expected_seq:
        kind = "gap or deletion" if ev.seq > expected_seq else "duplicate or out of order"
        return ChainFailure(expected_seq, f"seq ({kind})", str(expected_seq), str(ev.seq))
    payload_hash = sha256_hex(ev.payload.encode("utf-8"))
    if payload_hash != ev.payload_hash:
        return ChainFailure(ev.seq, "payload_hash", payload_hash, ev.payload_hash)
    if ev.prev_hash != prev:
        return ChainFailure(ev.seq, "prev_hash", prev, ev.prev_hash)
    recomputed = ev.expected_hash()
    if recomputed != ev.hash:
        return ChainFailure(ev.seq, "hash", recomputed, ev.hash)
    if check_streams:
        last = streams.get(ev.stream)
        if last is not None or from_genesis:
            want = (last or 0) + 1
            if ev.stream_seq != want:
                return ChainFailure(
                    ev.seq, f"stream_seq of {ev.stream!r}", str(want), str(ev.stream_seq)
                )
    return None
