"""`aborist-ledger verify`: the whole ledger, checked from its own bytes.

Five checks: the chain (:class:`ledger.chain.ChainVerifier`), every event's envelope
fields (:class:`ledger.envelope_check.EnvelopeCheck`: all findings counted, not only the
first), every blob's bytes against its content address (a blob row whose value is not
bytes at all, e.g. TEXT written by an UPDATE once the triggers were dropped, is a blob
failure too), every recorded
checkpoint's root against the tree of the events it covers, and every stored Merkle tile
(ledger/tlog/tiles.py) against the tiles re-derived from the events: tiles are derived data,
and a forged one would make later checkpoints and proofs wrong. The tiles are checked
before the checkpoints, so that a checkpoint within their reach takes its root from tiles
just shown to be the events' own (O(log n) reads) rather than from every event hash.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from ledger.canonical import sha256_hex
from ledger.chain import ChainReport, ChainVerifier
from ledger.envelope_check import EnvelopeCheck, check_recorded_at
from ledger.errors import ProofError
from ledger.store import Ledger, stored_type
from ledger.tlog import merkle
from ledger.tlog.tiles import TILE_WIDTH, Tree
from ledger.tlog.tiles_verify import TileCheck, verify_tiles

__all__ = ["LedgerReport", "verify_ledger"]


@dataclass(slots=True)
class LedgerReport:
    chain: ChainReport
    envelope: EnvelopeCheck = field(default_factory=EnvelopeCheck)
    blobs_checked: int = 0
    blob_failure: dict[str, str] | None = None
    checkpoints_checked: int = 0
    checkpoint_failure: dict[str, Any] | None = None
    tiles_checked: int = 0
    tile_failure: dict[str, Any] | None = None
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            self.chain.ok
            and self.envelope.ok
            and self.blob_failure is None
            and self.checkpoint_failure is None
            and self.tile_failure is None
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
            "tiles_checked": self.tiles_checked,
            "tile_failure": self.tile_failure,
        }


def verify_ledger(ledger: Ledger, *, blobs: bool = True) -> LedgerReport:
    """Check the whole ledger; ``blobs=False`` leaves the blob table out (for a caller
    that depends only on the events, like ``aborist-ledger rebuild``)."""
    verifier = ChainVerifier()
    envelope = EnvelopeCheck()
    for ev in ledger.iter_events():
        verifier.check(ev)  # a no-op past the first failure
        envelope.check(ev)
    chain = verifier.report
    report = LedgerReport(chain=chain, envelope=envelope)

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
        tiles = check_tiles(ledger, report)
        check_checkpoints(ledger, report, tiles)
    return report


def check_tiles(ledger: Ledger, report: LedgerReport) -> TileCheck:
    """Every stored tile against the tiles re-derived from the events
    (:func:`ledger.tlog.tiles_verify.verify_tiles`, which replay runs too); returns the check."""
    check = verify_tiles(ledger.fetch)
    report.tiles_checked = check.checked
    if check.failure is not None:
        f = check.failure
        report.tile_failure = {"tile": f.tile, "expected": f.expected, "found": f.found}
    return check


def check_checkpoints(ledger: Ledger, report: LedgerReport, tiles: TileCheck) -> None:
    """Every recorded checkpoint's root against the Merkle tree of the events it covers
    (run after the chain held, so the events are the chain's).

    When ``tiles`` (this verify's tile check) found no tile differing from the events, a
    checkpoint whose whole 256-leaf blocks lie within the events the tiles cover takes
    its root from those tiles and the event hashes of its last, partial block: O(log n)
    reads of a tree just shown to be the events' own. Any other checkpoint (no tiles,
    a tile finding, a checkpoint past the tiles or past the head) is checked against
    the tree of every event hash, read once for all of them."""
    cps = ledger.checkpoints()
    if not cps:
        return
    head = report.chain.head_seq
    tree = Tree(ledger.fetch, head) if tiles.ok and tiles.covered else None
    hashes: list[bytes] | None = None
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
        root = None
        blocks = cp.tree_size - cp.tree_size % TILE_WIDTH
        if tree is not None and cp.tree_size <= head and blocks <= tiles.covered:
            with suppress(ProofError):  # a tile row changed since it was checked
                root = tree.root(cp.tree_size).hex()
        if root is None:
            if hashes is None:
                hashes = ledger.event_hashes(max(c.tree_size for c in cps))
            if cp.tree_size > len(hashes):
                report.checkpoint_failure = {
                    "tree_size": cp.tree_size,
                    "expected": f"at least {cp.tree_size} events",
                    "found": f"{len(hashes)} events",
                }
                return
            root = merkle.merkle_root(hashes[: cp.tree_size]).hex()
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
