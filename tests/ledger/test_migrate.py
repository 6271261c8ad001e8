"""Two migration branches in one ``alembic_version`` table: the ledger's own (label
``ledger``) and aborist's read models (label ``aborist``). Opening a ledger checks its
revisions without Alembic; the constants it checks against must be the heads Alembic
computes from the revision scripts."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from sqlalchemy import inspect as sa_inspect
from sqlalchemy import text

import aborist.migrations as aborist_migrations
from aborist.projections import open_ledger
from ledger.engine import ledger_engine
from ledger.errors import NotMigratedError
from ledger.migrate import (
    HEAD_REVISION,
    _config,
    alembic_head,
    current_revisions,
    stored_revisions,
    upgrade,
)
from ledger.store import Ledger
from tests.conftest import migrate_url

BOTH = [aborist_migrations.versions_dir()]
HEADS = frozenset({HEAD_REVISION, aborist_migrations.HEAD_REVISION})


def test_head_constants_are_alembics_heads() -> None:
    assert alembic_head() == HEAD_REVISION
    assert alembic_head(BOTH, "ledger") == HEAD_REVISION
    assert alembic_head(BOTH, "aborist") == aborist_migrations.HEAD_REVISION


def test_stored_revisions_agree_with_alembic(empty_url: str) -> None:
    engine = ledger_engine(empty_url)
    try:
        with engine.connect() as conn:
            assert stored_revisions(conn) == current_revisions(conn) == frozenset()
        migrate_url(empty_url)
        with engine.connect() as conn:
            assert stored_revisions(conn) == current_revisions(conn) == HEADS
    finally:
        engine.dispose()


def test_the_ledger_migrates_and_opens_on_its_own_branch(empty_url: str) -> None:
    """The generic ledger needs none of aborist's tables; aborist's projections refuse a
    database that lacks them."""
    engine = ledger_engine(empty_url)
    try:
        before, after = upgrade(engine)
        assert (before, after) == (frozenset(), frozenset({HEAD_REVISION}))
        with engine.connect() as conn:
            tables = set(sa_inspect(conn).get_table_names())
    finally:
        engine.dispose()
    assert {"events", "blobs", "checkpoints", "projection_positions"} <= tables
    assert not {"runs", "providence_cache", "run_dag_nodes"} & tables
    Ledger.open(empty_url).close()
    with pytest.raises(NotMigratedError, match=f"expected 0003_runs_finished_seq, {HEAD_REVISION}"):
        open_ledger(empty_url)
    migrate_url(empty_url)  # aborist's branch joins the ledger's
    open_ledger(empty_url).close()


def test_a_database_from_before_the_split_upgrades(empty_url: str) -> None:
    """A database migrated when the revisions were one line (0001 → 0002 → 0003) records
    one head, 0003; the ledger branch's 0004 grows from 0001, an ancestor of 0003, so
    the upgrade applies only the ledger branch's revisions from 0004 on."""
    engine = ledger_engine(empty_url)
    try:
        _to(engine, "0003_runs_finished_seq")
        with engine.connect() as conn:
            assert stored_revisions(conn) == {"0003_runs_finished_seq"}
        before, after = aborist_migrations.upgrade(engine)
        assert before == {"0003_runs_finished_seq"} and after == HEADS
    finally:
        engine.dispose()
    open_ledger(empty_url).close()


def test_an_older_revision_is_refused(ledger_url: str) -> None:
    engine = ledger_engine(ledger_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM alembic_version"))
            conn.execute(text("INSERT INTO alembic_version VALUES ('0001_ledger')"))
    finally:
        engine.dispose()
    with pytest.raises(NotMigratedError, match=f"0001_ledger, expected {HEAD_REVISION}") as e:
        Ledger.open(ledger_url)
    assert "newer" not in str(e.value)


def test_a_revision_from_a_newer_version_is_named_as_such(ledger_url: str) -> None:
    """ "Run migrate" alone misleads for a database a newer aborist migrated: migrate does
    not downgrade. An older revision (above) is told only to migrate."""
    engine = ledger_engine(ledger_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM alembic_version"))
            conn.execute(text("INSERT INTO alembic_version VALUES ('0099_from_the_future')"))
    finally:
        engine.dispose()
    with pytest.raises(NotMigratedError, match="0099_from_the_future comes from a newer aborist"):
        Ledger.open(ledger_url)


def test_opening_a_ledger_does_not_import_alembic(ledger_url: str) -> None:
    code = (
        "import sys\n"
        "from aborist.projections import open_ledger\n"
        f"open_ledger({ledger_url!r}).close()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def _to(engine: Any, revision: str, *, down: bool = False) -> None:
    from alembic import command

    with engine.begin() as conn:
        (command.downgrade if down else command.upgrade)(_config(conn, BOTH), revision)


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
        _to(engine, "heads")
        with engine.connect() as conn:
            assert stored_revisions(conn) == HEADS
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
        _to(engine, "heads")
        with engine.connect() as conn:
            got = conn.execute(text(select.format("finished_seq"))).all()
        assert [tuple(r) for r in got] == [("done", 12), ("broke", 16), ("cut", None)]
    finally:
        engine.dispose()
