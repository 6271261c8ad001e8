"""Replay check 2: each run's DAG, recomputed from its events alone (docs/pipeline.md,
"The run DAG"; docs/replay.md).

For a run that reached ``qa.answer_labelled`` the stage hashes are recomputed from the
stage events' payload bytes (``final_label``: :func:`aborist.pipeline.run.label_stage_hash`
of the labelled payload), the DAG is rebuilt (:func:`rebuild_dag`: the topology of
:func:`aborist.pipeline.dag.build_dag`, node hashes through a fixed-shape serializer) in
the shape of the DAG version the label records (``dag_version``, absent for version 1:
:func:`aborist.pipeline.dag.recorded_version`), and every node and the root are compared
with

- the DAG recorded in ``qa.answer_labelled``: its version, its shape (recorded nodes in
  the shape of another version than the label's are named as such), every node, the root,
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
from functools import cache
from hashlib import sha256
from typing import Any

from aborist.audit.checks.projections_check import LiveRows, column
from aborist.audit.checks.run_end import run_end
from aborist.audit.checks.run_events import RunEvents, as_run_events
from aborist.audit.checks.type_versions import cut_divergence, first_unread
from aborist.audit.findings import Divergence, clip, clip_typed
from aborist.events import (
    MODES,
    AnswerLabelled,
    CacheWritten,
    RunCompleted,
    RunFailed,
    RunStarted,
)
from aborist.pipeline.dag import (
    DAG_NODE_DOMAIN,
    DAG_VERSION,
    DAG_VERSIONS,
    STAGE_EVENTS,
    STAGES,
    DagNode,
    RunDag,
    build_dag,
    recorded_version,
    stages_for,
)
from aborist.pipeline.history import RunHistory
from aborist.pipeline.run import label_stage_hash
from ledger.canonical import canonical_string, canonical_text
from ledger.envelope import RecordedEvent

__all__ = [
    "TERMINAL_EVENTS",
    "RunCheck",
    "check_run",
    "dag_blob_text",
    "history_divergence",
    "node_hash",
    "parents_text",
    "read_history",
    "rebuild_dag",
    "run_status",
]

TERMINAL_EVENTS = (RunCompleted.TYPE, RunFailed.TYPE)
#: What a label's ``dag_version`` may be: what some version of the pipeline wrote.
_WRITTEN = [str(v) for v in DAG_VERSIONS if v != 1]
_VERSIONS_WRITTEN = "no dag_version (DAG version 1) or " + (
    f"the integer {_WRITTEN[0]}"
    if len(_WRITTEN) == 1
    else f"one of the integers {', '.join(_WRITTEN)}"
)
_ABSENT = object()

_RUNS_ROOT = column("runs", "run_dag_root")
_CACHE_ROOT = column("providence_cache", "run_dag_root")
_CACHE_BLOB = column("providence_cache", "run_dag_blob")
_NODE_FIELDS = ("ordinal", "stage", "stage_hash", "node_hash", "parents")
_NODE_COLUMNS = tuple(column("run_dag_nodes", f) for f in _NODE_FIELDS)


@dataclass
class RunCheck:
    """What checking one run found."""

    run_id: str
    status: str
    dag: RunDag | None = None
    stages_checked: int = 0
    divergences: list[Divergence] = field(default_factory=list)
    served: tuple[int, str, str] | None = None  # (seq, served_from_run_id, recorded root)
    #: The run's history (:class:`~aborist.pipeline.history.RunHistory`) and its events
    #: as the other checks read them: the accepted prefix of the stream.
    history: RunHistory | None = None
    run: RunEvents | None = None


def node_hash(stage: str, stage_hash: str, parents: Sequence[str]) -> str:
    """:func:`aborist.pipeline.dag.node_hash`, written by a serializer of the node's fixed shape
    (``{"parents": [...], "stage": ..., "stage_hash": ...}`` in JCS member order, strings
    through :func:`~ledger.canonical.canonical_string`): the same RFC 8785 bytes without a
    general walk, for the ~9 nodes of every run a replay rebuilds. ``tests/audit/
    test_dag_fixed_shape.py`` checks it against the pipeline's function."""
    return _node_hash(stage, stage_hash, parents_text(parents))


