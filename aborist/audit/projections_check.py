"""Replay check 4: rebuild the projections into a scratch database and compare them with
the live tables row for row (ARCHITECTURE.md, "Projections": "a rebuilt projection must
equal the live one row for row").

The scratch database is a temporary SQLite file migrated with
:func:`ledger.migrate.upgrade`; the events are folded into it with the same
:class:`aborist.projections.RunProjection` the pipeline uses, so nothing is re-implemented
and the live database (SQLite or PostgreSQL) is only read. Values are compared after one
normalization (booleans as integers), the only difference between the two backends'
drivers.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from sqlalchemy import Connection, text

from aborist.audit.dags import LiveRows
from aborist.audit.findings import Divergence, ReplayReport, clip
from aborist.projections import RunProjection
from ledger.engine import ledger_engine
from ledger.envelope import GENESIS_HASH, RecordedEvent
from ledger.migrate import upgrade
from ledger.store import Ledger, translate_errors
from ledger.writer import Writer

__all__ = ["COLUMNS", "KEYS", "ScratchProjection", "compare_tables", "read_live", "read_tables"]

#: Every column of each projection table, in schema order (migrations/0002).
COLUMNS: dict[str, tuple[str, ...]] = {
    "providence_cache": (
        "cache_key", "answer", "audit_mode", "label", "run_id", "run_dag_root", "run_dag_blob",
        "key_dimensions", "created_at", "written_seq", "hit_count", "last_hit_at",
    ),
    "run_dag_nodes": ("run_id", "ordinal", "stage", "stage_hash", "node_hash", "parents"),
    "runs": (
        "run_id", "kind", "question", "mode", "status", "cache_key", "cache_hit",
        "served_from_run_id", "audit_mode", "label", "run_dag_root", "started_seq", "last_seq",
        "last_event", "started_at", "finished_at", "failed_stage", "error",
    ),
}  # fmt: skip
KEYS: dict[str, tuple[str, ...]] = {
    "providence_cache": ("cache_key",),
    "run_dag_nodes": ("run_id", "ordinal"),
    "runs": ("run_id",),
}
_SEQ_COLUMN = {"providence_cache": "written_seq", "runs": "last_seq"}

Row = dict[str, Any]
Tables = dict[str, dict[tuple[Any, ...], Row]]


def _normal(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    return value


def read_tables(conn: Connection, run_id: str | None = None) -> Tables:
    """Each projection table as ``{primary key: row}`` (only ``run_id``'s rows if given)."""
    out: Tables = {}
    for table, cols in COLUMNS.items():
        sql = f"SELECT {', '.join(cols)} FROM {table}"
        params: dict[str, Any] = {}
        if run_id is not None:
            sql += " WHERE run_id = :r"
            params["r"] = run_id
        rows: dict[tuple[Any, ...], Row] = {}
        for r in conn.execute(text(sql), params).all():
            row = {c: _normal(v) for c, v in zip(cols, r, strict=True)}
            rows[tuple(row[k] for k in KEYS[table])] = row
        out[table] = rows
    return out


def read_live(
    ledger: Ledger, run_id: str | None = None
) -> tuple[tuple[int, str], Tables, LiveRows]:
    """The head (seq, hash) and the live projection tables, read in one snapshot (projections are
    written in the append's transaction, so they reflect exactly the events up to that
    head), and the same rows grouped by run for the DAG check."""
    reader = ledger.reader
    if reader.dialect.name == "postgresql":
        reader = reader.execution_options(isolation_level="REPEATABLE READ")
    with translate_errors(ledger.where), reader.connect() as conn:
        head = conn.exec_driver_sql(
            "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1"
        ).first()
        tables = read_tables(conn, run_id)
    live = LiveRows()
    live.runs = {row["run_id"]: row for row in tables["runs"].values()}
    for key in sorted(tables["run_dag_nodes"]):
        row = tables["run_dag_nodes"][key]
        live.nodes.setdefault(row["run_id"], []).append(row)
    for row in tables["providence_cache"].values():
        live.cache.setdefault(row["run_id"], []).append(row)
    at = (int(head[0]), str(head[1])) if head is not None else (0, GENESIS_HASH)
    return at, tables, live


class ScratchProjection:
    """A temporary, migrated SQLite database the events are folded into.

    Use as a context manager; the file is removed on exit.
    """

    def __init__(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="aborist-replay-"))
        self.url = f"sqlite:///{self._dir / 'scratch.db'}"
        self.engine = ledger_engine(self.url, sqlite_synchronous="OFF")
        self.projection = RunProjection()
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
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> ScratchProjection:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def compare_tables(rebuilt: Tables, live: Tables, report: ReplayReport) -> None:
    """Record every row where ``live`` differs from ``rebuilt`` as a projection divergence."""
    for table in COLUMNS:
        want_rows, got_rows = rebuilt.get(table, {}), live.get(table, {})
        report.projection_rows[table] = len(want_rows)
        for key in sorted(set(want_rows) | set(got_rows), key=repr):
            want, got = want_rows.get(key), got_rows.get(key)
            where = f"{table}[{', '.join(map(str, key))}]"
            row = want if want is not None else got
            assert row is not None
            seq_col = _SEQ_COLUMN.get(table)
            seq = row.get(seq_col) if seq_col else None
            run = row.get("run_id")
            if want is None:
                report.diverge(Divergence("projection", seq, run, table, "no row", "a row", where))
                continue
            if got is None:
                report.diverge(Divergence("projection", seq, run, table, "a row", "no row", where))
                continue
            for col in COLUMNS[table]:
                if want[col] != got[col]:
                    report.diverge(
                        Divergence(
                            "projection", seq, run, table, clip(want[col]), clip(got[col]),
                            f"{where}.{col}",
                        )
                    )  # fmt: skip
                    break
