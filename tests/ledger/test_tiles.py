"""Stored tiles (ledger/tlog/tiles.py): every root and proof read from tiles equals the one
ledger/tlog/merkle.py builds from all the hashes; integration is incremental and catches an
old ledger up; a forged tile is a verify finding."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from cli.audit.ledger_cli import cli
from ledger.envelope import NewEvent
from ledger.errors import ProofError
from ledger.store import Ledger
from ledger.tlog import merkle
from ledger.tlog.proofs import (
    checkpoint,
    consistency_path,
    inclusion_path,
    prove_inclusion,
    root_at,
)
from ledger.tlog.tiles import TILE_WIDTH, Tree, derive_tiles, tile_path
from ledger.verify import verify_ledger

ENTRIES = [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(70_000)]


class MemoryTables:
    """The two statements a :class:`Tree` runs, answered from derived tiles in memory."""

    def __init__(self, entries: list[bytes]) -> None:
        self.entries = entries
        self.tiles = {(lv, n): b"".join(h) for lv, n, h in derive_tiles(entries) if lv > 0}
        self.reads = 0

    def fetch(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        self.reads += 1
        if "FROM events" in sql:
            return [(e.hex(),) for e in self.entries[params["a"] : params["b"]]]
        blob = self.tiles.get((params["l"], params["n"]))
        return [] if blob is None else [(blob,)]


TABLES = MemoryTables(ENTRIES)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_tree_matches_merkle(data: st.DataObject) -> None:
    size = data.draw(st.one_of(st.integers(1, 600), st.integers(1, len(ENTRIES))))
    index = data.draw(st.integers(0, size - 1))
    size1 = data.draw(st.integers(1, size))
    tree = Tree(TABLES.fetch, size)
    prefix = ENTRIES[:size]
    assert tree.root() == merkle.merkle_root(prefix)
    assert tree.inclusion(index) == merkle.inclusion_proof(prefix, index)
    assert tree.consistency(size1) == merkle.consistency_proof(prefix, size1)
    assert tree.root(size1) == merkle.merkle_root(ENTRIES[:size1])


def test_reads_are_logarithmic() -> None:
    tables = MemoryTables(ENTRIES)
    tree = Tree(tables.fetch, 69_999)
    tree.inclusion(12_345)
    tree.consistency(40_000)
    # Leaf tiles of the two leaves and the two right edges, and a tile per level each.
    assert tables.reads <= 16


def test_tile_paths() -> None:
    assert tile_path(0, 1234067) == "tile/0/x001/x234/067"
    assert tile_path(1, 5, 17) == "tile/1/005.p/17"
    assert tile_path(2, 1000) == "tile/2/x001/000"


def test_tree_size_70000_has_the_spec_tiles() -> None:
    """c2sp.org/tlog-tiles: 273 full level-0 tiles, one partial of 112, one full level-1
    tile, a partial level-1 tile of 17, and a partial level-2 tile of 1."""
    tiles = [(lv, n, len(h)) for lv, n, h in derive_tiles(ENTRIES)]
    level0 = [t for t in tiles if t[0] == 0]
    assert len(level0) == 274 and level0[-1] == (0, 273, 112)
    assert [t for t in tiles if t[0] > 0] == [(1, 0, 256), (1, 1, 17), (2, 0, 1)]


def append(lg: Ledger, n: int) -> None:
    done = 0
    while done < n:
        k = min(100, n - done)
        lg.append(f"s:{done}", [NewEvent("test.happened", {"i": done + i}) for i in range(k)])
        done += k


def test_checkpoints_and_proofs_from_stored_tiles(ledger: Ledger) -> None:
    append(ledger, 600)
    cp = checkpoint(ledger)
    hashes = ledger.event_hashes()
    assert (cp.tree_size, cp.root) == (600, merkle.merkle_root(hashes).hex())
    rows = ledger.fetch("SELECT level, idx, hashes FROM merkle_tiles ORDER BY level, idx", {})
    assert [(r[0], r[1], len(bytes(r[2])) // 32) for r in rows] == [(1, 0, 2)]
    append(ledger, 300)  # integrated incrementally by the next checkpoint
    cp = checkpoint(ledger)
    hashes = ledger.event_hashes()
    assert cp.root == merkle.merkle_root(hashes).hex()
    for index, size in [(0, 900), (255, 900), (256, 513), (899, 900), (16, 17)]:
        assert inclusion_path(ledger, index, size) == merkle.inclusion_proof(hashes, index, size)
    for size1, size2 in [(1, 900), (256, 512), (300, 768), (899, 900)]:
        assert consistency_path(ledger, size1, size2) == merkle.consistency_proof(
            hashes[:size2], size1
        )
    p = prove_inclusion(ledger, 300)
    assert p.verify() and p.tree_size == 900 and p.event_hash == hashes[299].hex()
    assert root_at(ledger, 0) == merkle.EMPTY_ROOT
    with pytest.raises(ProofError):
        root_at(ledger, 901)
    assert verify_ledger(ledger).ok and verify_ledger(ledger).tiles_checked == 1


def test_an_old_ledger_is_caught_up(ledger: Ledger) -> None:
    append(ledger, 700)
    assert ledger.fetch("SELECT COUNT(*) FROM merkle_tiles", {})[0][0] == 0
    # A proof of a size past the stored tiles integrates first.
    hashes = ledger.event_hashes()
    assert inclusion_path(ledger, 5, 700) == merkle.inclusion_proof(hashes, 5, 700)
    assert ledger.fetch("SELECT COUNT(*) FROM merkle_tiles", {})[0][0] == 1


def _forge(ledger: Ledger, sql: str) -> None:
    with ledger.engine.begin() as conn:
        conn.execute(text(sql))


@pytest.mark.parametrize("how", ["flip", "extra", "short"])
def test_a_forged_tile_is_a_finding(ledger: Ledger, how: str) -> None:
    append(ledger, 600)
    checkpoint(ledger)
    forged = {
        "flip": "UPDATE merkle_tiles SET hashes = :b WHERE level = 1",
        "extra": "INSERT INTO merkle_tiles (level, idx, hashes) VALUES (1, 1, :b)",
        "short": "UPDATE merkle_tiles SET hashes = :b WHERE level = 1",
    }[how]
    blob = b"\x00" * 64 if how != "short" else b"\x00" * 7
    with ledger.engine.begin() as conn:
        conn.execute(text(forged), {"b": blob})
    report = verify_ledger(ledger)
    assert not report.ok and report.tile_failure is not None
    assert report.tile_failure["tile"].startswith("tile/1/")
    result = CliRunner().invoke(cli, ["verify", "--db", ledger.engine.url.render_as_string(
        hide_password=False)])  # fmt: skip
    assert result.exit_code == 1 and "FAIL tile tile/1/" in result.stdout


def test_tile_size_is_256() -> None:
    assert TILE_WIDTH == 256


@pytest.mark.parametrize("size", [255, 256, 257, 65_535, 65_536, 65_537, 70_000])
def test_tree_matches_merkle_at_tile_boundaries(size: int) -> None:
    tree = Tree(TABLES.fetch, size)
    prefix = ENTRIES[:size]
    assert tree.root() == merkle.merkle_root(prefix)
    for index in (0, size // 2, size - 1):
        assert tree.inclusion(index) == merkle.inclusion_proof(prefix, index)
    for size1 in (1, min(256, size), size // 3 or 1, size - 1 or 1):
        assert tree.consistency(size1) == merkle.consistency_proof(prefix, size1)
