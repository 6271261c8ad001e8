"""The extractive answerer's third held-out question set
(bench/data/extractive_questions_holdout3.jsonl) parses with the benchmark's loader, covers
both corpora and has unanswerable questions, every gold span is a short phrase in its corpus
by the benchmark's own checker, and no question repeats one of the other three sets."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.extractive_bench import ROOT, corpus_texts, load_bench

HOLDOUT2_PATH = ROOT / "bench" / "data" / "extractive_questions_holdout2.jsonl"
HOLDOUT3_PATH = ROOT / "bench" / "data" / "extractive_questions_holdout3.jsonl"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench()


@pytest.fixture(scope="module")
def questions(bench: ModuleType) -> list[object]:
    if not HOLDOUT3_PATH.is_file():
        pytest.skip(f"the third held-out set is not at {HOLDOUT3_PATH}")
    return bench.load_questions(HOLDOUT3_PATH)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def corpora(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return corpus_texts(bench, tmp_path_factory)


def test_the_third_holdout_set_parses_and_covers_both_corpora(questions: list) -> None:
    by_shard: dict[str | None, int] = {}
    for q in questions:
        by_shard[q.shard] = by_shard.get(q.shard, 0) + 1
    rust, python = by_shard.get("rust-book", 0), by_shard.get("python-reference", 0)
    assert rust + python >= 70
    assert min(rust, python) >= 30
    assert by_shard.get(None, 0) >= 20
    assert all(q.question.strip().endswith("?") for q in questions)


def test_every_gold_span_of_the_third_set_is_a_short_phrase(questions: list) -> None:
    lengths = {q.id: len(q.gold.split()) for q in questions if q.gold is not None}
    assert lengths
    assert {qid: n for qid, n in lengths.items() if not 3 <= n <= 12} == {}


def test_every_gold_span_of_the_third_set_is_in_its_corpus(
    bench: ModuleType, questions: list, corpora: dict[str, str]
) -> None:
    assert bench.check_gold(questions, corpora) == []


def test_a_gold_span_of_the_third_set_with_a_changed_word_is_reported(
    bench: ModuleType, questions: list, corpora: dict[str, str]
) -> None:
    real = next(q for q in questions if q.shard == "rust-book")
    changed = bench.Question(real.id, real.shard, real.question, real.gold + " zq")
    assert bench.check_gold([changed], corpora) == [
        f"{real.id}: gold {changed.gold!r} is not in rust-book"
    ]


def test_the_third_set_repeats_no_question_of_the_other_three(
    bench: ModuleType, questions: list
) -> None:
    def texts(qs: list) -> set[str]:
        return {" ".join(q.question.casefold().split()) for q in qs}

    mine = texts(questions)
    assert len(mine) == len(questions)
    for path in (bench.QUESTIONS_PATH, bench.HOLDOUT_PATH, HOLDOUT2_PATH):
        assert mine & texts(bench.load_questions(path)) == set(), path.name
