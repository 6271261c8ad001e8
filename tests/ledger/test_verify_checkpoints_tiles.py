"""`verify` checks every checkpoint against the root its chain check folded from the
hashes it re-hashed (no second read of the event hashes, from the tiles or the events): a
wrong root is caught; a forged tile never vouches for a checkpoint; a checkpoint past the
tiles' reach is checked the same way, and one past the head is a truncation. Both
backends (tests/ledger/test_verify_chain_roots.py: a second read that lies)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from ledger.envelope import NewEvent
from ledger.store import Ledger
from ledger.tlog import merkle
from ledger.tlog.proofs import checkpoint
from ledger.tlog.tiles import Tree
from ledger.verify import verify_ledger
from tests.ledger.tamper import tamper


def _append(lg: Ledger, n: int) -> None:
    start = lg.head()[0]
    for lo in range(start, start + n, 100):
        batch = [NewEvent("test.appended", {"i": i}) for i in range(lo, min(lo + 100, start + n))]
        lg.append(f"run:{lo}", batch)


@pytest.fixture
def two_checkpoints(ledger: Ledger) -> Ledger:
    """600 events with checkpoints at 300 and 600 (tiles then cover 256, then 512)."""
    _append(ledger, 300)
    checkpoint(ledger)
    _append(ledger, 300)
    checkpoint(ledger)
    return ledger


def _no_full_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Ledger, size: int | None = None) -> Any:
        raise AssertionError("every event hash was read for the checkpoints")

    monkeypatch.setattr(Ledger, "event_hashes", refuse)


def _full_reads(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The sizes :meth:`Ledger.event_hashes` is called with from now on."""
    calls: list[int | None] = []
    real = Ledger.event_hashes

    def spy(self: Ledger, size: int | None = None) -> list[bytes]:
        calls.append(size)
        return real(self, size)

    monkeypatch.setattr(Ledger, "event_hashes", spy)
    return calls


def _set_tile(lg: Ledger, blob: bytes) -> None:
    """Rewrite tile 1/0 (derived data: no trigger guards it)."""
    with lg.engine.begin() as conn:
        conn.execute(
            text("UPDATE merkle_tiles SET hashes = :h WHERE level = 1 AND idx = 0"), {"h": blob}
        )


def _true_root(lg: Ledger, size: int) -> str:
    return merkle.merkle_root(lg.event_hashes(size)).hex()


def test_checkpoints_need_no_second_read_of_the_hashes(
    two_checkpoints: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_full_read(monkeypatch)
    report = verify_ledger(two_checkpoints)
    assert report.ok, report.to_dict()
    assert report.checkpoints_checked == 2 and report.tiles_checked >= 1


def test_a_wrong_root_within_the_tiles_is_caught(
    two_checkpoints: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    lg = two_checkpoints
    true = _true_root(lg, 300)
    tamper(lg, "UPDATE checkpoints SET root = :r WHERE tree_size = 300", r="ab" * 32)
    _no_full_read(monkeypatch)
    report = verify_ledger(lg)
    assert report.chain.ok and report.tile_failure is None
    assert report.checkpoint_failure == {"tree_size": 300, "expected": "ab" * 32, "found": true}
    assert report.checkpoints_checked == 0 and not report.ok


def test_a_forged_tile_never_vouches_for_a_checkpoint(
    two_checkpoints: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An insider forges a level-1 tile, then the checkpoint root that tree gives: the tile
    check names the tile, and the checkpoints are checked against the events."""
    lg = two_checkpoints
    true = _true_root(lg, 600)
    [(blob,)] = lg.fetch("SELECT hashes FROM merkle_tiles WHERE level = 1 AND idx = 0")
    _set_tile(lg, b"\x01" * merkle.HASH_SIZE + bytes(blob)[merkle.HASH_SIZE :])
    reads = _full_reads(monkeypatch)
    report = verify_ledger(lg)
    assert report.chain.ok
    assert report.tile_failure is not None and report.tile_failure["tile"] == "tile/1/000"
    # The recorded roots are the events' own: checked against the events, they hold.
    assert report.checkpoints_checked == 2 and report.checkpoint_failure is None
    assert reads == []  # from the chain's fold, not a second read
    forged = Tree(lg.fetch, 600).root(600).hex()
    assert forged != true
    tamper(lg, "UPDATE checkpoints SET root = :r WHERE tree_size = 600", r=forged)
    report = verify_ledger(lg)
    assert report.checkpoint_failure == {"tree_size": 600, "expected": forged, "found": true}
    assert report.checkpoints_checked == 1 and not report.ok


def test_a_checkpoint_past_the_tiles_is_checked_too(
    two_checkpoints: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    lg = two_checkpoints
    # Tile 1/0 cut to its first hash: the tiles cover 256 events (lag, not a finding),
    # enough for the checkpoint at 300, short of the 512 whole leaves of the one at 600.
    [(blob,)] = lg.fetch("SELECT hashes FROM merkle_tiles WHERE level = 1 AND idx = 0")
    _set_tile(lg, bytes(blob)[: merkle.HASH_SIZE])
    reads = _full_reads(monkeypatch)
    report = verify_ledger(lg)
    assert report.ok, report.to_dict()
    assert report.checkpoints_checked == 2
    assert reads == []


def test_a_checkpoint_past_the_head_is_a_truncation(two_checkpoints: Ledger) -> None:
    lg = two_checkpoints
    tamper(lg, "DELETE FROM events WHERE seq > 550")
    report = verify_ledger(lg)
    assert report.chain.ok and report.checkpoints_checked == 1
    assert report.checkpoint_failure == {
        "tree_size": 600,
        "expected": "at least 600 events",
        "found": "550 events",
    }


@pytest.mark.parametrize("size", [0, -1, -1000000])
def test_a_checkpoint_smaller_than_one_leaf_is_a_failure(
    two_checkpoints: Ledger, size: int
) -> None:
    """A forged row of size ≤ 0 whose root is that of a slice the size would pick in
    Python (``hashes[:-1]``, ``hashes[:0]``) is refused, never matched."""
    lg = two_checkpoints
    hashes = lg.event_hashes()
    forged = merkle.merkle_root(hashes[:size]).hex() if hashes[:size] else "0" * 64
    tamper(
        lg, "INSERT INTO checkpoints (tree_size, root, created_at) VALUES (:s, :r, 'x')",
        s=size, r=forged,
    )  # fmt: skip
    report = verify_ledger(lg)
    assert not report.ok
    assert report.checkpoint_failure == {
        "tree_size": size,
        "expected": "a tree size of at least 1",
        "found": str(size),
    }
