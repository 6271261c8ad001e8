"""The stored tiles checked against the events (ledger/tlog/tiles_verify.py), the check that
``aborist-ledger verify`` and ``replay`` share: every honest state the integrator leaves
(the tiles of the tree of the first k*256 events, for any k) holds, and every forged row
(a hash changed, a tile deleted below a stored one, shortened inside the tree, lengthened,
added outside the tree, stored as text, covering events the ledger lacks) is a finding
naming that tile's level and index.

The tables are a bare ``sqlite3`` database holding the two tables the check reads, so a
tree of two tile levels (70,000 events) is cheap to build and forge many times.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.tlog.tiles import TILE_WIDTH, derive_tiles, tile_path
from ledger.tlog.tiles_verify import verify_tiles

ENTRIES = [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(70_000)]
LEAF_TILES = len(ENTRIES) // TILE_WIDTH  # 273: level 1 holds tiles 1/0 (256) and 1/1 (17)


@contextmanager
def tables(integrated_leaf_tiles: int, events: int = len(ENTRIES)) -> Iterator[sqlite3.Connection]:
    """``events`` events and the tiles the integrator stores once it has integrated the
    first ``integrated_leaf_tiles`` full leaf tiles."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, hash TEXT NOT NULL)")
    conn.execute(
        "CREATE TABLE merkle_tiles (level INTEGER, idx INTEGER, hashes BLOB NOT NULL, "
        "PRIMARY KEY (level, idx))"
    )
    conn.executemany(
        "INSERT INTO events VALUES (?, ?)",
        [(i + 1, h.hex()) for i, h in enumerate(ENTRIES[:events])],
    )
    stored = derive_tiles(ENTRIES[: integrated_leaf_tiles * TILE_WIDTH])
    conn.executemany(
        "INSERT INTO merkle_tiles VALUES (?, ?, ?)",
        [(lv, n, b"".join(h)) for lv, n, h in stored if lv > 0],
    )
    try:
        yield conn
    finally:
        conn.close()


def fetch_of(conn: sqlite3.Connection) -> Any:
    return lambda sql, params: conn.execute(sql, params).fetchall()


def stored(conn: sqlite3.Connection) -> list[tuple[int, int, bytes]]:
    return conn.execute(
        "SELECT level, idx, hashes FROM merkle_tiles ORDER BY level, idx"
    ).fetchall()


@settings(max_examples=25, deadline=None)
@given(k=st.integers(0, LEAF_TILES))
def test_every_state_the_integrator_leaves_holds(k: int) -> None:
    with tables(k) as conn:
        check = verify_tiles(fetch_of(conn))
        assert check.ok, check.failure
        assert check.checked == len(stored(conn))
        assert check.covered == k * TILE_WIDTH


def test_no_tiles_is_nothing_checked() -> None:
    with tables(0) as conn:
        check = verify_tiles(fetch_of(conn))
        assert check.ok and check.checked == 0 and check.covered == 0


FORGERIES = ["flip", "delete", "shorten", "lengthen", "extra", "text", "past_head", "level0"]


def forge(conn: sqlite3.Connection, how: str, pick: int) -> tuple[int, int]:
    """Forge one row; returns the (level, index) the finding must name."""
    rows = stored(conn)
    level, idx, blob = rows[pick % len(rows)]
    if how == "flip":
        i = pick % (len(blob) // 32)
        blob = blob[: i * 32] + bytes([blob[i * 32] ^ 1]) + blob[i * 32 + 1 :]
    elif how == "delete":  # a tile below a stored one: tile 1/0 while 1/1 is stored
        level, idx = 1, 0
        conn.execute("DELETE FROM merkle_tiles WHERE level = 1 AND idx = 0")
        return level, idx
    elif how == "shorten":  # a full tile inside the tree loses its last hash
        level, idx, blob = 1, 0, rows[0][2][:-32]
    elif how == "lengthen":
        blob = blob + b"\x07" * 32
    elif how == "extra":
        level, idx, blob = 2, 1, b"\x01" * 32
        conn.execute("INSERT INTO merkle_tiles VALUES (?, ?, ?)", (level, idx, blob))
        return level, idx
    elif how == "level0":
        level, idx, blob = 0, 0, b"".join(ENTRIES[:3])
        conn.execute("INSERT INTO merkle_tiles VALUES (?, ?, ?)", (level, idx, blob))
        return level, idx
    elif how == "text":
        conn.execute(
            "UPDATE merkle_tiles SET hashes = ? WHERE level = ? AND idx = ?",
            (blob.hex(), level, idx),
        )
        return level, idx
    elif how == "past_head":  # the events end before the tiles do
        conn.execute("DELETE FROM events WHERE seq > ?", (TILE_WIDTH * TILE_WIDTH,))
        return 1, 1
    conn.execute(
        "UPDATE merkle_tiles SET hashes = ? WHERE level = ? AND idx = ?", (blob, level, idx)
    )
    return level, idx


@pytest.mark.parametrize("how", FORGERIES)
@settings(max_examples=8, deadline=None)
@given(pick=st.integers(0, 10_000))
def test_every_forged_row_is_a_finding_naming_its_tile(how: str, pick: int) -> None:
    with tables(LEAF_TILES) as conn:  # tiles 1/0 (full), 1/1 (17 hashes), 2/0 (1 hash)
        level, idx = forge(conn, how, pick)
        check = verify_tiles(fetch_of(conn))
        assert check.failure is not None, how
        assert (check.failure.level, check.failure.index) == (level, idx)
        assert check.failure.tile == tile_path(level, idx)
        assert check.failure.first_seq >= 1


def test_a_changed_hash_names_the_first_event_it_covers() -> None:
    with tables(LEAF_TILES) as conn:
        blob = stored(conn)[0][2]
        forged = blob[: 5 * 32] + b"\x00" * 32 + blob[6 * 32 :]
        conn.execute("UPDATE merkle_tiles SET hashes = ? WHERE level = 1 AND idx = 0", (forged,))
        f = verify_tiles(fetch_of(conn)).failure
        assert f is not None and f.first_seq == 5 * TILE_WIDTH + 1  # hash 5 covers 1281..1536
        assert f.found.startswith("hash 5 is 0000")


def test_a_hash_that_is_not_hex_is_a_finding() -> None:
    with tables(2) as conn:
        conn.execute("UPDATE events SET hash = 'zz' WHERE seq = 300")
        f = verify_tiles(fetch_of(conn)).failure
        assert f is not None and f.first_seq == 300 and (f.level, f.index) == (1, 0)


def test_the_right_edge_of_level_1_shortened_is_only_lag() -> None:
    """The one change that is no finding: the partial level-1 tile at the right edge
    losing hashes from its end is exactly the state of a tree integrated less far (no
    higher tile holds its hashes), and the next checkpoint rewrites it."""
    with tables(LEAF_TILES) as conn:
        conn.execute(
            "UPDATE merkle_tiles SET hashes = substr(hashes, 1, 32 * 10) "
            "WHERE level = 1 AND idx = 1"
        )
        check = verify_tiles(fetch_of(conn))
        assert check.ok and check.covered == (256 + 10) * TILE_WIDTH
