"""What binding a corpus to the ledger costs a query, against a cache hit in the same process.

A run reads a shard only once the file's chunk hashes are shown to hash to the root it
states (``aborist.corpus.shard.chunk_root``, once per file identity) and the ledger is
shown to have recorded that root (``aborist.pipeline.corpus_binding.check_recorded``,
answered from memory once a root is known, else one indexed read of the ingest events
appended since the last look). For one corpus ingested into a fresh SQLite ledger this
times, interleaved, median of ``--repeat`` rounds:

* a cache hit of ``query()`` (the cheapest run there is), the yardstick;
* the binding as every query pays it (file identity unchanged, root known): ``shard_info``
  for each shard plus ``check_recorded``;
* the binding's first time in a process (what each ``aborist query`` command pays):
  ``chunk_root`` over the whole shard, and ``check_recorded`` with nothing remembered;

and prints each as a share of the hit. It checks what it times: the binding finds every
shard recorded and the recomputed root equals the stated one.

Usage: python bench/corpus_binding.py [--corpus pyref|rust-book] [--repeat N] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import environment_line, export_pyref, markdown_table, migrate  # noqa: E402

import aborist.pipeline.corpus_binding as binding  # noqa: E402
from aborist.clients.extractive import ExtractiveClient  # noqa: E402
from aborist.corpus.ingest import ingest  # noqa: E402
from aborist.corpus.shard import chunk_root, read_shard_info  # noqa: E402
from aborist.pipeline.query import query, shard_info  # noqa: E402
from aborist.projections import open_ledger  # noqa: E402

RUST_BOOK = (ROOT / ".." / "shared" / "data" / "rust-book" / "src").resolve()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", choices=["pyref", "rust-book"], default="rust-book")
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="the pyref corpus, 20 rounds")
    args = ap.parse_args(argv)
    corpus, repeat = ("pyref", 20) if args.quick else (args.corpus, args.repeat)
    if corpus == "rust-book" and not RUST_BOOK.is_dir():
        print(f"rust book not found at {RUST_BOOK}; using pyref", file=sys.stderr)
        corpus = "pyref"

    with tempfile.TemporaryDirectory(prefix="aborist-bind-bench-") as tmpdir:
        tmp = Path(tmpdir)
        if corpus == "pyref":
            export_pyref(tmp / "pyref")
        docs = [RUST_BOOK] if corpus == "rust-book" else [tmp / "pyref"]
        url = f"sqlite:///{tmp / 'ledger.db'}"
        migrate(url)
        shards = tmp / "shards"
        with open_ledger(url) as lg:
            report = ingest(docs, "bench", shards_dir=shards, ledger=lg)
            path = shards / "bench.shard.sqlite"
            client = ExtractiveClient()
            question = "What is ownership?" if corpus == "rust-book" else "What is a lambda?"
            query(question, ledger=lg, client=client, shards_dir=shards)  # the entry a hit serves
            info = read_shard_info(path)
            roots = {info.name: info.source_root}

            def hit() -> float:
                t = time.perf_counter()
                assert query(question, ledger=lg, client=client, shards_dir=shards).cache_hit
                return time.perf_counter() - t

            def warm() -> float:
                t = time.perf_counter()
                bound = {shard_info(path).name: shard_info(path).source_root}
                missing = binding.check_recorded(lg, bound, allow=False)
                spent = time.perf_counter() - t
                assert not missing and bound == roots
                return spent

            def cold_root() -> float:
                t = time.perf_counter()
                root = chunk_root(path)
                spent = time.perf_counter() - t
                assert root == info.source_root
                return spent

            def cold_ledger() -> float:
                binding._KNOWN.pop(lg, None)
                t = time.perf_counter()
                missing = binding.check_recorded(lg, roots, allow=False)
                spent = time.perf_counter() - t
                assert not missing
                return spent

            timers = {"hit": hit, "warm": warm, "cold_root": cold_root, "cold_ledger": cold_ledger}
            samples: dict[str, list[float]] = {k: [] for k in timers}
            for i in range(repeat):  # rotate the order: drift lands on every timer
                names = list(timers)
                k = i % len(names)
                for name in names[k:] + names[:k]:
                    samples[name].append(timers[name]())
    med = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    print(environment_line())
    print(f"corpus {corpus}: {report.n_chunks} chunks, {len(report.documents)} documents; "
          f"median of {repeat} interleaved rounds\n")  # fmt: skip
    rows = [
        ["cache hit of query() (yardstick)", f"{med['hit']:.3f} ms", "100 %"],
        ["binding, every query (file identity and root known)", f"{med['warm']:.3f} ms",
         f"{med['warm'] / med['hit'] * 100:.1f} %"],
        ["binding, first in a process: chunk_root over the shard", f"{med['cold_root']:.3f} ms",
         f"{med['cold_root'] / med['hit'] * 100:.1f} %"],
        ["binding, first in a process: check_recorded (one ledger read)",
         f"{med['cold_ledger']:.3f} ms", f"{med['cold_ledger'] / med['hit'] * 100:.1f} %"],
    ]  # fmt: skip
    print(markdown_table(["what", "median", "share of a hit"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
