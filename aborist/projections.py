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
(migrations/0003, docs/pipeline.md "Projections").

Every column is a function of the events alone (timestamps are the events'
``recorded_at``), which is what lets ``aborist-ledger rebuild`` reproduce the tables row for
row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ledger.canonical import canonical_text
from ledger.envelope import RecordedEvent
from ledger.store import Ledger
from ledger.writer import Tx

__all__ = ["PROJECTION_TABLES", "RunProjection", "open_ledger", "run_projection"]

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
_INSERT_RUN = """
    INSERT INTO runs (run_id, kind, question, mode, status, cache_key, cache_hit,
        served_from_run_id, audit_mode, label, run_dag_root, started_seq, finished_seq,
        started_at, finished_at, failed_stage, error)
    VALUES (:run_id, :kind, :question, :mode, 'started', NULL, :false, NULL, NULL, NULL,
        NULL, :seq, NULL, :at, NULL, NULL, NULL)
    """
_RUN_KEY = "UPDATE runs SET cache_key = :cache_key WHERE run_id = :run_id"
_HIT = (
    "UPDATE providence_cache SET hit_count = hit_count + 1, last_hit_at = :at "
    "WHERE cache_key = :cache_key"
)
_RUN_HIT = "UPDATE runs SET cache_hit = :true, served_from_run_id = :src WHERE run_id = :run_id"
_INSERT_NODE = (
    "INSERT INTO run_dag_nodes (run_id, ordinal, stage, stage_hash, node_hash, parents) "
    "VALUES (:run_id, :ordinal, :stage, :stage_hash, :node_hash, :parents)"
)
_LABEL_RUN = (
    "UPDATE runs SET audit_mode = :audit_mode, label = :label, run_dag_root = :root "
    "WHERE run_id = :run_id"
)
_COMPLETE_RUN = (
    "UPDATE runs SET status = 'completed', finished_seq = :seq, finished_at = :at, "
    "audit_mode = :audit_mode, label = :label, run_dag_root = :root WHERE run_id = :run_id"
)
_FAIL_RUN = (
    "UPDATE runs SET status = 'failed', finished_seq = :seq, finished_at = :at, "
    "failed_stage = :stage, error = :error WHERE run_id = :run_id"
)


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

    def reset(self, tx: Tx) -> None:
        for table in PROJECTION_TABLES:
            tx.execute(f"DELETE FROM {table}")

    def apply(self, tx: Tx, events: Sequence[RecordedEvent]) -> None:
        dags: dict[str, dict[str, Any]] = {}  # run -> the DAG labelled in this batch
        for ev in events:
            if ev.stream.startswith("run:") and ev.type in _FOLDED:
                self._fold(tx, ev, ev.stream[4:], json.loads(ev.payload), dags)

    def _fold(
        self,
        tx: Tx,
        ev: RecordedEvent,
        run_id: str,
        p: dict[str, Any],
        dags: dict[str, dict[str, Any]],
    ) -> None:
        t = ev.type
        if t == "qa.run_started":
            tx.execute(
                _INSERT_RUN,
                {
                    "run_id": run_id, "kind": p["kind"], "question": p["question"],
                    "mode": p["mode"], "false": False, "seq": ev.seq, "at": ev.recorded_at,
                },
            )  # fmt: skip
            return
        if t == "qa.cache_checked":
            tx.execute(_RUN_KEY, {"cache_key": p["cache_key"], "run_id": run_id})
            if p["hit"]:
                tx.execute(_HIT, {"at": ev.recorded_at, "cache_key": p["cache_key"]})
                tx.execute(_RUN_HIT, {"true": True, "src": p["hit_run_id"], "run_id": run_id})
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
            tx.execute(
                _LABEL_RUN,
                {"audit_mode": p["audit_mode"], "label": p["label"], "root": dag["root"],
                 "run_id": run_id},
            )  # fmt: skip
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
            tx.execute(
                _COMPLETE_RUN,
                {"seq": ev.seq, "at": ev.recorded_at, "audit_mode": p["audit_mode"],
                 "label": p["label"], "root": p["run_dag_root"], "run_id": run_id},
            )  # fmt: skip
        elif t == "qa.run_failed":
            tx.execute(
                _FAIL_RUN,
                {"seq": ev.seq, "at": ev.recorded_at, "stage": p["stage"],
                 "error": f"{p['error_type']}: {p['message']}", "run_id": run_id},
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
