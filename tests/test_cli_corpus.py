"""`aborist ingest`, `shards`, `documents`, `delete-shard`, `retrieve` through click's
CliRunner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from aborist.migrations import upgrade
from cli.corpus_cmd import COMMANDS, _IngestBar, reason_kind
from ledger.engine import ledger_engine
from ledger.store import Ledger


@click.group()
def group() -> None:
    """Test group holding the corpus commands."""


for command in COMMANDS:
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
    for command in COMMANDS:
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


def test_the_first_ingest_creates_the_embedded_ledger(docs: Path, home: Path) -> None:
    """No migrate step: the first ingest makes the home (0700) and its SQLite ledger
    (0600), and says on stderr where data is kept; the next one says nothing of it."""
    code, _, err = run("ingest", str(docs), "--shard", "py")
    assert code == 0, err
    assert f"keeping data in {home}" in err
    assert (home.stat().st_mode & 0o777) == 0o700
    assert ((home / "ledger.db").stat().st_mode & 0o777) == 0o600
    assert (home / "shards" / "py.shard.sqlite").exists()
    code, _, err = run("ingest", str(docs), "--shard", "py")
    assert code == 0 and "keeping data" not in err


def test_ingest_into_an_unmigrated_named_ledger_is_one_clean_line(
    docs: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ledger named by ABORIST_DB_URL is not created behind the user's back."""
    monkeypatch.setenv("ABORIST_DB_URL", f"sqlite:///{tmp_path / 'elsewhere.db'}")
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
    _, _, rest = out.partition("skipped 5 file(s): ")
    summary, _, rest = rest.partition("\n")
    assert summary == (
        "2 symlink loop, 1 no text after canonicalization, 1 not a regular file, "
        "1 unsupported file type .odt"
    )
    listed = rest.splitlines()
    assert listed == [  # in the order found: what the directory walk refuses, then reads
        f"  {docs}/a.md: symlink loop",
        f"  {docs}/b.md: symlink loop",
        f"  {docs}/notes.odt: unsupported file type .odt; supported: .docx, .htm, .html, "
        ".markdown, .md, .pdf, .rst, .txt",
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


@pytest.mark.parametrize("question", ['NEAR("a" "b")', "title:*"])
def test_retrieve_hostile_questions_exit_zero(question: str, docs: Path, home: Path) -> None:
    """FTS5 syntax with words in it: the words are searched, as text."""
    run("ingest", str(docs), "--shard", "py", "--no-ledger")
    code, _, err = run("retrieve", question)
    assert code == 0, err


@pytest.mark.parametrize("question", ["((", '"'])
def test_retrieve_refuses_syntax_without_a_word(question: str, docs: Path, home: Path) -> None:
    """Nothing to search for: the line `aborist query` gives (it exited 0 with an empty
    ranking)."""
    run("ingest", str(docs), "--shard", "py", "--no-ledger")
    code, _, err = run("retrieve", question)
    assert code == 1
    assert err == f"Error: the question {question!r} has no words to search for, only punctuation\n"


def test_retrieve_errors_are_clean(docs: Path, home: Path) -> None:
    code, _, err = run("retrieve", "x")
    assert code == 1 and "no shards in" in err
    run("ingest", str(docs), "--shard", "py", "--no-ledger")
    code, _, err = run("retrieve", "   ")
    assert code == 1 and "the question is empty" in err
    code, _, err = run("retrieve", "x", "--shard", "nope")
    assert code == 1 and "no shard named 'nope'" in err


# --- ingest as users expect: documents, prune, delete, stale temps, summary, progress ---


def test_documents_lists_what_a_shard_holds(docs: Path, home: Path) -> None:
    assert run("ingest", str(docs), "--shard", "py", "--no-ledger")[0] == 0
    code, out, err = run("documents", "--shard", "py")
    assert code == 0, err
    assert out.splitlines()[0] == "shard py: 2 document(s)"
    assert "Threads" in out and "Locks" in out and "markdown" in out
    code, out, _ = run("documents", "--shard", "py", "--json")
    listed = json.loads(out)
    assert [d["title"] for d in listed] == ["Threads", "Locks"]
    assert {d["chunks"] for d in listed} == {1}
    code, _, err = run("documents", "--shard", "nope")
    assert code == 1 and "no shard named 'nope'" in err


def test_prune_drops_gone_files_and_records_them(docs: Path, migrated: str) -> None:
    assert run("ingest", str(docs), "--shard", "py")[0] == 0
    (docs / "lock.md").unlink()
    code, out, err = run("ingest", "--prune", "--shard", "py")
    assert code == 0, err
    assert "pruned      1 document(s) whose file is gone:" in out
    assert "lock.md" in out
    with Ledger.open(migrated) as ledger:
        events = list(ledger.read_stream("shard:py"))
    first, last = json.loads(events[0].payload), json.loads(events[-1].payload)
    assert "pruned" not in first
    assert [u.rsplit("/", 1)[1] for u in last["pruned"]] == ["lock.md"]
    assert [d["title"] for d in last["documents"]] == ["Threads"]
    (docs / "gil.md").unlink()
    code, _, err = run("ingest", "--prune", "--shard", "py")
    assert code == 1 and "would be left empty" in err and "delete-shard py" in err
    code, _, err = run("ingest", "--shard", "py")
    assert code == 2 and "give at least one PATH" in err


def test_delete_shard_removes_the_file_and_records_it(docs: Path, migrated: str) -> None:
    assert run("ingest", str(docs), "--shard", "py")[0] == 0
    shard_file = Path(migrated.removeprefix("sqlite:///")).parent / "shards" / "py.shard.sqlite"
    assert shard_file.is_file()
    code, _, err = run("delete-shard", "py")  # no --yes and no answer: nothing deleted
    assert code == 1 and shard_file.is_file()
    code, out, err = run("delete-shard", "py", "--yes")
    assert code == 0, err
    assert out.startswith("deleted shard py") and not shard_file.exists()
    with Ledger.open(migrated) as ledger:
        last = list(ledger.read_stream("shard:py"))[-1]
    assert last.type == "corpus.shard_deleted" and json.loads(last.payload)["shard"] == "py"
    assert run("delete-shard", "py", "--yes")[0] == 1


def test_temp_files_of_a_killed_ingest_are_removed_by_the_next(docs: Path, home: Path) -> None:
    assert run("ingest", str(docs), "--shard", "py", "--no-ledger")[0] == 0
    shards_dir = home / "shards"
    stale = [shards_dir / ".py.shard.sqlite.4242.tmp", shards_dir / ".py.shard.sqlite.77.tmp"]
    for f in stale:
        f.write_bytes(b"half-written shard")  # what a kill -9 during a build leaves
    other = shards_dir / ".other.shard.sqlite.4242.tmp"
    other.write_bytes(b"another shard's")
    code, out, err = run("ingest", str(docs), "--shard", "py", "--no-ledger")
    assert code == 0, err
    assert "removed     2 temporary file(s) left by an interrupted ingest" in out
    assert not any(f.exists() for f in stale) and other.exists()


def test_skipped_files_are_summarized_by_reason(docs: Path, home: Path) -> None:
    for i in range(25):
        (docs / f"image{i}.png").write_bytes(b"x")
    (docs / "bad.pdf").write_bytes(b"%PDF-1.4 broken")
    code, out, err = run("ingest", str(docs), "--shard", "py", "--no-ledger")
    assert code == 0, err
    assert (
        "skipped 27 file(s): 25 unsupported file type .png, 1 malformed PDF, "
        "1 unsupported file type .odt" in out
    )
    assert "(the 27 files are listed by --json)" in out and "image3.png" not in out
    code, out, _ = run("ingest", str(docs), "--shard", "py", "--no-ledger", "--json")
    assert len(json.loads(out)["skipped"]) == 27


def test_reason_kind_drops_the_particulars() -> None:
    assert reason_kind("malformed PDF (PdfReadError: EOF)") == "malformed PDF"
    assert reason_kind("unsupported file type .png; supported: .md") == "unsupported file type .png"
    assert reason_kind("not UTF-8 (byte 0xe9 at offset 3); re-save") == "not UTF-8"
    assert reason_kind("symlink loop") == "symlink loop"


def test_progress_line_only_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    from aborist.corpus.ingest import IngestProgress

    _IngestBar(False)(IngestProgress(1, 2, 10, 20))
    assert capsys.readouterr().err == ""
    bar = _IngestBar(True)
    bar(IngestProgress(2, 4, 3_000_000, 6_000_000))
    drawn = capsys.readouterr().err
    assert drawn.startswith("\r[############............] 2/4 files  3.0/6.0 MB  ETA ")
    bar.close()
    assert capsys.readouterr().err.strip() == ""
