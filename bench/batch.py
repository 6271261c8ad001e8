"""Benchmark of ``aborist query --batch``: questions answered per
second with the extractive answerer by 1, 2 and 4 worker processes, on SQLite and
PostgreSQL, and ledger events per second under that load, against the 1-worker figure of
the same run. Target: on PostgreSQL, 2 workers >= 1.6x one worker.

Each configuration answers the same N distinct questions (all cache misses) over the Python
language reference (``pydoc_data.topics``, one shard) into a fresh ledger (a new SQLite
file; a new PostgreSQL schema). Throughput is measured in steady state: from the moment
every worker has answered its first question to the last answer, so process start-up
(~1-2 s of imports per spawned worker) is left out; it is printed separately.

Where the global ordering lock sits (ledger/store.py, ``Ledger.append``): each append is
one transaction that takes the lock before reading the chain head and holds it through the
insert of the events and blobs and the projection updates, until COMMIT: on SQLite the
database write lock (``BEGIN IMMEDIATE``; the commit writes the WAL, and syncs it when
``synchronous`` is FULL); on PostgreSQL ``pg_advisory_xact_lock``, released by COMMIT
(after the WAL flush). Retrieval, prompting, the model and verification
run outside it, so workers overlap there; the appends (~11 per answered question) are
serialized. The table's "time in append" column is the measured share of a 1-worker run's
wall time spent inside ``Ledger.append``: by Amdahl's law it bounds the speed-up at
1 / share, before counting the cores (this machine has 2).

Usage: python bench/batch.py [--questions N] [--workers 1,2,4] [--pg-url URL] [--no-pg]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import (  # noqa: E402
    DEFAULT_PG_URL,
    PgUnavailable,
    environment_line,
    export_pyref,
    markdown_table,
    migrate,
    pg_schema,
    pg_server_version,
)

from aborist.corpus.ingest import ingest, record_ingest  # noqa: E402
from aborist.pipeline.batch import BatchItem, BatchSummary, run_batch  # noqa: E402
from aborist.projections import open_ledger  # noqa: E402


def pyref_corpus(out: Path) -> list[str]:
    """The Python language reference as documents; three questions per topic."""
    questions = []
    for name, body in export_pyref(out):
        first = body.splitlines()[0].strip()
        questions.append(f"What is {first.rstrip('.').lower()}?")
        questions.append(f"How does {name.replace('-', ' ')} work in Python?")
        questions.append(f"When is {name.replace('-', ' ')} used?")
    return list(dict.fromkeys(questions))


def measure(url: str, shards: Path, questions: list[str], workers: int) -> dict[str, float]:
    items = [BatchItem(f"q{i}", q, i + 1) for i, q in enumerate(questions)]
    stamps: list[float] = []

    def progress(s: BatchSummary) -> None:
        if s.done > len(stamps):
            stamps.extend([time.perf_counter()] * (s.done - len(stamps)))

    t0 = time.perf_counter()
    summary = run_batch(items, db_url=url, shards_dir=shards, workers=workers,
                        on_progress=progress)  # fmt: skip
    if not summary.ok:
        raise SystemExit(f"batch failed: {summary.failed} failed, {summary.stopped}")
    warm = workers  # leave out start-up: count from the workers-th answer to the last
    steady = (len(stamps) - warm) / (stamps[-1] - stamps[warm - 1])
    with open_ledger(url) as lg:
        events = lg.head()[0]
    return {
        "qps": steady,
        "eps": steady * events / len(items),
        "startup": stamps[warm - 1] - t0,
        "events": events,
        "wall": summary.seconds,
    }


def lock_share(url: str, shards: Path, questions: list[str]) -> float:
    """Share of a 1-worker, in-process run's time spent in ``Ledger.append``."""
    from ledger.store import Ledger

    spent = [0.0]
    original = Ledger.append

    def timed(self: Ledger, *args: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return original(self, *args, **kw)
        finally:
            spent[0] += time.perf_counter() - t

    Ledger.append = timed  # type: ignore[method-assign]
    try:
        items = [BatchItem(f"q{i}", q, i + 1) for i, q in enumerate(questions)]
        t = time.perf_counter()
        run_batch(items, db_url=url, shards_dir=shards, workers=1)
        total = time.perf_counter() - t
    finally:
        Ledger.append = original  # type: ignore[method-assign]
    return spent[0] / total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--pg-url", default=os.environ.get("ABORIST_TEST_PG_URL", DEFAULT_PG_URL))
    ap.add_argument("--no-pg", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="runs per configuration (median)")
    ap.add_argument("--quick", action="store_true", help="20 questions, 1 and 2 workers, 1 run")
    args = ap.parse_args()
    if args.quick:
        args.questions, args.workers, args.repeat = 20, "1,2", 1
    counts = [int(w) for w in args.workers.split(",")]

    with tempfile.TemporaryDirectory(prefix="aborist-batch-bench-") as tmp:
        root = Path(tmp)
        questions = pyref_corpus(root / "docs")[: args.questions]
        shards = root / "shards"
        report = ingest(
            sorted((root / "docs").glob("*.rst")), "python-reference", shards_dir=shards
        )

        def record(url: str) -> None:
            """Record the shard's ingest in a fresh ledger: a run reads only recorded shards."""
            with open_ledger(url) as lg:
                record_ingest(lg, report)

        backends: list[tuple[str, Callable[[str], Any]]] = []
        n = [0]

        def sqlite_db(label: str) -> Any:
            from contextlib import nullcontext

            n[0] += 1
            path = root / f"{n[0]:02d}-{label}.db"
            migrate(f"sqlite:///{path}", sqlite_synchronous="FULL")
            return nullcontext((f"sqlite:///{path}", None))

        backends.append(("SQLite", sqlite_db))
        with sqlite_db("probe") as (probe_url, _), open_ledger(probe_url) as lg:
            with lg.engine.connect() as conn:  # what the workers' connections use
                level = conn.exec_driver_sql("PRAGMA synchronous").scalar()
            sqlite_sync = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(int(level or 0))
        if not args.no_pg:
            try:
                version = pg_server_version(args.pg_url)
                backends.append((f"PostgreSQL {version}", lambda _l: pg_schema(args.pg_url)))
            except PgUnavailable as e:
                print(f"PostgreSQL skipped: {e}", file=sys.stderr)

        rows = []
        for name, fresh in backends:
            with fresh("lock") as (url, _):
                record(url)
                share = lock_share(url, shards, questions)
            runs: dict[int, list[dict[str, float]]] = {w: [] for w in counts}
            for rep in range(args.repeat):  # rotate the order: drift lands on every count
                k = rep % len(counts)
                for w in counts[k:] + counts[:k]:
                    with fresh(f"w{w}") as (url, _):
                        record(url)
                        runs[w].append(measure(url, shards, questions, w))
                    print(f"{name} workers={w} run {rep + 1}: {runs[w][-1]}", file=sys.stderr)
            base = statistics.median(m["qps"] for m in runs[counts[0]])
            for w in counts:
                qps = [m["qps"] for m in runs[w]]
                rows.append([
                    name, str(w), f"{statistics.median(qps):.1f}",
                    f"{min(qps):.1f}-{max(qps):.1f}",
                    f"{statistics.median(qps) / base:.2f}x",
                    f"{statistics.median(m['eps'] for m in runs[w]):,.0f}",
                    f"{statistics.median(m['startup'] for m in runs[w]):.1f}",
                    f"{100 * share:.0f}%",
                ])  # fmt: skip

    print(f"{len(questions)} distinct questions (cache misses), extractive answerer, "
          f"Python reference shard, median of {args.repeat} runs\n")  # fmt: skip
    print(markdown_table(
        ["backend", "workers", "questions/s (median)", "range", f"vs {counts[0]} worker(s)",
         "ledger events/s", "start-up s", "time in append (1 worker)"], rows,
    ))  # fmt: skip
    print(f"\nSQLite synchronous = {sqlite_sync}; {environment_line()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
