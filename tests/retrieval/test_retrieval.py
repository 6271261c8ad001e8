"""Retrieval (docs/retrieval.md): query escaping, AND→OR with synonym injection,
the four accept paths, rerank, rivalry exclusion, the context budget, the decision record."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aborist.retrieval.retriever as retrieval_module
from aborist.corpus.ingest import ingest
from aborist.errors import CorpusError, InputError
from aborist.retrieval.fts import fts_and, fts_or, fts_string, query_units
from aborist.retrieval.records import RetrievalResult
from aborist.retrieval.retriever import Retriever, retrieve
from ledger.canonical import canonical_json

DOCS = {
    "backup.md": "# Backup Policy\n\nBackups run nightly and are kept for thirty days.\n",
    "incident.md": "# Incident Response\n\nDuring an incident the on-call engineer restores "
    "backups from cold storage and writes a timeline.\n",
    "glossary.md": "# Glossary\n\nA Recovery Point Objective (RPO) is the maximum "
    "acceptable data loss, measured in time.\n",
    "storage.md": "# Storage Tiers\n\nThe recovery point objective for customer data is "
    "one hour; archives may lag a day.\n",
    "postgres.md": "# PostgreSQL Replication\n\nUnlike MySQL, PostgreSQL supports "
    "transactional DDL. PostgreSQL replication streams the write-ahead log to replicas.\n",
    "mysql.md": "# MySQL Replication\n\nMySQL replication ships binary logs; MySQL replicas "
    "apply them in order.\n",
    "misc.md": "# Miscellany\n\nNightly jobs also rotate logs and prune temporary files.\n",
}


@pytest.fixture(scope="module")
def shards_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ops")
    for name, text in DOCS.items():
        (root / name).write_text(text, encoding="utf-8")
    out = root / "shards"
    ingest([root], "ops", shards_dir=out)
    notes = root / "notes"
    notes.mkdir()
    (notes / "n.txt").write_text("Nightly backups are also copied offsite.\n", encoding="utf-8")
    ingest([notes], "notes", "commentary", shards_dir=out)
    return out


@pytest.fixture(scope="module")
def retriever(shards_dir: Path) -> Iterator[Retriever]:
    with Retriever(["ops"], shards_dir=shards_dir) as r:
        yield r


def _by_file(result: RetrievalResult) -> dict[str, str]:
    return {c.source_uri.rsplit("/", 1)[-1]: c.decision for c in result.candidates}


def _paths(result: RetrievalResult) -> dict[str, str | None]:
    return {c.source_uri.rsplit("/", 1)[-1]: c.accept_path for c in result.candidates}


# --- query building ---------------------------------------------------------------------


def test_every_user_term_is_an_escaped_string() -> None:
    units = query_units('What is NEAR(a b) OR "title:x" -y* ^z?')
    assert units == ["near a", "b", "title x", "y", "z"]
    assert fts_and(units) == '"near a" AND "b" AND "title x" AND "y" AND "z"'
    assert fts_or(["a"]) == '"a"'
    assert fts_string('say "hi"') == '"say ""hi"""'


def test_stopword_only_questions_keep_their_words() -> None:
    assert query_units("What is it?") == ["what", "is", "it"]
    assert query_units("?!*") == []


HOSTILE = [
    'NEAR("backup" "policy", 2)',
    "title:backup",
    "{title body}: backup",
    '"unbalanced',
    "((((",
    "backup AND OR NOT",
    "back* ^up -x +y",
    "a\x00b",
    "\u0301\u0301",
    "ǅ ß ﬁ İ 🙂",
    "x" * 5000,
    " ".join(f"w{i}" for i in range(400)),
    "*",
    "''",
]


@pytest.mark.parametrize("question", HOSTILE)
def test_hostile_questions_never_raise(retriever: Retriever, question: str) -> None:
    result = retriever.retrieve(question)
    assert result.mode in {"AND", "OR", "NONE"}
    json.dumps(result.to_dict())


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=1, max_size=200).filter(lambda s: s.strip()))
def test_any_text_question_is_searched_as_text(retriever: Retriever, question: str) -> None:
    result = retriever.retrieve(question)
    assert result.used_bytes <= result.budget_bytes