@cache
def _stage_member(stage: str) -> str:
    """The constant middle of a node's JCS text, ``,"stage":"<stage>","stage_hash":``
    (stage names are the few of :data:`aborist.pipeline.dag.STAGES`)."""
    return ',"stage":' + canonical_string(stage) + ',"stage_hash":'


def _node_hash(stage: str, stage_hash: str, parents_json: str) -> str:
    body = '{"parents":' + parents_json + _stage_member(stage) + canonical_string(stage_hash)
    return sha256(DAG_NODE_DOMAIN + body.encode("utf-8") + b"}").hexdigest()


def parents_text(parents: Sequence[str]) -> str:
    """The canonical JSON of a list of parent node hashes: what a node hashes, and
    ``run_dag_nodes.parents`` as :class:`aborist.projections.RunProjection` writes it."""
    return "[" + ",".join([canonical_string(p) for p in parents]) + "]"


@cache
def _topology(
    mode: str, repaired: bool, version: int
) -> tuple[tuple[str, tuple[int, ...], str], ...]:
    """Each stage of a ``mode`` run of DAG ``version`` with the positions of its parents,
    read off a DAG that :func:`aborist.pipeline.dag.build_dag` builds from placeholder
    hashes: the pipeline's own rule for which stage consumed which, not a copy of it; and
    the constant middle of the stage's node text (:func:`_stage_member`)."""
    order = stages_for(mode, repaired=repaired, version=version)
    dag = build_dag(mode, {stage: f"{i:064x}" for i, stage in enumerate(order)}, version)
    position = {n.node_hash: i for i, n in enumerate(dag.nodes)}
    return tuple(
        (n.stage, tuple(position[p] for p in n.parents), _stage_member(n.stage)) for n in dag.nodes
    )


_NODE_PREFIX = DAG_NODE_DOMAIN.decode("ascii") + '{"parents":'


def _rebuild(
    mode: str, stage_hashes: Mapping[str, str], version: int = DAG_VERSION
) -> tuple[RunDag, list[str]] | None:
    """The DAG and each node's parents as JCS text, or None for anything ``build_dag``
    would refuse (an unknown mode or version, a missing or extra stage). The node hashes
    are :func:`_node_hash`'s, written inline (the loop every replayed run takes)."""
    repaired = "repair" in stage_hashes
    if mode not in STAGES or version not in DAG_VERSIONS:
        return None
    topology = _topology(mode, repaired, version)
    if len(stage_hashes) != len(topology):
        return None
    nodes: list[DagNode] = []
    texts: list[str] = []
    hashes: list[str] = []
    q, prefix = canonical_string, _NODE_PREFIX
    try:
        for stage, parent_at, member in topology:
            parents = tuple([hashes[i] for i in parent_at])
            # the parents are hexdigests computed here: JCS writes each as it is, quoted
            text = '["' + '","'.join(parents) + '"]' if parents else "[]"
            stage_hash = stage_hashes[stage]
            body = prefix + text + member + q(stage_hash) + "}"
            h = sha256(body.encode("utf-8")).hexdigest()
            hashes.append(h)
            texts.append(text)
            nodes.append(DagNode(stage, stage_hash, parents, h))
    except KeyError:
        return None
    return RunDag(mode, tuple(nodes), version), texts


@cache
def _stage_events(mode: str, repaired: bool, version: int) -> tuple[tuple[str, str], ...]:
    """Each stage of a ``mode`` run of DAG ``version`` with the type of the event that
    records it."""
    return tuple(
        (stage, STAGE_EVENTS[stage])
        for stage in stages_for(mode, repaired=repaired, version=version)
    )


def rebuild_dag(mode: str, stage_hashes: Mapping[str, str], version: int = DAG_VERSION) -> RunDag:
    """:func:`aborist.pipeline.dag.build_dag`, equal node for node (a property test checks it),
    with the node hashes of :func:`node_hash`. Anything ``build_dag`` would refuse goes
    to ``build_dag``, which raises."""
    built = _rebuild(mode, stage_hashes, version)
    return built[0] if built is not None else build_dag(mode, stage_hashes, version)


def run_status(events: Sequence[RecordedEvent]) -> str:
    """completed | cached | failed | incomplete: the status of the run's history
    (:class:`aborist.pipeline.history.RunHistory`), as every reader reads it."""
    run = as_run_events("", events)
    return RunHistory.read(run.run_id, run, run.data).status


