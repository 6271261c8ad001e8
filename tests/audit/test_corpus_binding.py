"""Replay's corpus check on the ingest records themselves: a chunk-hash list that does not
hash to its root, a root recorded only after the run, an ingest recorded before chunk
lists were kept, and ingest rows no pipeline writes. On SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

import aborist.pipeline.run as run_module
from aborist.audit import replay
from aborist.audit.checks.corpus_binding import CorpusRecords, check_corpus
from aborist.audit.checks.run_events import RunEvents
from aborist.audit.findings import ReplayReport
from aborist.clients.extractive import ExtractiveClient
from aborist.corpus.ingest import record_ingest, shard_ingested_payload, shard_stream
from aborist.pipeline.query import query
from aborist.projections import open_ledger
from ledger.canonical import canonical_text
from ledger.envelope import NewEvent, RecordedEvent
from ledger.store import Ledger
from ledger.tlog.merkle import merkle_root

Q = "How long is the Silverrun River?"
LEAF = hashlib.sha256(b"one chunk").digest()
ROOT_A = merkle_root([LEAF]).hex()
BLOB_HASH = hashlib.sha256(LEAF).hexdigest()


@pytest.fixture
def bare(ledger_url: str) -> Iterator[Ledger]:
    """A pipeline ledger in which nothing was ingested yet."""
    lg = open_ledger(ledger_url)
    try:
        yield lg
    finally:
        lg.close()


def answer(ledger: Ledger, corpus: Any) -> Any:
    return query(Q, ledger=ledger, client=ExtractiveClient(), shards_dir=corpus.shards_dir,
                 use_cache=False)  # fmt: skip


def test_a_chunk_list_that_is_not_the_roots_leaves_diverges_at_its_ingest(
    bare: Ledger, corpus: Any
) -> None:
    geo, bees = corpus.reports
    # the root is geo's, the list is not: one extra leaf
    record_ingest(bare, replace(geo, chunk_hashes=(*geo.chunk_hashes, "ab" * 32)))
    record_ingest(bare, bees)
    answer(bare, corpus)  # the query-time check reads roots, not lists
    assert replay(bare).ok  # the plain pass does not open the lists
    report = replay(bare, deep=True)
    d = report.divergences["corpus"]
    assert (d.seq, d.run, d.stage) == (1, None, "ingest")
    assert d.expected == f"the chunk-hash list of source root {geo.source_root}"
    assert d.found.startswith(f"a list of {geo.n_chunks + 1} chunk hashes with root")
    assert report.counts["corpus"] == 1  # reported once, not once per chunk


def test_a_list_blob_that_is_missing_diverges(bare: Ledger, corpus: Any) -> None:
    geo, bees = corpus.reports
    payload = dict(shard_ingested_payload(geo), chunk_hashes_blob="cd" * 32)
    bare.append(shard_stream("geo"), [NewEvent("corpus.shard_ingested", payload)])
    record_ingest(bare, bees)
    answer(bare, corpus)
    d = replay(bare, deep=True).divergences["corpus"]
    assert (d.seq, d.stage) == (1, "ingest") and "no chunk-hash list" in d.found


def test_a_root_recorded_only_after_the_run_diverges(
    bare: Ledger, corpus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as m:
        m.setattr(run_module, "check_recorded", lambda *a, **k: [])
        run = answer(bare, corpus)
    corpus.record(bare)  # too late to vouch for the run
    checked = bare.read_stream(f"run:{run.run_id}")[1]
    report = replay(bare)
    d = report.divergences["corpus"]
    assert (d.seq, d.run, d.stage) == (checked.seq, run.run_id, "cache")
    assert d.found.startswith("first recorded at seq") and d.found.endswith("after the run")
    assert report.counts["corpus"] == 2  # geo and bees


def test_an_ingest_without_a_chunk_list_is_noted_not_failed(bare: Ledger, corpus: Any) -> None:
    """Ledgers written before chunk lists were recorded still replay; their chunks are
    listed as not proven."""
    for report in corpus.reports:
        payload = shard_ingested_payload(report)
        del payload["chunk_hashes_blob"]
        bare.append(shard_stream(report.shard), [NewEvent("corpus.shard_ingested", payload)])
    run = answer(bare, corpus)
    report = replay(bare, deep=True)
    assert report.ok, report.to_dict()
    assert report.corpus_runs == 1 and report.corpus_chunks == 0
    [note] = [n for n in report.not_reexecuted if n.stage == "corpus"]
    assert note.run == run.run_id and "re-ingest it to prove its chunks" in note.reason


@pytest.mark.parametrize(
    "payload",
    [{"shard": "geo"}, {"source_root": 7}, {"source_root": "x" * 64, "chunk_hashes_blob": []}],
)
def test_ingest_rows_no_pipeline_writes_record_nothing(
    bare: Ledger, corpus: Any, payload: dict[str, Any]
) -> None:
    bare.append("shard:odd", [NewEvent("corpus.shard_ingested", payload)])
    corpus.record(bare)
    answer(bare, corpus)
    report = replay(bare, deep=True)
    assert report.ok, report.to_dict()
    assert report.corpus_runs == 1 and report.corpus_chunks >= 1


# -- payloads no pipeline writes, checked without a database -------------------------------


class _Rows:
    """Just what CorpusRecords reads of a ledger: the ingest events and blobs."""

    def __init__(self, events: list[RecordedEvent], blobs: dict[str, bytes]) -> None:
        self.events, self.blobs = events, blobs

    def read(self, **_: Any) -> list[RecordedEvent]:
        return self.events

    def get_blobs(self, hashes: Any) -> dict[str, bytes]:
        return {h: self.blobs[h] for h in hashes}


def _event(seq: int, stream: str, type_: str, payload: Any) -> RecordedEvent:
    text = canonical_text(payload)
    return RecordedEvent(seq, f"e{seq}", stream, seq, type_, 1, "", text, "", "", "")


@pytest.mark.parametrize(
    ("checked", "candidates", "evidence"),
    [
        ({"shards": ["geo"]}, [], []),
        ({"shards": {"geo": 7}}, [], []),
        ({"shards": {"geo": "ab" * 32}, "unrecorded_shards": "geo"}, [], []),
        (
            {"shards": {"geo": ROOT_A, "bees": ROOT_A}},
            [{"decision": "selected", "shard": {"x": 1}}],
            [{"evidence_hash": LEAF.hex()}],
        ),
        ({"shards": {"geo": ROOT_A, "bees": ROOT_A}}, ["nonsense"], [{"evidence_hash": 5}]),
        (
            {"shards": {"geo": ROOT_A}},
            [{"decision": "selected", "shard": "geo"}],
            [{"evidence_hash": "zz" * 32, "pointer_id": ["E1"]}],
        ),
    ],
)
def test_payloads_no_pipeline_writes_are_findings_not_crashes(
    checked: Any, candidates: Any, evidence: Any
) -> None:
    recorded = {"shard": "geo", "source_root": ROOT_A, "chunk_hashes_blob": BLOB_HASH}
    ingest = _event(1, "shard:geo", "corpus.shard_ingested", recorded)
    run = RunEvents("r1", [
        _event(2, "run:r1", "qa.cache_checked", checked),
        _event(3, "run:r1", "qa.retrieval_completed", {"retrieval": {"candidates": candidates}}),
        _event(4, "run:r1", "qa.evidence_mapped", {"evidence": evidence}),
    ])  # fmt: skip
    report = ReplayReport()
    corpus = CorpusRecords(_Rows([ingest], {BLOB_HASH: LEAF}), 4)  # type: ignore[arg-type]
    check_corpus(run, corpus, report, deep=True)
    assert not report.ok and set(report.divergences) == {"corpus"}
    assert report.divergences["corpus"].run == "r1"


def test_the_same_run_with_the_chunk_it_used_holds() -> None:
    """The control for the cases above: a well-formed run whose chunk is the leaf."""
    recorded = {"shard": "geo", "source_root": ROOT_A, "chunk_hashes_blob": BLOB_HASH}
    run = RunEvents("r1", [
        _event(2, "run:r1", "qa.cache_checked", {"shards": {"geo": ROOT_A}}),
        _event(3, "run:r1", "qa.retrieval_completed",
               {"retrieval": {"candidates": [{"decision": "selected", "shard": "geo"}]}}),
        _event(4, "run:r1", "qa.evidence_mapped", {"evidence": [{"evidence_hash": LEAF.hex()}]}),
    ])  # fmt: skip
    report = ReplayReport()
    rows = _Rows([_event(1, "shard:geo", "corpus.shard_ingested", recorded)], {BLOB_HASH: LEAF})
    check_corpus(run, CorpusRecords(rows, 4), report, deep=True)  # type: ignore[arg-type]
    assert report.ok and (report.corpus_runs, report.corpus_chunks) == (1, 1)
