"""The projection tables' shape and every query over them (docs/pipeline.md, "Projections").

:mod:`aborist.projections` folds ledger events into ``providence_cache``, ``run_dag_nodes``
and ``runs``; this module is what everything else reads them through, and the one other
place where SQL names those tables (the import rule in tests/test_layering.py):

- :func:`select_runs`, the one query over ``runs`` (``aborist runs`` and the server's run
  list), with :func:`run_ids_with_prefix` for run-id prefixes;
- :func:`cache_row`, a cache hit's one statement, and :func:`stream_outline`, a run's
  event types with only the payloads a reader asks for;
- :func:`read_tables`, every table row by row, for replay's comparison with a fold.

It holds no fold and imports nothing of the pipeline, so a reader of the tables does not
load the run grammar.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection

from aborist.errors import InputError
from aborist.events import AnswerRendered
from ledger.envelope import RecordedEvent
from ledger.rawtext import fetch_rows
from ledger.store import Ledger

__all__ = [
    "CACHE_ROW_KEYS",
    "PROJECTION_COLUMNS",
    "PROJECTION_KEYS",
    "PROJECTION_TABLES",
    "RUN_STATUSES",
    "Row",
    "RunFilter",
    "Tables",
    "cache_row",
    "column",
    "read_tables",
    "run_ids_with_prefix",
    "select_runs",
    "stream_outline",
]

PROJECTION_TABLES = ("providence_cache", "run_dag_nodes", "runs")
#: Every column of each projection table (aborist/migrations/versions/0002, 0003), in the
#: order :func:`read_tables` reads rows.
PROJECTION_COLUMNS: dict[str, tuple[str, ...]] = {
    "providence_cache": (
        "cache_key", "answer", "audit_mode", "label", "run_id", "run_dag_root", "run_dag_blob",
        "key_dimensions", "created_at", "written_seq", "hit_count", "last_hit_at",
    ),
    "run_dag_nodes": ("run_id", "ordinal", "stage", "stage_hash", "node_hash", "parents"),
    "runs": (
        "run_id", "kind", "question", "mode", "status", "cache_key", "cache_hit",
        "served_from_run_id", "audit_mode", "label", "run_dag_root", "started_seq",
        "finished_seq", "started_at", "finished_at", "failed_stage", "error",
    ),
}  # fmt: skip
PROJECTION_KEYS: dict[str, tuple[str, ...]] = {
    "providence_cache": ("cache_key",), "run_dag_nodes": ("run_id", "ordinal"), "runs": ("run_id",),
}  # fmt: skip
Row = tuple[Any, ...]
Tables = dict[str, dict[tuple[Any, ...], Row]]

#: ``runs.status`` values; a run still ``started`` was interrupted (shown "incomplete").
RUN_STATUSES = ("completed", "failed", "started")
_RUN_COLUMNS = (
    "run_id", "kind", "status", "mode", "cache_hit", "served_from_run_id", "audit_mode",
    "label", "started_at", "question", "failed_stage", "error",
)  # fmt: skip


@dataclass(frozen=True)
class RunFilter:
    """What ``aborist runs`` and the server's run list select: every given field must
    match (``grep``: the question contains it, ignoring case; ``since``: started at or
    after this ISO date or time; ``before_seq``: started before this seq, a page's cursor)."""

    limit: int = 20
    label: str | None = None
    audit_mode: str | None = None
    status: str | None = None
    since: str | None = None
    grep: str | None = None
    before_seq: int | None = None


def _since(value: str) -> str:
    """An ISO date or date-time as the ledger writes ``recorded_at`` (UTC, microseconds)."""
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            f"--since must be an ISO date or time such as 2026-03-01 or 2026-03-01T09:30; "
            f"found {value!r}"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _like(value: str) -> str:
    escaped = value.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _run_where(f: RunFilter) -> tuple[list[str], dict[str, Any]]:
    where: list[str] = []
    params: dict[str, Any] = {"n": f.limit}
    upper = {
        "label": f.label and f.label.upper(),
        "audit_mode": f.audit_mode and f.audit_mode.upper(),
    }
    for name, value in (*upper.items(), ("status", f.status)):
        if value:
            where.append(f"{name} = :{name}")
            params[name] = value
    if f.since:
        where.append("started_at >= :since")
        params["since"] = _since(f.since)
    if f.grep:
        where.append("LOWER(question) LIKE :grep ESCAPE '\\'")
        params["grep"] = _like(f.grep)
    if f.before_seq is not None:
        where.append("started_seq < :before_seq")
        params["before_seq"] = f.before_seq
    return where, params


def select_runs(
    ledger: Ledger,
    f: RunFilter,
    *,
    columns: Sequence[str] = _RUN_COLUMNS,
    detail: bool = True,
) -> list[dict[str, Any]]:
    """The runs matching ``f``, newest first, as dicts of ``columns`` (``runs`` columns).
    With ``detail``, also ``stopped_after`` (an unfinished run's last stage: the last event
    of its own stream), ``answer`` and ``citations`` (from the run's ``qa.answer_rendered``,
    or for a cache hit the served run's; None when no answer was rendered)."""
    unknown = [c for c in columns if c not in PROJECTION_COLUMNS["runs"]]
    if unknown:
        raise InputError(f"no runs column {', '.join(unknown)}")
    where, params = _run_where(f)
    extra = ""
    if detail:
        params["rendered_type"] = AnswerRendered.TYPE
        extra = (
            ", CASE WHEN status = 'started' THEN (SELECT e.type FROM events e "
            "WHERE e.stream = 'run:' || runs.run_id ORDER BY e.stream_seq DESC LIMIT 1) END"
            ", (SELECT e.payload FROM events e WHERE e.stream = 'run:' || "
            "COALESCE(runs.served_from_run_id, runs.run_id) AND e.type = :rendered_type "
            "ORDER BY e.stream_seq DESC LIMIT 1)"
        )
    sql = (
        f"SELECT {', '.join(columns)}{extra} FROM runs"
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + " ORDER BY started_seq DESC LIMIT :n"
    )
    rows = ledger.fetch(sql, params)
    out = []
    for r in rows:
        if not detail:
            item = dict(zip(columns, r, strict=True))
        else:
            item = dict(zip((*columns, "stopped_after"), r[:-1], strict=True))
            payload = json.loads(r[-1]) if r[-1] else None
            item["answer"] = payload["answer"] if payload else None
            item["citations"] = payload["citations"] if payload else None
        if "cache_hit" in item:  # SQLite: 0/1; PostgreSQL: a bool
            item["cache_hit"] = bool(item["cache_hit"])
        out.append(item)
    return out


def run_ids_with_prefix(ledger: Ledger, prefix: str, *, limit: int) -> list[str]:
    """Up to ``limit`` run ids that start with ``prefix`` (a hex prefix), in order."""
    rows = ledger.fetch(
        "SELECT run_id FROM runs WHERE run_id LIKE :p ORDER BY run_id LIMIT :n",
        {"p": prefix + "%", "n": limit},
    )
    return [str(r[0]) for r in rows]


def column(table: str, name: str) -> int:
    """The position of ``name`` in a row of ``table`` as :func:`read_tables` reads it."""
    return PROJECTION_COLUMNS[table].index(name)


def read_tables(conn: Connection, run_id: str | None = None) -> Tables:
    """Each projection table as ``{primary key: row}`` (only ``run_id``'s rows if given),
    read through the driver's cursor on ``conn`` (in its transaction): replay compares
    them with a fold of the events."""
    out: Tables = {}
    postgres = conn.dialect.name == "postgresql"
    cursor = conn.connection.cursor()
    try:
        for table, cols in PROJECTION_COLUMNS.items():
            sql = f"SELECT {', '.join(cols)} FROM {table}"
            params: tuple[Any, ...] = ()
            if run_id is not None:
                sql += " WHERE run_id = " + ("%s" if postgres else "?")
                params = (run_id,)
            fetched = fetch_rows(cursor, sql, params) or []  # text not UTF-8 read, not raised
            rows = [r if type(r) is tuple else tuple(r) for r in fetched]
            at = [cols.index(k) for k in PROJECTION_KEYS[table]]
            if len(at) == 1:
                k = at[0]
                out[table] = {(r[k],): r for r in rows}
            else:
                key = itemgetter(*at)  # a tuple of the key columns, built in C
                out[table] = {key(r): r for r in rows}
    finally:
        cursor.close()
    return out


#: :func:`cache_row`'s keys: the row's columns, then the served run's last event.
CACHE_ROW_KEYS = ("answer", "audit_mode", "label", "run_id", "run_dag_root", "written_seq",
                  "head_stream_seq", "head_hash")  # fmt: skip
_LAST_OF_RUN = (
    "(SELECT e.{} FROM events e WHERE e.stream = 'run:' || c.run_id "
    "ORDER BY e.stream_seq DESC LIMIT 1)"
)
_CACHE_ROW = (
    "SELECT c.answer, c.audit_mode, c.label, c.run_id, c.run_dag_root, c.written_seq, "
    f"{_LAST_OF_RUN.format('stream_seq')}, {_LAST_OF_RUN.format('hash')} "
    "FROM providence_cache c WHERE c.cache_key = :k"
)


def cache_row(ledger: Ledger, key: str) -> dict[str, Any] | None:
    """The ``providence_cache`` row of ``key`` (None if there is none), with the
    ``stream_seq`` and ``hash`` of the last event of the run it points at
    (``head_stream_seq``, ``head_hash``; None if that run has no events): one statement,
    which is all a hit reads when the served run is known unchanged since it was checked
    (:func:`aborist.pipeline.cache.served_run`)."""
    rows = ledger.fetch(_CACHE_ROW, {"k": key})
    return dict(zip(CACHE_ROW_KEYS, rows[0], strict=True)) if rows else None


@lru_cache(maxsize=8)
def _outline_sql(payload_types: tuple[str, ...]) -> str:
    listed = ", ".join("'" + t.replace("'", "''") + "'" for t in payload_types)
    return (
        f"SELECT seq, stream_seq, type, CASE WHEN type IN ({listed}) THEN payload ELSE '' END, "
        "hash FROM events WHERE stream = :s ORDER BY stream_seq"
    )


def stream_outline(
    ledger: Ledger, stream: str, payload_types: Sequence[str]
) -> list[RecordedEvent]:
    """Every event of ``stream``, in order: its ``seq``, ``stream_seq``, type and hash,
    and its payload only if its type is one of ``payload_types`` (an empty payload
    otherwise; the other envelope fields are left empty). For a reader that needs the
    types of all of a stream's events and the payloads of a few: the bulk of a run's bytes
    (its retrieval record) is not read."""
    sql = _outline_sql(tuple(sorted(payload_types)))
    return [
        RecordedEvent(int(r[0]), "", stream, int(r[1]), str(r[2]), 1, "", str(r[3] or ""),
                      "", "", str(r[4]))
        for r in ledger.fetch(sql, {"s": stream})
    ]  # fmt: skip
