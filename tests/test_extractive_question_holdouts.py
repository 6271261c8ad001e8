"""The extractive answerer's later held-out question sets
(bench/data/extractive_questions_holdout2.jsonl … …_holdout5.jsonl) parse with the
benchmark's loader, cover both corpora, carry gold spans the benchmark's own checker finds
in their corpus (and reports when a word is changed), and repeat no question of an
earlier set. Each set's own demands are a row of :data:`SETS`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.extractive_bench import ROOT, corpus_texts, load_bench

DATA = ROOT / "bench" / "data"


@dataclass(frozen=True)
class QuestionSet:
    """One set: its file, how many questions it must hold (answerable in all, per corpus,
    unanswerable), the gold span's length in words when the set bounds it, the corpus
    whose first question the changed-word check uses, and the sets it must not repeat."""

    name: str
    answerable: int
    per_corpus: int
    unanswerable: int
    gold_words: tuple[int, int] | None
    changed_in: str
    earlier: tuple[str, ...]

    @property
    def path(self) -> Path:
        return DATA / f"extractive_questions_{self.name}.jsonl"


SETS = (
    QuestionSet("holdout2", 50, 25, 15, None, "python-reference",
                ("extractive_questions.jsonl", "extractive_questions_holdout.jsonl")),
    QuestionSet("holdout3", 70, 30, 20, (3, 12), "rust-book",
                ("extractive_questions.jsonl", "extractive_questions_holdout.jsonl",
                 "extractive_questions_holdout2.jsonl")),
    QuestionSet("holdout4", 60, 25, 15, (3, 12), "python-reference",
                ("extractive_questions.jsonl", "extractive_questions_holdout.jsonl",
                 "extractive_questions_holdout2.jsonl", "extractive_questions_holdout3.jsonl")),
    QuestionSet("holdout5", 70, 30, 20, (3, 12), "rust-book",
                ("extractive_questions.jsonl", "extractive_questions_holdout.jsonl",
                 "extractive_questions_holdout2.jsonl", "extractive_questions_holdout3.jsonl",
                 "extractive_questions_holdout4.jsonl")),
)  # fmt: skip


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench()


@pytest.fixture(scope="module")
def corpora(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return corpus_texts(bench, tmp_path_factory)


def _questions(bench: ModuleType, s: QuestionSet) -> list[Any]:
    if not s.path.is_file():
        pytest.skip(f"the {s.name} question set is not at {s.path}")
    return bench.load_questions(s.path)  # type: ignore[no-any-return]


@pytest.mark.parametrize("s", SETS, ids=lambda s: s.name)
def test_the_set_parses_and_covers_both_corpora(bench: ModuleType, s: QuestionSet) -> None:
    questions = _questions(bench, s)
    by_shard: dict[str | None, int] = {}
    for q in questions:
        by_shard[q.shard] = by_shard.get(q.shard, 0) + 1
    rust, python = by_shard.get("rust-book", 0), by_shard.get("python-reference", 0)
    assert rust + python >= s.answerable
    assert min(rust, python) >= s.per_corpus
    assert by_shard.get(None, 0) >= s.unanswerable
    assert all(q.question.strip().endswith("?") for q in questions)
    assert all(q.gold is None or q.gold.strip() for q in questions)
    if s.gold_words is not None:
        lo, hi = s.gold_words
        lengths = {q.id: len(q.gold.split()) for q in questions if q.gold is not None}
        assert {qid: n for qid, n in lengths.items() if not lo <= n <= hi} == {}


@pytest.mark.parametrize("s", SETS, ids=lambda s: s.name)
def test_every_gold_span_is_in_its_corpus_and_a_changed_one_is_reported(
    bench: ModuleType, corpora: dict[str, str], s: QuestionSet
) -> None:
    questions = _questions(bench, s)
    assert bench.check_gold(questions, corpora) == []
    real = next(q for q in questions if q.shard == s.changed_in)
    changed = bench.Question(real.id, real.shard, real.question, real.gold + " zq")
    assert bench.check_gold([changed], corpora) == [
        f"{real.id}: gold {changed.gold!r} is not in {s.changed_in}"
    ]


@pytest.mark.parametrize("s", SETS, ids=lambda s: s.name)
def test_the_set_repeats_no_question_of_an_earlier_set(bench: ModuleType, s: QuestionSet) -> None:
    def texts(qs: list[Any]) -> set[str]:
        return {" ".join(q.question.casefold().split()) for q in qs}

    questions = _questions(bench, s)
    mine = texts(questions)
    assert len(mine) == len(questions)
    for name in s.earlier:
        assert mine & texts(bench.load_questions(DATA / name)) == set(), name
