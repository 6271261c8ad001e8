"""``aborist-ledger replay`` throughput on a ledger of 10,000+ runs.

What is measured, on one fresh SQLite ledger built by this script (extractive runs,
``use_cache=False`` so every run goes through every stage, both modes; the build uses
``synchronous = NORMAL`` and its time is reported too). ``--corpus`` picks what the runs
ask: ``builtin`` (the default) five questions over a small built-in shard (21 distinct
blobs, short evidence), ``rust-book`` a question per distinct chapter heading of the Rust
book (``../shared/data/rust-book/src``, as ``bench/query.py`` asks them; ~23 evidence
chunks a run), the realistic ledger:

* a **raw sqlite3 re-hash** of the same rows in the same process: one SELECT, sha256 of
  every payload, the event hash (``hashlib`` over the same canonical header JSON), the
  ``prev_hash`` link and gapless ``seq``: the baseline;
* ``chain + DAGs``: :func:`aborist.audit.replay.chain_and_dags`, checks 1 and 2 exactly as
  ``replay`` runs them (every row read once, the chain, every payload checked to be a JSON
  object, every run's DAG rebuilt from its events and compared with the one recorded and
  with the live projection rows), in events/s. Target: within 3x of the raw
  re-hash;
* ``replay`` (what the CLI runs without ``--deep``: chain, every run's DAG, blobs, the
  projections rebuilt and compared), in events/s;
* ``replay --deep`` in runs/s. Target: >= 1,000 runs/s;
* the deep re-execution alone (:func:`aborist.audit.deep.reexecute_run` per run, blobs
  read per run from the ledger, and with every blob already in memory).

Replay runs the chain and projection checks in a second process when the machine has two
CPUs (``parallel=None``); the cases marked "one process" force them into the replay's
own (``parallel=False``), which is what a single-CPU machine, or a busy one, gets.

Each timing is the median of ``--repeat`` runs, interleaved. ``--profile`` adds a cProfile
of the deep re-execution, grouped by component.

Run: ``.venv/bin/python bench/replay.py`` (``--runs 500`` for a smoke run; ``--keep DIR``
keeps the built ledger there and reuses it on the next call, one file per corpus;
``--corpus rust-book`` takes ~150 s to build 10,000 runs).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import environment_line, markdown_table, median, migrate, profile_by_component

from aborist.audit import replay
from aborist.audit.deep import reexecute_run
from aborist.audit.findings import ReplayReport
from aborist.audit.forked import can_fork
from aborist.clients.extractive import ExtractiveClient
from aborist.corpus.ingest import ingest, record_ingest
from aborist.pipeline.query import query
from aborist.pipeline.run import Governance
from aborist.projections import RunProjection
from ledger.envelope import EVENT_HASH_DOMAIN, GENESIS_HASH, RecordedEvent
from ledger.store import Ledger

replay_module = sys.modules["aborist.audit.replay"]  # the package re-exports the function

DOCS = {
    "rivers.md": """# Rivers of Eldoria

The Silverrun River flows north from the Ashen Mountains into the Glass Lake.

The Silverrun River is 412 kilometres long.

The town of Brackwater was founded in 1312 by the fisherman Oren Vale.
""",
    "bees.txt": """Beekeeping in Eldoria

