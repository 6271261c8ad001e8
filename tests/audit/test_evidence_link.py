"""A run's evidence must be the chunks its retrieval selected (docs/replay.md, check 3):
``replay --deep`` and ``verify-bundle`` compare each evidence item's ``evidence_hash``
with the ``chunk_hash`` of the selected candidate at the same position, on SQLite and
PostgreSQL.

The ledger is built by editing a shard's chunk text after ingest and asking: the
answer is STRICT against the edited text, and every other check holds.
"""

from __future__ import annotations

from typing import Any

import pytest

from aborist.audit import replay
from aborist.audit.bundle import export_run, verify_bundle
from aborist.clients.extractive import ExtractiveClient
from aborist.pipeline import run as pipeline
from aborist.pipeline.query import query
from ledger.envelope import RecordedEvent
from tests.audit.builders import Q_LENGTH, Built
from tests.audit.test_tamper_replay import rewrite
from tests.eldoria import falsify_river_length


def test_edited_shard_text_is_caught_by_deep(built: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run an older pipeline recorded from an edited shard (the pipeline now refuses
    such a chunk, ``tests/qa/test_tampered_inputs.py``; its check is switched off here to
    record the run a ledger may already hold)."""
    monkeypatch.setattr(pipeline, "_check_chunk_hashes", lambda *a: None, raising=False)
    falsify_river_length(built.shards)
    run = query(Q_LENGTH, ledger=built.ledger, client=ExtractiveClient(),
                shards_dir=built.shards, use_cache=False)  # fmt: skip
    assert run.audit_mode == "STRICT" and "9000 kilometres" in run.answer
    retrieval = built.event(run.run_id, "qa.retrieval_completed")
    evidence = built.event(run.run_id, "qa.evidence_mapped")
    [chosen] = [c for c in retrieval.data["retrieval"]["candidates"]
                if c["decision"] == "selected"]  # fmt: skip
    [item] = evidence.data["evidence"]
    assert chosen["chunk_hash"] != item["evidence_hash"]

    assert replay(built.ledger).ok  # chain, DAGs, blobs, projections: all consistent
    report = replay(built.ledger, deep=True)
    assert set(report.divergences) == {"deep", "corpus"}
    # without the shard file: the text used is no leaf of the root the run names
    c = report.divergences["corpus"]
    assert (c.seq, c.run, c.stage, c.found) == (
        evidence.seq,
        run.run_id,
        "evidence_map",
        item["evidence_hash"],
    )
    root = built.event(run.run_id, "qa.cache_checked").data["shards"]["geo"]
    assert c.expected == f"a leaf of source root {root}"
    d = report.divergences["deep"]
    assert (d.seq, d.run, d.stage) == (evidence.seq, run.run_id, "evidence_map")
    assert (d.expected, d.found) == (chosen["chunk_hash"], item["evidence_hash"])
    assert d.detail.startswith("evidence E1: evidence_hash is not the chunk_hash")
    assert f"seq {retrieval.seq}" in d.detail

    bundle = verify_bundle(export_run(built.ledger, run.run_id))
    assert not bundle.ok and bundle.first is not None
    assert (bundle.first.kind, bundle.first.seq) == ("deep", evidence.seq)
    assert bundle.first.found == item["evidence_hash"]


@pytest.mark.parametrize("which", ["lattice", "quote"])
def test_retrieval_record_edited_consistently_is_caught_by_deep(built: Built, which: str) -> None:
    """The careful insider rewrites a selected candidate's chunk_hash and re-derives every
    hash after it: only the link to the evidence (and a kept checkpoint) can tell."""
    run_id = getattr(built, which)
    retrieval = built.event(run_id, "qa.retrieval_completed")
    evidence_type = "qa.evidence_mapped" if which == "lattice" else "qa.context_assembled"
    evidence = built.event(run_id, evidence_type)
    forged = "ab" * 32

    def edit(ev: RecordedEvent, payload: dict[str, Any]) -> bool:
        if ev.seq != retrieval.seq:
            return False
        selected = [c for c in payload["retrieval"]["candidates"] if c["decision"] == "selected"]
        selected[0]["chunk_hash"] = forged
        return True

    rewrite(built.ledger, edit)
    assert replay(built.ledger).ok
    report = replay(built.ledger, deep=True)
    assert set(report.divergences) == {"deep"}
    d = report.divergences["deep"]
    stage = "evidence_map" if which == "lattice" else "context"
    assert (d.seq, d.run, d.stage, d.expected) == (evidence.seq, run_id, stage, forged)
    assert d.found == evidence.data["evidence"][0]["evidence_hash"]
    assert replay(built.ledger, deep=True, parallel=True).divergences["deep"] == d


def test_honest_runs_link(built: Built) -> None:
    """Every run of an honest ledger (both modes, a cache hit, a failure) links."""
    assert replay(built.ledger, deep=True).ok
