"""No insert replaces a recorded row, whatever its conflict clause (both backends).

SQLite's ``INSERT OR REPLACE`` / ``REPLACE INTO`` delete the conflicting row without firing
a ``DELETE`` trigger; migration 0004's ``BEFORE INSERT`` guards refuse them. PostgreSQL's
``ON CONFLICT DO UPDATE`` meets the ``BEFORE UPDATE`` trigger."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from ledger.envelope import NewEvent
from ledger.errors import ConcurrencyError, LedgerError
from ledger.store import Ledger, translate_errors
from ledger.tlog.proofs import checkpoint
from ledger.verify import verify_ledger

_COLS = "seq, event_id, stream, stream_seq, type, type_version, recorded_at, payload, " \
    "payload_hash, prev_hash, hash"  # fmt: skip

# Each forged row collides with event 2 on one unique key and differs everywhere else.
_KEYS = {
    "seq": "seq, 'a0a0a0a0-0000-4000-8000-000000000000', 'forged', 1",
    "event_id": "99, event_id, 'forged', 1",
    "stream_position": "99, 'b0b0b0b0-0000-4000-8000-000000000000', stream, stream_seq",
}
_SQLITE_CLAUSES = {
    "plain": ("INSERT INTO", ""),
    "or_replace": ("INSERT OR REPLACE INTO", ""),
    "replace_into": ("REPLACE INTO", ""),
    "or_ignore": ("INSERT OR IGNORE INTO", ""),
    "or_fail": ("INSERT OR FAIL INTO", ""),
    "or_abort": ("INSERT OR ABORT INTO", ""),
    "or_rollback": ("INSERT OR ROLLBACK INTO", ""),
    "do_nothing": ("INSERT INTO", " ON CONFLICT DO NOTHING"),
    "do_update": ("INSERT INTO", " ON CONFLICT DO UPDATE SET payload = excluded.payload"),
}
_PG_CLAUSES = {
    "plain": ("INSERT INTO", ""),
    "do_nothing": ("INSERT INTO", " ON CONFLICT DO NOTHING"),
    "do_update": ("INSERT INTO", " ON CONFLICT (seq) DO UPDATE SET payload = excluded.payload"),
}


@pytest.fixture
def filled(ledger: Ledger) -> Ledger:
    ledger.append("s", [NewEvent("test.happened", {"i": i}) for i in range(3)], blobs=[b"blob"])
    checkpoint(ledger)
    return ledger


def _clauses(lg: Ledger) -> dict[str, tuple[str, str]]:
    return _PG_CLAUSES if lg.engine.dialect.name == "postgresql" else _SQLITE_CLAUSES


def _try(lg: Ledger, sql: str) -> None:
    """Run ``sql``; a refusal is fine — what matters is what is stored afterwards."""
    try:
        with translate_errors("test"), lg.engine.begin() as conn:
            conn.execute(text(sql))
    except LedgerError:
        pass


def _state(lg: Ledger) -> tuple[object, ...]:
    return (lg.read(), list(lg.iter_blobs()), lg.checkpoints())


@pytest.mark.parametrize("key", sorted(_KEYS))
def test_no_conflict_clause_replaces_an_event(filled: Ledger, key: str) -> None:
    before = _state(filled)
    for clause, (verb, tail) in _clauses(filled).items():
        if filled.engine.dialect.name == "postgresql" and clause == "do_update":
            target = {"seq": "(seq)", "event_id": "(event_id)"}.get(key, "(stream, stream_seq)")
            tail = tail.replace("(seq)", target)
        _try(
            filled,
            f"{verb} events ({_COLS}) SELECT {_KEYS[key]}, type, type_version, recorded_at, "
            f"'forged', payload_hash, prev_hash, hash FROM events WHERE seq = 2{tail}",
        )
        assert _state(filled) == before, clause
    assert verify_ledger(filled).ok


def test_no_conflict_clause_replaces_a_checkpoint(filled: Ledger) -> None:
    before = _state(filled)
    for clause, (verb, tail) in _clauses(filled).items():
        tail = tail.replace("(seq)", "(tree_size)").replace("payload", "root")
        _try(
            filled,
            f"{verb} checkpoints (tree_size, root, created_at) VALUES (3, 'forged', 'x'){tail}",
        )
        assert _state(filled) == before, clause


def test_no_conflict_clause_changes_a_blob(filled: Ledger) -> None:
    before = _state(filled)
    for clause, (verb, tail) in _clauses(filled).items():
        tail = tail.replace("(seq)", "(hash)").replace("payload", "bytes")
        _try(
            filled,
            f"{verb} blobs (hash, size, bytes) SELECT hash, 8, bytes || bytes FROM blobs{tail}",
        )
        assert _state(filled) == before, clause
    assert verify_ledger(filled).ok


def test_a_raw_insert_at_a_taken_stream_position_reads_as_a_concurrency_conflict(
    filled: Ledger,
) -> None:
    """The stream-position guard keeps the unique constraint's meaning on both backends."""
    with pytest.raises(ConcurrencyError), translate_errors("test"), filled.engine.begin() as c:
        c.execute(
            text(
                f"INSERT INTO events ({_COLS}) SELECT 99, 'c0c0c0c0-0000-4000-8000-000000000000',"
                " stream, stream_seq, type, type_version, recorded_at, payload, payload_hash,"
                " prev_hash, hash FROM events WHERE seq = 2"
            )
        )
    assert verify_ledger(filled).ok
