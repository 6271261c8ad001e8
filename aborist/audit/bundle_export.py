"""Export bundles, the writing half (docs/ledger-format.md, "Export bundles"):
:func:`export_run` writes one run so that :func:`aborist.audit.bundle.verify_bundle` can
check it with no database. Kept apart from the verifying half, which a third party runs.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from aborist.audit.checks.blobs import referenced_blobs
from aborist.errors import InputError
from aborist.events import run_stream
from ledger.errors import BlobNotFoundError
from ledger.store import Checkpoint, Ledger
from ledger.tlog.proofs import checkpoint as record_checkpoint
from ledger.tlog.tiles import ledger_tree

__all__ = ["BUNDLE_FORMAT", "LEDGER_FORMAT", "export_run"]

BUNDLE_FORMAT = "aborist.bundle.v1"
LEDGER_FORMAT = 1


def _covering_checkpoint(ledger: Ledger, last_seq: int) -> Checkpoint:
    """The latest recorded checkpoint covering ``last_seq``; else a new one, recorded."""
    covering = [cp for cp in ledger.checkpoints() if cp.tree_size >= last_seq]
    return covering[-1] if covering else record_checkpoint(ledger)


def export_run(ledger: Ledger, run_id: str, *, extra_sizes: Sequence[int] = ()) -> dict[str, Any]:
    """The bundle of ``run_id`` (a JSON-ready dict; format in docs/ledger-format.md).

    ``extra_sizes`` adds consistency proofs from (or to) tree sizes that were never recorded
    as checkpoints, e.g. the size of a checkpoint an auditor kept."""
    run_id = run_id.strip()
    events = ledger.read_stream(run_stream(run_id))
    if not events:
        raise InputError(f"no run {run_id!r} in the ledger")
    bad = next((ev for ev in events if type(ev.seq) is not int or ev.seq < 1), None)
    if bad is not None:  # a row a plain INSERT put below seq 1: no tree has it
        raise InputError(
            f"run {run_id}: its event at stream position {bad.stream_seq!r} has seq "
            f"{bad.seq!r}, which is no position in the chain (seqs start at 1); run "
            "`aborist-ledger verify`"
        )
    cp = _covering_checkpoint(ledger, events[-1].seq)
    recorded = {c.tree_size for c in ledger.checkpoints()}
    sizes = sorted((recorded | set(extra_sizes)) - {cp.tree_size})
    head, _ = ledger.head()
    if head < cp.tree_size or any(s > head or s < 1 for s in sizes):
        raise InputError(f"a checkpoint size is outside the ledger's {head} events")
    # Roots and proofs from the stored tiles (ledger/tlog/tiles.py): O(log n) rows each.
    whole = ledger_tree(ledger, max([cp.tree_size, *sizes]))
    if whole.root(cp.tree_size).hex() != cp.root:
        raise InputError(
            f"the recorded checkpoint of size {cp.tree_size} does not match the events; "
            "run `aborist-ledger replay`"
        )
    blobs: dict[str, str] = {}
    for ref in referenced_blobs(run_id, events):
        if ref.blob not in blobs:
            try:
                data = ledger.get_blob(ref.blob)
            except BlobNotFoundError as e:  # a KeyError: its str() is the repr of its text
                raise InputError(f"run {run_id}: {e.args[0] if e.args else e}") from e
            blobs[ref.blob] = base64.b64encode(data).decode("ascii")
    inclusion = [
        {
            "seq": ev.seq,
            "leaf_index": ev.seq - 1,
            "tree_size": cp.tree_size,
            "proof": [p.hex() for p in whole.inclusion(ev.seq - 1, cp.tree_size)],
        }
        for ev in events
    ]
    consistency = []
    for size in sizes:
        lo, hi = sorted((size, cp.tree_size))
        proof = whole.consistency(lo, hi)
        consistency.append(
            {
                "size1": lo,
                "root1": whole.root(lo).hex(),
                "size2": hi,
                "root2": whole.root(hi).hex(),
                "proof": [p.hex() for p in proof],
            }
        )
    return {
        "format": BUNDLE_FORMAT,
        "ledger_format": LEDGER_FORMAT,
        "run_id": run_id,
        "events": [ev.to_dict() for ev in events],
        "blobs": dict(sorted(blobs.items())),
        "checkpoint": cp.to_dict(),
        "inclusion_proofs": inclusion,
        "consistency_proofs": consistency,
    }