@pytest.mark.parametrize("question", ["", "   \n\t"])
def test_empty_question_is_an_input_error(retriever: Retriever, question: str) -> None:
    with pytest.raises(InputError, match="empty"):
        retriever.retrieve(question)


# --- AND → OR and synonym injection -------------------------------------------------------


def test_and_mode_when_enough_chunks_match_every_term(retriever: Retriever) -> None:
    result = retriever.retrieve("backups nightly", min_and_hits=1)
    assert result.mode == "AND"
    assert result.query == (
        '"backups" AND "nightly" AND ("backups nightly" OR NEAR("backups" "nightly", 6) '
        'OR "backups")'
    )
    assert result.or_query is None and result.synonyms == []
    assert {c.found_by for c in result.candidates} == {"AND"}
    assert list(_by_file(result)) == ["backup.md"]


def test_or_fallback_when_and_finds_too_little(retriever: Retriever) -> None:
    result = retriever.retrieve("backups nightly", min_and_hits=5)
    assert result.mode == "OR"
    assert result.and_hits == 1
    assert (
        result.query
        == '"backups" OR "nightly" OR "backups nightly" OR NEAR("backups" "nightly", 6)'
    )
    assert set(_by_file(result)) == {"backup.md", "incident.md", "misc.md"}


def test_synonym_pool_is_injected_in_or_mode(retriever: Retriever) -> None:
    result = retriever.retrieve("What is our RPO?")
    assert result.mode == "OR"
    (inj,) = result.synonyms
    assert (inj.matched, inj.added) == ("rpo", ("recovery point objective",))
    assert result.query == '"rpo" OR "recovery point objective"'
    paths = _paths(result)
    assert paths["storage.md"] == "synonym"  # found and accepted only through the synonym
    assert paths["glossary.md"] == "synonym"


# --- the four accept paths ------------------------------------------------------------------


def test_title_and_coverage_paths(retriever: Retriever) -> None:
    paths = _paths(retriever.retrieve("How long are backups kept?"))
    assert paths["backup.md"] == "title"
    assert paths["incident.md"] == "coverage"


def test_rank_path_and_rejection(retriever: Retriever, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retrieval_module, "COVERAGE_ACCEPT", 1.01)
    monkeypatch.setattr(retrieval_module, "RANK_ACCEPT", 2)
    result = retriever.retrieve("nightly rotation timeline offsite")
    decisions = {c.source_uri.rsplit("/", 1)[-1]: (c.bm25_rank, c.accept_path, c.decision)
                 for c in result.candidates}  # fmt: skip
    by_rank = sorted(decisions.values())
    assert [p for _, p, _ in by_rank[:2]] == ["rank", "rank"]
    assert all(d == "rejected:title_filter" for _, p, d in by_rank[2:])
    assert len(by_rank) == 3


# --- rerank -------------------------------------------------------------------------------


def test_rerank_records_features_and_orders_selection(retriever: Retriever) -> None:
    result = retriever.retrieve("backups kept nightly")
    scores = [c.score for c in result.chunks]
    assert scores == sorted(scores, reverse=True)
    top = result.candidates[0]
    assert set(top.features) == {"bm25", "coverage", "density", "title", "purity", "role"}
    assert top.rerank == pytest.approx(
        sum(retrieval_module.RERANK_WEIGHTS[k] * top.features[k] for k in top.features)
    )
    assert result.chunks[0].source_uri.endswith("backup.md")


def test_source_role_feature_across_shards(shards_dir: Path) -> None:
    result = retrieve("nightly backups", ["ops", "notes"], shards_dir=shards_dir)
    roles = {c.shard: c.features["role"] for c in result.candidates if c.features}
    assert roles == {"ops": 1.0, "notes": 0.3}
    assert [s.name for s in result.shards] == ["ops", "notes"]


# --- rivalry exclusion ----------------------------------------------------------------------


