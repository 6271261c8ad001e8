"""Bad input to `aborist` that once ended in a traceback, a wrong exit code, invalid JSON
output or lost data: each now gets one clear line and a non-zero exit (docs/cli.md,
"Errors"). Through click's CliRunner on the real command group (cli.main)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from aborist.pipeline.batch import parse_questions
from aborist.settings import ConfigError, resolve_settings
from cli.main import cli

DEEP = "[" * 100_000 + "]" * 100_000


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def error_line(result: Result) -> str:
    """The one ``Error:`` line of a failed command (click's usage lines aside)."""
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("Error: ")]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("ABORIST_HOME", str(home))
    monkeypatch.delenv("ABORIST_DB_URL", raising=False)
    monkeypatch.delenv("ABORIST_SHARD_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


def test_a_questions_line_nested_100000_deep_is_skipped_not_a_recursion_error(
    home: Path, tmp_path: Path
) -> None:
    (tmp_path / "q.jsonl").write_text(DEEP + "\n", encoding="utf-8")
    result = run("query", "--batch", "q.jsonl")
    assert "Traceback" not in result.stderr
    assert "line 1: not JSON: nests 100000 levels deep; at most 64; skipped" in result.stderr
    assert "0 questions" in result.stderr and "1 input lines skipped" in result.stderr


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (DEEP, "not JSON: nests 100000 levels deep"),
        ('{"id": "a", "id": "b", "question": "Why?"}', "not JSON (duplicate key 'id')"),
        ('{"id": "a", "question": NaN}', "not JSON (NaN is not JSON)"),
        ("{not json", "not JSON (Expecting property name"),
    ],
)
def test_question_lines_are_parsed_within_bounds(line: str, problem: str) -> None:
    items, problems = parse_questions([line, '{"id": "ok", "question": "Why?"}'])
    assert [i.id for i in items] == ["ok"]
    [p] = problems
    assert p.line_no == 1 and p.message.startswith(problem)


def test_a_byte_order_mark_before_the_first_batch_line_is_dropped(tmp_path: Path) -> None:
    from aborist.pipeline.batch import read_questions

    path = tmp_path / "q.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "question": "Why?"}\n')
    items, problems = read_questions(path)
    assert [(i.id, i.question) for i in items] == [("a", "Why?")] and problems == []


def test_verify_batch_refuses_a_number_that_overflows_to_infinity(tmp_path: Path) -> None:
    """``1e999999`` parses as ``inf``; echoed as the id it made the output line
    ``"id": Infinity``, which is not JSON."""
    path = tmp_path / "a.jsonl"
    path.write_text(
        '{"id": 1e999999, "answer": "Bees dance.", "evidence": ["Bees dance."]}\n'
        '{"id": "ok", "answer": "Bees dance.", "evidence": ["Bees dance."]}\n',
        encoding="utf-8",
    )
    result = run("verify", "--batch", str(path))
    assert result.exit_code == 1
    assert "line 1: holds a number too large for JSON" in result.stderr
    [out] = [json.loads(line) for line in result.stdout.splitlines()]
    assert out["id"] == "ok" and out["label"] == "VERIFIED"
    assert "Infinity" not in result.stdout


def test_verify_batch_reads_a_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(
        b'\xef\xbb\xbf{"id": "a", "answer": "Bees dance.", "evidence": ["Bees dance."]}\n'
    )
    result = run("verify", "--batch", str(path))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["id"] == "a"


@pytest.mark.parametrize(
    "args",
    [
        ["ingest", "", "--shard", "s"],
        ["ask", "", "Who approves?"],
        ["verify", "--answer", "", "--evidence", "e.txt"],
        ["verify", "--batch", " "],
        ["query", "--batch", ""],
        ["--home", "", "shards"],
    ],
)
def test_an_empty_path_is_a_usage_error_not_the_current_directory(
    home: Path, tmp_path: Path, args: list[str]
) -> None:
    """``Path("")`` is ``.``: ``aborist ingest "$DOCS"`` with DOCS unset ingested the
    current directory (and ``--home ''`` put the data there)."""
    (tmp_path / "stray.md").write_text("# Stray\n\nNot meant for a shard.\n", encoding="utf-8")
    result = run(*args)
    assert result.exit_code == 2
    assert "is empty; name a file or directory" in error_line(result)
    assert not (home / "shards").exists() and not (tmp_path / "ledger.db").exists()


