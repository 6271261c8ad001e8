"""Output that cannot be written: stdout on a full disk (``/dev/full``) was a traceback
from whichever ``click.echo`` hit it first (or, for a short output, an "Exception ignored"
message at exit and exit 120); now one line and exit 1, for the console scripts as run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def _run_to_dev_full(*args: str, script: str = "aborist") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = f"import sys; from cli.entry import {script.replace('-', '_')} as m; sys.argv[0] = "
    code += f"{script!r}; m()"
    with open("/dev/full", "w") as full:
        return subprocess.run(
            [sys.executable, "-c", code, *args], stdout=full, stderr=subprocess.PIPE,
            text=True, env=env, cwd=ROOT, timeout=120,
        )  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        ["config"],  # a few lines, flushed only at exit
        ["config", "--json"],
        ["--version"],  # printed by click before any command runs
        ["shards", "--json"],
    ],
)
def test_stdout_on_a_full_disk_is_one_line_and_exit_1(args: list[str]) -> None:
    result = _run_to_dev_full(*args)
    assert result.returncode == 1, result.stderr
    assert result.stderr == "Error: cannot write the output: No space left on device\n"


def test_the_ledger_cli_shares_the_entry_point() -> None:
    result = _run_to_dev_full("--version", script="aborist-ledger")
    assert result.returncode == 1
    assert result.stderr == "Error: cannot write the output: No space left on device\n"


def test_a_long_output_that_fails_mid_command_is_one_line(tmp_path: Path) -> None:
    """Past stdout's buffer the write fails inside the command's own ``click.echo``."""
    answer = tmp_path / "answer.txt"
    answer.write_text("Bees dance.\n" * 16_000, encoding="utf-8")  # under the 200,000 limit
    evidence = tmp_path / "evidence.txt"
    evidence.write_text("Bees dance.\n", encoding="utf-8")
    result = _run_to_dev_full(
        "verify", "--answer", str(answer), "--evidence", str(evidence), "--json"
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr == "Error: cannot write the output: No space left on device\n"