def test_rival_chunks_are_excluded_for_non_comparative_questions(retriever: Retriever) -> None:
    result = retriever.retrieve("How does PostgreSQL replication work?")
    assert result.rivals == [("postgresql", "mysql")]
    mysql = next(c for c in result.candidates if c.source_uri.endswith("mysql.md"))
    assert mysql.decision == "rejected:rivalry"
    assert mysql.rivalry is not None and mysql.rivalry.where == "title"
    assert all(not c.source_uri.endswith("mysql.md") for c in result.chunks)


def test_comparative_questions_keep_rivals(retriever: Retriever) -> None:
    result = retriever.retrieve("PostgreSQL vs MySQL replication")
    assert result.comparative and result.rivals == []
    assert any(c.source_uri.endswith("mysql.md") for c in result.chunks)


# --- budget -------------------------------------------------------------------------------


def test_budget_skips_what_does_not_fit_and_tries_smaller(retriever: Retriever) -> None:
    question = "backups nightly logs storage"
    full = retriever.retrieve(question, min_and_hits=50)
    sizes = [len(c.text.encode()) for c in full.chunks]
    # the first selected chunk with a smaller one after it
    i = next(i for i in range(1, len(sizes) - 1) if min(sizes[i + 1 :]) < sizes[i])
    budget = sum(sizes[:i]) + min(sizes[i + 1 :])
    cut = retriever.retrieve(question, min_and_hits=50, budget_bytes=budget)
    assert cut.used_bytes <= budget
    decisions = [c.decision for c in cut.candidates if c.accept_path]
    assert decisions[:i] == ["selected"] * i
    assert decisions[i] == "rejected:over_budget"
    assert "selected" in decisions[i + 1 :]
    assert sum(c.in_budget for c in cut.candidates) == len(cut.chunks)
    assert cut.used_bytes == sum(len(c.text.encode()) for c in cut.chunks)


def test_default_budget_is_60_kb(retriever: Retriever) -> None:
    assert retriever.retrieve("backups").budget_bytes == 60_000


# --- the decision record --------------------------------------------------------------------


def test_result_records_every_decision_as_canonical_json(retriever: Retriever) -> None:
    result = retriever.retrieve("What is our RPO?")
    data = result.to_dict()
    assert canonical_json(data)
    assert data["mode"] == "OR" and data["query"] == result.or_query
    assert data["shards"][0]["source_root"]
    assert data["constants"]["min_and_hits"] == 5
    assert data["constants"]["candidates_per_shard"] == retrieval_module.CANDIDATES_PER_SHARD
    cand = data["candidates"][0]
    assert set(cand) >= {"bm25", "accept_path", "rerank", "in_budget", "decision", "chunk_hash"}
    # The record names the context through the candidates' decisions, in order; the
    # texts are not in it. The JSON view adds them.
    assert "selected" not in data and "text" not in cand
    chosen = [c["chunk_hash"] for c in data["candidates"] if c["decision"] == "selected"]
    assert chosen == [c.chunk_hash for c in result.chunks]
    shown = result.to_dict(include_text=True)["selected"]
    assert [s["chunk_hash"] for s in shown] == chosen and all(s["text"] for s in shown)
    chunk = result.chunks[0]
    assert (chunk.shard, chunk.chunk_index, len(chunk.chunk_hash)) == ("ops", 0, 64)
    assert chunk.title and chunk.source_uri.startswith("file://") and chunk.doc_id


def test_unknown_shard_and_no_shards(tmp_path: Path, shards_dir: Path) -> None:
    with pytest.raises(CorpusError, match=r"no shard named 'nope'.*known: notes, ops"):
        retrieve("x", ["nope"], shards_dir=shards_dir)
    with pytest.raises(CorpusError, match="no shards in"):
        retrieve("x", shards_dir=tmp_path / "none")


def test_all_shards_by_default(shards_dir: Path) -> None:
    result = retrieve("nightly backups", shards_dir=shards_dir)
    assert sorted(s.name for s in result.shards) == ["notes", "ops"]
