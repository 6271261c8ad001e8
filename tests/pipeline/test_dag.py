"""Run DAG shape and hashing (docs/pipeline.md, "The run DAG")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aborist.pipeline.dag import DAG_NODE_DOMAIN, STAGES, build_dag, stages_for
from ledger.canonical import canonical_json, sha256_hex


def hashes(mode: str, repaired: bool = False) -> dict[str, str]:
    return {s: sha256_hex(s.encode()) for s in stages_for(mode, repaired=repaired)}


def test_seven_and_nine_stages_as_the_seed_lists() -> None:
    assert [n.stage for n in build_dag("quote", hashes("quote")).nodes] == [
        "question", "retrieval", "context", "prompt", "answer", "verify", "final_label",
    ]  # fmt: skip
    assert [n.stage for n in build_dag("claim-lattice", hashes("claim-lattice")).nodes] == [
        "question", "retrieval", "evidence_map", "prompt", "raw_answer",
        "parsed_claim_lattice", "verify", "render", "final_label",
    ]  # fmt: skip


def test_node_hash_formula_and_root() -> None:
    dag = build_dag("quote", hashes("quote"))
    by_stage = {n.stage: n for n in dag.nodes}
    prompt = by_stage["prompt"]
    assert prompt.parents == (by_stage["question"].node_hash, by_stage["context"].node_hash)
    body = {"parents": list(prompt.parents), "stage": "prompt", "stage_hash": prompt.stage_hash}
    assert prompt.node_hash == sha256_hex(DAG_NODE_DOMAIN + canonical_json(body))
    assert dag.root == by_stage["final_label"].node_hash
    assert dag.to_dict()["root"] == dag.root and len(dag.to_dict()["nodes"]) == 7


def test_repair_node_sits_between_verify_and_what_follows() -> None:
    dag = build_dag("claim-lattice", hashes("claim-lattice", repaired=True))
    by_stage = {n.stage: n for n in dag.nodes}
    assert len(dag.nodes) == 10
    assert by_stage["render"].parents == (by_stage["repair"].node_hash,)
    assert by_stage["repair"].parents[0] == by_stage["verify"].node_hash
    quote = build_dag("quote", hashes("quote", repaired=True))
    assert [n.stage for n in quote.nodes][-2:] == ["repair", "final_label"]


@given(st.sampled_from(sorted(STAGES)), st.data())
def test_any_stage_hash_change_changes_the_root(mode: str, data: st.DataObject) -> None:
    base = hashes(mode)
    stage = data.draw(st.sampled_from(STAGES[mode]))
    changed = dict(base, **{stage: sha256_hex(b"other")})
    assert build_dag(mode, changed).root != build_dag(mode, base).root


def test_missing_or_foreign_stage_is_an_error() -> None:
    h = hashes("quote")
    del h["prompt"]
    with pytest.raises(ValueError, match="missing stage"):
        build_dag("quote", h)
    with pytest.raises(ValueError, match="not in a quote run"):
        build_dag("quote", {**hashes("quote"), "render": "0" * 64})
    with pytest.raises(ValueError, match="unknown mode"):
        build_dag("prose", {})
