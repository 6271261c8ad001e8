"""The extractive answerer's question sets (bench/data/extractive_questions*.jsonl) parse,
and every gold span is in its corpus, checked by the benchmark's own checker."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.extractive_bench import ROOT, corpus_texts, load_bench


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench()


@pytest.fixture(scope="module")
def corpora(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return corpus_texts(bench, tmp_path_factory)


def test_the_holdout_set_parses_and_covers_both_corpora(bench: ModuleType) -> None:
    questions = bench.load_questions(bench.HOLDOUT_PATH)
    by_shard: dict[str | None, int] = {}
    for q in questions:
        by_shard[q.shard] = by_shard.get(q.shard, 0) + 1
    assert by_shard.get("rust-book", 0) + by_shard.get("python-reference", 0) >= 45
    assert min(by_shard.get("rust-book", 0), by_shard.get("python-reference", 0)) >= 20
    assert by_shard.get(None, 0) >= 15
    assert all(q.question.strip().endswith("?") for q in questions)


@pytest.mark.parametrize("name", ["QUESTIONS_PATH", "HOLDOUT_PATH"])
def test_every_gold_span_is_in_its_corpus(
    bench: ModuleType, corpora: dict[str, str], name: str
) -> None:
    assert bench.check_gold(bench.load_questions(getattr(bench, name)), corpora) == []


def test_the_checker_reports_a_gold_span_its_corpus_lacks(
    bench: ModuleType, corpora: dict[str, str]
) -> None:
    real = next(q for q in bench.load_questions(bench.HOLDOUT_PATH) if q.shard == "rust-book")
    moved = bench.Question("moved", "python-reference", real.question, real.gold)
    invented = bench.Question("invented", "rust-book", "?", "a phrase no book would print zq")
    assert bench.check_gold([real, moved, invented], corpora) == [
        f"moved: gold {real.gold!r} is not in python-reference",
        "invented: gold 'a phrase no book would print zq' is not in rust-book",
    ]


def test_questions_flag_reads_the_named_file(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = (ROOT / ".." / "shared" / "data").resolve()
    if not (data / "rust-book" / "src").is_dir():
        pytest.skip(f"the Rust book is not at {data}: the script stops before reading questions")
    row = {"id": "a", "shard": None, "question": "q?", "gold": None}
    bad = tmp_path / "questions.jsonl"
    bad.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    assert bench.main(["--data", str(data), "--questions", str(bad), "--quick"]) == 1
    assert "questions.jsonl line 2: id 'a' appears twice" in capsys.readouterr().err


def test_the_holdout_set_repeats_no_question_of_the_first(bench: ModuleType) -> None:
    def texts(path: Path) -> set[str]:
        return {" ".join(q.question.casefold().split()) for q in bench.load_questions(path)}

    assert texts(bench.QUESTIONS_PATH) & texts(bench.HOLDOUT_PATH) == set()
