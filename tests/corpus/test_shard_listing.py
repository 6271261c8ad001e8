"""`aborist shards` lists the shards it can read and names each one it cannot (one line on
stderr each, exit 1) instead of failing on the first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from aborist.corpus.shard import survey_shards
from cli.main import cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Rivers\n\nThe Silverrun River is 412 kilometres long.\n")
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ABORIST_SHARD_DIR", raising=False)
    monkeypatch.delenv("ABORIST_DB_URL", raising=False)
    got = CliRunner().invoke(cli, ["ingest", str(docs), "--shard", "geo"])
    assert got.exit_code == 0, got.output
    return tmp_path / "home"


def test_a_broken_shard_is_named_and_the_others_are_listed(home: Path) -> None:
    shards = home / "shards"
    (shards / "junk.shard.sqlite").write_text("not a database", encoding="utf-8")
    (shards / "folder.shard.sqlite").mkdir()
    infos, broken = survey_shards(shards)
    assert [i.name for i in infos] == ["geo"]
    assert len(broken) == 2 and all("is not a readable shard" in b for b in broken)
    result = CliRunner().invoke(cli, ["shards"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stdout.splitlines()[1].startswith("geo ")
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 2
    assert any("junk" in e for e in errors) and any("folder" in e for e in errors)
    assert all(e.startswith("Error: ") for e in errors)
    as_json = CliRunner().invoke(cli, ["shards", "--json"])
    assert as_json.exit_code == 1 and [s["name"] for s in json.loads(as_json.stdout)] == ["geo"]


def test_only_readable_shards_list_with_exit_0(home: Path) -> None:
    result = CliRunner().invoke(cli, ["shards"])
    assert result.exit_code == 0 and result.stderr == ""
    assert survey_shards(home / "shards")[1] == []
