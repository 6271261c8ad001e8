"""A data home whose path cannot even be looked at (a name longer than the file system
allows): `aborist config` and `--help` still work, and every command that needs the home
says why in one line, exit 1, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.audit.ledger_cli import cli as ledger_cli
from cli.main import cli


@pytest.fixture
def too_long(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / ("a" * 300)  # one name past NAME_MAX (255): ENAMETOOLONG on stat
    monkeypatch.setenv("ABORIST_HOME", str(home))
    for name in ("ABORIST_SHARD_DIR", "ABORIST_DB_URL"):
        monkeypatch.delenv(name, raising=False)
    return home


def test_config_and_help_still_work(too_long: Path) -> None:
    shown = CliRunner().invoke(cli, ["config"])
    assert shown.exit_code == 0 and str(too_long) in shown.stdout
    assert CliRunner().invoke(cli, ["verify", "--help"]).exit_code == 0


@pytest.mark.parametrize(
    "args",
    [
        ["shards"],
        ["runs"],
        ["documents", "--shard", "x"],
        ["query", "How long is the Silverrun River?"],
    ],
)
def test_each_command_says_why_in_one_line(too_long: Path, args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "File name too long" in result.stderr, result.stderr


@pytest.mark.parametrize("args", [["verify"], ["events"]])
def test_the_ledger_cli_says_why_in_one_line(too_long: Path, args: list[str]) -> None:
    result = CliRunner().invoke(ledger_cli, args)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "File name too long" in result.stderr, result.stderr
