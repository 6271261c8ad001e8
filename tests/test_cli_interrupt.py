"""Ctrl-C while `aborist` or `aborist-ledger` is still starting up (importing its modules,
most of a short command's time) ends it with click's one line, not a traceback
(cli/entry.py).

The interrupt is raised deterministically, by an import hook, at the moment SQLAlchemy
is first imported (deep inside the command modules' imports), rather than by a signal
whose timing depends on the machine's speed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_CHILD = """
import sys

class Interrupt:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "sqlalchemy":
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Interrupt)
from cli.entry import {entry}
{entry}()
"""


@pytest.mark.parametrize("entry", ["aborist", "aborist_ledger"])
def test_ctrl_c_during_start_up_is_one_line(entry: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(entry=entry), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr, done.stdout) == (1, "Aborted!\n", "")


def test_what_the_commands_create_is_private(tmp_path: Path) -> None:
    """The console scripts create files 0600 and directories 0700 whatever the caller's
    umask: the home, its ledger and shards, an exported bundle."""
    home = tmp_path / "home"
    doc = tmp_path / "doc.md"
    doc.write_text("# Rivers\n\nThe Silverrun River is 412 kilometres long.\n", encoding="utf-8")
    env = {**os.environ, "ABORIST_HOME": str(home)}
    env.pop("ABORIST_DB_URL", None)

    def run(entry: str, *args: str) -> str:
        code = f"import os, sys; os.umask(0o022); from cli.entry import {entry}; {entry}()"
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True, text=True, timeout=120, check=False, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("aborist", "ingest", str(doc), "--shard", "geo")
    answered = run("aborist", "query", "How long is the Silverrun River?", "--json")
    bundle = tmp_path / "bundle.json"
    run("aborist_ledger", "export", "--run", json.loads(answered)["run_id"], "-o", str(bundle))
    made = [home, *home.rglob("*"), bundle]
    assert (home / "ledger.db") in made and (home / "shards" / "geo.shard.sqlite") in made
    for path in made:
        want = 0o700 if path.is_dir() else 0o600
        assert (path.stat().st_mode & 0o777) == want, path
