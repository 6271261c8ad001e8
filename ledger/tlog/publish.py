"""The ledger as a static tlog-tiles log (c2sp.org/tlog-tiles), for any C2SP client:

* ``checkpoint``: the signed checkpoint note;
* ``tile/<L>/<N>[.p/<W>]``: every Merkle tile of that tree, level 0 (leaf hashes) up;
* ``tile/entries/<N>[.p/<W>]``: entry bundles, each entry a big-endian uint16 length and
  the 32-byte event hash (the leaf is ``HASH(0x00 ‖ event hash)``).

Full tiles are immutable: one already in the directory is left as it is. Partial tiles of
this size are written, and the checkpoint last, so a client that reads the new checkpoint
finds every tile it names. Each file is written to a temporary name and renamed.
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ledger.errors import LedgerError
from ledger.store import Ledger
from ledger.tlog.tiles import TILE_WIDTH, derive_tiles, tile_path

__all__ = ["PublishError", "publish"]


class PublishError(LedgerError):
    """The directory cannot be written."""


def _write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as e:
        raise PublishError(f"cannot write {path}: {e.strerror}") from e


def _event_hashes(ledger: Ledger, size: int, page: int = 20_000) -> Iterator[bytes]:
    after = 0
    while after < size:
        rows = ledger.fetch(
            "SELECT hash FROM events WHERE seq > :a AND seq <= :b ORDER BY seq",
            {"a": after, "b": min(after + page, size)},
        )
        if not rows:
            return
        for r in rows:
            yield bytes.fromhex(str(r[0]))
        after += len(rows)


def publish(ledger: Ledger, size: int, note: str, directory: Path) -> dict[str, int]:
    """Write the tiles and entry bundles of the tree of ``size`` events and ``note`` (the
    signed checkpoint of that size) under ``directory``; returns counts of what was written
    and what was already there."""
    counts = {"tiles_written": 0, "tiles_kept": 0, "bundles_written": 0}
    hashes: list[bytes] = []
    bundle_index = 0
    for event_hash in _event_hashes(ledger, size):
        hashes.append(event_hash)
        if len(hashes) == TILE_WIDTH:
            _bundle(directory, bundle_index, hashes, counts)
            bundle_index += 1
            hashes = []
    if hashes:
        _bundle(directory, bundle_index, hashes, counts)
    for level, n, tile in derive_tiles(_event_hashes(ledger, size)):
        path = directory / tile_path(level, n, len(tile))
        if len(tile) == TILE_WIDTH and path.exists():
            counts["tiles_kept"] += 1
            continue
        _write(path, b"".join(tile))
        counts["tiles_written"] += 1
    _write(directory / "checkpoint", note.encode("utf-8"))
    return counts


def _bundle(directory: Path, n: int, hashes: list[bytes], counts: dict[str, int]) -> None:
    path = directory / tile_path(0, n, len(hashes)).replace("tile/0/", "tile/entries/", 1)
    if len(hashes) == TILE_WIDTH and path.exists():
        return
    _write(path, b"".join(struct.pack(">H", len(h)) + h for h in hashes))
    counts["bundles_written"] += 1
