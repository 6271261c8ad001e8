"""Benchmark of in-process ``query()`` with the extractive answerer (bench/README.md, "Answering").

For each corpus (Python's language reference from ``pydoc_data.topics``; the Rust book
from ``../shared/data/rust-book/``) it ingests a shard into a fresh SQLite ledger, then
answers N distinct questions, each as a cache miss and at once again as a cache hit, and
reports:

- median cache-miss and cache-hit latency, and the median over the questions of each
  miss's time over its hit's (target: a hit >= 10x faster);
- the share of a cache-miss run spent in ledger and projection work (every
  ``Ledger.append``, which folds the projections in the same transaction; target <= 25 %);
- median time per stage (the work between two appends, and the append itself).

Usage: python bench/query.py [--questions N] [--runs R] [--sync FULL|NORMAL] [--clock cpu]
[--quick]

``--clock cpu`` times everything in this process's CPU time (``time.process_time``)
instead of wall-clock time: on a machine shared with other work, the other processes do
not inflate it (waiting for the disk is then not counted: at ``--sync NORMAL`` a commit
seldom waits).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import export_pyref  # noqa: E402

from aborist.clients.extractive import ExtractiveClient  # noqa: E402
from aborist.corpus.ingest import ingest  # noqa: E402
from aborist.migrations import upgrade  # noqa: E402
from aborist.pipeline.cache import clear_hit_memo  # noqa: E402
from aborist.pipeline.query import query  # noqa: E402
from aborist.pipeline.run import Governance  # noqa: E402
from aborist.projections import RunProjection  # noqa: E402
from aborist.verify.evidence import clear_memo  # noqa: E402
from ledger.engine import ledger_engine  # noqa: E402
from ledger.store import Ledger  # noqa: E402

RUST_BOOK = (ROOT / ".." / "shared" / "data" / "rust-book" / "src").resolve()


def pyref_corpus(out: Path) -> tuple[Path, list[str]]:
    questions = [
        f"What is {body.splitlines()[0].strip().rstrip('.').lower()}?"
        for _, body in export_pyref(out)
    ]
    return out, questions


def rust_corpus() -> tuple[Path, list[str]]:
    questions = []
    for md in sorted(RUST_BOOK.glob("ch*.md")):
        for line in md.read_text(encoding="utf-8").splitlines():
            m = re.match(r"^##+ (.+)$", line)
            if m:
                questions.append(f"What is {m.group(1).strip('`').lower()}?")
    return RUST_BOOK, questions


#: The clock every figure is read from (``--clock``).
clock = time.perf_counter


class TimedLedger(Ledger):
    """A ledger that times every append (projection folding included)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.appends: list[tuple[str, float, float]] = []  # (type, start, seconds)

    def append(self, stream: str, events: Any, **kw: Any) -> Any:  # type: ignore[override]
        t0 = clock()
        try:
            return super().append(stream, events, **kw)
        finally:
            self.appends.append((events[0].type, t0, clock() - t0))


@contextmanager
def fresh_ledger(tmp: Path, sync: str) -> Iterator[TimedLedger]:
    url = f"sqlite:///{tmp / 'ledger.db'}"
    engine = ledger_engine(url, sqlite_synchronous=sync)
    upgrade(engine)
    lg = TimedLedger(engine, projections=[RunProjection()])
    try:
        yield lg
    finally:
        lg.close()


