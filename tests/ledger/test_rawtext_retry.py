"""ledger.rawtext.fetch_rows runs a read again to hand back text that is not UTF-8, and
never runs a statement that writes twice (it may have written before its row failed)."""

from __future__ import annotations

import sqlite3

import pytest

from ledger.rawtext import UndecodableText, fetch_rows


@pytest.fixture
def conn() -> sqlite3.Connection:
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE t (x TEXT)")
    c.execute("INSERT INTO t VALUES (CAST(X'61FF' AS TEXT))")
    return c


def test_a_read_comes_back_with_the_undecodable_text_kept(conn: sqlite3.Connection) -> None:
    rows = fetch_rows(conn.cursor(), "SELECT x FROM t", ())
    assert rows is not None and isinstance(rows[0][0], UndecodableText)


def test_a_write_whose_returned_row_cannot_be_decoded_is_not_run_twice(
    conn: sqlite3.Connection,
) -> None:
    sql = "INSERT INTO t SELECT x FROM t RETURNING x"
    with pytest.raises(sqlite3.OperationalError):
        fetch_rows(conn.cursor(), sql, ())
    # the row was written before its returned copy failed to decode: once, not twice
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 2