def history_divergence(h: RunHistory) -> Divergence | None:
    """The break of ``h``'s grammar as a divergence (kind ``history``), or None."""
    b = h.broken
    if b is None:
        return None
    later = (
        f"; it and {h.ignored - 1} later event(s) are not part of the run"
        if h.ignored > 1
        else "; it is not part of the run"
    )
    return Divergence("history", b.seq, h.run_id, b.type, clip(b.expected), clip(b.found),
                      b.rule + later)  # fmt: skip


def truncation_divergence(run: RunEvents) -> Divergence | None:
    """A run whose history (``run``, which keeps the grammar) stops inside a batch the
    pipeline commits whole (:mod:`aborist.audit.checks.run_end`: a lone
    ``qa.run_started``, a hit's ``qa.cache_checked``, a label without its completion) as
    a ``history`` divergence at its last event, or None. The ledger commits each batch in
    one transaction, so such a stream lost its last events: deleted at the head (the chain
    then still holds) or cut out of a rewritten history."""
    if not run or run[-1].type in TERMINAL_EVENTS:
        return None
    try:
        end = run_end(run)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None  # a payload the pipeline never wrote: the checks that read it name it
    if end.truncated is None:
        return None
    return Divergence("history", end.last_seq, run.run_id, end.last_type, end.expected,
                      f"the stream ends at {end.last_type}",
                      f"truncated: {end.truncated}")  # fmt: skip


def dag_blob_text(dag: RunDag) -> str:
    """``providence_cache.run_dag_blob`` as :class:`aborist.projections.RunProjection`
    writes it: ``{root, nodes}`` from the node rows, canonical JSON."""
    nodes = [
        {"stage": n.stage, "stage_hash": n.stage_hash, "node_hash": n.node_hash,
         "parents": list(n.parents)}
        for n in dag.nodes
    ]  # fmt: skip
    return canonical_text({"root": dag.root, "nodes": nodes})


def read_history(
    run_id: str, events: Sequence[RecordedEvent], *, truncation: bool = True
) -> tuple[RunHistory, RunEvents, Divergence | None]:
    """The run's history (the grammar read over its stream up to the first event of a
    ``type_version`` this code does not read), its events, and the first ``history``
    divergence: the grammar's break, else that event, else (``truncation``) a cut batch."""
    whole = as_run_events(run_id, events)
    cut = first_unread(whole)
    readable = whole if cut is None else whole.prefix(cut)
    history = RunHistory.read(run_id, readable, readable.data)
    run = readable.prefix(len(history.accepted))
    broke = (
        history_divergence(history)
        or (cut_divergence(run_id, whole, cut) if cut is not None else None)
        or (truncation_divergence(run) if truncation else None)
    )
    return history, run, broke


