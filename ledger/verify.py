"""`aborist-ledger verify`: the whole ledger, checked from its own bytes.

Five checks: the chain (:class:`ledger.chain.ChainVerifier`), every event's envelope
fields (:class:`ledger.envelope_check.EnvelopeCheck`: all findings counted, not only the
first), every blob's bytes against its content address (a blob row whose value is not
bytes at all, e.g. TEXT written by an UPDATE once the triggers were dropped, is a blob
failure too), every recorded
checkpoint's root against the tree of the events it covers, and every stored Merkle tile
(ledger/tlog/tiles.py) against the tiles re-derived from the events: tiles are derived data,
and a forged one would make later checkpoints and proofs wrong.

Checkpoints are held to the roots the chain check folds as it goes
(:class:`ledger.tlog.merkle.RootFold`, as ``replay`` does) from the hashes it recomputed
and found chained: never to a second read of the stored hashes, which a database can
answer with another history's while the rows the chain read are a rewrite. The tile check
does read the hashes again (in pages), and that read is held to the same roots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ledger.canonical import sha256_hex
from ledger.chain import ChainFailure, ChainReport, ChainVerifier
from ledger.envelope_check import EnvelopeCheck, check_recorded_at
from ledger.reads import OffChainRow
from ledger.store import Checkpoint, Ledger, stored_type
from ledger.tlog.tiles import TILE_WIDTH
from ledger.tlog.tiles_verify import TileCheck, verify_tiles

__all__ = [
    "LedgerReport",
    "off_chain_failure",
    "rehashed_root",
    "repeated_event_id",
    "verify_ledger",
]


@dataclass(slots=True)
class LedgerReport:
    chain: ChainReport
    envelope: EnvelopeCheck = field(default_factory=EnvelopeCheck)
    blobs_checked: int = 0
    blob_failure: dict[str, str] | None = None
    checkpoints_checked: int = 0
    checkpoint_failure: dict[str, Any] | None = None
    #: Sizes of recorded checkpoints not checked: the chain failed before their size.
    checkpoints_unchecked: list[int] = field(default_factory=list)
    tiles_checked: int = 0
    tile_failure: dict[str, Any] | None = None
    #: Events that hold one event id (:meth:`ledger.reads.LedgerReads.repeated_event_id`):
    #: ``{"event_id", "seqs"}``; None when every id at seqs ``1..last_seq`` is held once.
    event_id_failure: dict[str, Any] | None = None
    #: Whether the tile check's read of the event hashes was held to the chain's roots
    #: (False when the tiles reach past the events the chain verified, or it did not run).
    tiles_held: bool = False
    #: The largest integer seq read (the ledger's head as the pass over the events saw it,
    #: whether or not the chain held that far).
    last_seq: int = 0
    #: The size of the largest recorded checkpoint this verify confirmed (0: none).
    anchored_size: int = 0
    failures: list[str] = field(default_factory=list)

    def anchored(self) -> dict[str, Any]:
        """What the recorded checkpoints this verify confirmed cover: events
        ``1..anchored_size``; the events after the newest of them, to the head, are covered
        by none (``unanchored``). Recorded checkpoints are the database's own record: a
        checkpoint kept elsewhere (``replay --checkpoint FILE``) is what anchors events
        outside it (docs/ledger-format.md, "Merkle tree, checkpoints, proofs")."""
        k, m = self.anchored_size, self.last_seq
        return {
            "checkpoint": k or None,
            "covered": [1, k] if k else None,
            "unanchored": [k + 1, m] if m > k else None,
            "unanchored_events": max(m - k, 0),
        }

    @property
    def ok(self) -> bool:
        return (
            self.chain.ok
            and self.envelope.ok
            and self.blob_failure is None
            and self.checkpoint_failure is None
            and self.tile_failure is None
            and self.event_id_failure is None
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "chain": self.chain.to_dict(),
            "envelope": self.envelope.to_dict(),
            "blobs_checked": self.blobs_checked,
            "blob_failure": self.blob_failure,
            "checkpoints_checked": self.checkpoints_checked,
            "checkpoint_failure": self.checkpoint_failure,
            "checkpoints_unchecked": self.checkpoints_unchecked,
            "tiles_checked": self.tiles_checked,
            "tiles_held": self.tiles_held,
            "tile_failure": self.tile_failure,
            "event_id_failure": self.event_id_failure,
            "anchored": self.anchored(),
        }


def verify_ledger(ledger: Ledger, *, blobs: bool = True) -> LedgerReport:
    """Check the whole ledger; ``blobs=False`` leaves the blob table out (for a caller
    that depends only on the events, like ``aborist-ledger rebuild``)."""
    cps = ledger.checkpoints()  # read first: the chain folds the roots of their sizes
    sizes = {cp.tree_size for cp in cps if type(cp.tree_size) is int and cp.tree_size >= 1}
    verifier = ChainVerifier(roots_at=sizes, roots_every=TILE_WIDTH)
    envelope = EnvelopeCheck()
    last = 0
    for ev in ledger.iter_events():
        verifier.check(ev)  # a no-op past the first failure
        envelope.check(ev)
        if type(ev.seq) is int and ev.seq > last:
            last = ev.seq
    chain = verifier.report
    if chain.ok:  # every row at or below the head was one the chain read, once
        stray = ledger.off_chain_row(chain.head_seq)
        if stray is not None:
            chain.failure = off_chain_failure(stray, chain.head_seq)
    report = LedgerReport(chain=chain, envelope=envelope, last_seq=last)
    report.event_id_failure = repeated_event_id(ledger, last)

    for stored, data in ledger.iter_blobs() if blobs else ():
        kind = stored_type(data)
        if kind is not None:
            report.blob_failure = {
                "blob": stored,
                "expected": "bytes",
                "found": f"stored as {kind}, not bytes",
            }
            break
        assert isinstance(data, bytes)  # iter_blobs gives bytes whenever the row holds bytes
        actual = sha256_hex(data)
        if actual != stored:
            report.blob_failure = {"blob": stored, "expected": stored, "found": actual}
            break
        report.blobs_checked += 1

    if chain.ok:
        check_tiles(ledger, report)
    check_checkpoints(cps, report)
    return report


def repeated_event_id(ledger: Ledger, head: int) -> dict[str, Any] | None:
    """``{"event_id", "seqs"}`` of an event id two or more events at seqs ``1..head``
    hold (the first such id), or None: every event is its own id's only holder."""
    seqs = ledger.repeated_event_id(head)
    if not seqs:
        return None
    at = ledger.read(gt=seqs[0] - 1, lte=seqs[0]) if type(seqs[0]) is int else []
    return {"event_id": str(at[0].event_id) if at else None, "seqs": seqs}


