"""Read models of the pipeline, folded from ledger events (ARCHITECTURE.md, "Projections").

:class:`RunProjection` maintains three tables in the same transaction as each append:

- ``providence_cache``: one row per cache key, from ``qa.cache_written`` (a later write of
  the same key replaces the row); ``hit_count`` / ``last_hit_at`` from
  ``qa.cache_checked`` hits;
- ``run_dag_nodes``: the DAG recorded in ``qa.answer_labelled``;
- ``runs``: one summary row per run (status ``started`` until ``qa.run_completed`` or
  ``qa.run_failed``, whose seq becomes ``finished_seq``; a run left ``started`` was
  interrupted, and its last stage is the last event of its stream).

Only the events that change a row are folded (``event_types``): the stage events between
them (``qa.retrieval_completed`` … ``qa.answer_rendered``) are not even offered, so their
appends write no projection page, the position in ``projection_positions`` included
(aborist/migrations/versions/0003, docs/pipeline.md "Projections").

:func:`select_runs` is the one query over ``runs`` the CLI lists and exports from
(``aborist runs``): filtered, newest first, with each run's answer and sources.

Every column is a function of the events alone (timestamps are the events'
``recorded_at``), which is what lets ``aborist-ledger rebuild`` reproduce the tables row for
row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text

from aborist.errors import InputError
from aborist.migrations import HEAD_REVISION as SCHEMA_REVISION
from ledger.canonical import canonical_text
from ledger.envelope import RecordedEvent
from ledger.store import Ledger
from ledger.writer import Tx

__all__ = [
    "PROJECTION_TABLES",
    "RUN_STATUSES",
    "RunFilter",
    "RunProjection",
    "open_ledger",
    "run_projection",
    "select_runs",
]

PROJECTION_TABLES = ("providence_cache", "run_dag_nodes", "runs")

_UPSERT_CACHE = """
    INSERT INTO providence_cache (cache_key, answer, audit_mode, label, run_id, run_dag_root,
        run_dag_blob, key_dimensions, created_at, written_seq, hit_count, last_hit_at)
    VALUES (:cache_key, :answer, :audit_mode, :label, :run_id, :run_dag_root, :run_dag_blob,
        :key_dimensions, :created_at, :written_seq, 0, NULL)
    ON CONFLICT (cache_key) DO UPDATE SET answer = excluded.answer,
        audit_mode = excluded.audit_mode, label = excluded.label, run_id = excluded.run_id,
        run_dag_root = excluded.run_dag_root, run_dag_blob = excluded.run_dag_blob,
        key_dimensions = excluded.key_dimensions, created_at = excluded.created_at,
        written_seq = excluded.written_seq, hit_count = 0, last_hit_at = NULL
    """
_HIT = (
    "UPDATE providence_cache SET hit_count = hit_count + 1, last_hit_at = :at "
    "WHERE cache_key = :cache_key"
)
_INSERT_NODE = (
    "INSERT INTO run_dag_nodes (run_id, ordinal, stage, stage_hash, node_hash, parents) "
    "VALUES (:run_id, :ordinal, :stage, :stage_hash, :node_hash, :parents)"
)


def _new_run(run_id: str, ev: RecordedEvent, p: dict[str, Any]) -> dict[str, Any]:
    """A run's ``runs`` row as ``qa.run_started`` opens it: every column, in table order."""
    return {
        "run_id": run_id, "kind": p["kind"], "question": p["question"], "mode": p["mode"],
        "status": "started", "cache_key": None, "cache_hit": False, "served_from_run_id": None,
        "audit_mode": None, "label": None, "run_dag_root": None, "started_seq": ev.seq,
        "finished_seq": None, "started_at": ev.recorded_at, "finished_at": None,
        "failed_stage": None, "error": None,
    }  # fmt: skip


_FOLDED = frozenset(
    {
        "qa.run_started",
        "qa.cache_checked",
        "qa.answer_labelled",
        "qa.cache_written",
        "qa.run_completed",
        "qa.run_failed",
    }
)


