"""`aborist-ledger verify`: the whole ledger, checked from its own bytes.

Five checks: the chain (:class:`ledger.chain.ChainVerifier`), every event's envelope
fields (:class:`ledger.envelope_check.EnvelopeCheck`: all findings counted, not only the
first), every blob's bytes against its content address (a blob row whose value is not
bytes at all, e.g. TEXT written by an UPDATE once the triggers were dropped, is a blob
failure too), every recorded
checkpoint's root against the tree of the events it covers, and every stored Merkle tile
(ledger/tiles.py) against the tiles re-derived from the events: tiles are derived data,
and a forged one would make later checkpoints and proofs wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ledger import merkle
from ledger.canonical import sha256_hex
from ledger.chain import ChainReport, ChainVerifier
from ledger.envelope_check import EnvelopeCheck
from ledger.store import Ledger, stored_type
from ledger.tiles_verify import verify_tiles

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
        cps = ledger.checkpoints()
        if cps:
            hashes = ledger.event_hashes(max(cp.tree_size for cp in cps))
            for cp in cps:
                if cp.tree_size > len(hashes):
                    report.checkpoint_failure = {
                        "tree_size": cp.tree_size,
                        "expected": f"at least {cp.tree_size} events",
                        "found": f"{len(hashes)} events",
                    }
                    break
                root = merkle.merkle_root(hashes[: cp.tree_size]).hex()
                if root != cp.root:
                    report.checkpoint_failure = {
                        "tree_size": cp.tree_size,
                        "expected": cp.root,
                        "found": root,
                    }
                    break
                report.checkpoints_checked += 1
        check_tiles(ledger, report)
    return report


def check_tiles(ledger: Ledger, report: LedgerReport) -> None:
    """Every stored tile against the tiles re-derived from the events
    (:func:`ledger.tiles_verify.verify_tiles`, which replay runs too)."""
    check = verify_tiles(ledger.fetch)
    report.tiles_checked = check.checked
    if check.failure is not None:
        f = check.failure
        report.tile_failure = {"tile": f.tile, "expected": f.expected, "found": f.found}
