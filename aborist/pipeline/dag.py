"""The per-run Merkle DAG of stage hashes (docs/pipeline.md, "The run DAG").

Seven stages in quote mode, nine in claim-lattice mode, plus ``repair`` when it ran.
Each node commits to one stage's output (its *stage hash*) and to the node hashes of the
stages it consumed, so the root (the ``final_label`` node) commits to every step::

    node_hash = sha256("aborist.dag.node.v1\\n" || JCS({"stage": s, "stage_hash": h,
                                                       "parents": [parent node hashes]}))

Parents are listed in the order given by :data:`PARENTS`. The stage hash is the payload
hash of the stage's ledger event (see :data:`STAGE_EVENTS`); for ``final_label``, whose
event also records the root it concludes, it is the hash of that payload without the
``run_dag`` field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aborist.errors import RunDagError
from aborist.events import MODES, STAGE_TABLE, AnswerRepaired
from ledger.canonical import canonical_json, sha256_hex

__all__ = [
    "DAG_NODE_DOMAIN",
    "PARENTS",
    "STAGES",
    "STAGE_EVENTS",
    "DagNode",
    "RunDag",
    "build_dag",
    "stages_for",
]

DAG_NODE_DOMAIN = b"aborist.dag.node.v1\n"

#: Each mode's DAG stages in order, read from the stage table (``repair`` is inserted
#: after ``verify`` only when it ran: :func:`stages_for`).
STAGES: dict[str, tuple[str, ...]] = {
    mode: tuple(
        str(row.dag_stage(mode))
        for row in STAGE_TABLE
        if row.dag_stage(mode) is not None and row.event is not AnswerRepaired
    )
    for mode in MODES
}

# Which stages each stage consumed. ``repair`` (when present) follows ``verify`` and
# replaces it as the input of whatever came after verify.
PARENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "quote": {
        "question": (),
        "retrieval": ("question",),
        "context": ("retrieval",),
        "prompt": ("question", "context"),
        "answer": ("prompt",),
        "verify": ("answer", "context"),
        "repair": ("verify", "context"),
        "final_label": ("verify",),
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


def stages_for(mode: str, *, repaired: bool = False) -> tuple[str, ...]:
    stages = STAGES[mode]
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

    @property
    def root(self) -> str:
        return self.nodes[-1].node_hash

    def to_dict(self) -> dict[str, Any]:
        """The ``run_dag_blob``: ``{root, mode, nodes}``."""
        return {"root": self.root, "mode": self.mode, "nodes": [n.to_dict() for n in self.nodes]}


def node_hash(stage: str, stage_hash: str, parents: tuple[str, ...]) -> str:
    body = {"parents": list(parents), "stage": stage, "stage_hash": stage_hash}
    return sha256_hex(DAG_NODE_DOMAIN + canonical_json(body))


def build_dag(mode: str, stage_hashes: Mapping[str, str]) -> RunDag:
    """Build the DAG from each stage's hash. ``repair`` is included iff present."""
    if mode not in STAGES:
        raise RunDagError(f"unknown mode {mode!r}; expected one of {', '.join(STAGES)}")
    repaired = "repair" in stage_hashes
    order = stages_for(mode, repaired=repaired)
    missing = [s for s in order if s not in stage_hashes]
    if missing:
        raise RunDagError(f"run DAG is missing stage(s): {', '.join(missing)}")
    extra = sorted(set(stage_hashes) - set(order))
    if extra:
        raise RunDagError(f"stage(s) not in a {mode} run: {', '.join(extra)}")
    done: dict[str, str] = {}
    nodes = []
    for stage in order:
        parents = [p for p in PARENTS[mode][stage]]
        if repaired and stage not in ("repair", "verify"):
            parents = ["repair" if p == "verify" else p for p in parents]
        parent_hashes = tuple(done[p] for p in parents)
        h = node_hash(stage, stage_hashes[stage], parent_hashes)
        done[stage] = h
        nodes.append(DagNode(stage, stage_hashes[stage], parent_hashes, h))
    return RunDag(mode, tuple(nodes))
