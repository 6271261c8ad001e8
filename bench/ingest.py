"""Ingest speed: linear time on pathological input, and throughput on real documents.

Scaling
  For each pathological input (the ones that made the old hand-written readers
  quadratic: Markdown ``**a ``, ``_a ``, ``[a``, ``<!--``; reST ``*a `` in one block and
  in 3 KB paragraphs, references, footnotes, substitutions, citations and lists between
  paragraphs; HTML ``<a ``, ``<a b='`` and a row of unclosed cells; a one-line text
  without sentence ends), the time to read and chunk it (``parse_document`` + ``chunk_blocks``: the
  per-file work of an ingest before the shard is written) at size S and at 8·S, sizes
  alternating run by run, median of the runs. Linear time passes when
  t(8·S) / t(S) ≤ 10. S is 80 KB (the size the old readers took seconds on) where that
  takes tens of milliseconds, else 640 KB.

Throughput
  A full :func:`aborist.corpus.ingest` (read, decode, parse, chunk, concepts, write the
  shard; no ledger) of the Rust book's ``src/`` and of the PDF samples, median of the
  runs, in MB of source bytes per second.

Run: ``.venv/bin/python bench/ingest.py [--quick]`` (``--quick``: each S divided by 8,
3 runs instead of 5, the Rust book only, once; a few seconds). Exit status 1 when a
ratio fails or an input's text is lost; with ``--quick`` (the smoke run CI makes, at sizes
where a millisecond of another process's work moves a ratio) a ratio over the limit is
named on stderr but does not fail: the figures that count are the full run's. Reads
``../shared/data/``; writes only to a temporary directory.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from aborist.corpus.chunking import chunk_blocks  # noqa: E402
from aborist.corpus.ingest import ingest  # noqa: E402
from aborist.corpus.readers import format_for, parse_document  # noqa: E402
from bench._common import environment_line, markdown_table, median  # noqa: E402

DATA = REPO / ".." / "shared" / "data"
MAX_RATIO = 10.0


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def _paragraphs(unit: str, size: int) -> str:
    para = _repeat(unit, 3000)
    return "\n\n".join([para] * max(1, size // len(para)))


def _numbered(template: str, size: int) -> str:
    """``template`` with ``{i}`` = 0, 1, 2 … repeated until ``size`` characters."""
    out, total, i = [], 0, 0
    while total < size:
        piece = template.format(i=i)
        out.append(piece)
        total, i = total + len(piece), i + 1
    return "".join(out)


def _with_definitions(body: str, definition: str, size: int) -> str:
    """Half ``body`` paragraphs, then as many ``definition`` lines (targets, footnotes …)."""
    text = _numbered(body, size // 2)
    count = text.count("\n\n")
    return text + "\n" + "".join(definition.format(i=i) for i in range(count))


#: (format, input, make(size), S, S with --quick). S is chosen per input so that t(S) is
#: tens of milliseconds or more: shorter runs are all cache effects and timer noise.
CASES: list[tuple[str, str, Callable[[int], str], int, int]] = [
    ("markdown", "**a ", lambda n: _repeat("**a ", n), 80_000, 10_000),
    ("markdown", "_a ", lambda n: _repeat("_a ", n), 80_000, 10_000),
    ("markdown", "[a", lambda n: _repeat("[a", n), 80_000, 10_000),
    ("markdown", "<!--", lambda n: _repeat("<!--", n), 640_000, 80_000),
    ("rst", "*a  (one block)", lambda n: _repeat("*a ", n), 640_000, 80_000),
    ("rst", "*a  (3 KB paragraphs)", lambda n: _paragraphs("*a ", n), 80_000, 10_000),
    (
        "rst",
        "`a{i}`_ refs, targets after",
        lambda n: _with_definitions("p `a{i}`_ q\n\n", ".. _a{i}: http://x/{i}\n", n),
        40_000,
        5_000,
    ),
    (
        "rst",
        ".. _t{i}: before each paragraph",
        lambda n: _numbered(".. _t{i}:\n\np `t{i}`_ q\n\n", n),
        20_000,
        5_000,
    ),
    (
        "rst",
        "[#]_ footnote refs, footnotes after",
        lambda n: _with_definitions("p [#]_ q\n\n", ".. [#] note {i}\n", n),
        20_000,
        5_000,
    ),
    (
        "rst",
        "[*]_ symbol footnotes",
        lambda n: _with_definitions("p [*]_ q\n\n", ".. [*] note {i}\n", n),
        20_000,
        5_000,
    ),
    (
        "rst",
        "|s{i}| substitutions",
        lambda n: _with_definitions("p |s{i}| q\n\n", ".. |s{i}| replace:: r{i}\n", n),
        20_000,
        5_000,
    ),
    (
        "rst",
        "[C{i}]_ citations",
        lambda n: _with_definitions("p [C{i}]_ q\n\n", ".. [C{i}] cite {i}\n", n),
        20_000,
        5_000,
    ),
    (
        "rst",
        "footnote after each paragraph",
        lambda n: _numbered("p [#f{i}]_ q\n\n.. [#f{i}] note {i}\n\n", n),
        20_000,
        5_000,
    ),
    (
        "rst",
        "list after each paragraph",
        lambda n: _numbered("- a{i}\n\np {i}\n\n", n),
        20_000,
        5_000,
    ),
    ("html", "<a ", lambda n: _repeat("<a ", n), 640_000, 80_000),
    ("html", "<a b='", lambda n: _repeat("<a b='", n), 640_000, 80_000),
    ("html", "<td>a  (one row)", lambda n: "<table><tr>" + _repeat("<td>a ", n), 320_000, 40_000),
    ("text", "one line, no sentence end", lambda n: _repeat("abcdefghi ", n), 640_000, 80_000),
]


def _read_and_chunk(raw: str, fmt: str) -> float:
    start = time.perf_counter()
    doc = parse_document(raw, fmt, file_name="bench")
    chunks = chunk_blocks(doc.blocks)
    elapsed = time.perf_counter() - start
    if fmt != "html" and "a" in raw[:8] and not any("a" in c.text for c in chunks):
        raise SystemExit(f"{fmt}: the text of the input was lost")  # the result check
    return elapsed


def _measure(small: str, large: str, fmt: str, runs: int) -> tuple[float, float]:
    t_small: list[float] = []
    t_large: list[float] = []
    for _ in range(runs):
        t_small.append(_read_and_chunk(small, fmt))
        t_large.append(_read_and_chunk(large, fmt))
    return median(t_small), median(t_large)


def scaling(quick: bool, runs: int) -> tuple[list[list[str]], bool]:
    """A case over the limit is measured once more (the machine is shared: one burst of
    another process's work can land on the large runs); the table shows that measure
    and says so."""
    rows, ok = [], True
    for fmt, label, make, full, quick_size in CASES:
        size = quick_size if quick else full
        small, large = make(size), make(size * 8)
        _read_and_chunk(small, fmt)  # warm-up: imports, regex compilation
        t_small, t_large = _measure(small, large, fmt, runs)
        again = ""
        if t_large / t_small > MAX_RATIO:
            t_small, t_large = _measure(small, large, fmt, runs)
            again = " (2nd)"
        ratio = t_large / t_small
        ok = ok and ratio <= MAX_RATIO
        rows.append(
            [fmt, label, f"{len(small):,}", f"{t_small * 1000:.1f}", f"{t_large * 1000:.1f}",
             f"{ratio:.1f}x{again}", "yes" if ratio <= MAX_RATIO else "no"]
        )  # fmt: skip
    return rows, ok


def _source_bytes(root: Path) -> int:
    return sum(
        p.stat().st_size for p in root.rglob("*") if p.is_file() and format_for(p) is not None
    )


def throughput(runs: int, quick: bool) -> list[list[str]]:
    corpora = [("rust-book src/", DATA / "rust-book" / "src")]
    if not quick:  # the 117-page thesis alone takes ~20 s to extract
        corpora.append(("pdf-samples", DATA / "pdf-samples"))
    rows = []
    for label, root in corpora:
        if not root.is_dir():
            rows.append([label, "-", "-", "-", "-", f"absent ({root})"])
            continue
        n_bytes = _source_bytes(root)
        times = []
        report = None
        for i in range(runs):
            with tempfile.TemporaryDirectory(prefix="aborist-ingest-bench-") as tmp:
                start = time.perf_counter()
                report = ingest([root], f"bench{i}", shards_dir=Path(tmp))
                times.append(time.perf_counter() - start)
        assert report is not None
        seconds = median(times)
        rows.append(
            [label, f"{len(report.documents)}", f"{report.n_chunks}",
             f"{n_bytes / 1e6:.2f}", f"{seconds:.2f}", f"{n_bytes / 1e6 / seconds:.2f}"]
        )  # fmt: skip
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="S / 8, 3 runs, no PDF corpus")
    args = parser.parse_args()
    runs = 3 if args.quick else 5
    print(environment_line())
    print(f"\nScaling: read + chunk at S and 8·S, median of {runs} alternating runs\n")
    rows, ok = scaling(args.quick, runs)
    print(
        markdown_table(
            ["format", "input", "S (chars)", "t(S) ms", "t(8·S) ms", "ratio", "≤ 10x"], rows
        )
    )
    print(f"\nThroughput: full ingest (no ledger), median of {runs} runs\n")
    print(
        markdown_table(
            ["corpus", "documents", "chunks", "source MB", "seconds", "MB/s"],
            throughput(1 if args.quick else runs, args.quick),
        )
    )
    if not ok:
        over = ", ".join(f"{r[0]} {r[1]!r} {r[5]}" for r in rows if r[6] == "no")
        if args.quick:
            print(f"\nnote: over 10x in this --quick run (not checked at these sizes): {over}",
                  file=sys.stderr)  # fmt: skip
            return 0
        print(f"\nFAIL: a pathological input grew more than 10x for 8x the size: {over}",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
