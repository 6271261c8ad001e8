"""Replay check 2: each run's DAG, recomputed from its events alone (ARCHITECTURE.md,
"Run DAG" and "Replay").

For a run that reached ``qa.answer_labelled`` the stage hashes are recomputed from the
stage events' payload bytes (``final_label``: :func:`aborist.qa.pipeline.label_stage_hash`
of the labelled payload), the DAG is rebuilt with :func:`aborist.qa.dag.build_dag`, and
every node and the root are compared with

- the DAG recorded in ``qa.answer_labelled``,
- ``run_dag_root`` in ``qa.cache_written`` and ``qa.run_completed``,
- the projections: ``runs.run_dag_root``, the ``run_dag_nodes`` rows and
  ``providence_cache.run_dag_root`` / ``run_dag_blob``.

The label the run concluded (audit mode, label, answer hash) must also be what its cache
write and completion repeat. A cache hit's ``run_dag_root`` must be the recomputed root of
the run it was served from; that is resolved by the caller once every run is known.

Pure: the events and the live projection rows come in, divergences go out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aborist.audit.findings import Divergence, clip
from aborist.qa.dag import STAGE_EVENTS, RunDag, build_dag, stages_for
from aborist.qa.pipeline import label_stage_hash
from ledger.canonical import canonical_text, sha256_hex
from ledger.envelope import RecordedEvent

__all__ = ["LiveRows", "RunCheck", "check_run", "dag_blob_text", "run_status"]

TERMINAL_EVENTS = ("qa.run_completed", "qa.run_failed")


@dataclass
class LiveRows:
    """The live projection rows replay compares with, keyed for lookup by run."""

    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    nodes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    cache: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by run_id


@dataclass
class RunCheck:
    """What checking one run found."""

    run_id: str
    status: str
    dag: RunDag | None = None
    stages_checked: int = 0
    divergences: list[Divergence] = field(default_factory=list)
    served: tuple[int, str, str] | None = None  # (seq, served_from_run_id, recorded root)


def run_status(events: Sequence[RecordedEvent]) -> str:
    """completed | cached | failed | incomplete, as :class:`aborist.qa.recorded.RecordedRun`."""
    for ev in events:
        if ev.type == "qa.run_completed":
            return "cached" if ev.data.get("cache_hit") else "completed"
    if any(ev.type == "qa.run_failed" for ev in events):
        return "failed"
    return "incomplete"


def dag_blob_text(dag: RunDag) -> str:
    """``providence_cache.run_dag_blob`` as :class:`aborist.projections.RunProjection`
    writes it: ``{root, nodes}`` from the node rows, canonical JSON."""
    nodes = [
        {"stage": n.stage, "stage_hash": n.stage_hash, "node_hash": n.node_hash,
         "parents": list(n.parents)}
        for n in dag.nodes
    ]  # fmt: skip
    return canonical_text({"root": dag.root, "nodes": nodes})


def _first(events: Sequence[RecordedEvent], type_: str) -> RecordedEvent | None:
    return next((e for e in events if e.type == type_), None)


def _last(events: Sequence[RecordedEvent], type_: str) -> RecordedEvent | None:
    """The stage's event: the last of its type, as the pipeline's recorder keeps it (a
    re-prompt repair after a mechanical one is the repair that counts)."""
    return next((e for e in reversed(events) if e.type == type_), None)


def check_run(run_id: str, events: Sequence[RecordedEvent], live: LiveRows | None) -> RunCheck:
    """Recompute ``run_id``'s DAG from ``events`` (its stream, in order) and compare."""
    check = RunCheck(run_id, run_status(events))
    out = check.divergences

    def diverge(
        ev: RecordedEvent | None, stage: str, expected: str, found: str, detail: str = ""
    ) -> None:
        out.append(
            Divergence("dag", ev.seq if ev else None, run_id, stage, expected, found, detail)
        )

    started = _first(events, "qa.run_started")
    if started is None:
        diverge(events[0] if events else None, "question", "a qa.run_started event", "none")
        return check
    done = _first(events, "qa.run_completed")
    if check.status == "cached" and done is not None:
        data = done.data
        check.served = (done.seq, str(data.get("served_from_run_id")), str(data["run_dag_root"]))
    labelled = _first(events, "qa.answer_labelled")
    if labelled is None:
        return check

    mode = str(started.data["mode"])
    if mode not in ("quote", "claim-lattice"):
        diverge(started, "question", "mode quote or claim-lattice", clip(mode))
        return check
    repaired = _first(events, STAGE_EVENTS["repair"]) is not None
    hashes: dict[str, str] = {}
    for stage in stages_for(mode, repaired=repaired):
        ev = _last(events, STAGE_EVENTS[stage])
        if ev is None:
            diverge(labelled, stage, f"a {STAGE_EVENTS[stage]} event before the label", "none")
            return check
        if stage == "final_label":
            hashes[stage] = label_stage_hash(ev.data)
        else:
            hashes[stage] = sha256_hex(ev.payload.encode("utf-8"))
    dag = build_dag(mode, hashes)
    check.dag = dag
    check.stages_checked = len(dag.nodes)

    label = labelled.data
    _compare_recorded(
        dag, label.get("run_dag"), lambda s, e, f, d="": diverge(labelled, s, e, f, d)
    )
    for type_ in ("qa.cache_written", "qa.run_completed"):
        ev = _first(events, type_)
        if ev is None:
            continue
        data = ev.data
        stage = "cache_write" if type_ == "qa.cache_written" else "complete"
        if data.get("run_dag_root") != dag.root:
            diverge(ev, stage, dag.root, clip(data.get("run_dag_root")), "run_dag_root")
        for key in ("audit_mode", "label"):
            if data.get(key) != label.get(key):
                diverge(ev, stage, clip(label.get(key)), clip(data.get(key)), key)
        if "answer" in data:
            h = sha256_hex(str(data["answer"]).encode("utf-8"))
            if h != label.get("answer_hash"):
                diverge(ev, stage, clip(label.get("answer_hash")), h, "sha256 of the answer")
    if live is not None:
        out.extend(_compare_live(run_id, dag, events, live))
    return check


