"""Batch input read as JSON Lines, line by line: a line that is not UTF-8 is one skipped
line, not a refused file; only ``\\n`` ends a line. And a question refused before its run
started names no run. `aborist query --batch` and `aborist verify --batch`; the ledger
cases on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aborist.events import run_stream
from aborist.pipeline.batch import BatchItem, jsonl_lines, read_questions, run_batch
from aborist.projections import open_ledger
from cli.main import cli


def test_only_a_newline_ends_a_line_and_each_line_decodes_on_its_own() -> None:
    data = (
        b'\xef\xbb\xbf{"q": "one"}\r\n'
        + '{"q": "two\u2028still two"}\n'.encode()
        + b'{"q": "caf\xe9"}\n'  # Latin-1, not UTF-8
        + b"\n"
        + '{"q": "f\u00fcnf"}'.encode()
    )
    lines, bad = jsonl_lines(data)
    assert lines == ['{"q": "one"}', '{"q": "two\u2028still two"}', "", "", '{"q": "f\u00fcnf"}']
    assert bad == [3]


def test_a_line_that_is_not_utf8_is_skipped_with_its_number(tmp_path: Path) -> None:
    src = tmp_path / "q.jsonl"
    src.write_bytes(
        b'{"id": "a", "question": "One?"}\n'
        b'{"id": "b", "question": "Caf\xe9?"}\n'
        b'{"id": "c", "question": "Three?"}\n'
        b"{broken\n"
    )
    items, problems = read_questions(src)
    assert [i.id for i in items] == ["a", "c"]
    assert [(p.line_no, p.message) for p in problems] == [
        (2, "not UTF-8 text"),
        (4, problems[1].message),
    ]
    assert problems[1].message.startswith("not JSON")


def test_verify_batch_skips_a_line_that_is_not_utf8_and_verifies_the_rest(tmp_path: Path) -> None:
    good = {"id": "r1", "answer": "Tuples are immutable.", "evidence": ["Tuples are immutable."]}
    src = tmp_path / "in.jsonl"
    src.write_bytes(json.dumps(good).encode() + b'\n{"id": "r2", "answer": "\xff"}\n')
    result = CliRunner().invoke(cli, ["verify", "--batch", str(src)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert [json.loads(x)["id"] for x in result.stdout.splitlines()] == ["r1"]
    assert "line 2: not UTF-8 text" in result.stderr
    assert "1 malformed line(s)" in result.stderr


def test_a_question_refused_before_its_run_started_names_no_run(
    ledger_url: str, corpus: Any
) -> None:
    with open_ledger(ledger_url) as lg:
        corpus.record(lg)
    items = [BatchItem("bad", '"', 1), BatchItem("good", next(iter(corpus.facts)), 2)]
    out: list[dict[str, Any]] = []
    summary = run_batch(items, db_url=ledger_url, shards_dir=corpus.shards_dir,
                        on_result=out.append)  # fmt: skip
    assert (summary.failed, summary.answered) == (1, 1)
    bad, good = out
    assert bad["error_type"] == "InputError" and bad["run_id"] is None
    assert good["run_id"] == items[1].run_id
    with open_ledger(ledger_url) as lg:
        assert lg.read_stream(run_stream(items[0].run_id)) == []  # indeed no run


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_cli_names_no_run_for_a_refused_question(
    tmp_path: Path, ledger_url: str, corpus: Any, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ABORIST_SHARD_DIR", str(corpus.shards_dir))
    with open_ledger(ledger_url) as lg:
        corpus.record(lg)
    src = tmp_path / "q.jsonl"
    src.write_text(json.dumps({"id": "bad", "question": "*"}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["query", "--batch", str(src), "--db", ledger_url, "--workers", workers]
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["run_id"] is None and line["error_type"] == "InputError"
    assert "bad: failed:" in result.stderr and "(run " not in result.stderr


@pytest.mark.parametrize("command", [["verify", "--batch"], ["query", "--batch"]])
def test_a_batch_file_with_no_line_end_is_refused_before_memory_runs_out(
    command: list[str],
) -> None:
    """``/dev/zero`` has no line end: its first 64 MiB refuse the file, in one line."""
    result = CliRunner().invoke(cli, [*command, "/dev/zero"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "line 1 of the" in result.stderr and "longer than 64 MiB" in result.stderr


def test_a_line_past_the_limit_refuses_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aborist.errors import InputError
    from aborist.pipeline import batch

    monkeypatch.setattr(batch, "MAX_LINE_BYTES", 40)
    src = tmp_path / "q.jsonl"
    src.write_text('{"question": "short?"}\n{"question": "' + "x" * 50 + '"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2 of the questions file .* longer than"):
        read_questions(src)
    src.write_text('{"question": "short?"}\n' * 3, encoding="utf-8")  # at the limit: read
    assert len(read_questions(src)[0]) == 3


OLD_MAC = b'{"id": "a", "question": "One?"}\r{"id": "b", "question": "Two?"}\r'


def test_a_carriage_return_that_ends_no_line_refuses_the_file(tmp_path: Path) -> None:
    """Old Mac line ends (``\\r`` alone) were read as one line; ``\\r\\n`` still ends one."""
    from aborist.errors import InputError

    src = tmp_path / "q.jsonl"
    src.write_bytes(b'{"id": "z", "question": "Fine?"}\r\n' + OLD_MAC)
    with pytest.raises(InputError, match=r"line 2 of the questions file .* carriage return"):
        read_questions(src)
    src.write_bytes(OLD_MAC.replace(b"\r", b"\r\n"))
    items, problems = read_questions(src)
    assert [i.id for i in items] == ["a", "b"] and problems == []


@pytest.mark.parametrize("command", ["query", "verify"])
def test_the_cli_refuses_old_mac_line_ends_in_one_line(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ABORIST_DB_URL", raising=False)
    src = tmp_path / "in.jsonl"
    src.write_bytes(OLD_MAC)
    result = CliRunner().invoke(cli, [command, "--batch", str(src)])
    assert result.exit_code != 0 and "Traceback" not in result.stderr
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("Error: ")]
    assert len(errors) == 1 and "with \\r alone is not read" in errors[0], result.stderr
    assert "nothing was run" in errors[0] and result.stdout == ""
