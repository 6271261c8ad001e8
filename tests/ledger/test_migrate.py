"""Opening a ledger checks its schema revision without Alembic; the constant it checks
against must be the head Alembic computes from the migration scripts."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from sqlalchemy import inspect as sa_inspect
from sqlalchemy import text

from ledger.engine import ledger_engine
from ledger.errors import NotMigratedError
from ledger.migrate import HEAD_REVISION, alembic_head, current_revision, stored_revision
from ledger.store import Ledger
from tests.conftest import migrate_url


def test_head_constant_is_alembics_head() -> None:
    assert alembic_head() == HEAD_REVISION


def test_stored_revision_agrees_with_alembic(empty_url: str) -> None:
    engine = ledger_engine(empty_url)
    try:
        with engine.connect() as conn:
            assert stored_revision(conn) is None
            assert current_revision(conn) is None
        migrate_url(empty_url)
        with engine.connect() as conn:
            assert stored_revision(conn) == current_revision(conn) == HEAD_REVISION
    finally:
        engine.dispose()


def test_an_older_revision_is_refused(ledger_url: str) -> None:
    engine = ledger_engine(ledger_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = '0001_ledger'"))
    finally:
        engine.dispose()
    with pytest.raises(NotMigratedError, match=f"0001_ledger, expected {HEAD_REVISION}"):
        Ledger.open(ledger_url)


def test_opening_a_ledger_does_not_import_alembic(ledger_url: str) -> None:
    code = (
        "import sys\n"
        "from ledger.store import Ledger\n"
        f"Ledger.open({ledger_url!r}).close()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def _to(engine: Any, revision: str, *, down: bool = False) -> None:
    from alembic import command

    from ledger.migrate import _config

    with engine.begin() as conn:
        (command.downgrade if down else command.upgrade)(_config(conn), revision)


_RUN_0002 = (
    "INSERT INTO runs (run_id, kind, question, mode, status, cache_hit, started_seq, "
    "last_seq, last_event, started_at) VALUES (:r, 'query', 'q?', 'quote', :status, :f, "
    ":started, :last, :event, '2026-11-30T00:00:00.000000Z')"
)


def test_0003_keeps_where_each_run_ended_and_downgrades(empty_url: str) -> None:
    """0002's per-event position becomes ``finished_seq`` for runs that ended; a run that
    never ended gets NULL. The downgrade restores 0002's columns (a run that never ended
    reads as started at its first event until a rebuild)."""
    engine = ledger_engine(empty_url)
    rows = [
        {"r": "done", "status": "completed", "started": 1, "last": 12, "event": "qa.run_completed"},
        {"r": "broke", "status": "failed", "started": 13, "last": 16, "event": "qa.run_failed"},
        {"r": "cut", "status": "started", "started": 17, "last": 20, "event": "qa.prompt_built"},
    ]
    select = "SELECT run_id, {} FROM runs ORDER BY started_seq"
    try:
        _to(engine, "0002_projections")
        with engine.begin() as conn:
            for row in rows:
                conn.execute(text(_RUN_0002), {**row, "f": False})
            conn.execute(
                text("INSERT INTO projection_positions (name, position) VALUES (:n, 20)"),
                {"n": "aborist.runs"},
            )
        _to(engine, "head")
        with engine.connect() as conn:
            assert stored_revision(conn) == HEAD_REVISION
            # No events here: the runs projection's position is the last event it folds.
            position = conn.execute(text("SELECT position FROM projection_positions")).all()
            assert [tuple(r) for r in position] == [(0,)]
            got = conn.execute(text(select.format("finished_seq, status"))).all()
            cols = {c["name"] for c in sa_inspect(conn).get_columns("runs")}
        assert [tuple(r) for r in got] == [
            ("done", 12, "completed"), ("broke", 16, "failed"), ("cut", None, "started")
        ]  # fmt: skip
        assert "last_seq" not in cols and "last_event" not in cols
        _to(engine, "0002_projections", down=True)
        with engine.connect() as conn:
            got = conn.execute(text(select.format("last_seq, last_event"))).all()
        assert [tuple(r) for r in got] == [
            ("done", 12, "qa.run_completed"),
            ("broke", 16, "qa.run_failed"),
            ("cut", 17, "qa.run_started"),
        ]
        _to(engine, "head")
        with engine.connect() as conn:
            got = conn.execute(text(select.format("finished_seq"))).all()
        assert [tuple(r) for r in got] == [("done", 12), ("broke", 16), ("cut", None)]
    finally:
        engine.dispose()
