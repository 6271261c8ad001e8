"""Replay rebuilds every run's DAG with a fixed-shape node serializer
(:func:`aborist.audit.checks.dags.node_hash`,
:func:`~aborist.audit.checks.dags.rebuild_dag`): the same
node hashes, parents and root as the pipeline's :mod:`aborist.pipeline.dag`, for both modes
and both DAG versions, with and without a repair, and the same refusals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.audit.checks.dags import _rebuild, node_hash, parents_text, rebuild_dag
from aborist.pipeline import dag as qa_dag
from aborist.pipeline.dag import DAG_VERSIONS, STAGES, build_dag, stages_for
from ledger.canonical import canonical_text

texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=70)
hexes = st.text("0123456789abcdef", min_size=64, max_size=64)


@settings(max_examples=300)
@given(texts, st.one_of(hexes, texts), st.lists(st.one_of(hexes, texts), max_size=3))
def test_node_hash_is_the_pipelines(stage: str, stage_hash: str, parents: list[str]) -> None:
    assert node_hash(stage, stage_hash, parents) == qa_dag.node_hash(
        stage, stage_hash, tuple(parents)
    )
    assert parents_text(parents) == canonical_text(parents)


@settings(max_examples=200)
@given(st.sampled_from(sorted(STAGES)), st.booleans(), st.sampled_from(DAG_VERSIONS), st.data())
def test_rebuild_dag_is_build_dag(
    mode: str, repaired: bool, version: int, data: st.DataObject
) -> None:
    stages = stages_for(mode, repaired=repaired, version=version)
    hashes = {s: data.draw(st.one_of(hexes, texts), label=s) for s in stages}
    assert rebuild_dag(mode, hashes, version) == build_dag(mode, hashes, version)
    built = _rebuild(mode, hashes, version)
    assert built is not None
    dag, parent_texts = built  # the parents' texts the live rows are compared with
    assert parent_texts == [canonical_text(list(n.parents)) for n in dag.nodes]


@pytest.mark.parametrize(
    ("mode", "version", "drop", "extra"),
    [
        ("nonsense", 2, None, None),
        ("quote", 3, None, None),
        ("quote", 2, "verify", None),
        ("quote", 2, "render", None),  # a version-1 run's stages as version 2
        ("quote", 1, None, "render"),  # a version-2 run's stages as version 1
        ("quote", 2, None, "evidence_map"),
        ("quote", 1, "verify", "render"),
    ],
)
def test_rebuild_dag_refuses_what_build_dag_refuses(
    mode: str, version: int, drop: str | None, extra: str | None
) -> None:
    hashes = {s: "0" * 64 for s in stages_for("quote", version=1 if version == 1 else 2)}
    if drop:
        del hashes[drop]
    if extra:
        hashes[extra] = "1" * 64
    with pytest.raises(ValueError) as ours:
        rebuild_dag(mode, hashes, version)
    with pytest.raises(ValueError) as theirs:
        build_dag(mode, hashes, version)
    assert str(ours.value) == str(theirs.value)
