"""The replay's ``tile`` check: the stored Merkle tiles (ledger/tlog/tiles.py) re-derived from
the events, through the same streaming fold as ``aborist-ledger verify``
(:func:`ledger.tlog.tiles_verify.verify_tiles`; docs/replay.md, "tile").

Tiles are derived data that checkpoints, proofs and ``publish`` read: a forged tile row
would make them wrong without touching an event, so a tile that is not the one the events
give at its place is a ``tile`` divergence naming the tile (level and index) and the first
event it covers. The check reads ``seq`` and ``hash`` of the events the tiles cover, once,
in pages, and that read must give the root the chain check folded at the size the tiles
cover (a database can answer it with another history's hashes); it runs when the chain is
checked from the first event (not with ``--since``).
"""

from __future__ import annotations

from collections.abc import Mapping

from aborist.audit.findings import Divergence, ReplayReport
from ledger.store import Ledger
from ledger.tlog.tiles_verify import verify_tiles

__all__ = ["check_tiles"]


def check_tiles(
    ledger: Ledger, report: ReplayReport, verified: Mapping[int, str] | None = None
) -> None:
    """Check every stored tile into ``report``: ``tiles_checked``, and a ``tile``
    divergence at the first event the first wrong tile covers. ``verified``: the roots
    the chain check folded (:attr:`ledger.chain.ChainReport.roots`), which the hashes read
    for the tiles must give (else a ``tile`` divergence naming that read)."""
    check = verify_tiles(ledger.fetch, verified)
    report.tiles_checked += check.checked
    f = check.failure
    if f is not None:
        detail = f.tile if f.reread else f"tile {f.tile} (level {f.level}, index {f.index})"
        report.diverge(Divergence("tile", f.first_seq, None, None, f.expected, f.found, detail))
