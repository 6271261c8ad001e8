"""Run DAG shape and hashing (docs/pipeline.md, "The run DAG"), in both versions: version 2
(what new runs record: quote mode has a ``render`` node) and version 1 (the quote DAG of
the runs recorded before, which must keep rebuilding to the roots they recorded)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aborist.events import DAG_VERSION, DAG_VERSIONS
from aborist.pipeline.dag import (
    DAG_NODE_DOMAIN,
    STAGES,
    STAGES_OF,
    build_dag,
    recorded_version,
    stages_for,
)
from ledger.canonical import canonical_json, canonical_text, sha256_hex

QUOTE_V1 = ["question", "retrieval", "context", "prompt", "answer", "verify", "final_label"]
LATTICE = [
    "question", "retrieval", "evidence_map", "prompt", "raw_answer", "parsed_claim_lattice",
    "verify", "render", "final_label",
]  # fmt: skip

#: Roots and sha256(JCS(run_dag)) that the code before DAG versions existed computed for
#: the stage hashes of :func:`hashes` (mode, repaired): a version-1 DAG built now must be
#: the very object those runs recorded.
BEFORE_VERSIONS = {
    ("quote", False): ("d5a43a95d0b8b5c33fe4090fbe47b5769e80d6bb70eb41b7477df19f018c0f0e",
                       "6eb22cd3f3736607a264ca13441743d2f8c8419732febf37d7007aa1a51c3503"),
    ("quote", True): ("591487be328cb67c23729551e6b2f10feaa1289844a4064330a0dda98d4d1f21",
                      "63506d13c166d089e3e12d43f2fc52563c3d6fb9b46e3c78c22b30f5e8c2a85e"),
    ("claim-lattice", False): (
        "2bb6b36db4438a902a156273eb96799fac3d87ec338168ea955ef012db697c5f",
        "963752c56b520386a4254b0ba63e3d965fcae7a99b8818e0aec486909c1d5613"),
    ("claim-lattice", True): (
        "deab84237bf480f9be9e9dcb14e31f8f29dc61cd99c3caf9589f1c6c6db363a9",
        "22798503bd0c676dc89b01c4a138b806293544ba4ed663c52f5cf04ce6f811a0"),
}  # fmt: skip


def hashes(mode: str, repaired: bool = False, version: int = DAG_VERSION) -> dict[str, str]:
    return {s: sha256_hex(s.encode()) for s in stages_for(mode, repaired=repaired, version=version)}


def test_new_runs_record_version_2() -> None:
    assert DAG_VERSIONS == (1, 2) and DAG_VERSION == 2
    assert STAGES_OF[2] == STAGES


def test_quote_gains_render_and_claim_lattice_keeps_its_shape() -> None:
    quote = build_dag("quote", hashes("quote"))
    assert [n.stage for n in quote.nodes] == [*QUOTE_V1[:6], "render", "final_label"]
    by_stage = {n.stage: n for n in quote.nodes}
    assert by_stage["render"].parents == (by_stage["verify"].node_hash,)
    assert by_stage["final_label"].parents == (by_stage["render"].node_hash,)
    v1 = build_dag("quote", hashes("quote", version=1), version=1)
    assert [n.stage for n in v1.nodes] == QUOTE_V1
    assert {n.stage: n for n in v1.nodes}["final_label"].parents == (
        {n.stage: n for n in v1.nodes}["verify"].node_hash,
    )
    for version in DAG_VERSIONS:  # claim-lattice: the same nodes, parents and root
        lattice = build_dag("claim-lattice", hashes("claim-lattice"), version)
        assert [n.stage for n in lattice.nodes] == LATTICE
        assert lattice.nodes == build_dag("claim-lattice", hashes("claim-lattice")).nodes


@pytest.mark.parametrize(("mode", "repaired"), sorted(BEFORE_VERSIONS))
def test_version_1_is_the_dag_the_earlier_code_recorded(mode: str, repaired: bool) -> None:
    dag = build_dag(mode, hashes(mode, repaired, version=1), version=1)
    root, blob = BEFORE_VERSIONS[(mode, repaired)]
    assert dag.root == root
    assert "version" not in dag.to_dict()
    assert sha256_hex(canonical_text(dag.to_dict()).encode("utf-8")) == blob


def test_version_2_records_its_version_and_moves_the_quote_root() -> None:
    for mode, repaired in BEFORE_VERSIONS:
        dag = build_dag(mode, hashes(mode, repaired))
        assert dag.version == 2 and dag.to_dict()["version"] == 2
        assert list(dag.to_dict()) == ["root", "mode", "version", "nodes"]
        # the same stage hashes: quote's root differs (a render node), claim-lattice's not
        assert (dag.root == BEFORE_VERSIONS[(mode, repaired)][0]) == (mode == "claim-lattice")


def test_node_hash_formula_and_root() -> None:
    dag = build_dag("quote", hashes("quote"))
    by_stage = {n.stage: n for n in dag.nodes}
    prompt = by_stage["prompt"]
    assert prompt.parents == (by_stage["question"].node_hash, by_stage["context"].node_hash)
    body = {"parents": list(prompt.parents), "stage": "prompt", "stage_hash": prompt.stage_hash}
    assert prompt.node_hash == sha256_hex(DAG_NODE_DOMAIN + canonical_json(body))
    assert dag.root == by_stage["final_label"].node_hash
    assert dag.to_dict()["root"] == dag.root and len(dag.to_dict()["nodes"]) == 8


@pytest.mark.parametrize("version", DAG_VERSIONS)
def test_repair_node_sits_between_verify_and_what_follows(version: int) -> None:
    dag = build_dag("claim-lattice", hashes("claim-lattice", repaired=True), version)
    by_stage = {n.stage: n for n in dag.nodes}
    assert len(dag.nodes) == 10
    assert by_stage["render"].parents == (by_stage["repair"].node_hash,)
    assert by_stage["repair"].parents[0] == by_stage["verify"].node_hash
    quote = build_dag("quote", hashes("quote", repaired=True, version=version), version)
    q = {n.stage: n for n in quote.nodes}
    after = ["repair", "final_label"] if version == 1 else ["repair", "render", "final_label"]
    assert [n.stage for n in quote.nodes][-len(after) :] == after
    assert q[after[1]].parents == (q["repair"].node_hash,)


@given(st.sampled_from(sorted(STAGES)), st.sampled_from(DAG_VERSIONS), st.data())
def test_any_stage_hash_change_changes_the_root(
    mode: str, version: int, data: st.DataObject
) -> None:
    base = hashes(mode, version=version)
    stage = data.draw(st.sampled_from(STAGES_OF[version][mode]))
    changed = dict(base, **{stage: sha256_hex(b"other")})
    assert build_dag(mode, changed, version).root != build_dag(mode, base, version).root


def test_missing_or_foreign_stage_is_an_error() -> None:
    h = hashes("quote")
    del h["prompt"]
    with pytest.raises(ValueError, match="missing stage"):
        build_dag("quote", h)
    with pytest.raises(ValueError, match=r"missing stage.*render"):
        build_dag("quote", hashes("quote", version=1))  # a v1 run's stages are not v2's
    with pytest.raises(ValueError, match=r"not in a quote run \(DAG version 1\): render"):
        build_dag("quote", hashes("quote"), version=1)
    with pytest.raises(ValueError, match="not in a quote run"):
        build_dag("quote", {**hashes("quote"), "evidence_map": "0" * 64})
    with pytest.raises(ValueError, match="unknown mode"):
        build_dag("prose", {})
    with pytest.raises(ValueError, match="unknown run DAG version 3"):
        build_dag("quote", hashes("quote"), version=3)


@pytest.mark.parametrize(
    ("payload", "version"),
    [
        ({"label": "x"}, 1),  # no dag_version: recorded before versions existed
        ({"dag_version": 2}, 2),
        ({"dag_version": 1}, None),  # version 1 is never written out
        ({"dag_version": 3}, None),
        ({"dag_version": "2"}, None),
        ({"dag_version": True}, None),
        ({"dag_version": 2.0}, None),
        ({"dag_version": None}, None),
    ],
)
def test_recorded_version(payload: dict[str, object], version: int | None) -> None:
    assert recorded_version(payload) == version
