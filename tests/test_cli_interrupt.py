"""Ctrl-C while `aborist` or `aborist-ledger` is still starting up (importing its modules,
most of a short command's time) ends it with click's one line, not a traceback
(cli/entry.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest


@pytest.mark.parametrize("entry", ["aborist", "aborist_ledger"])
def test_ctrl_c_during_start_up_is_one_line(entry: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", f"from cli.entry import {entry}; {entry}()", "--version"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.15)  # past the interpreter's own start, inside the imports (~0.5-1 s here)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    if proc.returncode == 0:  # the machine was fast enough to finish first: nothing to see
        assert out.startswith(("aborist, version", "aborist-ledger, version"))
        return
    assert proc.returncode == 1, (proc.returncode, err)
    assert "Traceback" not in err
    assert err.strip() == "Aborted!"