def one_corpus(
    name: str, docs: Path, questions: list[str], n: int, sync: str, cold_hits: bool = False
) -> dict[str, Any]:
    # Each repetition starts cold: the evidence and token memos (aborist/verify/evidence.py)
    # would otherwise still hold every chunk of the same 40 questions from the last one,
    # and its misses would skip the tokenizing a first-time question pays for.
    clear_memo()
    client = ExtractiveClient()
    gov = Governance()
    with tempfile.TemporaryDirectory(prefix="aborist-bench-") as tmpdir:
        tmp = Path(tmpdir)
        with fresh_ledger(tmp, sync) as lg:
            ingest([docs], name, shards_dir=tmp / "shards", ledger=lg)
            asked = questions[:n]
            miss, hit, ledger_share = [], [], []
            stage_work: dict[str, list[float]] = defaultdict(list)
            stage_append: dict[str, list[float]] = defaultdict(list)
            ratios = []
            for q in asked:
                lg.appends.clear()
                t0 = clock()
                result = query(q, ledger=lg, client=client, shards_dir=tmp / "shards",
                               governance=gov)  # fmt: skip
                total = clock() - t0
                assert not result.cache_hit
                miss.append(total)
                ledger_share.append(sum(s for _, _, s in lg.appends) / total)
                prev_end = t0
                for type_, start, secs in lg.appends:
                    stage_work[type_].append(start - prev_end)
                    stage_append[type_].append(secs)
                    prev_end = start + secs
                # The same question again at once, as a hit: a miss and its hit are timed
                # back to back, so a change of the shared machine's speed between them
                # moves both (the ratio is the median of these pairs). With cold hits the
                # process forgets what it checked of the run it has just recorded, so the
                # hit checks the served run in full, as a new `aborist query` process does.
                if cold_hits:
                    clear_hit_memo()
                t0 = clock()
                result = query(q, ledger=lg, client=client, shards_dir=tmp / "shards",
                               governance=gov)  # fmt: skip
                hit.append(clock() - t0)
                assert result.cache_hit
                ratios.append(total / hit[-1])
    return {
        "name": name,
        "n": len(asked),
        "miss_ms": statistics.median(miss) * 1000,
        "hit_ms": statistics.median(hit) * 1000,
        "ratio": statistics.median(ratios),
        "ledger_share": statistics.median(ledger_share),
        "stages": {
            t: (statistics.median(stage_work[t]) * 1000, statistics.median(stage_append[t]) * 1000)
            for t in stage_work
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--runs", type=int, default=3, help="repeat each corpus R times; medians")
    ap.add_argument("--sync", default="FULL", choices=["FULL", "NORMAL"])
    ap.add_argument(
        "--clock",
        default="wall",
        choices=["wall", "cpu"],
        help="wall: time.perf_counter; cpu: this process's CPU time",
    )
    ap.add_argument(
        "--cold-hits",
        action="store_true",
        help="forget the checked runs before each hit (a hit as in a new process)",
    )
    ap.add_argument("--quick", action="store_true", help="10 questions, 1 run")
    args = ap.parse_args(argv)
    global clock
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    n, runs = (10, 1) if args.quick else (args.questions, args.runs)

    corpora = []
    with tempfile.TemporaryDirectory() as tmp:
        corpora.append(("python-reference", *pyref_corpus(Path(tmp) / "pyref")))
        if RUST_BOOK.is_dir():
            corpora.append(("rust-book", *rust_corpus()))
        else:
            print(f"rust book not found at {RUST_BOOK}; skipping it", file=sys.stderr)
        rows = []
        stage_rows: dict[str, list[dict[str, Any]]] = {}
        for name, docs, questions in corpora:
            results = [
                one_corpus(name, docs, questions, n, args.sync, args.cold_hits) for _ in range(runs)
            ]
            med = {k: statistics.median(r[k] for r in results)
                   for k in ("miss_ms", "hit_ms", "ratio", "ledger_share")}  # fmt: skip
            rows.append((name, results[0]["n"], med))
            stage_rows[name] = results
    print(
        f"SQLite synchronous={args.sync}; {runs} run(s) of {n} questions each; medians; "
        f"{args.clock} clock{'; cold hits' if args.cold_hits else ''}\n"
    )
    print("| corpus | questions | miss median | hit median | miss/hit (median of pairs) "
          "| ledger+projection share of a miss |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name, count, med in rows:
        ratio = med["ratio"]
        print(f"| {name} | {count} | {med['miss_ms']:.1f} ms | {med['hit_ms']:.1f} ms | "
              f"{ratio:.1f}x (target >= 10x) | {med['ledger_share'] * 100:.1f} % "
              "(target <= 25 %) |")  # fmt: skip
    for name, results in stage_rows.items():
        print(f"\nPer stage, {name} (median ms: work before the event, then its append):\n")
        print("| event | work | append |")
        print("|---|---|---|")
        for t, (work, app) in results[0]["stages"].items():
            print(f"| {t} | {work:.2f} | {app:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