def test_check_paths_refuses_an_empty_path() -> None:
    from aborist.corpus.ingest import check_paths
    from aborist.errors import InputError

    with pytest.raises(InputError, match="an empty path was given"):
        check_paths([""])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = " + "[" * 10_000 + "]" * 10_000, "nests too deep to be a config file"),
        ("x = " + "{a=" * 3000 + "1" + "}" * 3000, "nests too deep to be a config file"),
        ('home = ""', "home: home is empty; give a directory"),
        ('shard_dir = "  "', "shard_dir: shard_dir is empty; give a directory"),
    ],
)
def test_a_config_file_that_nests_too_deep_or_names_an_empty_directory_is_one_line(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(text, encoding="utf-8")
    monkeypatch.setenv("ABORIST_CONFIG", str(cfg))
    monkeypatch.delenv("ABORIST_HOME")
    with pytest.raises(ConfigError, match=message):
        resolve_settings()
    result = run("config")
    assert result.exit_code == 1
    assert message in error_line(result)


def _ingest_one(home: Path, tmp_path: Path) -> None:
    doc = tmp_path / "bees.md"
    doc.write_text("# Bees\n\nBees dance to show where the flowers are.\n", encoding="utf-8")
    result = run("ingest", str(doc), "--shard", "bees")
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("damage", ["not a database", "no schema"])
def test_delete_shard_keeps_the_shard_when_the_ledger_cannot_record_it(
    home: Path, tmp_path: Path, damage: str
) -> None:
    """The file used to be deleted first; the ledger then refused corpus.shard_deleted
    (exit 1) and the shard was gone with no record of it."""
    _ingest_one(home, tmp_path)
    shard = home / "shards" / "bees.shard.sqlite"
    ledger = home / "ledger.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{ledger}{suffix}").unlink(missing_ok=True)
    if damage == "not a database":
        ledger.write_bytes(b"\x13" * 4096)
    else:
        sqlite3.connect(ledger).execute("CREATE TABLE unrelated (x)").connection.close()
    result = run("delete-shard", "bees", "--yes")
    assert result.exit_code == 1
    line = error_line(result)
    assert ("not an SQLite database" in line) or ("no ledger schema" in line)
    assert shard.exists()


def test_runs_with_a_limit_past_64_bits_lists_them_all(ledger_url: str) -> None:
    """``--limit 10**20`` was an OverflowError traceback from the database driver."""
    for args in (["runs"], ["runs", "--format", "jsonl"], ["runs", "--json"]):
        result = run(*args, "--limit", str(10**20), "--db", ledger_url)
        assert result.exit_code == 0, result.stderr
        assert "Traceback" not in result.stderr


def test_a_batch_output_file_that_cannot_be_created_is_one_plain_line(
    home: Path, tmp_path: Path
) -> None:
    (tmp_path / "q.jsonl").write_text('{"question": "Why do bees dance?"}\n', encoding="utf-8")
    result = run("query", "--batch", "q.jsonl", "-o", "nodir/answers.jsonl")
    assert result.exit_code == 1
    assert error_line(result) == (
        "Error: cannot write nodir/answers.jsonl: No such file or directory"
    )  # not "[Errno 2] No such file or directory: 'nodir/answers.jsonl'"


def test_ask_refuses_a_question_with_nothing_to_search_for_before_recording_anything(
    home: Path, tmp_path: Path
) -> None:
    """It ingested the document and recorded corpus.shard_ingested first, then refused."""
    doc = tmp_path / "bees.md"
    doc.write_text("# Bees\n\nBees dance to show where the flowers are.\n", encoding="utf-8")
    result = run("ask", str(doc), '"')
    assert result.exit_code == 1
    assert error_line(result) == (
        "Error: the question '\"' has no words to search for, only punctuation"
    )
    assert not (home / "ledger.db").exists()


def test_ask_refuses_a_document_path_that_is_not_utf8(home: Path, tmp_path: Path) -> None:
    """The run records the document's path as text; the ledger refused its first event
    with "payload holds a lone surrogate (U+DCFF)"."""
    import os

    name = os.fsdecode(b"bees\xff.md")  # as Python gives such a name from argv
    doc = tmp_path / name
    try:
        doc.write_text("# Bees\n\nBees dance to show where the flowers are.\n", encoding="utf-8")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses a name that is not UTF-8")
    result = run("ask", str(doc), "Why do bees dance?")
    assert result.exit_code == 1
    line = error_line(result)
    assert line.startswith(f"Error: the path {str(doc)!r} is not valid UTF-8 text (byte 0xFF)")
    assert not (home / "ledger.db").exists()
    ingested = run("ingest", str(doc), "--shard", "bees")  # what the line suggests works
    assert ingested.exit_code == 0, ingested.stderr
    answered = run("query", "Why do bees dance?", "--shard", "bees")
    assert answered.exit_code == 0 and "to show where the flowers are" in answered.stdout