class RunProjection:
    """Folds ``qa.*`` events into providence_cache, run_dag_nodes and runs."""

    name = "aborist.runs"
    event_types = _FOLDED  # the ledger offers only these, and moves the position on them
    revision = SCHEMA_REVISION  # its tables' migration (aborist's branch)

    def reset(self, tx: Tx) -> None:
        for table in PROJECTION_TABLES:
            tx.execute(f"DELETE FROM {table}")

    def apply(self, tx: Tx, events: Sequence[RecordedEvent]) -> None:
        """Fold ``events`` in order. The ``runs`` columns each event sets are gathered per
        run and written once at the end of the batch (one INSERT for a run started in
        it, else one UPDATE): a cache hit's three events, or a run's label, cache write
        and completion, become one statement on ``runs`` instead of three or four. Every
        ``runs`` write sets plain values, so the merged write leaves the row as writing
        them one by one would; ``providence_cache`` and ``run_dag_nodes`` are written in
        event order as they come."""
        dags: dict[str, dict[str, Any]] = {}  # run -> the DAG labelled in this batch
        rows: dict[str, dict[str, Any]] = {}  # run -> the runs columns this batch sets
        started: set[str] = set()  # runs whose row this batch inserts
        for ev in events:
            if not (ev.stream.startswith("run:") and ev.type in _FOLDED):
                continue
            run_id = ev.stream[4:]
            p = json.loads(ev.payload)
            if ev.type == "qa.run_started":
                rows[run_id] = _new_run(run_id, ev, p)
                started.add(run_id)
                continue
            self._fold(tx, ev, run_id, p, dags, rows.setdefault(run_id, {}))
        for run_id, row in rows.items():  # the column names are this module's own
            if run_id in started:
                marks = ", ".join(f":{c}" for c in row)
                tx.execute(f"INSERT INTO runs ({', '.join(row)}) VALUES ({marks})", row)
            elif row:
                sets = ", ".join(f"{c} = :{c}" for c in row)
                tx.execute(
                    f"UPDATE runs SET {sets} WHERE run_id = :run_id", {**row, "run_id": run_id}
                )

    def _fold(
        self,
        tx: Tx,
        ev: RecordedEvent,
        run_id: str,
        p: dict[str, Any],
        dags: dict[str, dict[str, Any]],
        row: dict[str, Any],
    ) -> None:
        """Fold one event after ``qa.run_started``: write ``providence_cache`` and
        ``run_dag_nodes`` now, and set the ``runs`` columns it changes in ``row``."""
        t = ev.type
        if t == "qa.cache_checked":
            row["cache_key"] = p["cache_key"]
            if p["hit"]:
                tx.execute(_HIT, {"at": ev.recorded_at, "cache_key": p["cache_key"]})
                row.update(cache_hit=True, served_from_run_id=p["hit_run_id"])
        elif t == "qa.answer_labelled":
            dag = dags[run_id] = p["run_dag"]
            tx.executemany(
                _INSERT_NODE,
                [
                    {
                        "run_id": run_id, "ordinal": i, "stage": n["stage"],
                        "stage_hash": n["stage_hash"], "node_hash": n["node_hash"],
                        "parents": canonical_text(n["parents"]),
                    }
                    for i, n in enumerate(dag["nodes"])
                ],
            )  # fmt: skip
            row.update(audit_mode=p["audit_mode"], label=p["label"], run_dag_root=dag["root"])
        elif t == "qa.cache_written":
            tx.execute(
                _UPSERT_CACHE,
                {
                    "cache_key": p["cache_key"], "answer": p["answer"],
                    "audit_mode": p["audit_mode"], "label": p["label"], "run_id": run_id,
                    "run_dag_root": p["run_dag_root"],
                    "run_dag_blob": canonical_text(self._dag_blob(tx, run_id, dags.get(run_id))),
                    "key_dimensions": canonical_text(p["key_dimensions"]),
                    "created_at": ev.recorded_at, "written_seq": ev.seq,
                },
            )  # fmt: skip
        elif t == "qa.run_completed":
            row.update(
                status="completed", finished_seq=ev.seq, finished_at=ev.recorded_at,
                audit_mode=p["audit_mode"], label=p["label"], run_dag_root=p["run_dag_root"],
            )  # fmt: skip
        elif t == "qa.run_failed":
            row.update(
                status="failed", finished_seq=ev.seq, finished_at=ev.recorded_at,
                failed_stage=p["stage"], error=f"{p['error_type']}: {p['message']}",
            )  # fmt: skip

    @staticmethod
    def _dag_blob(tx: Tx, run_id: str, labelled: dict[str, Any] | None) -> dict[str, Any]:
        """The run's DAG as ``run_dag_nodes`` holds it: taken from the label event when it
        is in the same batch (the rows were just inserted from it), else read back."""
        if labelled is not None:
            nodes = [
                {k: n[k] for k in ("stage", "stage_hash", "node_hash", "parents")}
                for n in labelled["nodes"]
            ]
            return {"root": nodes[-1]["node_hash"] if nodes else None, "nodes": nodes}
        rows = tx.execute(
            "SELECT stage, stage_hash, node_hash, parents FROM run_dag_nodes "
            "WHERE run_id = :r ORDER BY ordinal",
            {"r": run_id},
        )
        nodes = [
            {"stage": r[0], "stage_hash": r[1], "node_hash": r[2], "parents": json.loads(r[3])}
            for r in rows
        ]
        return {"root": nodes[-1]["node_hash"] if nodes else None, "nodes": nodes}