def rehashed_root(ledger: Ledger, size: int) -> bytes | str:
    """The root of the tree of events ``1..size``, folded from the hashes the chain check
    recomputed and found chained (never the stored hashes read a second time, which a
    database can answer with another history's); or, as text, why there is none (the
    chain's first failure, a row the pass over ``1..size`` did not read)."""
    verifier = ChainVerifier(roots_at={size})
    for ev in ledger.iter_events(lte=size):
        if not verifier.check(ev):
            break
    report = verifier.report
    if report.ok and report.head_seq == size:
        stray = ledger.off_chain_row(size)
        if stray is not None:
            report.failure = off_chain_failure(stray, size)
    if report.failure is not None:
        return report.failure.message()
    if report.head_seq != size or size not in report.roots:
        return f"only {report.head_seq} events chain"
    return bytes.fromhex(report.roots[size])


def off_chain_failure(stray: OffChainRow, head: int) -> ChainFailure:
    """The chain failure a row the chain's pass did not read makes
    (:meth:`ledger.reads.LedgerReads.off_chain_row`)."""
    seq = stray.seq if type(stray.seq) is int else None
    want = f"one row at each seq 1..{head} and none below" if head else "no row below seq 1"
    return ChainFailure(seq, "row", want, stray.describe())


def check_tiles(ledger: Ledger, report: LedgerReport) -> TileCheck:
    """Every stored tile against the tiles re-derived from the events
    (:func:`ledger.tlog.tiles_verify.verify_tiles`, which replay runs too), the hashes it
    reads held to the roots the chain check folded; returns the check."""
    check = verify_tiles(ledger.fetch, report.chain.roots)
    report.tiles_checked = check.checked
    report.tiles_held = check.held or not check.covered
    if check.failure is not None:
        f = check.failure
        report.tile_failure = {"tile": f.tile, "expected": f.expected, "found": f.found}
    return check


def check_checkpoints(cps: Sequence[Checkpoint], report: LedgerReport) -> None:
    """Every recorded checkpoint ``cps`` against the tree of the events this verify's
    chain check re-hashed and found chained: the root the chain folded at its size, from
    the very hashes it verified (:attr:`ledger.chain.ChainReport.roots`), never from a
    second read of the stored hashes (which a database can answer with another history's).

    A checkpoint past the head is a truncation. When the chain failed at seq ``k``, a
    checkpoint of size ``k`` or more has no verified tree: it is listed in
    ``checkpoints_unchecked``, neither held nor failed (the chain failure fails verify)."""
    chain = report.chain
    for cp in cps:
        if type(cp.tree_size) is not int:  # a raw write's value (SQLite keeps any type)
            report.checkpoint_failure = {
                "tree_size": repr(cp.tree_size),
                "expected": "an integer tree size",
                "found": f"{cp.tree_size!r} ({type(cp.tree_size).__name__})",
            }
            return
        if type(cp.root) is not str:
            report.checkpoint_failure = {
                "tree_size": cp.tree_size,
                "expected": "a root as 64 lower-case hex digits",
                "found": f"{cp.root!r} ({type(cp.root).__name__})",
            }
            return
        if cp.tree_size < 1:  # no tree has fewer than one leaf; never a slice of the events
            report.checkpoint_failure = {
                "tree_size": cp.tree_size,
                "expected": "a tree size of at least 1",
                "found": str(cp.tree_size),
            }
            return
        root = chain.roots.get(cp.tree_size)
        reached = chain.ok or (chain.failure is not None and chain.failure.check == "row")
        if root is None and reached:  # the chain held to its head, short of this size
            report.checkpoint_failure = {
                "tree_size": cp.tree_size,
                "expected": f"at least {cp.tree_size} events",
                "found": f"{chain.head_seq} events",
            }
            return
        if root is None:  # past the chain's failure: no tree of verified events that large
            report.checkpoints_unchecked.append(cp.tree_size)
            continue
        if root != cp.root:
            report.checkpoint_failure = {
                "tree_size": cp.tree_size,
                "expected": cp.root,
                "found": root,
            }
            return
        why = check_recorded_at(cp.created_at)
        if why is not None:  # when it was recorded, in the form the ledger's clock writes
            report.checkpoint_failure = {
                "tree_size": cp.tree_size,
                "expected": f"created_at {why}",
                "found": repr(cp.created_at),
            }
            return
        report.checkpoints_checked += 1
        report.anchored_size = max(report.anchored_size, cp.tree_size)
