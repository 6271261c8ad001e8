"""`--db` naming an existing file that is not a ledger (docs/cli.md, "The ledger file"): an
empty file, a text file, another application's SQLite database. Every command that opens
the ledger refuses it in one line and leaves it byte for byte as it was (connecting set
WAL mode, which wrote an SQLite header into the empty file and changed the other
database's journal mode); only `aborist-ledger migrate` makes a ledger there. SQLite
only: these are files; a PostgreSQL URL names no file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.audit.ledger_cli import cli as ledger_cli
from cli.main import cli
from ledger.store import Ledger


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _text(path: Path) -> None:
    path.write_text("meeting notes, not a database\n" * 200, encoding="utf-8")


def _foreign(path: Path) -> None:
    conn = sqlite3.connect(path)  # rollback journal, as most applications leave it
    conn.execute("CREATE TABLE contacts (name TEXT)")
    conn.execute("INSERT INTO contacts VALUES ('Ada')")
    conn.commit()
    conn.close()


KINDS = {
    "empty": (_empty, "is an empty file, not a ledger; it was left as it is"),
    "text": (_text, "is not an SQLite database (nor a ledger); it was left as it is"),
    "foreign": (_foreign, "is an SQLite database with no ledger schema; it was left as it is"),
}

COMMANDS = [
    (cli, ["query", "Why is the sky blue?"]),
    (cli, ["ask", "Why is the sky blue?", "{doc}"]),
    (cli, ["runs"]),
    (cli, ["show", "0123456789abcdef0123456789abcdef"]),
    (cli, ["inspect", "0123456789abcdef0123456789abcdef"]),
    (ledger_cli, ["verify"]),
    (ledger_cli, ["events"]),
    (ledger_cli, ["checkpoint"]),
    (ledger_cli, ["replay"]),
    (ledger_cli, ["rebuild"]),
]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ABORIST_DB_URL", raising=False)
    monkeypatch.delenv("ABORIST_SHARD_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "doc.md").write_text("# Sky\n\nThe sky is blue.\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize(("group", "args"), COMMANDS, ids=[" ".join(a[:1]) for _, a in COMMANDS])
def test_a_file_that_is_not_a_ledger_is_refused_and_left_as_it_is(
    home: Path, kind: str, group: object, args: list[str]
) -> None:
    make, message = KINDS[kind]
    path = home / "store.db"
    make(path)
    before = path.read_bytes()
    argv = [a.format(doc=home / "doc.md") for a in args] + ["--db", f"sqlite:///{path}"]
    result = CliRunner().invoke(group, argv)  # type: ignore[arg-type]
    assert result.exit_code != 0
    assert "Traceback" not in result.stderr
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("Error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"Error: {path} {message}"), errors
    assert path.read_bytes() == before
    assert sorted(p.name for p in home.iterdir()) == ["doc.md", "store.db"]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_ingest_refuses_it_before_writing_a_shard(
    home: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ingest` has no --db: the ledger comes from $ABORIST_DB_URL."""
    make, message = KINDS[kind]
    path = home / "store.db"
    make(path)
    before = path.read_bytes()
    monkeypatch.setenv("ABORIST_DB_URL", f"sqlite:///{path}")
    result = CliRunner().invoke(cli, ["ingest", str(home / "doc.md"), "--shard", "sky"])
    assert result.exit_code != 0 and "Traceback" not in result.stderr
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("Error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"Error: {path} {message}"), errors
    assert path.read_bytes() == before
    assert sorted(p.name for p in home.iterdir()) == ["doc.md", "store.db"]  # no shard


def test_migrate_makes_a_ledger_in_an_empty_file_and_refuses_the_others(tmp_path: Path) -> None:
    empty, text = tmp_path / "empty.db", tmp_path / "notes.db"
    _empty(empty)
    _text(text)
    before = text.read_bytes()
    ok = CliRunner().invoke(ledger_cli, ["migrate", "--db", f"sqlite:///{empty}"])
    assert ok.exit_code == 0, ok.stderr
    with Ledger.open(f"sqlite:///{empty}") as lg:
        assert lg.read_stream("run:none") == []  # opened: the schema is there
    refused = CliRunner().invoke(ledger_cli, ["migrate", "--db", f"sqlite:///{text}"])
    assert refused.exit_code != 0 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert text.read_bytes() == before
