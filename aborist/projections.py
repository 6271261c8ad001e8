"""Read models of the pipeline, folded from ledger events (docs/pipeline.md, "Projections").

:class:`RunProjection` maintains three tables in the same transaction as each append:

- ``providence_cache``: one row per cache key, from ``qa.cache_written`` (a later write of
  the same key replaces the row); ``hit_count`` / ``last_hit_at`` from
  ``qa.cache_checked`` hits;
- ``run_dag_nodes``: the DAG recorded in ``qa.answer_labelled``;
- ``runs``: one summary row per run (status ``started`` until ``qa.run_completed`` or
  ``qa.run_failed``, whose seq becomes ``finished_seq``; a run left ``started`` was
  interrupted, and its last stage is the last event of its stream).

Every event is offered, and every event of a ``run:`` stream is first read against the run
grammar (:mod:`aborist.pipeline.history`): one that breaks it (a second stage event, a stage
out of order, anything after ``qa.run_completed`` or ``qa.run_failed``) raises
:class:`~aborist.errors.RunGrammarError` inside the append's transaction, so nothing of the
append is written. Only the events that change a row are then folded (``qa.run_started``,
``qa.cache_checked``, ``qa.answer_labelled``, ``qa.cache_written`` and the terminal events).
Events written around the library (raw SQL) that break the grammar are not part of their
run's history: a rebuild, and replay's scratch fold, pass over them (and replay reports
them), so the tables hold the same reading of every run as every other reader.

The tables' shape and every query over them (:func:`select_runs`, :func:`read_tables`,
:func:`cache_row`, :func:`stream_outline`, :func:`run_ids_with_prefix`) live in
:mod:`aborist.projection_reads`; they are re-exported here, beside the fold that writes them.

Every column is a function of the events alone (timestamps are the events'
``recorded_at``), which is what lets ``aborist-ledger rebuild`` reproduce the tables row for
row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from aborist.errors import RunGrammarError
from aborist.events import (
    AnswerLabelled,
    CacheChecked,
    CacheWritten,
    RunCompleted,
    RunFailed,
    RunStarted,
)
from aborist.migrations import HEAD_REVISION as SCHEMA_REVISION
from aborist.pipeline.history import FACT_TYPES, GrammarState
from aborist.projection_reads import (
    PROJECTION_COLUMNS,
    PROJECTION_KEYS,
    PROJECTION_TABLES,
    RUN_STATUSES,
    Row,
    RunFilter,
    Tables,
    cache_row,
    column,
    read_tables,
    run_ids_with_prefix,
    select_runs,
    stream_outline,
)
from ledger.canonical import canonical_text
from ledger.envelope import RecordedEvent
from ledger.jsonsafe import CanonicalMemo, parse_canonical
from ledger.store import Ledger
from ledger.writer import Tx

__all__ = [
    "PROJECTION_COLUMNS",
    "PROJECTION_KEYS",
    "PROJECTION_TABLES",
    "RUN_STATUSES",
    "Row",
    "RunFilter",
    "RunProjection",
    "Tables",
    "cache_row",
    "column",
    "open_ledger",
    "read_tables",
    "rebuild_projections",
    "run_ids_with_prefix",
    "select_runs",
    "stream_outline",
]

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
_PRIOR = (
    "SELECT seq, stream_seq, type, CASE WHEN type IN ("
    + ", ".join(f"'{t}'" for t in sorted(FACT_TYPES))
    + ") THEN payload ELSE '' END FROM events WHERE stream = :s AND stream_seq < :p "
    "ORDER BY stream_seq"
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


_FOLDED = frozenset(m.TYPE for m in (RunStarted, CacheChecked, AnswerLabelled, CacheWritten,
                                      RunCompleted, RunFailed))  # fmt: skip


class RunProjection:
    """Folds ``qa.*`` events into providence_cache, run_dag_nodes and runs, refusing any
    that breaks its run's grammar.

    ``scratch``: the events are folded from the first in order into a database with no
    ``events`` table (replay's check 4), so each run's place in the grammar is kept here,
    and an event that breaks it is passed over instead of refused. A live projection reads
    the place from the run's earlier events in the same transaction; ``skip_breaks`` (set
    by :func:`rebuild_projections`) passes over breaking events instead of refusing them.
    """

    name = "aborist.runs"
    event_types = None  # every event: a run's stream is checked whatever its types
    revision = SCHEMA_REVISION  # its tables' migration (aborist's branch)

    def __init__(self, *, scratch: bool = False) -> None:
        self.scratch = scratch
        self.skip_breaks = scratch
        self._states: dict[str, GrammarState] = {}
        #: The grammar state of the run whose event was the last this projection folded,
        #: with that event's seq and hash: valid for the next append exactly when that
        #: event is the head the append chains to (its first event's ``prev_hash``), so a
        #: run's consecutive appends need not read its earlier events back. A rolled-back
        #: or interleaved append leaves another head, and the state is read again.
        self._head: tuple[str, GrammarState, int, str] | None = None
        #: Payload texts already shown canonical by the reader feeding this fold (a
        #: replay's envelope check), which it then only parses (ledger.jsonsafe).
        self.memo: CanonicalMemo | None = None

    def reset(self, tx: Tx) -> None:
        self._states.clear()
        self._head = None
        for table in PROJECTION_TABLES:
            tx.execute(f"DELETE FROM {table}")

    def _state(self, tx: Tx, ev: RecordedEvent, run_id: str) -> GrammarState:
        """The run's place in the grammar before ``ev`` (its first event in the batch)."""
        if self.scratch:
            found = self._states.get(run_id)
            if found is None:
                found = self._states[run_id] = GrammarState(run_id)
            return found
        head, self._head = self._head, None
        if ev.stream_seq == 1:
            return GrammarState(run_id)
        if (
            head is not None
            and head[0] == run_id
            and head[2] == ev.seq - 1
            and head[3] == ev.prev_hash
        ):
            return head[1]
        state = GrammarState(run_id)
        for seq, stream_seq, type_, payload in tx.execute(
            _PRIOR, {"s": ev.stream, "p": ev.stream_seq}
        ):
            prior = RecordedEvent(int(seq), "", ev.stream, int(stream_seq), str(type_), 1,
                                  "", str(payload or ""), "", "", "")  # fmt: skip
            state.step(prior, _loads)
        return state

    def apply(self, tx: Tx, events: Sequence[RecordedEvent]) -> None:
        """Check each run event against its run's grammar, then fold the ones that change
        a row, in order. The ``runs`` columns each event sets are gathered per run and
        written once at the end of the batch (one INSERT for a run started in it, else one
        UPDATE): a cache hit's three events, or a run's label, cache write and completion,
        become one statement on ``runs`` instead of three or four. Every ``runs`` write
        sets plain values, so the merged write leaves the row as writing them one by one
        would; ``providence_cache`` and ``run_dag_nodes`` are written in event order as
        they come."""
        dags: dict[str, dict[str, Any]] = {}  # run -> the DAG labelled in this batch
        rows: dict[str, dict[str, Any]] = {}  # run -> the runs columns this batch sets
        started: set[str] = set()  # runs whose row this batch inserts
        states: dict[str, GrammarState] = {}
        for ev in events:
            if not ev.stream.startswith("run:"):
                continue
            run_id = ev.stream[4:]
            state = states.get(run_id)
            if state is None:
                state = states[run_id] = self._state(tx, ev, run_id)
            parsed: list[Any] = []

            def data(e: RecordedEvent, parsed: list[Any] = parsed) -> Any:
                if not parsed:
                    parsed.append(parse_canonical(e.payload, memo=self.memo))
                return parsed[0]

            broke = state.step(ev, data)
            if broke is not None:
                if self.skip_breaks:
                    continue
                raise RunGrammarError(f"refused: {broke.message()}; nothing was written")
            if ev.type not in _FOLDED:
                continue
            p = data(ev)
            if ev.type == RunStarted.TYPE:
                rows[run_id] = _new_run(run_id, ev, p)
                started.add(run_id)
                continue
            self._fold(tx, ev, run_id, p, dags, rows.setdefault(run_id, {}))
        if self.scratch:
            for run_id, state in states.items():
                if state.ended is not None or state.broken is not None:
                    self._states.pop(run_id, None)  # later events break it as well
        else:
            last = events[-1]
            if last.stream.startswith("run:") and last.stream[4:] in states:
                self._head = (last.stream[4:], states[last.stream[4:]], last.seq, last.hash)
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
        if t == CacheChecked.TYPE:
            row["cache_key"] = p["cache_key"]
            if p["hit"]:
                tx.execute(_HIT, {"at": ev.recorded_at, "cache_key": p["cache_key"]})
                row.update(cache_hit=True, served_from_run_id=p["hit_run_id"])
        elif t == AnswerLabelled.TYPE:
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
        elif t == CacheWritten.TYPE:
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
        elif t == RunCompleted.TYPE:
            row.update(
                status="completed", finished_seq=ev.seq, finished_at=ev.recorded_at,
                audit_mode=p["audit_mode"], label=p["label"], run_dag_root=p["run_dag_root"],
            )  # fmt: skip
        elif t == RunFailed.TYPE:
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


def _loads(ev: RecordedEvent) -> Any:
    return parse_canonical(ev.payload)


def rebuild_projections(ledger: Ledger) -> int:
    """``ledger.rebuild_projections()``, with the run projection passing over events that
    break their run's grammar (written around the library; replay names them) instead of
    refusing the rebuild: the rebuilt tables hold each run's history, as the live ones do."""
    runs = [p for p in ledger.projections if isinstance(p, RunProjection)]
    for p in runs:
        p.skip_breaks = True
    try:
        return ledger.rebuild_projections()
    finally:
        for p in runs:
            p.skip_breaks = p.scratch


def open_ledger(url: str) -> Ledger:
    """The pipeline's ledger: opened with its projections, so every append folds them."""
    return Ledger.open(url, projections=[RunProjection()])
