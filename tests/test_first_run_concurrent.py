"""Several first runs at once on a fresh home (cli/common.py, ``embedded_ledger``): the
embedded ledger is created and migrated once, under a lock, and every run succeeds.

The first test starts four runs together (each waits for a file the test creates once
all of them have imported the CLI) and checks that all succeed and the ledger verifies.
It also passed with the lock taken out (SQLite's BEGIN IMMEDIATE already serializes the
migrations), so the second test checks the lock itself: a run waits while it is held."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from aborist.corpus.ingest import ingest

_CHILD = """
import os, sys, time
from cli.entry import aborist
import cli.query_cmd, cli.common  # the command's imports, before the start line
open(sys.argv[1] + ".ready", "w").close()
while not os.path.exists(sys.argv[1]):
    time.sleep(0.001)
sys.argv = ["aborist", *sys.argv[2:]]
aborist()
"""

QUESTION = "How long is the Silverrun River?"


def _start(go: Path, index: int, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, f"{go}{index}", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def test_first_runs_started_together_all_succeed(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rivers.md").write_text(
        "# Rivers\n\nThe Silverrun River is 412 kilometres long.\n", encoding="utf-8"
    )
    shards = tmp_path / "shards"
    ingest([docs], "geo", shards_dir=shards)  # no ledger: the runs pass the flag below
    home = tmp_path / "home"  # does not exist: the first run creates it
    env = {**os.environ, "ABORIST_HOME": str(home), "ABORIST_SHARD_DIR": str(shards)}
    for name in ("ABORIST_DB_URL", "ABORIST_MODEL", "ABORIST_CONFIG"):
        env.pop(name, None)
    go = tmp_path / "go"
    n = 4
    children = [
        _start(go, i, env, "query", QUESTION, "--allow-unrecorded-shards", "--json")
        for i in range(n - 1)
    ]
    # The ingesting run writes its shard elsewhere: a query that chose its corpus before a
    # new shard appeared in its own directory refuses to go on ("ask again"), which is
    # right, and not what this test is about (the first runs sharing one new ledger).
    ingest_env = {**env, "ABORIST_SHARD_DIR": str(tmp_path / "shards2")}
    children.append(_start(go, n - 1, ingest_env, "ingest", str(docs), "--shard", "geo2"))
    deadline = time.monotonic() + 120
    while not all(Path(f"{go}{i}.ready").exists() for i in range(n)):
        assert time.monotonic() < deadline, "the children did not start"
        assert all(c.poll() is None for c in children), [c.communicate() for c in children]
        time.sleep(0.01)
    for i in range(n):
        Path(f"{go}{i}").touch()
    results = [c.communicate(timeout=300) for c in children]
    for child, (_, err) in zip(children, results, strict=True):
        assert child.returncode == 0, err
    answers = [json.loads(out) for out, _ in results[:-1]]
    assert all("412 kilometres" in a["answer"] for a in answers)
    verified = subprocess.run(
        [sys.executable, "-c", "from cli.entry import aborist_ledger; aborist_ledger()",
         "verify", "--json"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stderr
    assert json.loads(verified.stdout)["ok"] is True


def test_a_first_run_waits_for_one_setting_up_the_ledger(tmp_path: Path) -> None:
    """While the setup lock is held (here by the test), a first run does not create or
    open the ledger; when it is released, the run goes on and succeeds."""
    import fcntl

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha text.\n", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "ABORIST_HOME": str(home)}
    env.pop("ABORIST_DB_URL", None)
    go = tmp_path / "go"
    with open(home / "ledger.db.lock", "w") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        child = _start(go, 0, env, "ingest", str(docs), "--shard", "a")
        deadline = time.monotonic() + 120
        while not Path(f"{go}0.ready").exists():
            assert time.monotonic() < deadline and child.poll() is None, child.communicate()
            time.sleep(0.01)
        Path(f"{go}0").touch()
        time.sleep(1.0)
        assert child.poll() is None  # waiting for the lock
        assert not (home / "ledger.db").exists()
    _, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    assert (home / "ledger.db").stat().st_size > 0 or (home / "ledger.db-wal").exists()