def run_projection() -> RunProjection:
    return RunProjection()


def open_ledger(url: str) -> Ledger:
    """The pipeline's ledger: opened with its projections, so every append folds them."""
    return Ledger.open(url, projections=[RunProjection()])


#: ``runs.status`` values; a run still ``started`` was interrupted (shown "incomplete").
RUN_STATUSES = ("completed", "failed", "started")
_RUN_COLUMNS = (
    "run_id", "kind", "status", "mode", "cache_hit", "served_from_run_id", "audit_mode",
    "label", "started_at", "question", "failed_stage", "error",
)  # fmt: skip


@dataclass(frozen=True)
class RunFilter:
    """What ``aborist runs`` selects: every given field must match (``grep``: the question
    contains it, ignoring case; ``since``: started at or after this ISO date or time)."""

    limit: int = 20
    label: str | None = None
    audit_mode: str | None = None
    status: str | None = None
    since: str | None = None
    grep: str | None = None


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


def select_runs(ledger: Ledger, f: RunFilter) -> list[dict[str, Any]]:
    """The runs matching ``f``, newest first: the ``runs`` columns, plus ``stopped_after``
    (an unfinished run's last stage: the last event of its own stream), ``answer`` and
    ``citations`` (from the run's ``qa.answer_rendered``, or for a cache hit the served
    run's; None when no answer was rendered)."""
    where: list[str] = []
    params: dict[str, Any] = {"n": f.limit}
    if f.label:
        where.append("label = :label")
        params["label"] = f.label.upper()
    if f.audit_mode:
        where.append("audit_mode = :audit_mode")
        params["audit_mode"] = f.audit_mode.upper()
    if f.status:
        where.append("status = :status")
        params["status"] = f.status
    if f.since:
        where.append("started_at >= :since")
        params["since"] = _since(f.since)
    if f.grep:
        where.append("LOWER(question) LIKE :grep ESCAPE '\\'")
        params["grep"] = _like(f.grep)
    stopped_after = (
        "CASE WHEN status = 'started' THEN (SELECT e.type FROM events e "
        "WHERE e.stream = 'run:' || runs.run_id ORDER BY e.stream_seq DESC LIMIT 1) END"
    )
    rendered = (
        "(SELECT e.payload FROM events e WHERE e.stream = 'run:' || "
        "COALESCE(runs.served_from_run_id, runs.run_id) AND e.type = 'qa.answer_rendered' "
        "ORDER BY e.stream_seq DESC LIMIT 1)"
    )
    sql = text(
        f"SELECT {', '.join(_RUN_COLUMNS)}, {stopped_after}, {rendered} FROM runs"
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + " ORDER BY started_seq DESC LIMIT :n"
    )
    from ledger.store import translate_errors

    with translate_errors(ledger.where), ledger.reader.connect() as conn:
        rows = conn.execute(sql, params).all()
    out = []
    for r in rows:
        item = dict(zip((*_RUN_COLUMNS, "stopped_after"), r[:-1], strict=True))
        item["cache_hit"] = bool(item["cache_hit"])  # SQLite: 0/1; PostgreSQL: a bool
        payload = json.loads(r[-1]) if r[-1] else None
        item["answer"] = payload["answer"] if payload else None
        item["citations"] = payload["citations"] if payload else None
        out.append(item)
    return out
