"""Benchmark of ``aborist serve``: questions over HTTP against in-process ``query()``
(bench/README.md, "Serving").

One corpus (Python's language reference, from ``pydoc_data.topics``), one shard, the
extractive answerer, the answer cache off (every question is a full run). Each repetition
answers the same N questions three ways, each into its own fresh SQLite ledger and with
the verifier's memo cleared (after one untimed warm-up pass):

- ``query()`` in process, one after another: the baseline;
- ``POST /api/v1/query`` to the server (uvicorn in a thread of this process, on loopback)
  from 1 client, and from C clients at once (asyncio + httpx).

It reports throughput (questions/s) and p50 / p95 latency, medians over the repetitions,
with each throughput as a ratio to the baseline of the same repetition, and checks the
result: every request answered 200 with the audit mode ``query()`` gave the same question,
and one run recorded per request.

Usage: python bench/serve.py [--questions N] [--clients C] [--runs R] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import environment_line, export_pyref, markdown_table, median  # noqa: E402

from aborist.clients.extractive import ExtractiveClient  # noqa: E402
from aborist.corpus.ingest import IngestReport, ingest, record_ingest  # noqa: E402
from aborist.migrations import upgrade  # noqa: E402
from aborist.pipeline.query import query  # noqa: E402
from aborist.projections import open_ledger  # noqa: E402
from aborist.server import ServerConfig, create_app  # noqa: E402
from aborist.verify.evidence import clear_memo  # noqa: E402
from ledger.engine import ledger_engine  # noqa: E402
from ledger.store import Ledger  # noqa: E402


def fresh_url(tmp: Path, name: str, report: IngestReport) -> str:
    """A migrated ledger with the shard's ingest recorded (a query reads only shards its
    ledger recorded)."""
    url = f"sqlite:///{tmp / name}"
    engine = ledger_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    with Ledger.open(url) as lg:
        record_ingest(lg, report)
    return url


@contextmanager
def live_server(app: Any) -> Iterator[str]:
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise SystemExit("serve: the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def in_process(
    url: str, shards: Path, questions: list[str]
) -> tuple[float, list[float], list[str]]:
    lg = open_ledger(url)
    latencies, modes = [], []
    try:
        start = time.perf_counter()
        for q in questions:
            t = time.perf_counter()
            r = query(q, ledger=lg, client=ExtractiveClient(), shards_dir=shards, use_cache=False)
            latencies.append(time.perf_counter() - t)
            modes.append(r.audit_mode)
        return time.perf_counter() - start, latencies, modes
    finally:
        lg.close()


async def _over_http(
    base: str, questions: list[str], clients: int
) -> tuple[list[float], list[Any]]:
    import httpx

    todo = list(enumerate(questions))
    latencies: list[float] = []
    bodies: list[Any] = [None] * len(questions)
    async with httpx.AsyncClient(base_url=base, timeout=120) as http:

        async def client() -> None:
            while todo:
                i, q = todo.pop(0)
                t = time.perf_counter()
                r = await http.post("/api/v1/query", json={"question": q, "use_cache": False})
                latencies.append(time.perf_counter() - t)
                if r.status_code != 200:
                    raise SystemExit(f"serve: {r.status_code} for {q!r}: {r.text[:200]}")
                bodies[i] = r.json()

        await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, bodies


def over_http(
    url: str, shards: Path, questions: list[str], clients: int, want: list[str]
) -> tuple[float, list[float]]:
    app = create_app(ServerConfig(ledger_url=url, shards_dir=shards))
    try:
        with live_server(app) as base:
            start = time.perf_counter()
            latencies, bodies = asyncio.run(_over_http(base, questions, clients))
            seconds = time.perf_counter() - start
        got = [b["audit_mode"] for b in bodies]
        if got != want:
            raise SystemExit(f"serve: audit modes over HTTP differ from query(): {got} vs {want}")
        n_runs = app.app.state.aborist.ledger.fetch("SELECT COUNT(*) FROM runs")[0][0]
        if n_runs != len(questions):
            raise SystemExit(f"serve: {n_runs} runs recorded for {len(questions)} requests")
    finally:
        app.app.state.aborist.close()
    return seconds, latencies


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=120, help="at most (the corpus has 79)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="12 questions, 4 clients, one run")
    args = ap.parse_args()
    if args.quick:
        args.questions, args.clients, args.runs = 12, 4, 1
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        docs = tmp / "pyref"
        topics = export_pyref(docs)
        questions = [
            f"What is {body.splitlines()[0].strip().rstrip('.').lower()}?" for _, body in topics
        ][: args.questions]
        shards = tmp / "shards"
        report = ingest(sorted(docs.glob("*.rst")), "pyref", shards_dir=shards)
        rows: dict[str, dict[str, list[float]]] = {}
        in_process(
            fresh_url(tmp, "warm.db", report), shards, questions
        )  # imports, page cache: untimed
        for rep in range(args.runs):
            clear_memo()  # each way starts with the verifier's memo empty
            base_s, base_lat, modes = in_process(
                fresh_url(tmp, f"a{rep}.db", report), shards, questions
            )
            base_tp = len(questions) / base_s
            results = {"query() in process": (base_s, base_lat)}
            for c in sorted({1, args.clients}):
                url = fresh_url(tmp, f"s{rep}-{c}.db", report)
                clear_memo()
                results[f"HTTP, {c} client{'s' if c > 1 else ''}"] = over_http(
                    url, shards, questions, c, modes
                )
            for name, (secs, lat) in results.items():
                r = rows.setdefault(name, {"tp": [], "p50": [], "p95": [], "ratio": []})
                tp = len(questions) / secs
                r["tp"].append(tp)
                r["p50"].append(statistics.median(lat) * 1000)
                r["p95"].append(percentile(lat, 95) * 1000)
                r["ratio"].append(tp / base_tp)
    table = [
        [name, f"{median(r['tp']):.1f}", f"{median(r['p50']):.1f}", f"{median(r['p95']):.1f}",
         f"{median(r['ratio']):.2f}x"]
        for name, r in rows.items()
    ]  # fmt: skip
    print(f"{len(questions)} questions, {args.runs} run(s), cache off; {environment_line()}")
    print(
        markdown_table(["way", "questions/s", "p50 ms", "p95 ms", "throughput vs query()"], table)
    )


if __name__ == "__main__":
    main()
