"""`aborist ingest`, `aborist shards`, `aborist retrieve` through click's CliRunner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cli.corpus_cmd import ingest, retrieve, shards
from ledger.engine import ledger_engine
from ledger.migrate import upgrade
from ledger.store import Ledger


@click.group()
def group() -> None:
    """Test group holding the corpus commands."""


for command in (ingest, shards, retrieve):
    group.add_command(command)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("ABORIST_HOME", str(home))
    monkeypatch.delenv("ABORIST_DB_URL", raising=False)
    monkeypatch.delenv("ABORIST_SHARD_DIR", raising=False)
    return home


@pytest.fixture
def migrated(home: Path) -> str:
    home.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{home / 'ledger.db'}"
    engine = ledger_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    return url


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "gil.md").write_text(
        "# Threads\n\nThe Global Interpreter Lock (GIL) lets one thread run bytecode.\n"
    )
    (root / "lock.md").write_text("# Locks\n\nA global interpreter lock is a mutex.\n")
    (root / "notes.odt").write_bytes(b"PK")
    return root


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(group, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_every_command_has_help_with_an_example() -> None:
    for command in (ingest, shards, retrieve):
        code, out, _ = run(command.name or "", "--help")
        assert code == 0 and "Example: aborist " in out


def test_ingest_records_the_ledger_event_and_lists_skips(docs: Path, migrated: str) -> None:
    code, out, err = run("ingest", str(docs), "--shard", "py", "--role", "secondary")
    assert code == 0, err
    assert "shard py updated: 2 documents" in out
    assert "notes.odt: unsupported file type .odt" in out
    with Ledger.open(migrated) as ledger:
        (event,) = ledger.read_stream("shard:py")
    payload = json.loads(event.payload)
    assert event.type == "corpus.shard_ingested"
    assert payload["role"] == "secondary" and len(payload["documents"]) == 2
    assert f"source_root {payload['source_root']}" in out

    code, out, _ = run("ingest", str(docs), "--shard", "py", "--json")
    report = json.loads(out)
    assert code == 0 and report["changed"] is False
    assert report["source_root"] == payload["source_root"]


def test_ingest_without_a_migrated_ledger_is_one_clean_line(docs: Path, home: Path) -> None:
    code, _, err = run("ingest", str(docs), "--shard", "py")
    assert code == 1 and "aborist-ledger migrate" in err and "Traceback" not in err
    assert not (home / "shards" / "py.shard.sqlite").exists()
    code, _, err = run("ingest", str(docs), "--shard", "py", "--no-ledger")
    assert code == 0, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/no/such/dir", "--shard", "x"], "no such file or directory: /no/such/dir"),
        (["{loop}", "--shard", "x"], "symlink loop: {loop}"),
        (["{docs}", "--shard", "../evil"], "shard name '../evil' is not allowed"),
        (["{docs}", "--shard", "x", "--role", "Bad Role"], "role 'Bad Role' is not allowed"),
        (["{empty}", "--shard", "x"], "nothing ingested into shard 'x'"),
    ],
)
def test_ingest_bad_input_messages(
    args: list[str], message: str, docs: Path, tmp_path: Path, migrated: str
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    loop = tmp_path / "loop.md"
    loop.symlink_to(loop.name)
    argv = [a.format(docs=docs, empty=empty, loop=loop) for a in args]
    code, _, err = run("ingest", *argv)
    assert code == 1
    assert err.startswith("Error: ") and message.format(loop=loop) in err
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_ingest_lists_special_files_and_odd_names_one_line_each(docs: Path, home: Path) -> None:
    os.mkfifo(docs / "pipe.txt")
    (docs / "a.md").symlink_to("b.md")
    (docs / "b.md").symlink_to("a.md")
    try:
        (docs / os.fsdecode(b"na\xffme\nx.md")).write_text("")
    except (OSError, UnicodeError) as e:
        pytest.skip(f"cannot create a non-UTF-8 file name here: {e}")
    code, out, err = run("ingest", str(docs), "--shard", "py", "--no-ledger")
    assert code == 0, err
    listed = out.split("skipped 5 file(s):\n")[1].splitlines()
    assert listed == [
        f"  {docs}/notes.odt: unsupported file type .odt; supported: .docx, .htm, .html, "
        ".markdown, .md, .pdf, .rst, .txt",
        f"  {docs}/a.md: symlink loop",
        f"  {docs}/b.md: symlink loop",
        f"  {docs}/pipe.txt: not a regular file (named pipe)",
        f"  {docs}/na\\xffme\\nx.md: no text after canonicalization",
    ]


def test_shards_lists_counts_and_roots(docs: Path, home: Path) -> None:
    code, out, _ = run("shards")
    assert code == 0 and "no shards in" in out
    run("ingest", str(docs), "--shard", "py", "--no-ledger")
    code, out, _ = run("shards")
    assert code == 0
    line = out.splitlines()[1].split()
    assert line[:3] == ["py", "2", "2"] and len(line[-1]) == 64
    code, out, _ = run("shards", "--json")
    (info,) = json.loads(out)
    assert (info["name"], info["documents"], info["chunks"]) == ("py", 2, 2)


def test_retrieve_prints_the_ranking_and_json(docs: Path, home: Path) -> None:
    run("ingest", str(docs), "--shard", "py", "--no-ledger")
    code, out, err = run("retrieve", "What is the GIL?", "--shard", "py")
    assert code == 0, err
    assert out.startswith('mode OR: "gil" OR "global interpreter lock"')
    assert "synonyms injected for 'gil': global interpreter lock" in out
    assert "selected" in out and "Locks" in out
    code, out, _ = run("retrieve", "What is the GIL?", "--json")
    data = json.loads(out)
    assert data["mode"] == "OR" and data["candidates"][0]["decision"] == "selected"


@pytest.mark.parametrize("question", ['NEAR("a" "b")', "title:*", "((", '"'])
def test_retrieve_hostile_questions_exit_zero(question: str, docs: Path, home: Path) -> None:
    run("ingest", str(docs), "--shard", "py", "--no-ledger")
    code, _, err = run("retrieve", question)
    assert code == 0, err


def test_retrieve_errors_are_clean(docs: Path, home: Path) -> None:
    code, _, err = run("retrieve", "x")
    assert code == 1 and "no shards in" in err
    run("ingest", str(docs), "--shard", "py", "--no-ledger")
    code, _, err = run("retrieve", "   ")
    assert code == 1 and "the question is empty" in err
    code, _, err = run("retrieve", "x", "--shard", "nope")
    assert code == 1 and "no shard named 'nope'" in err