def _compare_recorded(dag: RunDag, recorded: object, diverge: Any) -> None:
    """The DAG recorded in ``qa.answer_labelled`` against the recomputed one."""
    if not isinstance(recorded, Mapping):
        diverge("final_label", "a run_dag object", clip(recorded), "run_dag")
        return
    nodes = recorded.get("nodes")
    if not isinstance(nodes, list):
        diverge("final_label", "a list of nodes", clip(nodes), "run_dag.nodes")
        return
    for i, want in enumerate(dag.nodes):
        if i >= len(nodes):
            diverge(want.stage, f"node {i} ({want.stage})", "no node", "run_dag.nodes")
            return
        got = nodes[i]
        expected = want.to_dict()
        if not isinstance(got, Mapping):
            diverge(want.stage, clip(expected), clip(got), f"run_dag.nodes[{i}]")
            return
        for key in ("stage", "stage_hash", "parents", "node_hash"):
            if got.get(key) != expected[key]:
                diverge(
                    want.stage, clip(expected[key]), clip(got.get(key)), f"run_dag.nodes[{i}].{key}"
                )
                return
    if len(nodes) != len(dag.nodes):
        diverge("final_label", f"{len(dag.nodes)} nodes", f"{len(nodes)} nodes", "run_dag.nodes")
    if recorded.get("root") != dag.root:
        diverge("final_label", dag.root, clip(recorded.get("root")), "run_dag.root")
    if recorded.get("mode") != dag.mode:
        diverge("final_label", dag.mode, clip(recorded.get("mode")), "run_dag.mode")


def _compare_live(
    run_id: str, dag: RunDag, events: Sequence[RecordedEvent], live: LiveRows
) -> list[Divergence]:
    """The recomputed DAG against ``runs``, ``run_dag_nodes`` and ``providence_cache``."""
    out: list[Divergence] = []
    labelled = _first(events, "qa.answer_labelled")
    done = _first(events, "qa.run_completed")
    written = _first(events, "qa.cache_written")

    def diverge(
        ev: RecordedEvent | None, stage: str, expected: str, found: str, detail: str
    ) -> None:
        out.append(
            Divergence("dag", ev.seq if ev else None, run_id, stage, expected, found, detail)
        )

    row = live.runs.get(run_id)
    if row is None:
        diverge(done or labelled, "projection", "a runs row", "none", "runs")
    elif row.get("run_dag_root") != dag.root:
        diverge(done or labelled, "projection", dag.root, clip(row.get("run_dag_root")),
                "runs.run_dag_root")  # fmt: skip
    rows = live.nodes.get(run_id, [])
    for i, node in enumerate(dag.nodes):
        want = {
            "ordinal": i, "stage": node.stage, "stage_hash": node.stage_hash,
            "node_hash": node.node_hash, "parents": canonical_text(list(node.parents)),
        }  # fmt: skip
        got = rows[i] if i < len(rows) else None
        if got is None:
            diverge(labelled, node.stage, f"run_dag_nodes row {i}", "none", "run_dag_nodes")
            break
        bad = next((k for k in want if got.get(k) != want[k]), None)
        if bad is not None:
            diverge(labelled, node.stage, clip(want[bad]), clip(got.get(bad)),
                    f"run_dag_nodes[{i}].{bad}")  # fmt: skip
            break
    else:
        if len(rows) != len(dag.nodes):
            diverge(labelled, "final_label", f"{len(dag.nodes)} run_dag_nodes rows",
                    f"{len(rows)}", "run_dag_nodes")  # fmt: skip
    blob = dag_blob_text(dag)
    for cache_row in live.cache.get(run_id, []):
        if cache_row.get("run_dag_root") != dag.root:
            diverge(written, "cache_write", dag.root, clip(cache_row.get("run_dag_root")),
                    "providence_cache.run_dag_root")  # fmt: skip
        elif cache_row.get("run_dag_blob") != blob:
            diverge(written, "cache_write", clip(blob), clip(cache_row.get("run_dag_blob")),
                    "providence_cache.run_dag_blob")  # fmt: skip
    return out
