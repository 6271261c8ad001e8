"""docs/cli.md is the commands' own --help, and every command has an Example."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import click

from cli.ledger_cli import cli as ledger_cli
from cli.main import cli as main_cli

ROOT = Path(__file__).resolve().parents[1]


def test_cli_reference_is_current() -> None:
    spec = importlib.util.spec_from_file_location(
        "gen_cli_docs", ROOT / "scripts" / "gen_cli_docs.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == gen.render(), "docs/cli.md is stale: run python scripts/gen_cli_docs.py"


def test_every_command_has_help_with_an_example() -> None:
    for group in (main_cli, ledger_cli):
        assert isinstance(group, click.Group)
        for name, command in group.commands.items():
            assert command.help and "Example:" in command.help, name
