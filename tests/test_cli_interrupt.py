"""Ctrl-C while `aborist` or `aborist-ledger` is still starting up (importing its modules,
most of a short command's time) ends it with click's one line, not a traceback
(cli/entry.py).

The interrupt is raised deterministically, by an import hook, at the moment SQLAlchemy
is first imported (deep inside the command modules' imports), rather than by a signal
whose timing depends on the machine's speed."""

from __future__ import annotations

import subprocess
import sys

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
