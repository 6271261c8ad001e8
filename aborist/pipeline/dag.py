"""The per-run Merkle DAG of stage hashes (docs/pipeline.md, "The run DAG").

Eight stages in quote mode, nine in claim-lattice mode, plus ``repair`` when it ran.
Each node commits to one stage's output (its *stage hash*) and to the node hashes of the
stages it consumed, so the root (the ``final_label`` node) commits to every step::

    node_hash = sha256("aborist.dag.node.v1\\n" || JCS({"stage": s, "stage_hash": h,
                                                       "parents": [parent node hashes]}))

Parents are listed in the order given by :data:`PARENTS`. The stage hash is the payload
hash of the stage's ledger event (see :data:`STAGE_EVENTS`); for ``final_label``, whose
event also records the root it concludes, it is the hash of that payload without the
``run_dag`` field.

The DAG's shape is versioned (:data:`~aborist.events.DAG_VERSIONS`). Version 2, what new
runs record, gives quote mode the ``render`` node claim-lattice mode always had
(``render`` ← verify or repair, ``final_label`` ← render); claim-lattice's shape is the
same in both. Version 1 is the quote DAG of the runs recorded before: seven stages,
``final_label`` ← verify or repair. The version is in the label's payload
(``dag_version``, absent for version 1), so the root commits to it, and in the
``run_dag`` the label records (``version``, likewise absent for version 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aborist.errors import RunDagError
from aborist.events import DAG_VERSION, DAG_VERSIONS, MODES, STAGE_TABLE, AnswerRepaired
from ledger.canonical import canonical_json, sha256_hex

__all__ = [
    "DAG_NODE_DOMAIN",
    "DAG_VERSION",
    "DAG_VERSIONS",
    "PARENTS",
    "STAGES",
    "STAGES_OF",
    "STAGE_EVENTS",
    "DagNode",
    "RunDag",
    "build_dag",
    "parents_of",
    "recorded_version",
    "stages_for",
]

DAG_NODE_DOMAIN = b"aborist.dag.node.v1\n"

#: Each DAG version's stages per mode, in order, read from the stage table (``repair`` is
#: inserted after ``verify`` only when it ran: :func:`stages_for`).
STAGES_OF: dict[int, dict[str, tuple[str, ...]]] = {
    version: {
        mode: tuple(
            str(row.dag_stage(mode, version))
            for row in STAGE_TABLE
            if row.dag_stage(mode, version) is not None and row.event is not AnswerRepaired
        )
        for mode in MODES
    }
    for version in DAG_VERSIONS
}

#: The current version's stages per mode (what new runs record).
STAGES: dict[str, tuple[str, ...]] = STAGES_OF[DAG_VERSION]

# Which stages each stage consumed (current version). ``repair`` (when present) follows
# ``verify`` and replaces it as the input of whatever came after verify. A stage of an
# older version that is absent there is skipped over: its consumers take its parents
# (:func:`parents_of`), so version 1's quote ``final_label`` consumed ``verify``.
PARENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "quote": {
        "question": (),
        "retrieval": ("question",),
        "context": ("retrieval",),
        "prompt": ("question", "context"),
        "answer": ("prompt",),
        "verify": ("answer", "context"),
        "repair": ("verify", "context"),
        "render": ("verify",),
        "final_label": ("render",),
    },
    "claim-lattice": {
        "question": (),
        "retrieval": ("question",),
        "evidence_map": ("retrieval",),
        "prompt": ("question", "evidence_map"),
        "raw_answer": ("prompt",),
        "parsed_claim_lattice": ("raw_answer",),
        "verify": ("parsed_claim_lattice", "evidence_map"),
        "repair": ("verify", "evidence_map"),
        "render": ("verify",),
        "final_label": ("render",),
    },
}

#: The ledger event whose payload is each stage's output (from the stage table).
STAGE_EVENTS: dict[str, str] = {
    str(row.dag_stage(mode)): row.event.TYPE
    for row in STAGE_TABLE
    for mode in MODES
    if row.dag_stage(mode) is not None
}


def stages_for(mode: str, *, repaired: bool = False, version: int = DAG_VERSION) -> tuple[str, ...]:
    """The stages of a ``mode`` DAG of ``version``, with ``repair`` when it ran."""
    stages = STAGES_OF[version][mode]
    if not repaired:
        return stages
    i = stages.index("verify") + 1
    return (*stages[:i], "repair", *stages[i:])


@dataclass(frozen=True, slots=True)
class DagNode:
    stage: str
    stage_hash: str
    parents: tuple[str, ...]  # parent node hashes
    node_hash: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "stage_hash": self.stage_hash,
            "parents": list(self.parents),
            "node_hash": self.node_hash,
        }


@dataclass(frozen=True, slots=True)
class RunDag:
    mode: str
    nodes: tuple[DagNode, ...]
    version: int = DAG_VERSION

    @property
    def root(self) -> str:
        return self.nodes[-1].node_hash

    def to_dict(self) -> dict[str, Any]:
        """The ``run_dag`` of ``qa.answer_labelled``: ``{root, mode, version, nodes}``;
        version 1 has no ``version`` (as the runs recorded before versions existed)."""
        out: dict[str, Any] = {"root": self.root, "mode": self.mode}
        if self.version != 1:
            out["version"] = self.version
        out["nodes"] = [n.to_dict() for n in self.nodes]
        return out


def parents_of(mode: str, stage: str, version: int = DAG_VERSION) -> tuple[str, ...]:
    """The stages ``stage`` consumed in a ``mode`` DAG of ``version``: :data:`PARENTS`,
    with a parent the version has no node for replaced by that parent's own parents."""
    present = set(stages_for(mode, repaired=True, version=version))
    out: list[str] = []
    for p in PARENTS[mode][stage]:
        for q in (p,) if p in present else parents_of(mode, p, version):
            if q not in out:
                out.append(q)
    return tuple(out)


