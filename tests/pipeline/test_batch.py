"""`aborist query --batch` and :func:`aborist.pipeline.batch.run_batch`, fast cases:
input parsing, output order and shape, the summary, cache on re-run, failures reported per
question, and usage errors. On SQLite and PostgreSQL; the long load and fault suites are in
tests/load/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from aborist.events import run_stream
from aborist.pipeline.batch import BatchItem, parse_questions, run_batch
from aborist.pipeline.recorded import load_run
from aborist.projections import open_ledger
from cli.main import cli
from ledger.verify import verify_ledger

UNANSWERABLE = "What is the population of the capital city of Mars?"


def questions(corpus: Any) -> list[tuple[str, str]]:
    facts = list(corpus.facts)
    return [("q1", facts[0]), ("q2", facts[1]), ("q3", UNANSWERABLE), ("q4", facts[2])]


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "not JSON"),
        ('["a list"]', "expected a JSON object"),
        ('{"id": "x"}', "missing or empty question"),
        ('{"id": "x", "question": "   "}', "missing or empty question"),
        ('{"id": "x", "question": 7}', "the question must be a string; found a number"),
        ('{"id": 7, "question": "Why?"}', "id must be a non-empty string"),
        ('{"id": "", "question": "Why?"}', "id must be a non-empty string"),
        ('{"id": "x", "question": "a\\u0000b"}', "NUL"),
        ('{"id": "x", "question": "lone \\ud800 surrogate"}', "lone surrogate"),
        ('{"id": "\\udcff", "question": "Why?"}', "lone surrogate"),
    ],
)
def test_a_malformed_line_is_reported_with_its_number(line: str, problem: str) -> None:
    items, problems = parse_questions(['{"id": "ok", "question": "Why?"}', line])
    assert [i.id for i in items] == ["ok"]
    [p] = problems
    assert p.line_no == 2 and problem in p.message
    assert str(p).startswith("line 2: ") and str(p).endswith("; skipped")


def test_parsing_keeps_order_skips_blanks_and_duplicate_ids() -> None:
    items, problems = parse_questions(
        ['{"id": "a", "question": "One?"}', "", '{"question": "Two?"}',
         '{"id": "a", "question": "Again?"}', '{"id": "b", "question": " Three? "}']
    )  # fmt: skip
    assert [(i.id, i.question, i.line_no) for i in items] == [
        ("a", "One?", 1), ("3", "Two?", 3), ("b", " Three? ", 5)
    ]  # fmt: skip
    assert [(p.line_no, p.message) for p in problems] == [(4, "duplicate id 'a' (first on line 1)")]
    assert len({i.run_id for i in items}) == 3  # a run id per question, chosen up front


def test_in_process_batch_answers_in_input_order_and_rerun_hits_the_cache(
    ledger_url: str, corpus: Any
) -> None:
    with open_ledger(ledger_url) as lg:
        corpus.record(lg)
    items = [BatchItem(qid, q, n) for n, (qid, q) in enumerate(questions(corpus), start=1)]
    out: list[dict[str, Any]] = []
    summary = run_batch(
        items, db_url=ledger_url, shards_dir=corpus.shards_dir, on_result=out.append
    )
    assert [line["id"] for line in out] == ["q1", "q2", "q3", "q4"]
    assert [line["run_id"] for line in out] == [i.run_id for i in items]
    assert [line["audit_mode"] for line in out] == ["STRICT", "STRICT", "UNGROUNDED", "STRICT"]
    assert (summary.answered, summary.cached, summary.failed, summary.ok) == (4, 0, 0, True)
    assert summary.by_label[("STRICT", "VERIFIED")] == 3
    assert sum(summary.by_label.values()) == 4

    again: list[dict[str, Any]] = []
    fresh = [BatchItem(i.id, i.question, i.line_no) for i in items]
    summary = run_batch(fresh, db_url=ledger_url, shards_dir=corpus.shards_dir,
                        on_result=again.append)  # fmt: skip
    assert summary.cached == 4 and summary.ok
    assert [a["served_from_run_id"] for a in again] == [line["run_id"] for line in out]
    assert [a["answer"] for a in again] == [line["answer"] for line in out]
    with open_ledger(ledger_url) as lg:
        assert verify_ledger(lg).ok


def test_a_failing_question_is_recorded_and_the_batch_goes_on(ledger_url: str, corpus: Any) -> None:
    """A missing shard fails every question at stage "cache"; each is its own failed run."""
    items = [BatchItem(qid, q, n) for n, (qid, q) in enumerate(questions(corpus)[:2], start=1)]
    out: list[dict[str, Any]] = []
    summary = run_batch(items, db_url=ledger_url, shards_dir=corpus.shards_dir,
                        shards=["nosuch"], on_result=out.append)  # fmt: skip
    assert (summary.failed, summary.answered, summary.ok) == (2, 0, False)
    for line, item in zip(out, items, strict=True):
        assert line["id"] == item.id and line["run_id"] == item.run_id
        assert line["failed_stage"] == "cache" and line["error_type"] == "CorpusError"
        assert "nosuch" in line["error"] and "ledger_error" not in line
    with open_ledger(ledger_url) as lg:
        for item in items:
            assert load_run(lg, item.run_id).status == "failed"
            assert lg.read_stream(run_stream(item.run_id))[-1].type == "qa.run_failed"


def test_ledger_failures_in_a_row_stop_the_batch(ledger_url: str, corpus: Any) -> None:
    """Questions whose runs the ledger cannot take are reported; after the limit, the rest
    are reported as not attempted rather than tried one by one."""
    from aborist.pipeline import batch

    items = [BatchItem(f"q{n}", q, n) for n, q in enumerate(list(corpus.facts) * 2, start=1)]
    out: list[dict[str, Any]] = []

    def refuse(self: Any, item: BatchItem) -> dict[str, Any]:
        return {"id": item.id, "question": item.question, "run_id": item.run_id,
                "error": "UnavailableError: disk I/O error", "error_type": "UnavailableError",
                "ledger_error": True, "failed_stage": None}  # fmt: skip

    mp = pytest.MonkeyPatch()
    mp.setattr(batch._Answerer, "answer", refuse)
    try:
        summary = run_batch(items, db_url=ledger_url, shards_dir=corpus.shards_dir,
                            on_result=out.append, ledger_failure_limit=2)  # fmt: skip
    finally:
        mp.undo()
    assert [line["id"] for line in out] == [i.id for i in items]
    assert [line["error_type"] for line in out] == ["UnavailableError"] * 2 + ["NotAttempted"] * 4
    assert (summary.failed, summary.not_attempted, summary.ok) == (2, 4, False)
    assert summary.stopped and "2 questions in a row" in summary.stopped
    assert all("ledger_error" not in line for line in out)


# -- the CLI ---------------------------------------------------------------------------------


@pytest.fixture
def cli_env(corpus: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ABORIST_SHARD_DIR", str(corpus.shards_dir))
    for name in ("ABORIST_DB_URL", "ABORIST_LLM_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_cli_batch_with_two_workers_then_rerun_from_cache(
    cli_env: Path, ledger_url: str, corpus: Any
) -> None:
    with open_ledger(ledger_url) as lg:
        corpus.record(lg)
    qs = questions(corpus)
    src = write_jsonl(cli_env / "q.jsonl", [
        {"id": qs[0][0], "question": qs[0][1]}, "{broken", {"id": qs[1][0], "question": qs[1][1]},
        {"id": qs[0][0], "question": "again?"}, {"id": qs[2][0], "question": qs[2][1]},
        {"id": qs[3][0], "question": qs[3][1]},
    ])  # fmt: skip
    answers = cli_env / "a.jsonl"
    result = invoke("query", "--batch", str(src), "--workers", "2", "-o", str(answers),
                    "--db", ledger_url)  # fmt: skip
    assert result.exit_code == 0, (result.output, result.exception)
    assert result.stdout == ""
    err = result.stderr
    assert "line 2: not JSON" in err and "line 4: duplicate id 'q1'" in err
    assert "4 questions, 4 answered (0 from the cache), 0 failed" in err
    assert "2 input lines skipped" in err and "with 2 workers" in err
    assert "STRICT     VERIFIED       3" in err and "\r" not in err  # no progress off a TTY
    lines = [json.loads(x) for x in answers.read_text(encoding="utf-8").splitlines()]
    assert [x["id"] for x in lines] == ["q1", "q2", "q3", "q4"]
    single = json.loads(invoke("query", qs[0][1], "--db", ledger_url, "--json").stdout)
    assert set(lines[0]) == set(single) | {"id"}

    rerun = invoke("query", "--batch", str(src), "--db", ledger_url)
    assert rerun.exit_code == 0, (rerun.output, rerun.exception)
    again = [json.loads(x) for x in rerun.stdout.splitlines()]
    assert [x["cache_hit"] for x in again] == [True] * 4
    assert [x["served_from_run_id"] for x in again] == [x["run_id"] for x in lines]
    assert "4 answered (4 from the cache)" in rerun.stderr
    with open_ledger(ledger_url) as lg:
        assert verify_ledger(lg).ok


def test_cli_batch_exits_1_when_a_question_fails(cli_env: Path, ledger_url: str) -> None:
    src = write_jsonl(cli_env / "q.jsonl", [{"id": "x", "question": "How long is it?"}])
    result = invoke("query", "--batch", str(src), "--shard", "nosuch", "--db", ledger_url)
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["id"] == "x" and line["failed_stage"] == "cache"
    assert "x: failed: CorpusError" in result.stderr and line["run_id"] in result.stderr
    assert "0 answered" in result.stderr and "1 failed" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "exactly one"),
        (("Why?", "--batch", "q.jsonl"), "exactly one"),
        (("Why?", "--workers", "2"), "need --batch"),
        (("Why?", "-o", "a.jsonl"), "need --batch"),
    ],
)
def test_cli_usage_errors(cli_env: Path, args: tuple[str, ...], message: str) -> None:
    result = invoke("query", *args)
    assert result.exit_code == 2 and message in result.stderr


def test_cli_missing_batch_file_and_unmigrated_ledger_fail_cleanly(
    cli_env: Path, empty_url: str
) -> None:
    result = invoke("query", "--batch", str(cli_env / "absent.jsonl"))
    assert result.exit_code == 1 and "cannot read questions file" in result.stderr
    src = write_jsonl(cli_env / "q.jsonl", [{"id": "x", "question": "Why?"}])
    for workers in ("1", "2"):
        result = invoke("query", "--batch", str(src), "--db", empty_url, "--workers", workers)
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert "migrate" in result.stderr


def test_cli_batch_refuses_to_write_over_its_questions(cli_env: Path, ledger_url: str) -> None:
    src = write_jsonl(cli_env / "q.jsonl", [{"id": "x", "question": "How long is it?"}])
    before = src.read_text(encoding="utf-8")
    result = invoke("query", "--batch", str(src), "-o", str(src), "--db", ledger_url)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "is the questions file" in result.stderr
    assert src.read_text(encoding="utf-8") == before
    with open_ledger(ledger_url) as lg:
        assert lg.head()[0] == 0  # refused before any question ran


def test_cli_batch_with_a_lone_surrogate_line_answers_the_rest(
    cli_env: Path, ledger_url: str, corpus: Any
) -> None:
    """Such a line is reported and skipped; it cannot reach a run or the output."""
    with open_ledger(ledger_url) as lg:
        corpus.record(lg)
    facts = list(corpus.facts)
    src = write_jsonl(cli_env / "q.jsonl", [
        '{"id": "bad", "question": "lone \\ud800 surrogate"}', {"id": "ok", "question": facts[0]},
    ])  # fmt: skip
    result = invoke("query", "--batch", str(src), "--db", ledger_url)
    assert result.exit_code == 0, (result.output, result.exception)
    assert "line 1: contains a lone surrogate escape" in result.stderr
    assert [json.loads(x)["id"] for x in result.stdout.splitlines()] == ["ok"]
