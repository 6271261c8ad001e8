"""Checkpoints and proofs from the stored tiles (ledger/tlog/tiles.py) as the ledger grows.

For each ledger size (10k and 1M events by default; ``--sizes 10000,1000000,10000000``):

* build the ledger: the events are bulk-inserted (SQLite through ``sqlite3``, PostgreSQL
  with ``COPY``), ``hash`` = SHA-256 of the seq, a valid ``prev_hash`` link; the tree only
  reads ``hash``, so the rows are synthetic, not a chain ``verify`` would pass;
* the first checkpoint, which catches the tiles up from nothing (an old ledger's one-off);
* a checkpoint after 1,000 new events (integration and the recorded root): median of
  ``--runs``;
* inclusion and consistency proofs (``ledger.tlog.proofs.prove_inclusion`` /
  ``prove_consistency``, ``--proofs`` of each at random positions): the median time in
  process; then, in a separate pass with ``tracemalloc`` on (it slows allocation, so it is
  off while timing), the peak of Python allocations over a checkpoint and 5 proofs of each
  kind;
* for scale, one inclusion proof the old way (read every event hash, build in memory), at
  the sizes up to 1M;
* the tile check ``verify`` and ``replay`` run (:func:`ledger.tlog.tiles_verify.verify_tiles`:
  every stored tile re-derived from the event hashes, a streaming fold), against the
  independent streaming fold of the same hashes below (``streaming_root``), in the same
  process: its seconds and the ratio; with ``tracemalloc``, its peak.

Every proof is verified against its root, and each size's tile root is checked against
an independent streaming RFC 9162 fold of all the event hashes: a wrong tree fails the
run (exit 1), however fast.

Run: ``.venv/bin/python bench/tlog.py`` (``--quick``: 3k and 20k events on SQLite, a few
seconds; ``--no-pg`` to skip PostgreSQL).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from _common import DEFAULT_PG_URL, PgUnavailable, environment_line, markdown_table, pg_schema

from ledger.migrate import upgrade
from ledger.store import Ledger
from ledger.tlog import merkle
from ledger.tlog.proofs import checkpoint, prove_consistency, prove_inclusion
from ledger.tlog.tiles_verify import verify_tiles

COLUMNS = (
    "seq, event_id, stream, stream_seq, type, type_version, recorded_at, payload, "
    "payload_hash, prev_hash, hash"
)
PAYLOAD = "{}"
PAYLOAD_HASH = hashlib.sha256(PAYLOAD.encode()).hexdigest()


def _hash(seq: int) -> str:
    return hashlib.sha256(seq.to_bytes(8, "big")).hexdigest()


def rows(first: int, last: int) -> Iterator[tuple[Any, ...]]:
    prev = _hash(first - 1) if first > 1 else "0" * 64
    for seq in range(first, last + 1):
        h = _hash(seq)
        yield (seq, f"{seq:032x}", f"bench:{seq // 10}", seq % 10 + 1, "bench.appended", 1,
               "2026-12-01T00:00:00.000000Z", PAYLOAD, PAYLOAD_HASH, prev, h)  # fmt: skip
        prev = h


def insert(url: str, first: int, last: int) -> None:
    """Bulk-insert events ``first..last`` (both ends included)."""
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            conn.execute("PRAGMA synchronous = OFF")
            with conn:
                conn.executemany(
                    f"INSERT INTO events ({COLUMNS}) VALUES ({', '.join('?' * 11)})",
                    rows(first, last),
                )
        finally:
            conn.close()
        return
    import psycopg
    from _common import pg_connect_kwargs

    schema = url.split("search_path%3D")[-1] if "search_path%3D" in url else None
    with psycopg.connect(**pg_connect_kwargs(DEFAULT_PG_URL, schema)) as conn:
        with conn.cursor() as cur, cur.copy(f"COPY events ({COLUMNS}) FROM STDIN") as copy:
            for row in rows(first, last):
                copy.write_row(row)
        conn.commit()


def streaming_root(lg: Ledger, size: int) -> bytes:
    """RFC 9162 MTH over the event hashes, paged, with a compact-range stack: a check
    independent of the tiles."""
    stack: list[tuple[int, bytes]] = []  # (height, hash)
    after = 0
    while after < size:
        page = lg.fetch(
            "SELECT hash FROM events WHERE seq > :a AND seq <= :b ORDER BY seq",
            {"a": after, "b": min(after + 50_000, size)},
        )
        for (h,) in page:
            node, height = merkle.leaf_hash(bytes.fromhex(h)), 0
            while stack and stack[-1][0] == height:
                node, height = merkle.node_hash(stack.pop()[1], node), height + 1
            stack.append((height, node))
        after += len(page)
    node = stack.pop()[1]
    while stack:
        node = merkle.node_hash(stack.pop()[1], node)
    return node


def measure(url: str, size: int, args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(size)
    with Ledger.open(url) as lg:
        kept = lg.head()[0]
    out: dict[str, Any] = {"size": size}
    if kept:  # a ledger kept by an earlier run (--dir): measured at the size it has grown to
        size = out["size"] = kept
    else:
        t = time.perf_counter()
        insert(url, 1, size)
        out["build_s"] = time.perf_counter() - t
    with Ledger.open(url) as lg:
        t = time.perf_counter()
        cp = checkpoint(lg)
        if not kept:  # a kept ledger was caught up when it was built
            out["catch_up_s"] = time.perf_counter() - t
        if bytes.fromhex(cp.root) != streaming_root(lg, cp.tree_size):
            raise SystemExit(f"size {size}: the tile root is not the tree's root")
        cps, incl, cons = [], [], []
        head = size
        for _ in range(args.runs):
            insert(url, head + 1, head + 1000)
            head += 1000
            t = time.perf_counter()
            cp = checkpoint(lg)
            cps.append(time.perf_counter() - t)
            if cp.tree_size != head:
                raise SystemExit(f"checkpoint of {cp.tree_size} events, expected {head}")
        for _ in range(args.proofs):
            seq = rng.randint(1, head)
            t = time.perf_counter()
            p = prove_inclusion(lg, seq, head)
            incl.append(time.perf_counter() - t)
            m = rng.randint(1, head)
            t = time.perf_counter()
            c = prove_consistency(lg, m, head)
            cons.append(time.perf_counter() - t)
            if not (p.verify() and c.verify() and p.root == c.root2 == cp.root):
                raise SystemExit(f"size {size}: a proof does not verify")
        # Peak allocations in a separate pass: tracemalloc slows every allocation, so it
        # is off while timing.
        tracemalloc.start()
        insert(url, head + 1, head + 1000)
        head += 1000
        checkpoint(lg)
        for _ in range(5):
            prove_inclusion(lg, rng.randint(1, head), head)
            prove_consistency(lg, rng.randint(1, head), head)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out.update(
            checkpoint_1k_ms=statistics.median(cps) * 1e3,
            inclusion_ms=statistics.median(incl) * 1e3,
            consistency_ms=statistics.median(cons) * 1e3,
            peak_mib=peak / 2**20,
        )
        if args.tile_runs:
            out.update(tile_check(lg, args.tile_runs))
        if size <= 1_000_000:
            t = time.perf_counter()
            hashes = lg.event_hashes(head)
            old = merkle.inclusion_proof(hashes, head // 2, head)
            out["old_inclusion_ms"] = (time.perf_counter() - t) * 1e3
            if old != [bytes.fromhex(x) for x in prove_inclusion(lg, head // 2 + 1, head).proof]:
                raise SystemExit(f"size {size}: old and tiled inclusion proofs differ")
    return out


def tile_check(lg: Ledger, runs: int) -> dict[str, float]:
    """The tile check against the raw streaming fold of the hashes it covers (median of
    ``runs``, interleaved), then its peak allocations in a pass of its own."""
    check_s, fold_s = [], []
    for _ in range(runs):
        t = time.perf_counter()
        check = verify_tiles(lg.fetch)
        check_s.append(time.perf_counter() - t)
        if not check.ok or not check.checked:
            raise SystemExit(f"tile check: {check}")
        t = time.perf_counter()
        streaming_root(lg, check.covered)
        fold_s.append(time.perf_counter() - t)
    tracemalloc.start()
    verify_tiles(lg.fetch)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    c, f = statistics.median(check_s), statistics.median(fold_s)
    return {"tile_check_s": c, "tile_check_x": c / f, "tile_check_mib": peak / 2**20}


def sqlite_url(tmp: Path, size: int) -> str:
    url = f"sqlite:///{tmp / f'tlog-{size}.db'}"  # an existing file (--dir) is reused
    from ledger.engine import ledger_engine

    engine = ledger_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    return url


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,1000000", help="ledger sizes (10000,1000000)")
    ap.add_argument("--runs", type=int, default=5, help="checkpoints after 1,000 events (5)")
    ap.add_argument("--proofs", type=int, default=50, help="proofs of each kind (50)")
    ap.add_argument("--tile-runs", type=int, default=3,
                    help="tile checks against the raw fold (3; 0 skips them)")  # fmt: skip
    ap.add_argument("--pg-url", default=DEFAULT_PG_URL)
    ap.add_argument("--no-pg", action="store_true", help="skip PostgreSQL")
    ap.add_argument("--quick", action="store_true", help="smoke run: 3k and 20k, SQLite")
    ap.add_argument(
        "--dir",
        type=Path,
        help="keep the SQLite ledgers in DIR and reuse those already there (a kept ledger "
        "is measured at the size it has grown to, without build or catch-up)",
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.runs, args.proofs, args.no_pg = "3000,20000", 2, 10, True
    sizes = [int(s) for s in args.sizes.split(",")]
    results: list[tuple[str, dict[str, Any]]] = []
    started = time.perf_counter()
    with ExitStack() as stack:
        if args.dir:
            args.dir.mkdir(parents=True, exist_ok=True)
            tmp = str(args.dir)
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="aborist-tlog-"))
        for size in sizes:
            results.append(("SQLite", measure(sqlite_url(Path(tmp), size), size, args)))
            print(f"  done: SQLite {size:,}", file=sys.stderr)
        if not args.no_pg:
            for size in [s for s in sizes if s <= 1_000_000]:
                try:
                    with pg_schema(args.pg_url) as (url, _):
                        results.append(("PostgreSQL", measure(url, size, args)))
                except PgUnavailable as e:
                    print(f"PostgreSQL skipped: {e}", file=sys.stderr)
                    break
                print(f"  done: PostgreSQL {size:,}", file=sys.stderr)
    print(f"## tlog benchmark ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n")
    print(environment_line())
    print(f"medians: {args.runs} checkpoints, {args.proofs} proofs of each kind; "
          f"wall time {time.perf_counter() - started:.0f} s\n")  # fmt: skip
    headers = ["backend", "events", "build s", "catch-up s", "checkpoint +1k ms",
               "inclusion ms", "consistency ms", "peak MiB", "old inclusion ms", "tile check s",
               "vs raw fold", "tile check MiB"]  # fmt: skip
    table = [
        [backend, f"{r['size']:,}", f"{r['build_s']:.1f}" if "build_s" in r else "kept",
         f"{r['catch_up_s']:.2f}" if "catch_up_s" in r else "-",
         f"{r['checkpoint_1k_ms']:.1f}", f"{r['inclusion_ms']:.2f}", f"{r['consistency_ms']:.2f}",
         f"{r['peak_mib']:.2f}", f"{r['old_inclusion_ms']:.0f}" if "old_inclusion_ms" in r
         else "-", *([f"{r['tile_check_s']:.2f}", f"{r['tile_check_x']:.2f}x",
         f"{r['tile_check_mib']:.2f}"] if "tile_check_s" in r else ["-"] * 3)]
        for backend, r in results
    ]  # fmt: skip
    print(markdown_table(headers, table))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