def recorded_version(label: Mapping[str, Any]) -> int | None:
    """The DAG version a ``qa.answer_labelled`` payload records: 1 when it has no
    ``dag_version`` (every run recorded before versions existed), else the integer it
    names; None for anything no version of the pipeline writes (an explicit 1, a version
    this code does not know, a value that is not an integer)."""
    if "dag_version" not in label:
        return 1
    v = label["dag_version"]
    return v if type(v) is int and v != 1 and v in DAG_VERSIONS else None


def node_hash(stage: str, stage_hash: str, parents: tuple[str, ...]) -> str:
    body = {"parents": list(parents), "stage": stage, "stage_hash": stage_hash}
    return sha256_hex(DAG_NODE_DOMAIN + canonical_json(body))


def build_dag(mode: str, stage_hashes: Mapping[str, str], version: int = DAG_VERSION) -> RunDag:
    """Build the DAG of ``version`` from each stage's hash. ``repair`` is included iff
    present."""
    if mode not in STAGES:
        raise RunDagError(f"unknown mode {mode!r}; expected one of {', '.join(STAGES)}")
    if version not in STAGES_OF:
        raise RunDagError(f"unknown run DAG version {version!r}; expected one of "
                          f"{', '.join(map(str, DAG_VERSIONS))}")  # fmt: skip
    repaired = "repair" in stage_hashes
    order = stages_for(mode, repaired=repaired, version=version)
    missing = [s for s in order if s not in stage_hashes]
    if missing:
        raise RunDagError(f"run DAG is missing stage(s): {', '.join(missing)}")
    extra = sorted(set(stage_hashes) - set(order))
    if extra:
        raise RunDagError(
            f"stage(s) not in a {mode} run (DAG version {version}): {', '.join(extra)}"
        )
    done: dict[str, str] = {}
    nodes = []
    for stage in order:
        parents = list(parents_of(mode, stage, version))
        if repaired and stage not in ("repair", "verify"):
            parents = ["repair" if p == "verify" else p for p in parents]
        parent_hashes = tuple(done[p] for p in parents)
        h = node_hash(stage, stage_hashes[stage], parent_hashes)
        done[stage] = h
        nodes.append(DagNode(stage, stage_hashes[stage], parent_hashes, h))
    return RunDag(mode, tuple(nodes), version)
