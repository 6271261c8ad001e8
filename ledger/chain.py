"""Chain verification, pure: recompute every payload hash and event hash, check every
``prev_hash`` link, that ``seq`` is gapless from 1, and that each stream's ``stream_seq``
is gapless from 1. The first failure is reported with what was expected and found.

This module never touches a database, so the same code checks rows read from SQLite,
PostgreSQL, or an exported bundle.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from hashlib import sha256
from typing import Any

from ledger.envelope import GENESIS_HASH, RecordedEvent, header_hash
from ledger.errors import PayloadError
from ledger.tlog.merkle import RootFold

__all__ = ["ChainFailure", "ChainReport", "ChainVerifier", "event_hash_of", "verify_chain"]


#: The most characters of one value a failure's text line shows.
MESSAGE_CLIP = 500


def _clip(value: object) -> str:
    text = str(value)
    return text if len(text) <= MESSAGE_CLIP else text[: MESSAGE_CLIP - 1] + "…"


@dataclass(frozen=True, slots=True)
class ChainFailure:
    """The first place the chain does not hold."""

    #: None for a row whose seq is no integer (:meth:`ledger.reads.LedgerReads.off_chain_row`).
    seq: int | None
    check: str  # seq | payload_hash | prev_hash | hash | stream_seq | row
    expected: str
    found: str

    @property
    def where(self) -> str:
        return f"seq {self.seq}" if self.seq is not None else "a row with no integer seq"

    def message(self) -> str:
        """One line: the values a hostile row supplies (SQLite keeps a hash of any
        length) clipped to :data:`MESSAGE_CLIP` characters; ``to_dict`` keeps them whole."""
        want, found = _clip(self.expected), _clip(self.found)
        return f"{self.where}: {_clip(self.check)} mismatch: expected {want}, found {found}"

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
    #: The Merkle root (hex) of the hashes of events ``1..size`` at each size asked for
    #: (:class:`ChainVerifier` ``roots_at``) that the chain reached while it held: the tree
    #: of exactly the events this check verified, never of a second read.
    roots: dict[int, str] = field(default_factory=dict)

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


def event_hash_of(ev: RecordedEvent) -> str:
    """:func:`ledger.envelope.event_hash` of ``ev``'s header (the fixed-shape serializer
    appends use too); for a header JSON cannot hold (a raw row's field of another type),
    a description that matches no stored hash."""
    try:
        return ev.expected_hash()
    except PayloadError as e:
        return f"(no hash: {e})"


class ChainVerifier:
    """The chain checked one event at a time, for a caller that reads each row once and
    feeds it to several checks (``aborist-ledger replay``). :meth:`check` takes the
    payload's sha256 when the caller has computed it already (the run DAG check needs the
    same digest), and returns False from the first failure on; :attr:`report` holds the
    result. ``start_seq`` / ``start_prev_hash`` check a suffix of the chain, as in
    :func:`verify_chain`."""

    def __init__(
        self,
        *,
        start_seq: int = 1,
        start_prev_hash: str = GENESIS_HASH,
        check_streams: bool = True,
        roots_at: Collection[int] = (),
        roots_every: int = 0,
        seed: Sequence[bytes] = (),
    ) -> None:
        self.report = ChainReport(head_seq=start_seq - 1, head_hash=start_prev_hash)
        self._expected_seq = start_seq
        self._prev = start_prev_hash
        self._check_streams = check_streams
        self._from_genesis = start_seq == 1
        #: ``roots_at``: the tree sizes whose root to record in :attr:`ChainReport.roots`,
        #: folded from the hashes of the events that pass (``seed``: the hashes of events
        #: ``1..start_seq - 1``, which a check of a suffix takes as given);
        #: ``roots_every``: also every multiple of it (the sizes the stored tiles can cover,
        #: :data:`ledger.tlog.tiles.TILE_WIDTH`, for the tile check to be held to).
        self._roots_at = frozenset(roots_at)
        self._every = roots_every
        self._fold = RootFold(seed) if self._roots_at or roots_every else None
        if self._fold is not None and self._wanted(self._fold.size):
            self.report.roots[self._fold.size] = self._fold.root().hex()

    def _wanted(self, size: int) -> bool:
        return size in self._roots_at or (self._every > 0 and size > 0 and size % self._every == 0)

    def check(self, ev: RecordedEvent, payload_hash: str | None = None) -> bool:
        if payload_hash is None:
            payload_hash = sha256(ev.payload.encode("utf-8")).hexdigest()
        return self.check_page((ev,), (payload_hash,))

    def check_page(self, events: Sequence[RecordedEvent], payload_hashes: Sequence[str]) -> bool:
        """:meth:`check` for several events in order, with their payloads' sha256s (the
        loop replay runs on every row: the common case, a link that holds, is tested
        inline, and :func:`_check_one` names what failed)."""
        report = self.report
        if report.failure is not None:
            return False
        streams = report.streams
        expected, prev = self._expected_seq, self._prev
        check_streams, from_genesis = self._check_streams, self._from_genesis
        checked = 0
        for ev, payload_hash in zip(events, payload_hashes, strict=True):
            stream, stream_seq = ev.stream, ev.stream_seq
            last = streams.get(stream) if check_streams else None
            try:  # event_hash_of(ev), inlined
                h = header_hash(
                    ev.seq, ev.event_id, stream, stream_seq, ev.type, ev.type_version,
                    ev.recorded_at, ev.payload_hash, ev.prev_hash,
                )  # fmt: skip
            except PayloadError as e:  # a header JSON cannot hold: _check_one names it
                h = f"(no hash: {e})"
            if (
                ev.seq != expected
                or payload_hash != ev.payload_hash
                or ev.prev_hash != prev
                or h != ev.hash
                or stream_seq.__class__ is not int
                or (
                    check_streams
                    and (last is not None or from_genesis)
                    and stream_seq != (last or 0) + 1
                )
            ):
                failure = _check_one(
                    ev, payload_hash, expected, prev, streams, check_streams, from_genesis
                )
                assert failure is not None  # the test above is _check_one's, inlined
                report.failure = failure
                break
            prev = ev.hash
            streams[stream] = stream_seq
            expected += 1
            checked += 1
        if checked:
            report.events_checked += checked
            report.head_seq = expected - 1
            report.head_hash = prev
            if self._fold is not None:
                self._fold_page(events[:checked])
        self._expected_seq, self._prev = expected, prev
        return report.failure is None

    def _fold_page(self, verified: Sequence[RecordedEvent]) -> None:
        """Fold the hashes of ``verified`` (events whose hashes were just recomputed and
        found chained) into the tree, recording its root at the sizes asked for."""
        fold, at, every, roots = self._fold, self._roots_at, self._every, self.report.roots
        assert fold is not None
        append, fromhex = fold.append, bytes.fromhex
        for ev in verified:
            append(fromhex(ev.hash))
            size = fold.size
            if size in at or (every and not size % every):
                roots[size] = fold.root().hex()


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
    verifier = ChainVerifier(
        start_seq=start_seq, start_prev_hash=start_prev_hash, check_streams=check_streams
    )
    for ev in events:
        if not verifier.check(ev):
            break
    return verifier.report


def _check_one(
    ev: RecordedEvent,
    payload_hash: str,
    expected_seq: int,
    prev: str,
    streams: dict[str, int],
    check_streams: bool,
    from_genesis: bool,
) -> ChainFailure | None:
    if type(ev.seq) is not int:  # a raw write's value (a table rebuilt without its key)
        return ChainFailure(expected_seq, "seq (not an integer)", str(expected_seq), repr(ev.seq))
    if ev.seq != expected_seq:
        kind = "gap or deletion" if ev.seq > expected_seq else "duplicate or out of order"
        return ChainFailure(expected_seq, f"seq ({kind})", str(expected_seq), str(ev.seq))
    if payload_hash != ev.payload_hash:
        return ChainFailure(ev.seq, "payload_hash", payload_hash, ev.payload_hash)
    if ev.prev_hash != prev:
        return ChainFailure(ev.seq, "prev_hash", prev, ev.prev_hash)
    recomputed = event_hash_of(ev)
    if recomputed != ev.hash:
        return ChainFailure(ev.seq, "hash", recomputed, ev.hash)
    if type(ev.stream_seq) is not int:
        return ChainFailure(ev.seq, "stream_seq", "an integer", repr(ev.stream_seq))
    if check_streams:
        last = streams.get(ev.stream)
        if last is not None or from_genesis:
            want = (last or 0) + 1
            if ev.stream_seq != want:
                return ChainFailure(
                    ev.seq, f"stream_seq of {ev.stream!r}", str(want), str(ev.stream_seq)
                )
    return None
