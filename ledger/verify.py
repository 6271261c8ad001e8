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
from ledger.tiles import derive_tiles, tile_path

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
    """Every stored tile must be a prefix of the tile re-derived at its place (equal when
    full): a stored tile may lag behind the events (not integrated yet), never differ."""
    stored = {
        (int(r[0]), int(r[1])): bytes(r[2])
        for r in ledger.fetch("SELECT level, idx, hashes FROM merkle_tiles", {})
    }
    if not stored:
        return
    derived = {
        (level, n): b"".join(hashes)
        for level, n, hashes in derive_tiles(bytes.fromhex(ev.hash) for ev in ledger.iter_events())
        if level > 0
    }
    for (level, n), blob in sorted(stored.items()):
        want = derived.get((level, n), b"")
        where = tile_path(level, n)
        if len(blob) % merkle.HASH_SIZE or not blob:
            found = f"{len(blob)} bytes, not a whole number of hashes"
        elif not want.startswith(blob):
            if len(blob) > len(want):
                found = f"{len(blob) // 32} hashes where the events give {len(want) // 32}"
            else:
                i = next(i for i in range(0, len(blob), 32) if blob[i : i + 32] != want[i : i + 32])
                found = f"hash {i // 32} is {blob[i : i + 32].hex()}, not {want[i : i + 32].hex()}"
        else:
            report.tiles_checked += 1
            continue
        report.tile_failure = {"tile": where, "expected": "the tile derived from the events",
                               "found": found}  # fmt: skip
        return