def check_run(
    run_id: str,
    events: Sequence[RecordedEvent],
    live: LiveRows | None,
    *,
    truncation: bool = True,
) -> RunCheck:
    """Recompute ``run_id``'s DAG from ``events`` (its stream, in order) and compare;
    ``truncation``: :func:`truncation_divergence` too (a bundle names it under ``events``).

    ``events`` may be a :class:`~aborist.audit.checks.run_events.RunEvents`, whose parsed
    payloads and digests are then shared with the caller's other checks."""
    history, run, broke = read_history(run_id, events, truncation=truncation)
    check = RunCheck(run_id, history.status, history=history, run=run)
    out = check.divergences
    if broke is not None:
        out.append(broke)

    def diverge(
        ev: RecordedEvent | None, stage: str, expected: str, found: str, detail: str = ""
    ) -> None:
        out.append(
            Divergence("dag", ev.seq if ev else None, run_id, stage, expected, found, detail)
        )

    started = run.first(RunStarted.TYPE)
    if started is None:
        diverge(run[0] if run else None, "question", f"a {RunStarted.TYPE} event", "none")
        return check
    done = run.first(RunCompleted.TYPE)
    if check.status == "cached" and done is not None:
        data = run.data(done)
        check.served = (done.seq, str(data.get("served_from_run_id")), str(data["run_dag_root"]))
    labelled = run.first(AnswerLabelled.TYPE)
    if labelled is None:
        return check

    mode = str(run.data(started)["mode"])
    if mode not in MODES:
        diverge(started, "question", "mode quote or claim-lattice", clip(mode))
        return check
    label = run.data(labelled)
    version = recorded_version(label)
    if version is None:
        diverge(labelled, "final_label", _VERSIONS_WRITTEN, clip_typed(label.get("dag_version")),
                "dag_version")  # fmt: skip
        return check
    repaired = run.first(STAGE_EVENTS["repair"]) is not None
    hashes: dict[str, str] = {}
    last, digest = run.last, run.digest
    for stage, type_ in _stage_events(mode, repaired, version):
        ev = last(type_)
        if ev is None:
            diverge(labelled, stage, f"a {type_} event before the label", "none")
            return check
        if stage == "final_label":
            hashes[stage] = label_stage_hash(run.data(ev))
        else:
            hashes[stage] = digest(ev)
    built = _rebuild(mode, hashes, version)
    if built is None:
        dag = build_dag(mode, hashes, version)  # raises what it refuses
        texts = [parents_text(n.parents) for n in dag.nodes]
    else:
        dag, texts = built
    check.dag = dag
    check.stages_checked = len(dag.nodes)

    _compare_recorded(
        dag, label.get("run_dag"), lambda s, e, f, d="": diverge(labelled, s, e, f, d)
    )
    _compare_closing(run, dag, label, diverge)
    if live is not None:
        out.extend(_compare_live(run, dag, texts, live))
    return check


def _compare_closing(run: RunEvents, dag: RunDag, label: Mapping[str, Any], diverge: Any) -> None:
    """The root, audit mode, label and answer that the cache write and the completion
    repeat, against the recomputed root and the label."""
    for type_ in (CacheWritten.TYPE, RunCompleted.TYPE):
        ev = run.first(type_)
        if ev is None:
            continue
        data = run.data(ev)
        stage = "cache_write" if type_ == CacheWritten.TYPE else "complete"
        if data.get("run_dag_root") != dag.root:
            diverge(ev, stage, dag.root, clip(data.get("run_dag_root")), "run_dag_root")
        for key in ("audit_mode", "label"):
            if data.get(key) != label.get(key):
                diverge(ev, stage, clip(label.get(key)), clip(data.get(key)), key)
        if "answer" in data:
            h = sha256(str(data["answer"]).encode("utf-8")).hexdigest()
            if h != label.get("answer_hash"):
                diverge(ev, stage, clip(label.get("answer_hash")), h, "sha256 of the answer")


def _compare_recorded(dag: RunDag, recorded: object, diverge: Any) -> None:
    """The DAG recorded in ``qa.answer_labelled`` against the recomputed one: its version,
    its shape (which stages, in which order), each node, the root and the mode."""
    if not isinstance(recorded, Mapping):
        diverge("final_label", "a run_dag object", clip(recorded), "run_dag")
        return
    nodes = recorded.get("nodes")
    if not isinstance(nodes, list):
        diverge("final_label", "a list of nodes", clip(nodes), "run_dag.nodes")
        return
    held = nodes == [n.to_dict() for n in dag.nodes]  # compared in C; the common case
    if not held and _compare_shape(dag, nodes, diverge):
        _compare_nodes(dag, nodes, diverge)
    want_version = dag.version if dag.version != 1 else _ABSENT
    if recorded.get("version", _ABSENT) != want_version:
        diverge("final_label", _version_text(want_version),
                _version_text(recorded.get("version", _ABSENT)), "run_dag.version")  # fmt: skip
    if recorded.get("root") != dag.root:
        diverge("final_label", dag.root, clip(recorded.get("root")), "run_dag.root")
    if recorded.get("mode") != dag.mode:
        diverge("final_label", dag.mode, clip(recorded.get("mode")), "run_dag.mode")


def _version_text(v: object) -> str:
    return "no version (DAG version 1)" if v is _ABSENT else f"version {clip_typed(v)}"


