"""bench/ledger_append.py's own checks: a failed step is reported as itself (never as the
half-written baseline it leaves behind, the bare "events_checked 0" exit), and a chain
check that refuses a database says what the database holds."""

from __future__ import annotations

import importlib
import sqlite3
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ledger.errors import UnavailableError
from ledger.store import Ledger

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ModuleType, ModuleType]]:
    """(bench/ledger_append.py, bench/_common.py), imported as the bench imports them."""
    monkeypatch.syspath_prepend(str(BENCH))
    try:
        yield importlib.import_module("ledger_append"), importlib.import_module("_common")
    finally:
        for name in ("ledger_append", "_common"):
            sys.modules.pop(name, None)


def _rows(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM events").fetchone()[0])


def _first_case(la: ModuleType, common: ModuleType, files: Any, n: int) -> tuple[Any, Path]:
    """The contenders of the bench's first case (run 1: both chains checked on close)."""
    batches = common.workload(n, 1)
    raw_path = files.fresh("raw")
    contenders = [
        ([], partial(la.Ours, f"sqlite:///{files.fresh('ours')}", batches, "FULL", True)),
        ([], partial(la.RawSqlite, raw_path, batches, "FULL", True)),
    ]
    return contenders, raw_path


def test_ours_failing_first_is_reported_not_the_empty_baseline(
    bench: tuple[ModuleType, ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    la, common = bench

    def fails(self: Ledger, *args: Any, **kwargs: Any) -> Any:
        raise UnavailableError("disk I/O error (injected)")

    monkeypatch.setattr(Ledger, "append", fails)
    with common.SqliteFiles() as files:
        contenders, raw_path = _first_case(la, common, files, 5)
        with pytest.raises(UnavailableError, match="injected") as caught:
            common.time_interleaved(contenders, 5, 0)
        # The baseline had written nothing: its chain check is what used to be reported.
        assert _rows(raw_path) == 0
    notes = getattr(caught.value, "__notes__", [])
    assert any("Ledger.append failed at step 1 of 5" in n for n in notes), notes


def test_baseline_failing_midway_names_itself_and_its_step(
    bench: tuple[ModuleType, ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    la, common = bench
    real = la._chain_rows
    calls = []

    def third_fails(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk full (injected)")
        return real(*args)

    monkeypatch.setattr(la, "_chain_rows", third_fails)
    with common.SqliteFiles() as files:
        contenders, raw_path = _first_case(la, common, files, 5)
        with pytest.raises(OSError, match="injected") as caught:
            common.time_interleaved(contenders, 5, 0)
        assert _rows(raw_path) == 2  # the failed transaction was rolled back
    notes = getattr(caught.value, "__notes__", [])
    assert any(f"raw sqlite3 failed at step 3 of 5 on {raw_path}" in n for n in notes), notes


def test_a_short_chain_is_refused_with_what_the_database_holds(
    bench: tuple[ModuleType, ModuleType],
) -> None:
    la, common = bench
    batches = common.workload(5, 1)
    with common.SqliteFiles() as files:
        raw = la.RawSqlite(files.fresh("raw"), batches, "FULL", True)
        for i in range(3):
            raw.step(i)
        with pytest.raises(SystemExit) as caught:
            raw.close()
    message = str(caught.value)
    assert str(raw.path) in message
    assert "expected 5 events; the table holds 3 rows (max seq 3)" in message
    assert "verify_chain checked 3 (head seq 3)" in message


def test_a_broken_chain_is_refused_with_the_first_failure(
    bench: tuple[ModuleType, ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    la, common = bench
    real = la._event_hash

    def wrong_second(seq: int, *args: Any) -> str:
        return "0" * 64 if seq == 2 else str(real(seq, *args))

    monkeypatch.setattr(la, "_event_hash", wrong_second)
    batches = common.workload(4, 1)
    with common.SqliteFiles() as files:
        raw = la.RawSqlite(files.fresh("raw"), batches, "FULL", True)
        for i in range(4):
            raw.step(i)
        with pytest.raises(SystemExit) as caught:
            raw.close()
    message = str(caught.value)
    assert "the table holds 4 rows (max seq 4)" in message
    assert "verify_chain checked 1 (head seq 1): seq 2: hash mismatch" in message


def test_a_complete_chain_passes_both_checks(bench: tuple[ModuleType, ModuleType]) -> None:
    la, common = bench
    with common.SqliteFiles() as files:
        contenders, raw_path = _first_case(la, common, files, 6)
        common.time_interleaved(contenders, 6, 1)
        assert _rows(raw_path) == 6
    assert [len(samples) for samples, _ in contenders] == [1, 1]
