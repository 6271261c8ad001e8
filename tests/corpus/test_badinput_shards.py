"""A damaged or hand-edited shard file (a table dropped, a meta key gone, a locator nested
100,000 deep) is one :class:`CorpusError` naming the file, for `shards`, `query`,
`retrieve` and `ingest`: these were ``sqlite3.OperationalError``, ``KeyError`` and
``RecursionError`` tracebacks."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from aborist.corpus.shard import list_shards, read_shard_info
from aborist.errors import CorpusError
from cli.main import cli


def _damage_chunks_table(db: sqlite3.Connection) -> None:
    db.execute("DROP TABLE chunks")


def _damage_meta(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM meta WHERE key = 'source_root'")


def _damage_locator(db: sqlite3.Connection) -> None:
    db.execute("UPDATE chunks SET locator = ?", ("[" * 100_000 + "]" * 100_000,))


@pytest.fixture
def shard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("ABORIST_HOME", str(home))
    monkeypatch.delenv("ABORIST_DB_URL", raising=False)
    monkeypatch.delenv("ABORIST_SHARD_DIR", raising=False)
    doc = tmp_path / "bees.md"
    doc.write_text("# Bees\n\nBees dance to show where the flowers are.\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["ingest", str(doc), "--shard", "bees"])
    assert result.exit_code == 0, result.output
    return home / "shards" / "bees.shard.sqlite"


def _damage(path: Path, how: Callable[[sqlite3.Connection], None]) -> None:
    db = sqlite3.connect(path)
    try:
        how(db)
        db.commit()
    finally:
        db.close()


@pytest.mark.parametrize(
    ("how", "message"),
    [
        (_damage_chunks_table, "is not a complete shard: no such table: chunks"),
        (_damage_meta, "is not a complete shard: its meta table has no 'source_root'"),
    ],
)
def test_shard_info_of_a_damaged_shard_is_a_corpus_error(
    shard: Path, how: Callable[[sqlite3.Connection], None], message: str
) -> None:
    _damage(shard, how)
    with pytest.raises(CorpusError, match=message):
        read_shard_info(shard)
    with pytest.raises(CorpusError, match=message):
        list_shards(shard.parent)


@pytest.mark.parametrize(
    ("how", "message"),
    [
        (_damage_chunks_table, "is not a complete shard: no such table: chunks"),
        (_damage_locator, "shard bees: chunk 1 has a bad locator"),
    ],
)
@pytest.mark.parametrize(
    "args",
    [
        ["query", "Where do bees dance?", "--no-cache"],
        ["retrieve", "Where do bees dance?"],
        ["shards"],
    ],
)
def test_commands_on_a_damaged_shard_say_so_in_one_line(
    shard: Path, how: Callable[[sqlite3.Connection], None], message: str, args: list[str]
) -> None:
    _damage(shard, how)
    result = CliRunner().invoke(cli, args)
    if args == ["shards"] and how is _damage_locator:
        assert result.exit_code == 0  # the listing reads no locator
        return
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, (sqlite3.Error, RecursionError, KeyError))
    [line] = [ln for ln in result.stderr.splitlines() if ln.startswith("Error: ")]
    assert message in line