def _compare_shape(dag: RunDag, nodes: list[Any], diverge: Any) -> bool:
    """Whether the recorded nodes name the recomputed DAG's stages in order; if not, one
    divergence naming the DAG version whose shape they have, when one has it (a label
    whose version was changed, or nodes rebuilt in another version's shape)."""
    got = [n.get("stage") if isinstance(n, Mapping) else None for n in nodes]
    want = [n.stage for n in dag.nodes]
    if got == want:
        return True
    repaired = "repair" in want
    other = [
        v for v in DAG_VERSIONS
        if v != dag.version and got == list(stages_for(dag.mode, repaired=repaired, version=v))
    ]  # fmt: skip
    detail = (
        f"run_dag.nodes: the shape of DAG version {other[0]}, but the label records "
        f"version {dag.version}"
        if other
        else f"run_dag.nodes: not the shape of DAG version {dag.version}"
    )
    diverge("final_label", clip(" ".join(want)), clip(" ".join(map(str, got))), detail)
    return False


def _compare_nodes(dag: RunDag, nodes: list[Any], diverge: Any) -> None:
    """The recorded nodes (in the recomputed DAG's shape) node by node: the first
    difference."""
    for i, want in enumerate(dag.nodes):
        got = nodes[i]
        if not isinstance(got, Mapping):
            diverge(want.stage, clip(want.to_dict()), clip(got), f"run_dag.nodes[{i}]")
            return
        expected = want.to_dict()
        for key in ("stage", "stage_hash", "parents", "node_hash"):
            if got.get(key) != expected[key]:
                diverge(
                    want.stage, clip(expected[key]), clip(got.get(key)), f"run_dag.nodes[{i}].{key}"
                )
                return


def _compare_live(
    run: RunEvents, dag: RunDag, parents: list[str], live: LiveRows
) -> list[Divergence]:
    """The recomputed DAG against ``runs``, ``run_dag_nodes`` and ``providence_cache``."""
    out: list[Divergence] = []
    run_id = run.run_id
    labelled = run.first(AnswerLabelled.TYPE)
    done = run.first(RunCompleted.TYPE)
    written = run.first(CacheWritten.TYPE)

    def diverge(
        ev: RecordedEvent | None, stage: str, expected: str, found: str, detail: str
    ) -> None:
        out.append(
            Divergence("dag", ev.seq if ev else None, run_id, stage, expected, found, detail)
        )

    row = live.runs.get(run_id)
    if row is None:
        diverge(done or labelled, "projection", "a runs row", "none", "runs")
    elif row[_RUNS_ROOT] != dag.root:
        diverge(done or labelled, "projection", dag.root, clip(row[_RUNS_ROOT]),
                "runs.run_dag_root")  # fmt: skip
    rows = live.nodes.get(run_id, [])
    expected = [
        (run_id, i, n.stage, n.stage_hash, n.node_hash, parents[i]) for i, n in enumerate(dag.nodes)
    ]
    held = rows == expected  # every row equal (compared in C); the common case
    for i, node in enumerate(() if held else dag.nodes):
        want = expected[i][1:]
        got = rows[i] if i < len(rows) else None
        if got is None:
            diverge(labelled, node.stage, f"run_dag_nodes row {i}", "none", "run_dag_nodes")
            break
        found = tuple(got[c] for c in _NODE_COLUMNS)
        if found == want:
            continue
        k = next(k for k in range(len(want)) if found[k] != want[k])
        diverge(labelled, node.stage, clip(want[k]), clip(found[k]),
                f"run_dag_nodes[{i}].{_NODE_FIELDS[k]}")  # fmt: skip
        break
    else:
        if len(rows) != len(dag.nodes):
            diverge(labelled, "final_label", f"{len(dag.nodes)} run_dag_nodes rows",
                    f"{len(rows)}", "run_dag_nodes")  # fmt: skip
    cache_rows = live.cache.get(run_id)
    if cache_rows:
        blob = dag_blob_text(dag)
        for cache_row in cache_rows:
            if cache_row[_CACHE_ROOT] != dag.root:
                diverge(written, "cache_write", dag.root, clip(cache_row[_CACHE_ROOT]),
                        "providence_cache.run_dag_root")  # fmt: skip
            elif cache_row[_CACHE_BLOB] != blob:
                diverge(written, "cache_write", clip(blob), clip(cache_row[_CACHE_BLOB]),
                        "providence_cache.run_dag_blob")  # fmt: skip
    return out
