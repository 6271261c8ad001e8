"""Checkpoints in a replay (docs/replay.md, "Checkpoints"): the checkpoints the ledger
recorded, and one the auditor kept outside the database, each shown to be a prefix of
the current tree by an RFC 9162 consistency proof from its size to the head.

A checkpoint the auditor gives is read by :func:`parse_checkpoint` (the form
``aborist-ledger checkpoint --json`` prints); :func:`check_checkpoints` reports a
checkpoint larger than the ledger (history truncated) or without a consistency proof
(the first events rewritten) as a ``checkpoint`` divergence at its size.
"""

from __future__ import annotations

from collections.abc import Mapping

from aborist.audit.findings import Divergence, ReplayReport
from aborist.errors import InputError
from ledger.store import Ledger
from ledger.tlog import merkle

__all__ = ["check_checkpoints", "parse_checkpoint"]


def parse_checkpoint(data: object) -> tuple[int, str]:
    """``(tree_size, root)`` from a checkpoint as ``aborist-ledger checkpoint --json``
    prints it; :class:`InputError` for anything else."""
    if not isinstance(data, Mapping):
        raise InputError("a checkpoint must be a JSON object with tree_size and root")
    size, root = data.get("tree_size"), data.get("root")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InputError(f"checkpoint tree_size must be a positive integer, found {size!r}")
    if not isinstance(root, str) or len(root) != 64 or not _is_hex(root):
        raise InputError(f"checkpoint root must be 64 hex digits, found {root!r}")
    return size, root.lower()


def _is_hex(s: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in s)


def check_checkpoints(
    ledger: Ledger, head_seq: int, checkpoint: tuple[int, str] | None, report: ReplayReport
) -> None:
    """Each recorded checkpoint of ``ledger`` and ``checkpoint`` (``(tree_size, root)``,
    kept outside the database) against the tree of the events up to ``head_seq``."""
    recorded = [(cp.tree_size, cp.root, "recorded checkpoint") for cp in ledger.checkpoints()]
    if checkpoint is not None:
        recorded.append((*checkpoint, "checkpoint file"))
    if not recorded:
        return
    hashes = ledger.event_hashes(head_seq)
    n = len(hashes)
    root = merkle.merkle_root(hashes) if n else b""
    for size, cp_root, what in recorded:
        report.checkpoints_checked += 1
        if size < 1:
            why = f"{what} of size {size}: no tree has fewer than one leaf"
            report.diverge(Divergence("checkpoint", size, None, None, "size ≥ 1", str(size), why))
            continue
        if size > n:
            why = f"{what} of size {size}: history was truncated"
            want = f"at least {size} events"
            report.diverge(Divergence("checkpoint", size, None, None, want, f"{n} events", why))
            continue
        proof = merkle.consistency_proof(hashes, size, n)
        if not merkle.verify_consistency(size, n, proof, bytes.fromhex(cp_root), root):
            now = merkle.merkle_root(hashes[:size]).hex()
            report.diverge(Divergence(
                "checkpoint", size, None, None, cp_root, now,
                f"{what}: no consistency proof from size {size} to {n}; "
                "the first events were rewritten"))  # fmt: skip
