"""`aborist serve` refuses, in one line, what it cannot serve: an unmigrated ledger, a
bad model configuration, a public bind without a token, a short token."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("ABORIST_API_TOKEN", "ABORIST_DB_URL", "ABORIST_LLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))


def _one_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert "Traceback" not in output
    return lines[-1]


def test_unmigrated_ledger(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["serve", "--db", f"sqlite:///{tmp_path / 'empty.db'}"])
    assert r.exit_code == 1
    assert "migrate" in _one_line(r.output)


def test_short_token_and_public_bind() -> None:
    r = CliRunner().invoke(cli, ["serve", "--token", "short"])
    assert r.exit_code == 2 and "at least 16" in _one_line(r.output)
    r = CliRunner().invoke(cli, ["serve", "--host", "192.168.0.9"])
    assert r.exit_code == 2 and "not a loopback address" in _one_line(r.output)


def test_bad_model_configuration(ledger_url: str) -> None:
    r = CliRunner().invoke(cli, ["serve", "--db", ledger_url, "--model", "openai"])
    assert r.exit_code == 1
    assert "no model endpoint configured" in _one_line(r.output)
