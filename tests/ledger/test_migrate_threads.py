"""Alembic's command API keeps its environment in module globals, so two upgrades at once
in one process (a replay job's scratch projection in `aborist serve` while another thread
migrates) could tear each other's environment down ("KeyError: 'script'"). Upgrades in one
process take turns (`ledger.migrate.upgrade`). The race is in Alembic's Python module
globals, not in a database, so each thread gets its own in-memory SQLite ledger (on
PostgreSQL eight threads would need eight databases to migrate apart)."""

from __future__ import annotations

import threading

from sqlalchemy import create_engine, inspect
from sqlalchemy.pool import StaticPool

from aborist.migrations import upgrade


def test_upgrades_in_many_threads_at_once_all_succeed() -> None:
    engines = [
        create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
        for _ in range(8)
    ]
    errors: list[BaseException] = []
    start = threading.Barrier(len(engines))

    def run(engine) -> None:  # type: ignore[no-untyped-def]
        try:
            start.wait()
            for _ in range(3):
                upgrade(engine)
        except BaseException as e:  # collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(e,)) for e in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors[:1]
    for engine in engines:
        assert "projection_positions" in inspect(engine).get_table_names()
