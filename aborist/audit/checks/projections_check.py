"""Replay check 4: rebuild the projections into a scratch database and compare them with
the live tables row for row (docs/pipeline.md, "Projections": a rebuilt projection must
equal the live one row for row).

The scratch database is a private temporary SQLite database (held in memory, spilled to a
temporary file only if it grows large) migrated with :func:`ledger.migrate.upgrade`; the
events are folded into it with the same :class:`aborist.projections.RunProjection` the
pipeline uses, so nothing is re-implemented and the live database (SQLite or PostgreSQL)
is only read. Rows are compared as tuples: the one difference between the two backends'
drivers, booleans against integers, compares equal in Python (``True == 1``), and is
normalized only to print a divergence.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool

from aborist.audit.findings import Divergence, ReplayReport, clip
from aborist.migrations import upgrade
from aborist.projections import (
    PROJECTION_COLUMNS as COLUMNS,
)
from aborist.projections import (
    PROJECTION_KEYS as KEYS,
)
from aborist.projections import (
    Row,
    RunProjection,
    Tables,
    column,
    read_tables,
)
from ledger.envelope import RecordedEvent
from ledger.store import Ledger
from ledger.writer import Writer

__all__ = [
    "COLUMNS",
    "KEYS",
    "LiveRows",
    "ProjectionCheck",
    "ScratchProjection",
    "Tables",
    "column",
    "compare_tables",
    "read_live",
    "read_tables",
]

_SEQ_COLUMN = {"providence_cache": "written_seq", "runs": "started_seq"}


@dataclass
class LiveRows:
    """The live projection rows replay compares each run's DAG with, keyed by run (rows
    are tuples in :data:`COLUMNS` order)."""

    runs: dict[str, Row] = field(default_factory=dict)
    nodes: dict[str, list[Row]] = field(default_factory=dict)  # in ordinal order
    cache: dict[str, list[Row]] = field(default_factory=dict)


def _normal(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    return value


def _ordinal(row: Row) -> Any:
    return row[1]


def read_live(
    ledger: Ledger, run_id: str | None = None
) -> tuple[tuple[int, str], Tables, LiveRows]:
    """The head (seq, hash) and the live projection tables, read in one snapshot (projections are
    written in the append's transaction, so they reflect exactly the events up to that
    head), and the same rows grouped by run for the DAG check."""
    at, tables = ledger.snapshot(lambda conn: read_tables(conn, run_id))
    live = LiveRows()
    live.runs = {key[0]: row for key, row in tables["runs"].items()}
    for key, row in tables["run_dag_nodes"].items():
        live.nodes.setdefault(key[0], []).append(row)
    for rows in live.nodes.values():
        rows.sort(key=_ordinal)  # read in key order already, as a rule: a linear pass
    run_at = column("providence_cache", "run_id")
    for row in tables["providence_cache"].values():
        live.cache.setdefault(row[run_at], []).append(row)
    return at, tables, live


class ScratchProjection:
    """A private temporary SQLite database the events are folded into, migrated to the
    ledger's schema. SQLite keeps such a database (opened with an empty file name) in
    memory and spills it to a temporary file only when it outgrows its cache, and removes
    it when the connection closes: nothing is synced, nothing is left behind.

    Use as a context manager.
    """

    def __init__(self) -> None:
        self.engine = create_engine("sqlite://", creator=_temporary_database, poolclass=StaticPool)
        self.projection = RunProjection(scratch=True)
        self.writer = Writer(self.engine)
        self.events_folded = 0
        try:
            upgrade(self.engine)
        except BaseException:
            self.close()
            raise

    def fold(self, events: Sequence[RecordedEvent]) -> None:
        if not events:
            return
        with self.writer.transaction() as tx:
            self.projection.apply(tx, events)
        self.events_folded += len(events)

    def tables(self, run_id: str | None = None) -> Tables:
        with self.engine.connect() as conn:
            return read_tables(conn, run_id)

    def close(self) -> None:
        self.writer.close()
        self.engine.dispose()

    def __enter__(self) -> ScratchProjection:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class ProjectionCheck:
    """Check 4 as one piece of work: fold events, page by page, into a
    :class:`ScratchProjection`, then compare it with ``live`` (the tables read in the
    head's snapshot). Divergences go to :attr:`report`, a report of their own that the
    caller merges (:meth:`~aborist.audit.findings.ReplayReport.absorb`), so the check
    gives the same result whether it runs in the replay's process, fed the pages the other
    checks read, or in another process that reads them itself (``aborist.audit.replay``).
    """

    def __init__(self, run_id: str | None, live: Tables) -> None:
        self.run_id = run_id
        self.live = live
        self.report = ReplayReport()
        self.scratch = ScratchProjection()

    def fold(self, page: list[RecordedEvent]) -> None:
        scratch = self.scratch
        if scratch.events_folded < 0:
            return  # an earlier page could not be folded; that was reported
        try:
            scratch.fold(page)
        except Exception:
            self._fold_failure(page)

    def _fold_failure(self, page: list[RecordedEvent]) -> None:
        """Fold ``page`` one event at a time to name the event the projection rejects."""
        scratch = self.scratch
        for ev in page:
            try:
                scratch.fold([ev])
            except Exception as e:
                run = ev.stream[4:] if ev.stream.startswith("run:") else None
                msg = str(e).splitlines()[0] if str(e) else ""
                self.report.diverge(
                    Divergence("projection", ev.seq, run, None,
                               f"an event {ev.type} that folds into the projections",
                               f"{type(e).__name__}: {msg}", "fold")
                )  # fmt: skip
                break
        scratch.events_folded = -1

    def finish(self) -> ReplayReport:
        """Compare (unless a fold failed) and drop the scratch database."""
        try:
            if self.scratch.events_folded >= 0:
                compare_tables(self.scratch.tables(self.run_id), self.live, self.report)
        finally:
            self.scratch.close()
        return self.report

    def run(self, pages: Iterable[list[RecordedEvent]]) -> ReplayReport:
        try:
            for page in pages:
                self.fold(page)
        except BaseException:
            self.scratch.close()
            raise
        return self.finish()


def _temporary_database() -> sqlite3.Connection:
    # Autocommit at the driver level: the Writer issues BEGIN IMMEDIATE itself.
    conn = sqlite3.connect("", isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA synchronous = OFF")
    return conn


def compare_tables(rebuilt: Tables, live: Tables, report: ReplayReport) -> None:
    """Record every row where ``live`` differs from ``rebuilt`` as a projection divergence."""
    for table in COLUMNS:
        want_rows, got_rows = rebuilt.get(table, {}), live.get(table, {})
        report.projection_rows[table] = len(want_rows)
        if want_rows == got_rows:
            continue  # every key and every value equal: the common case, compared in C
        cols = COLUMNS[table]
        seq_col = _SEQ_COLUMN.get(table)
        seq_at = cols.index(seq_col) if seq_col else None
        run_at = cols.index("run_id")
        for key in sorted(set(want_rows) | set(got_rows), key=repr):
            want, got = want_rows.get(key), got_rows.get(key)
            if want == got:
                continue
            where = f"{table}[{', '.join(map(str, key))}]"
            row = want if want is not None else got
            assert row is not None
            seq = row[seq_at] if seq_at is not None else None
            run = row[run_at]
            if want is None:
                report.diverge(Divergence("projection", seq, run, table, "no row", "a row", where))
                continue
            if got is None:
                report.diverge(Divergence("projection", seq, run, table, "a row", "no row", where))
                continue
            for i, col in enumerate(cols):
                if want[i] != got[i]:
                    report.diverge(
                        Divergence(
                            "projection", seq, run, table, clip(_normal(want[i])),
                            clip(_normal(got[i])), f"{where}.{col}",
                        )
                    )  # fmt: skip
                    break
