"""docs/cli.md is the commands' own --help, and every command has an Example."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

from cli.ledger_cli import cli as ledger_cli
from cli.main import cli as main_cli

ROOT = Path(__file__).resolve().parents[1]


def test_cli_reference_is_current(tmp_path: Path) -> None:
    # A fresh interpreter: click caches each command's help option on first use, so
    # rendering inside this test session would depend on which tests ran before.
    out = tmp_path / "cli.md"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_cli_docs.py"), str(out)],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == out.read_text(encoding="utf-8"), (
        "docs/cli.md is stale: run python scripts/gen_cli_docs.py"
    )


def test_every_command_has_help_with_an_example() -> None:
    for group in (main_cli, ledger_cli):
        assert isinstance(group, click.Group)
        for name, command in group.commands.items():
            assert command.help and "Example:" in command.help, name
