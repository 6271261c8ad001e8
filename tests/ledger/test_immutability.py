"""The database itself refuses to change or remove recorded rows (both backends)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from ledger.envelope import NewEvent
from ledger.errors import ImmutabilityError
from ledger.store import Ledger, translate_errors
from ledger.tlog.proofs import checkpoint


@pytest.fixture
def filled(ledger: Ledger) -> Ledger:
    ledger.append("s", [NewEvent("test.happened", {"i": i}) for i in range(3)], blobs=[b"blob"])
    checkpoint(ledger)
    return ledger


def raw(lg: Ledger, sql: str) -> None:
    with translate_errors("test"), lg.engine.begin() as conn:
        conn.execute(text(sql))


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE events SET payload = payload || ' ' WHERE seq = 2",
        "UPDATE events SET hash = 'x'",
        "DELETE FROM events WHERE seq = 3",
        "DELETE FROM events",
        "UPDATE blobs SET bytes = bytes",
        "DELETE FROM blobs",
        "UPDATE checkpoints SET root = 'x'",
        "DELETE FROM checkpoints",
    ],
)
def test_raw_update_and_delete_are_refused(filled: Ledger, sql: str) -> None:
    before = filled.read()
    with pytest.raises(ImmutabilityError, match="append-only"):
        raw(filled, sql)
    assert filled.read() == before
    assert len(list(filled.iter_blobs())) == 1
    assert len(filled.checkpoints()) == 1


@pytest.mark.parametrize("table", ["events", "blobs", "checkpoints"])
def test_truncate_is_refused_on_postgresql(filled: Ledger, table: str) -> None:
    if filled.engine.dialect.name != "postgresql":
        pytest.skip("TRUNCATE exists only on PostgreSQL")
    with pytest.raises(ImmutabilityError, match="TRUNCATE"):
        raw(filled, f"TRUNCATE {table}")
    assert len(filled.read()) == 3
