"""docs/cli.md is the commands' own --help, and every command has an Example."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

from cli.audit.ledger_cli import cli as ledger_cli
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


def test_group_help_shows_whole_first_sentences() -> None:
    """`aborist --help` lists each command's whole first sentence, not a cut with "..."."""
    from click.testing import CliRunner

    for group in (main_cli, ledger_cli):
        assert isinstance(group, click.Group)
        out = CliRunner().invoke(group, ["--help"], terminal_width=80).output
        listing = " ".join(out[out.index("Commands:") :].split())
        assert "..." not in listing
        for command in group.commands.values():
            first = command.get_short_help_str(limit=1000)
            assert " ".join(first.split()) in listing, command.name
    text = CliRunner().invoke(main_cli, ["--help"]).output
    for word in ("STRICT", "HYBRID", "UNGROUNDED", "VERIFIED", "SUPPORTED", "PARTIAL"):
        assert word in text


def test_shell_completion_scripts() -> None:
    """The completion the README documents: click's, keyed on the installed script name."""
    import os

    import pytest

    for env, prog in (("_ABORIST_COMPLETE", "aborist"),
                      ("_ABORIST_LEDGER_COMPLETE", "aborist-ledger")):  # fmt: skip
        script = Path(sys.executable).parent / prog
        if not script.exists():
            pytest.skip(f"console script {prog} is not installed beside {sys.executable}")
        done = subprocess.run(
            [str(script)], capture_output=True, text=True, timeout=60,
            env={**os.environ, env: "bash_source"}, cwd=ROOT, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "complete -o nosort -F" in done.stdout, done.stdout[:200]


def test_the_licence_is_an_spdx_string() -> None:
    """No setuptools deprecation warning for a TOML-table licence; the setuptools that
    reads the string form (77) is required to build."""
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["license"] == "Apache-2.0"
    assert "setuptools>=77" in meta["build-system"]["requires"]