The Eldorian honeybee produces violet honey in late autumn.
Each hive of Eldorian honeybees contains about forty thousand workers.
""",
}
QUESTIONS = (
    "How long is the Silverrun River?",
    "Who founded the town of Brackwater?",
    "What honey does the Eldorian honeybee produce?",
    "Where does the Silverrun River flow?",
    "How many workers does a hive of Eldorian honeybees contain?",
)


def rust_book_questions() -> list[str]:
    """The Rust book's chapter headings as questions (as ``bench/query.py`` asks them),
    each once."""
    from query import rust_corpus  # bench/query.py

    return list(dict.fromkeys(rust_corpus()[1]))


#: ``--corpus``: what the ledger's runs ask, over which documents.
CORPORA = ("builtin", "rust-book")


def build(directory: Path, runs: int, corpus: str = "builtin") -> tuple[Path, float]:
    """A ledger of ``runs`` runs (both modes), built once; returns (its file, seconds).
    Each corpus has its own file in ``directory`` (``ledger.db`` for the built-in shard,
    ``ledger-rust-book.db`` for the Rust book), so ``--keep`` reuses the right one."""
    name = "ledger.db" if corpus == "builtin" else f"ledger-{corpus}.db"
    db = directory / name
    if db.exists():
        return db, 0.0
    shards = directory / ("shards" if corpus == "builtin" else f"shards-{corpus}")
    if corpus == "builtin":
        docs = directory / "docs"
        docs.mkdir(parents=True, exist_ok=True)
        for doc, body in DOCS.items():
            (docs / doc).write_text(body, encoding="utf-8")
        report = ingest(sorted(docs.iterdir()), "eldoria", shards_dir=shards)
        questions: Sequence[str] = QUESTIONS
    else:
        from query import RUST_BOOK

        report = ingest([RUST_BOOK], "rust-book", shards_dir=shards)
        questions = rust_book_questions()
    tmp_db = db.with_name(db.name + ".building")  # a build cut short is not reused
    tmp_db.unlink(missing_ok=True)
    tmp_url = f"sqlite:///{tmp_db}"
    migrate(tmp_url)
    client = ExtractiveClient()
    modes = (Governance(mode="claim-lattice"), Governance(mode="quote"))
    n = len(questions)
    t0 = time.perf_counter()
    with Ledger.open(tmp_url, projections=[RunProjection()], sqlite_synchronous="NORMAL") as lg:
        record_ingest(lg, report)  # a run reads only shards its ledger recorded
        for i in range(runs):
            query(
                questions[i % n],
                ledger=lg,
                client=client,
                shards_dir=shards,
                governance=modes[(i // n) % 2],
                use_cache=False,
            )
    seconds = time.perf_counter() - t0
    tmp_db.rename(db)
    return db, seconds


def raw_rehash(path: Path) -> int:
    """The baseline: re-hash every row with the stdlib only (same work as the chain)."""
    con = sqlite3.connect(path)
    try:
        rows = con.execute(
            "SELECT seq, event_id, stream, stream_seq, type, type_version, recorded_at, "
            "payload, payload_hash, prev_hash, hash FROM events ORDER BY seq"
        )
        prev, expected = GENESIS_HASH, 1
        sha, dumps = hashlib.sha256, json.dumps
        for seq, eid, stream, sseq, type_, tv, at, payload, ph, prevh, h in rows:
            assert seq == expected and prevh == prev
            assert sha(payload.encode("utf-8")).hexdigest() == ph
            header = {
                "event_id": eid,
                "payload_hash": ph,
                "prev_hash": prevh,
                "recorded_at": at,
                "seq": seq,
                "stream": stream,
                "stream_seq": sseq,
                "type": type_,
                "type_version": tv,
            }
            body = dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            assert sha(EVENT_HASH_DOMAIN + body).hexdigest() == h
            prev, expected = h, expected + 1
        return expected - 1
    finally:
        con.close()


def runs_of(lg: Ledger) -> dict[str, list[RecordedEvent]]:
    out: dict[str, list[RecordedEvent]] = {}
    for ev in lg.iter_events():
        if ev.stream.startswith("run:"):
            out.setdefault(ev.stream[4:], []).append(ev)
    return out


def chain_and_dags(lg: Ledger, parallel: bool | None) -> int:
    """Checks 1 and 2 as replay runs them; every one must hold."""
    report = replay_module.chain_and_dags(lg, parallel=parallel)
    assert report.ok, report.to_dict()["divergences"]
    return report.events_checked


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="build (or reuse) the ledger in this directory")
    ap.add_argument(
        "--corpus",
        choices=CORPORA,
        default="builtin",
        help="builtin: five questions over a two-file shard (21 distinct blobs); rust-book: "
        "the Rust book, a question per chapter heading (~23 evidence chunks a run)",
    )
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--quick", action="store_true", help="200 runs, 1 repetition")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.repeat = 200, 1
    with tempfile.TemporaryDirectory(prefix="aborist-bench-replay-") as tmp:
        directory = args.keep or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        db, build_s = build(directory, args.runs, args.corpus)
        url = f"sqlite:///{db}"
        with Ledger.open(url) as lg:
            n_events = lg.head()[0]
            runs = runs_of(lg)
            n_runs = len(runs)
            cases = ("raw", "cd1", "cd", "replay1", "replay", "deep1", "deep", "reexec", "mem")
            samples: dict[str, list[float]] = {k: [] for k in cases}
            deep_runs = 0

            def deep_only() -> None:
                report = ReplayReport()
                for rid, evs in runs.items():
                    reexecute_run(lg, rid, evs, report)
                assert report.ok, report.to_dict()["divergences"]

            blobs = dict(lg.iter_blobs())

            class InMemory:
                """Every blob read up front: the re-execution's compute without I/O."""

                def get_blob(self, blob_hash: str) -> bytes:
                    return blobs[blob_hash]

            def deep_in_memory() -> None:
                report = ReplayReport()
                source = InMemory()
                for rid, evs in runs.items():
                    reexecute_run(source, rid, evs, report)
                assert report.ok, report.to_dict()["divergences"]

            def full_deep(parallel: bool | None) -> None:
                nonlocal deep_runs
                report = replay(lg, deep=True, parallel=parallel)
                assert report.ok, report.to_dict()["divergences"]
                deep_runs = report.deep_runs

            def full(parallel: bool | None) -> None:
                report = replay(lg, parallel=parallel)
                assert report.ok, report.to_dict()["divergences"]

            work: dict[str, Callable[[], object]] = {
                "raw": lambda: raw_rehash(db),
                "cd1": lambda: chain_and_dags(lg, False),
                "cd": lambda: chain_and_dags(lg, None),
                "replay1": lambda: full(False),
                "replay": lambda: full(None),
                "deep1": lambda: full_deep(False),
                "deep": lambda: full_deep(None),
                "reexec": deep_only,
                "mem": deep_in_memory,
            }
            for _ in range(args.repeat):
                for case in cases:
                    samples[case].append(timed(work[case]))
            m = {k: median(v) for k, v in samples.items()}
            raw = m["raw"]

            def row(case: str, secs: float, items: int, unit: str, ratio: bool) -> list[str]:
                vs = f"{secs / raw:.2f}x" if ratio else "-"
                return [case, f"{secs:.2f}", f"{items / secs:,.0f} {unit}", vs]

            forks = can_fork() and n_events >= replay_module.FORK_MIN_EVENTS
            two = "two processes" if forks else "default (one process here)"
            rows = [
                row("raw sqlite3 re-hash (baseline)", raw, n_events, "events/s", True),
                row("chain + DAGs, one process", m["cd1"], n_events, "events/s", True),
                row(f"chain + DAGs, {two}", m["cd"], n_events, "events/s", True),
                row("replay, one process", m["replay1"], n_events, "events/s", True),
                row(f"replay, {two}", m["replay"], n_events, "events/s", True),
                row("replay --deep, one process", m["deep1"], deep_runs, "runs/s", False),
                row(f"replay --deep, {two}", m["deep"], deep_runs, "runs/s", False),
                row("deep re-execution alone", m["reexec"], n_runs, "runs/s", False),
                row("deep re-execution, blobs in memory", m["mem"], n_runs, "runs/s", False),
            ]
            print(environment_line())
            size = f"{n_runs:,} runs, {n_events:,} events, {len(blobs):,} distinct blobs"
            print(
                f"ledger ({args.corpus}): {size}; build {build_s:.1f} s "
                f"({n_runs / build_s:,.0f} runs/s, synchronous NORMAL)"
                if build_s
                else f"ledger ({args.corpus}): {size} (reused: {db})"
            )
            print(f"median of {args.repeat}\n")
            print(markdown_table(["case", "seconds", "throughput", "vs raw"], rows))
            if args.profile:
                prof = cProfile.Profile()
                prof.enable()
                deep_only()
                prof.disable()
                components = [
                    ("verify (aborist.verify.verify*, warrant)", ["verify", "warrant"]),
                    ("evidence objects, textcanon", ["evidence.py", "textcanon"]),
                    ("repair", ["repair"]),
                    ("render, spotlight", ["render.py"]),
                    ("parse_claims", ["parse_claims"]),
                    ("pydantic (event models)", ["pydantic"]),
                    ("canonical JSON, hashing", ["canonical", "rfc8785", "sha256"]),
                    ("blob reads (SQLAlchemy, sqlite3)", ["sqlalchemy", "sqlite3", "store.py"]),
                    ("json parse (RecordedEvent.data)", ["json/", "envelope.py"]),
                    ("deep.py itself", ["audit/deep.py"]),
                ]
                print("\nprofile of the deep re-execution (per run):\n")
                print(profile_by_component(prof, n_runs, components).replace("µs/event", "µs/run"))


if __name__ == "__main__":
    main()
