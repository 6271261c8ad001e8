"""Runs as ledger events (docs/pipeline.md): the stage events of
each mode in order, the run DAG recomputed from those events alone, blobs that keep a run
replayable after its shard is gone, and the cache (hits on the record, misses when any
key dimension changes). Every test runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from aborist.clients.base import StubClient
from aborist.clients.extractive import ExtractiveClient
from aborist.corpus.shard import shard_path
from aborist.events import CacheChecked, run_stream
from aborist.pipeline.ask import ask
from aborist.pipeline.dag import STAGE_EVENTS, STAGES, build_dag
from aborist.pipeline.query import query
from aborist.pipeline.recorded import load_run
from aborist.pipeline.run import Governance, RunResult, label_stage_hash
from aborist.prompts import CANNOT_ANSWER
from ledger.canonical import canonical_json, sha256_hex
from ledger.envelope import RecordedEvent
from ledger.store import Ledger
from ledger.verify import verify_ledger

CLAIM_LATTICE_EVENTS = [
    "qa.run_started",
    "qa.cache_checked",
    "qa.retrieval_completed",
    "qa.evidence_mapped",
    "qa.prompt_built",
    "qa.model_answered",
    "qa.claims_parsed",
    "qa.answer_verified",
    "qa.answer_rendered",
    "qa.answer_labelled",
    "qa.cache_written",
    "qa.run_completed",
]
QUOTE_EVENTS = [
    "qa.run_started",
    "qa.cache_checked",
    "qa.retrieval_completed",
    "qa.context_assembled",
    "qa.prompt_built",
    "qa.model_answered",
    "qa.answer_verified",
    "qa.answer_rendered",
    "qa.answer_labelled",
    "qa.cache_written",
    "qa.run_completed",
]
HIT_EVENTS = ["qa.run_started", "qa.cache_checked", "qa.run_completed"]
Q_LENGTH = "How long is the Silverrun River?"


def events_of(ledger: Ledger, run_id: str) -> list[RecordedEvent]:
    return ledger.read_stream(run_stream(run_id))


def types_of(ledger: Ledger, run_id: str) -> list[str]:
    return [e.type for e in events_of(ledger, run_id)]


def one_row(ledger: Ledger, sql: str, **params: Any) -> dict[str, Any]:
    with ledger.reader.connect() as conn:
        rows = conn.execute(text(sql), params).mappings().all()
    assert len(rows) == 1, rows
    return dict(rows[0])


def count(ledger: Ledger, table: str) -> int:
    with ledger.reader.connect() as conn:
        return int(conn.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one())


def run(ledger: Ledger, corpus: Any, question: str = Q_LENGTH, **kw: Any) -> RunResult:
    kw.setdefault("client", ExtractiveClient())
    return query(question, ledger=ledger, shards_dir=corpus.shards_dir, **kw)


# -- event order ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "expected", "answer"),
    [
        ("claim-lattice", CLAIM_LATTICE_EVENTS, "The Silverrun River is 412 kilometres long. [E1]"),
        ("quote", QUOTE_EVENTS, '"The Silverrun River is 412 kilometres long." [E1]'),
    ],
)
def test_run_appends_one_event_per_stage_in_order(
    pipeline_ledger: Ledger, corpus: Any, mode: str, expected: list[str], answer: str
) -> None:
    result = run(pipeline_ledger, corpus, governance=Governance(mode=mode))
    events = events_of(pipeline_ledger, result.run_id)
    assert [e.type for e in events] == expected
    assert [e.stream_seq for e in events] == list(range(1, len(expected) + 1))
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    assert result.answer == answer
    assert (result.audit_mode, result.label, result.cache_hit) == ("STRICT", "VERIFIED", False)
    assert result.mode == mode
    started = events[0].data
    assert started["run_id"] == result.run_id
    assert started["question"] == Q_LENGTH and started["mode"] == mode
    assert started["kind"] == "query" and started["document"] is None
    done = events[-1].data
    assert done["status"] == "answered" and done["run_dag_root"] == result.run_dag_root
    report = verify_ledger(pipeline_ledger)
    assert report.ok, report.to_dict()
    assert report.chain.events_checked == len(expected) + 2  # after the corpus's ingests
    assert load_run(pipeline_ledger, result.run_id).status == "completed"


def test_runs_projection_summarises_a_completed_run(pipeline_ledger: Ledger, corpus: Any) -> None:
    result = run(pipeline_ledger, corpus, question=f"  {Q_LENGTH}\n")
    assert result.question == Q_LENGTH  # trimmed before it is recorded
    assert load_run(pipeline_ledger, result.run_id).question == Q_LENGTH
    events = events_of(pipeline_ledger, result.run_id)
    row = one_row(pipeline_ledger, "SELECT * FROM runs WHERE run_id = :r", r=result.run_id)
    assert row["status"] == "completed"
    assert (row["kind"], row["question"], row["mode"]) == ("query", Q_LENGTH, "claim-lattice")
    assert row["cache_key"] == result.cache_key and not row["cache_hit"]
    assert row["served_from_run_id"] is None
    assert (row["audit_mode"], row["label"]) == ("STRICT", "VERIFIED")
    assert row["started_seq"] == events[0].seq and row["finished_seq"] == events[-1].seq
    assert events[-1].type == "qa.run_completed"
    assert row["started_at"] == events[0].recorded_at
    assert row["finished_at"] == events[-1].recorded_at
    assert row["failed_stage"] is None and row["error"] is None


def test_all_shards_by_default_and_selected_shards_bind_the_run(
    pipeline_ledger: Ledger, corpus: Any
) -> None:
    every = run(pipeline_ledger, corpus, use_cache=False)
    geo = run(pipeline_ledger, corpus, shards=["geo"], use_cache=False)
    checked_all = load_run(pipeline_ledger, every.run_id).payload(CacheChecked)
    checked_geo = load_run(pipeline_ledger, geo.run_id).payload(CacheChecked)
    assert checked_all is not None and checked_geo is not None
    assert sorted(checked_all["shards"]) == ["bees", "geo"]
    assert sorted(checked_geo["shards"]) == ["geo"]
    assert checked_geo["shards"]["geo"] == checked_all["shards"]["geo"]
    assert every.cache_key != geo.cache_key
    assert load_run(pipeline_ledger, geo.run_id).started.requested_shards == ["geo"]
    assert load_run(pipeline_ledger, every.run_id).started.requested_shards is None


# -- run DAG ----------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "n_nodes"), [("claim-lattice", 9), ("quote", 8)])
def test_dag_is_recomputable_from_the_events_alone(
    pipeline_ledger: Ledger, corpus: Any, mode: str, n_nodes: int
) -> None:
    result = run(pipeline_ledger, corpus, governance=Governance(mode=mode))
    events = events_of(pipeline_ledger, result.run_id)
    by_type = {e.type: e for e in events}
    label_event = by_type["qa.answer_labelled"]
    recorded = label_event.data["run_dag"]
    assert recorded["mode"] == mode
    assert [n["stage"] for n in recorded["nodes"]] == list(STAGES[mode])
    assert len(recorded["nodes"]) == n_nodes

    hashes = {}
    for stage in STAGES[mode]:
        if stage == "final_label":
            hashes[stage] = label_stage_hash(label_event.data)
        else:
            hashes[stage] = by_type[STAGE_EVENTS[stage]].payload_hash
    for node in recorded["nodes"]:
        assert node["stage_hash"] == hashes[node["stage"]], node["stage"]
    # The final label's stage hash is its payload without the DAG it concludes.
    without_dag = {k: v for k, v in label_event.data.items() if k != "run_dag"}
    assert hashes["final_label"] == sha256_hex(canonical_json(without_dag))
    assert hashes["final_label"] != label_event.payload_hash

    rebuilt = build_dag(mode, hashes)
    assert rebuilt.to_dict() == recorded
    assert rebuilt.root == recorded["root"] == result.run_dag_root

    cache = one_row(
        pipeline_ledger,
        "SELECT * FROM providence_cache WHERE cache_key = :k",
        k=result.cache_key,
    )
    assert cache["run_dag_root"] == result.run_dag_root
    assert json.loads(cache["run_dag_blob"])["root"] == result.run_dag_root
    assert [n["node_hash"] for n in json.loads(cache["run_dag_blob"])["nodes"]] == [
        n["node_hash"] for n in recorded["nodes"]
    ]
    runs_row = one_row(pipeline_ledger, "SELECT * FROM runs WHERE run_id = :r", r=result.run_id)
    assert runs_row["run_dag_root"] == result.run_dag_root
    assert by_type["qa.run_completed"].data["run_dag_root"] == result.run_dag_root
    assert by_type["qa.cache_written"].data["run_dag_root"] == result.run_dag_root

    with pipeline_ledger.reader.connect() as conn:
        nodes = conn.execute(
            text(
                "SELECT ordinal, stage, stage_hash, node_hash, parents FROM run_dag_nodes "
                "WHERE run_id = :r ORDER BY ordinal"
            ),
            {"r": result.run_id},
        ).all()
    assert [(r[1], r[2], r[3], json.loads(r[4])) for r in nodes] == [
        (n.stage, n.stage_hash, n.node_hash, list(n.parents)) for n in rebuilt.nodes
    ]
    assert [r[0] for r in nodes] == list(range(n_nodes))


def test_repaired_run_dag_has_a_repair_node(pipeline_ledger: Ledger, corpus: Any) -> None:
    """With repair on and a non-STRICT answer, ``qa.answer_repaired`` joins the run and the
    DAG gains a ``repair`` node after ``verify`` (docs/pipeline.md, "The run DAG")."""
    from aborist.pipeline.repair_stage import repair_stage

    stub = StubClient(default="The Silverrun River is 412 kilometres long. [E1]\nIt is wet.")
    result = run(pipeline_ledger, corpus, client=stub, shards=["geo"],
                 governance=Governance(repair_enabled=True), repair_stage=repair_stage)  # fmt: skip
    events = events_of(pipeline_ledger, result.run_id)
    types = [e.type for e in events]
    assert types == [*CLAIM_LATTICE_EVENTS[:8], "qa.answer_repaired", *CLAIM_LATTICE_EVENTS[8:]]
    by_type = {e.type: e for e in events}
    label_event = by_type["qa.answer_labelled"]
    recorded = label_event.data["run_dag"]
    stages = [n["stage"] for n in recorded["nodes"]]
    assert stages == [*STAGES["claim-lattice"][:7], "repair", *STAGES["claim-lattice"][7:]]
    hashes = {
        s: label_stage_hash(label_event.data) if s == "final_label"
        else by_type[STAGE_EVENTS[s]].payload_hash
        for s in stages
    }  # fmt: skip
    assert build_dag("claim-lattice", hashes).to_dict() == recorded
    # What is labelled, cached and returned is the repaired answer.
    assert label_event.data["answer_hash"] == sha256_hex(result.answer.encode("utf-8"))
    assert by_type["qa.cache_written"].data["answer"] == result.answer
    assert "It is wet." not in result.answer
    assert verify_ledger(pipeline_ledger).ok


# -- blobs ------------------------------------------------------------------------------


def blob_hashes(ledger: Ledger) -> set[str]:
    with ledger.reader.connect() as conn:
        return {str(r[0]) for r in conn.execute(text("SELECT hash FROM blobs")).all()}


def test_large_texts_are_blobs_and_the_run_replays_without_its_shard(
    pipeline_ledger: Ledger, corpus: Any
) -> None:
    questions = {"geo": Q_LENGTH, "bees": "What honey does the Eldorian honeybee produce?"}
    modes = {"geo": "claim-lattice", "bees": "quote"}
    results = {
        shard: run(pipeline_ledger, corpus, question=q, shards=[shard],
                   governance=Governance(mode=modes[shard]))
        for shard, q in questions.items()
    }  # fmt: skip
    stored = blob_hashes(pipeline_ledger)
    for shard, result in results.items():
        recorded = load_run(pipeline_ledger, result.run_id)
        assert recorded.mode == modes[shard]
        records = recorded.evidence_records()
        assert records and all(r["text_blob"] in stored for r in records)
        prompt = recorded.payload("qa.prompt_built")
        model = recorded.payload("qa.model_answered")
        assert prompt is not None and model is not None
        assert prompt["prompt_blob"] in stored
        assert model["raw_answer_blob"] == sha256_hex(result.answer.encode("utf-8"))
        assert model["raw_answer_blob"] in stored
        for ev in result.evidence:
            assert sha256_hex(ev["text"].encode("utf-8")) in stored
        prompt_messages = json.loads(pipeline_ledger.get_blob(prompt["prompt_blob"]))
        assert questions[shard] in prompt_messages[-1]["content"]

    for shard in results:
        shard_file = shard_path(corpus.shards_dir, shard)
        shard_file.unlink()
        assert not shard_file.exists()

    for shard, result in results.items():
        again = load_run(pipeline_ledger, result.run_id)
        evidence = again.evidence(pipeline_ledger)
        assert [e.text for e in evidence] == [e["text"] for e in result.evidence]
        assert [e.pointer_id for e in evidence] == [e["pointer_id"] for e in result.evidence]
        assert any(corpus.facts[questions[shard]] in e.text for e in evidence)
        assert again.raw_answer(pipeline_ledger) == result.answer


# -- cache ------------------------------------------------------------------------------


def hit_count(ledger: Ledger, key: str) -> int:
    row = one_row(ledger, "SELECT hit_count FROM providence_cache WHERE cache_key = :k", k=key)
    return int(row["hit_count"])


def test_second_identical_query_is_a_recorded_cache_hit(
    pipeline_ledger: Ledger, corpus: Any
) -> None:
    first = run(pipeline_ledger, corpus)
    assert hit_count(pipeline_ledger, first.cache_key) == 0
    second = run(pipeline_ledger, corpus)

    assert second.cache_hit and not first.cache_hit
    assert second.run_id != first.run_id
    assert second.served_from_run_id == first.run_id
    assert second.cache_key == first.cache_key
    assert (second.answer, second.audit_mode, second.label, second.run_dag_root) == (
        first.answer,
        first.audit_mode,
        first.label,
        first.run_dag_root,
    )
    assert second.evidence == first.evidence
    assert second.citations == first.citations

    events = events_of(pipeline_ledger, second.run_id)
    assert [e.type for e in events] == HIT_EVENTS
    assert [e.stream_seq for e in events] == [1, 2, 3]
    checked = events[1].data
    assert checked["hit"] is True and checked["consulted"] is True
    assert checked["hit_run_id"] == first.run_id
    assert checked["cache_key"] == first.cache_key
    done = events[2].data
    assert done["status"] == "cached" and done["cache_hit"] is True
    assert done["served_from_run_id"] == first.run_id
    assert load_run(pipeline_ledger, second.run_id).status == "cached"

    assert hit_count(pipeline_ledger, first.cache_key) == 1
    third = run(pipeline_ledger, corpus)
    assert third.served_from_run_id == first.run_id
    assert hit_count(pipeline_ledger, first.cache_key) == 2
    cache = one_row(
        pipeline_ledger,
        "SELECT run_id, last_hit_at FROM providence_cache WHERE cache_key = :k",
        k=first.cache_key,
    )
    assert cache["run_id"] == first.run_id
    assert cache["last_hit_at"] == events_of(pipeline_ledger, third.run_id)[1].recorded_at

    row = one_row(pipeline_ledger, "SELECT * FROM runs WHERE run_id = :r", r=second.run_id)
    assert row["cache_hit"] and row["served_from_run_id"] == first.run_id
    assert row["run_dag_root"] == first.run_dag_root
    assert count(pipeline_ledger, "providence_cache") == 1
    # A hit writes no DAG of its own: only the answering run has nodes.
    assert count(pipeline_ledger, "run_dag_nodes") == 9
    assert verify_ledger(pipeline_ledger).ok


def test_no_cache_neither_reads_nor_writes(pipeline_ledger: Ledger, corpus: Any) -> None:
    uncached = run(pipeline_ledger, corpus, use_cache=False)
    assert count(pipeline_ledger, "providence_cache") == 0
    types = types_of(pipeline_ledger, uncached.run_id)
    assert types == [t for t in CLAIM_LATTICE_EVENTS if t != "qa.cache_written"]
    checked = load_run(pipeline_ledger, uncached.run_id).payload(CacheChecked)
    assert checked is not None
    assert (checked["consulted"], checked["hit"], checked["hit_run_id"]) == (False, False, None)

    cached = run(pipeline_ledger, corpus)
    assert not cached.cache_hit and cached.cache_key == uncached.cache_key
    again = run(pipeline_ledger, corpus, use_cache=False)
    assert not again.cache_hit and again.answer == uncached.answer
    # Same answer and key, yet another root: the question node commits to run_started,
    # which names the run.
    assert again.run_dag_root != uncached.run_dag_root
    assert "qa.cache_written" not in types_of(pipeline_ledger, again.run_id)
    assert hit_count(pipeline_ledger, cached.cache_key) == 0
    cache_row = one_row(pipeline_ledger, "SELECT run_id FROM providence_cache")
    assert cache_row["run_id"] == cached.run_id


def test_changing_any_one_dimension_misses(pipeline_ledger: Ledger, corpus: Any) -> None:
    first = run(pipeline_ledger, corpus)
    changes: dict[str, dict[str, Any]] = {
        "mode": {"governance": Governance(mode="quote")},
        "repair": {"governance": Governance(repair_enabled=True)},
        "budget": {"governance": Governance(budget_bytes=30_000)},
        "question-case": {"question": Q_LENGTH.lower()},
        "question-punct": {"question": Q_LENGTH.rstrip("?")},
        "shards": {"shards": ["geo"]},
        "model": {"client": ExtractiveClient(max_sentences=1)},
    }
    keys = {first.cache_key}
    for name, change in changes.items():
        other = run(pipeline_ledger, corpus, **change)
        assert not other.cache_hit and other.served_from_run_id is None, name
        assert other.cache_key not in keys, name
        keys.add(other.cache_key)
        assert "qa.cache_written" in types_of(pipeline_ledger, other.run_id), name
    assert hit_count(pipeline_ledger, first.cache_key) == 0
    assert count(pipeline_ledger, "providence_cache") == 1 + len(changes)


def test_question_equivalence_for_cache_hits(pipeline_ledger: Ledger, corpus: Any) -> None:
    first = run(pipeline_ledger, corpus)
    # strict: inner whitespace is normalized, so this is the same question
    spaced = run(pipeline_ledger, corpus, question=Q_LENGTH.replace(" ", "  "))
    assert spaced.cache_hit and spaced.served_from_run_id == first.run_id

    gov = Governance(question_hash_mode="equivalence_class")
    eq_first = run(pipeline_ledger, corpus, governance=gov)
    assert not eq_first.cache_hit  # another governance policy, another key
    eq_second = run(pipeline_ledger, corpus, question="how LONG is the silverrun river",
                    governance=gov)  # fmt: skip
    assert eq_second.cache_hit and eq_second.served_from_run_id == eq_first.run_id
    assert eq_second.answer == eq_first.answer
    assert eq_second.question == "how LONG is the silverrun river"  # the asker's words
    strict = run(pipeline_ledger, corpus, question="how LONG is the silverrun river")
    assert not strict.cache_hit


def test_reingesting_changed_shard_misses(
    pipeline_ledger: Ledger, corpus: Any, tmp_path: Path
) -> None:
    from aborist.corpus.ingest import ingest

    first = run(pipeline_ledger, corpus, shards=["geo"])
    lake = tmp_path / "lake.md"
    lake.write_text("# The Glass Lake\n\nThe Glass Lake is shallow and cold.\n", encoding="utf-8")
    ingest([lake], "geo", shards_dir=corpus.shards_dir, ledger=pipeline_ledger)  # one more doc
    second = run(pipeline_ledger, corpus, shards=["geo"])
    assert not second.cache_hit and second.cache_key != first.cache_key
    assert second.answer == first.answer
    roots = [
        load_run(pipeline_ledger, r.run_id).payload(CacheChecked)["shards"]["geo"]  # type: ignore[index]
        for r in (first, second)
    ]
    assert roots[0] != roots[1]


def test_to_json_has_the_documented_keys(pipeline_ledger: Ledger, corpus: Any) -> None:
    first = run(pipeline_ledger, corpus)
    for result in (first, run(pipeline_ledger, corpus)):
        data = json.loads(json.dumps(result.to_json()))
        for key in ("run_id", "cache_key", "cache_hit", "question", "answer", "audit_mode",
                    "label", "run_dag_root", "evidence"):  # fmt: skip
            assert key in data, key
        assert data["run_id"] == result.run_id and data["cache_key"] == first.cache_key
        assert data["question"] == Q_LENGTH
        assert data["answer"] == first.answer and data["audit_mode"] == "STRICT"
        assert data["label"] == "VERIFIED" and data["run_dag_root"] == first.run_dag_root
        assert data["evidence"], "the evidence the answer was verified against"
        for ev in data["evidence"]:
            assert {"pointer_id", "evidence_id", "source_uri", "title", "text"} <= set(ev)
        assert data["evidence"][0]["pointer_id"] == "E1"
        assert data["evidence"][0]["source_uri"] == corpus.rivers.resolve().as_uri()
        assert corpus.facts[Q_LENGTH] in data["evidence"][0]["text"]
    assert json.loads(json.dumps(first.to_json()))["cache_hit"] is False
    assert data["cache_hit"] is True


def test_facts_are_strict_and_the_unanswerable_is_never_strict(
    pipeline_ledger: Ledger, corpus: Any
) -> None:
    for question, sentence in corpus.facts.items():
        result = run(pipeline_ledger, corpus, question=question, use_cache=False)
        assert result.answer == f"{sentence} [E1]", question
        assert (result.audit_mode, result.label) == ("STRICT", "VERIFIED"), question
    for mode in ("claim-lattice", "quote"):
        result = run(pipeline_ledger, corpus, question=corpus.unanswerable,
                     governance=Governance(mode=mode))  # fmt: skip
        assert result.answer == CANNOT_ANSWER, mode
        assert result.audit_mode == "UNGROUNDED", mode
        assert result.label != "VERIFIED", mode
    # A model that makes up a fact and cites real evidence must not come back STRICT.
    liar = StubClient(default="The capital city of Mars has 3 million people. [E1]")
    invented = run(pipeline_ledger, corpus, question=corpus.unanswerable, client=liar)
    assert invented.audit_mode != "STRICT" and invented.label != "VERIFIED"


# -- ask --------------------------------------------------------------------------------


def test_ask_answers_from_one_document_and_records_it(pipeline_ledger: Ledger, corpus: Any) -> None:
    from aborist.corpus.ingest import ingest

    result = ask(corpus.rivers, Q_LENGTH, ledger=pipeline_ledger, client=ExtractiveClient())
    assert result.answer == f"{corpus.facts[Q_LENGTH]} [E1]"
    assert result.audit_mode == "STRICT"
    recorded = load_run(pipeline_ledger, result.run_id)
    assert [e.type for e in recorded.events] == CLAIM_LATTICE_EVENTS
    assert recorded.started.kind == "ask"
    assert recorded.started.document == str(corpus.rivers.resolve())
    row = one_row(pipeline_ledger, "SELECT kind FROM runs WHERE run_id = :r", r=result.run_id)
    assert row["kind"] == "ask"

    # The same text as a shard: same source root, yet a different cache key.
    ingest([corpus.rivers], "only-rivers", shards_dir=corpus.shards_dir)
    shard = run(pipeline_ledger, corpus, shards=["only-rivers"])
    assert not shard.cache_hit and shard.cache_key != result.cache_key
    checked_ask = recorded.payload(CacheChecked)
    checked_shard = load_run(pipeline_ledger, shard.run_id).payload(CacheChecked)
    assert checked_ask is not None and checked_shard is not None
    assert list(checked_ask["shards"].values()) == list(checked_shard["shards"].values())

    again = ask(corpus.rivers, Q_LENGTH, ledger=pipeline_ledger, client=ExtractiveClient())
    assert again.cache_hit and again.served_from_run_id == result.run_id
    assert again.evidence == result.evidence
    # The temporary shard is gone, the run still replays from blobs.
    assert [e.text for e in recorded.evidence(pipeline_ledger)] == [
        e["text"] for e in result.evidence
    ]


def test_ask_after_the_document_changed_misses(pipeline_ledger: Ledger, tmp_path: Path) -> None:
    """A cached answer must never outlive the text it was drawn from."""
    doc = tmp_path / "memo.md"
    doc.write_text("# Memo\n\nThe vault code is seven four one.\n", encoding="utf-8")
    question = "What is the vault code?"
    first = ask(doc, question, ledger=pipeline_ledger, client=ExtractiveClient())
    assert first.answer == "The vault code is seven four one. [E1]"
    doc.write_text("# Memo\n\nThe vault code is nine nine two.\n", encoding="utf-8")
    second = ask(doc, question, ledger=pipeline_ledger, client=ExtractiveClient())
    assert not second.cache_hit and second.cache_key != first.cache_key
    assert second.answer == "The vault code is nine nine two. [E1]"
    third = ask(doc, question, ledger=pipeline_ledger, client=ExtractiveClient())
    assert third.cache_hit and third.served_from_run_id == second.run_id
