"""Retrieval quality and speed on real data, with plain baselines in the same run.

Quality
  * ClapNQ dev: the 600 passages (300 answerable + 300 unanswerable questions' passages)
    are the corpus, one Markdown file each (``# <title>`` then the passage). For the 300
    answerable questions: is the gold passage the top-1 / among the top-5 distinct
    documents of the ranking?
  * COVID-QA: the 98 papers are the corpus, one Markdown file each (first line as the
    heading). For all 1,380 questions: does one of the top-5 chunks contain the reference
    answer text (compared after whitespace canonicalization, case-insensitively)?

  Systems, all over the *same chunks* of the same shard:
  * ``aborist``: :meth:`aborist.retrieval.retriever.Retriever.retrieve` (query rules and
    repairs, AND→OR, proximity boosts, synonyms, title filter, rerank, rivalry
    exclusion); the ranking is the selected chunks;
  * ``fts5-or``: one bare FTS5 query, the question's escaped terms OR'ed
    (:func:`plain_units`: every word's letters and digits as one string, words made only
    of stopwords dropped; frozen, so aborist's own query rules do not move the baseline),
    default ``bm25()``, no filter or rerank;
  * ``bm25s``: the ``bm25s`` package over title + section + chunk text (its English
    stopwords, no stemmer).

  Every figure is given for two fixed halves of each question set and for the whole:
  half A holds the questions whose id's sha256 (of its decimal string) is even, half B
  the rest. Retrieval rules were developed looking at half A only; half B is held out.

Speed
  Median wall time per question of ``Retriever.retrieve`` (shards already open, as a
  server would hold them) against the bare FTS5 OR query (same open connection, the
  question's escaped terms OR'ed, top 60 rowids and ``bm25()`` scores), timed alternately
  question by question, each the median of 3 runs, on the COVID-QA shard (its first 300
  questions) and on the Rust book shard (its section headings of two or more words as
  questions). Also the cold one-shot ``retrieve()`` that opens the shard each time.

Chunk size (``--chunk-sizes``): COVID-QA recall of the three systems again with the
chunking constants set smaller and larger than ``chunk-1``'s, to show how the measure
depends on them (an experiment only: the constants are patched in this process).

Run: ``.venv/bin/python bench/retrieval.py [--quick] [--chunk-sizes] [--half A]``
(``--half A``: quality on the development half only, the corpora unchanged). Reads
``../shared/data/``; writes only to a temporary directory.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import aborist.corpus.chunking as chunking  # noqa: E402
from aborist.corpus.canonicalize import canonical_inline  # noqa: E402
from aborist.corpus.ingest import ingest  # noqa: E402
from aborist.corpus.lexicon import STOPWORDS, tokens  # noqa: E402
from aborist.corpus.shard import open_shard, shard_path  # noqa: E402
from aborist.retrieval.fts import MAX_UNITS, fts_or  # noqa: E402
from aborist.retrieval.retriever import Retriever, retrieve  # noqa: E402

DATA = (REPO / ".." / "shared" / "data").resolve()
TOP_K = 5
BARE_LIMIT = 60
HALVES = ("A", "B")
#: (TARGET_CHARS, MIN_CHARS, MAX_CHARS) tried by --chunk-sizes besides chunk-1's own.
CHUNK_VARIANTS = ((600, 150, 1000), (2000, 500, 3000))


def half_of(question_id: object) -> str:
    """``A`` when sha256 of the id's string is even, else ``B``: a fixed split."""
    return "A" if int(hashlib.sha256(str(question_id).encode()).hexdigest(), 16) % 2 == 0 else "B"


def plain_units(question: str) -> list[str]:
    """The baseline's terms: each word's tokens as one string; words made only of
    stopwords dropped unless nothing else is left; duplicates dropped; at most
    MAX_UNITS. (aborist's query builder before its query rules; frozen here.)"""
    units: list[str] = []
    fallback: list[str] = []
    for word in question.split():
        toks = tokens(word)
        if not toks:
            continue
        unit = " ".join(toks)
        target = fallback if all(t in STOPWORDS for t in toks) else units
        if unit not in target:
            target.append(unit)
    return (units or fallback)[:MAX_UNITS]


def _slug(i: int) -> str:
    return f"p{i:04d}"


def _md_escape_title(title: str) -> str:
    return " ".join(title.split()) or "untitled"


def write_clapnq(out: Path) -> list[tuple[str, set[str], str]]:
    """Write the passages; return (question, gold doc file names, half) for answerable
    rows."""
    answerable = [json.loads(x) for x in (DATA / "clapnq" / "clapnq_dev_answerable.jsonl").open()]
    unanswerable = [
        json.loads(x) for x in (DATA / "clapnq" / "clapnq_dev_unanswerable.jsonl").open()
    ]
    by_text: dict[str, set[str]] = {}
    for i, row in enumerate(answerable + unanswerable):
        passage = row["passages"][0]
        name = _slug(i)
        (out / f"{name}.md").write_text(
            f"# {_md_escape_title(passage['title'])}\n\n{passage['text']}\n", encoding="utf-8"
        )
        by_text.setdefault(passage["text"], set()).add(f"{name}.md")
    return [
        (row["input"], by_text[row["passages"][0]["text"]], half_of(row["id"]))
        for row in answerable
    ]


def write_covidqa(out: Path) -> list[tuple[str, str, str]]:
    """Write the papers; return (question, answer text, half) triples."""
    data = json.loads((DATA / "covidqa" / "200423_covidQA.json").read_text(encoding="utf-8"))
    pairs: list[tuple[str, str, str]] = []
    for i, paper in enumerate(data["data"]):
        para = paper["paragraphs"][0]
        context: str = para["context"]
        first, _, rest = context.partition("\n")
        (out / f"{_slug(i)}.md").write_text(f"# {first.strip()}\n\n{rest}", encoding="utf-8")
        for qa in para["qas"]:
            pairs.append((qa["question"], qa["answers"][0]["text"], half_of(qa["id"])))
    return pairs


def _norm(text: str) -> str:
    return canonical_inline(text).lower()


class Corpus:
    """One shard plus the views the baselines need over the same chunks."""

    def __init__(self, shards_dir: Path, name: str) -> None:
        self.path = shard_path(shards_dir, name)
        conn = open_shard(self.path)
        rows = conn.execute(
            "SELECT c.rowid, d.file_name, d.title, c.section, c.text FROM chunks c "
            "JOIN documents d ON d.doc_pos = c.doc_pos ORDER BY c.rowid"
        ).fetchall()
        conn.close()
        self.rowids = [int(r[0]) for r in rows]
        self.file_of = {int(r[0]): r[1] for r in rows}
        self.text_of = {int(r[0]): r[4] for r in rows}
        self.norm_of = {int(r[0]): _norm(r[4]) for r in rows}
        self.bm25s_docs = [f"{r[2]}\n{r[3]}\n{r[4]}" for r in rows]
        self._bm25s: Any = None

    def bm25s(self, question: str, k: int) -> list[int]:
        import bm25s

        if self._bm25s is None:
            index = bm25s.BM25()
            index.index(bm25s.tokenize(self.bm25s_docs, show_progress=False), show_progress=False)
            self._bm25s = index
        tokens = bm25s.tokenize([question], show_progress=False)
        if not tokens.vocab:
            return []
        k = min(k, len(self.rowids))
        docs, _ = self._bm25s.retrieve(tokens, k=k, show_progress=False)
        return [self.rowids[int(i)] for i in docs[0]]


def bare_or(conn: sqlite3.Connection, question: str, limit: int = BARE_LIMIT) -> list[int]:
    units = plain_units(question)
    if not units:
        return []
    rows = conn.execute(
        "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? "
        "ORDER BY bm25(chunks_fts) LIMIT ?",
        (fts_or(units), limit),
    ).fetchall()
    return [int(r[0]) for r in rows]


def _distinct_docs(rowids: Sequence[int], corpus: Corpus, k: int) -> list[str]:
    out: list[str] = []
    for r in rowids:
        f = corpus.file_of[r]
        if f not in out:
            out.append(f)
        if len(out) == k:
            break
    return out


def _aborist_rowids(retriever: Retriever, question: str, corpus: Corpus) -> list[int]:
    result = retriever.retrieve(question)
    index = {c.chunk_hash: c for c in result.candidates}
    return [index[c.chunk_hash].rowid for c in result.chunks]


Scores = dict[str, dict[str, tuple[float, ...]]]
SYSTEMS = ("aborist", "fts5-or", "bm25s")


def _by_half(hits: Sequence[tuple[str, tuple[int, ...]]]) -> dict[str, tuple[float, ...]]:
    """Per half and for all: the mean of each hit column, as fractions (a half with no
    questions, left out by ``--half``, is left out here too)."""
    out: dict[str, tuple[float, ...]] = {}
    for half in (*HALVES, "all"):
        rows = [h for hf, h in hits if half in (hf, "all")]
        if not rows:
            continue
        out[half] = tuple(sum(col) / len(rows) for col in zip(*rows, strict=True))
        out[f"n_{half}"] = (float(len(rows)),)
    return out


def eval_clapnq(
    retriever: Retriever,
    corpus: Corpus,
    questions: Sequence[tuple[str, set[str], str]],
    conn: sqlite3.Connection,
) -> Scores:
    """(top-1, top-5) per system and half."""
    systems: dict[str, Callable[[str], list[int]]] = {
        "aborist": lambda q: _aborist_rowids(retriever, q, corpus),
        "fts5-or": lambda q: bare_or(conn, q),
        "bm25s": lambda q: corpus.bm25s(q, 40),
    }
    out = {}
    for name, run in systems.items():
        hits = []
        for question, gold, half in questions:
            docs = _distinct_docs(run(question), corpus, TOP_K)
            hits.append((half, (int(bool(docs[:1] and docs[0] in gold)),
                                int(any(d in gold for d in docs)))))  # fmt: skip
        out[name] = _by_half(hits)
    return out


def eval_covidqa(
    retriever: Retriever,
    corpus: Corpus,
    pairs: Sequence[tuple[str, str, str]],
    conn: sqlite3.Connection,
) -> Scores:
    """(answer in a top-5 chunk,) per system and half."""
    systems: dict[str, Callable[[str], list[int]]] = {
        "aborist": lambda q: _aborist_rowids(retriever, q, corpus),
        "fts5-or": lambda q: bare_or(conn, q),
        "bm25s": lambda q: corpus.bm25s(q, TOP_K),
    }
    out = {}
    for name, run in systems.items():
        hits = []
        for question, answer, half in pairs:
            want = _norm(answer)
            hits.append(
                (half, (int(any(want in corpus.norm_of[r] for r in run(question)[:TOP_K])),))
            )
        out[name] = _by_half(hits)
    return out


def covid_quality(shards_dir: Path, name: str, pairs: Sequence[tuple[str, str, str]]) -> Scores:
    corpus = Corpus(shards_dir, name)
    conn = open_shard(corpus.path)
    with Retriever([name], shards_dir=shards_dir) as retriever:
        scores = eval_covidqa(retriever, corpus, pairs, conn)
    conn.close()
    reachable = [
        (h, (int(any(_norm(a) in t for t in corpus.norm_of.values())),)) for _, a, h in pairs
    ]
    scores["answer in any chunk"] = _by_half(reachable)
    return scores


def chunk_size_sensitivity(
    root: Path, pairs: Sequence[tuple[str, str, str]]
) -> list[tuple[tuple[int, int, int], int, Scores]]:
    """COVID-QA quality with other chunking constants (patched in this process only)."""
    saved = (chunking.TARGET_CHARS, chunking.MIN_CHARS, chunking.MAX_CHARS)
    out = []
    try:
        for i, sizes in enumerate(CHUNK_VARIANTS):
            chunking.TARGET_CHARS, chunking.MIN_CHARS, chunking.MAX_CHARS = sizes
            shards_dir = root / f"shards-{i}"
            report = ingest([root / "covidqa"], "covidqa", shards_dir=shards_dir)
            out.append((sizes, report.n_chunks, covid_quality(shards_dir, "covidqa", pairs)))
    finally:
        chunking.TARGET_CHARS, chunking.MIN_CHARS, chunking.MAX_CHARS = saved
    return out


def _paired_medians(
    first: Callable[[str], object],
    second: Callable[[str], object],
    questions: Sequence[str],
    repeats: int,
) -> tuple[float, float]:
    """Median ms per question of two systems, timed alternately question by question so
    that both see the same machine load (this machine is shared)."""
    a: list[float] = []
    b: list[float] = []
    for q in questions:
        ta, tb = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            first(q)
            ta.append(time.perf_counter() - t)
            t = time.perf_counter()
            second(q)
            tb.append(time.perf_counter() - t)
        a.append(statistics.median(ta))
        b.append(statistics.median(tb))
    return 1000 * statistics.median(a), 1000 * statistics.median(b)


def latency(
    shards_dir: Path, name: str, questions: Sequence[str], repeats: int
) -> dict[str, float]:
    path = shard_path(shards_dir, name)
    conn = open_shard(path)
    with Retriever([name], shards_dir=shards_dir) as retriever:
        for q in questions[:20]:  # warm the page cache for both
            retriever.retrieve(q)
            bare_or(conn, q)
        bare, warm = _paired_medians(
            lambda q: bare_or(conn, q), lambda q: retriever.retrieve(q), questions, repeats
        )
    _, cold = _paired_medians(
        lambda q: bare_or(conn, q),
        lambda q: retrieve(q, [name], shards_dir=shards_dir),
        questions,
        1,
    )
    conn.close()
    return {"bare_ms": bare, "warm_ms": warm, "cold_ms": cold, "n": len(questions)}


def rust_questions(shards_dir: Path) -> list[str]:
    conn = open_shard(shard_path(shards_dir, "rust-book"))
    rows = conn.execute("SELECT DISTINCT section FROM chunks ORDER BY rowid").fetchall()
    conn.close()
    return [r[0] for r in rows if len(re.findall(r"\w+", r[0])) >= 2]


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _n(scores: Scores, half: str) -> str:
    """Questions in ``half`` (0 when ``--half`` left it out)."""
    return f"{scores['aborist'].get(f'n_{half}', (0.0,))[0]:.0f}"


def _quality_table(clap: Scores, covid: Scores) -> str:
    rows = []
    halves = [h for h in HALVES if h in covid["aborist"]]  # one, with --half
    for half in halves + ["all"] * (len(halves) == len(HALVES)):
        for name in SYSTEMS:
            rows.append([half, name, _pct(clap[name][half][0]), _pct(clap[name][half][1]),
                         _pct(covid[name][half][0])])  # fmt: skip
        base = covid["fts5-or"][half][0]
        rows.append([half, "aborist - fts5-or (points)",
                     f"{100 * (clap['aborist'][half][0] - clap['fts5-or'][half][0]):+.1f}",
                     f"{100 * (clap['aborist'][half][1] - clap['fts5-or'][half][1]):+.1f}",
                     f"{100 * (covid['aborist'][half][0] - base):+.1f}"])  # fmt: skip
    return _table(
        ["half", "system", "ClapNQ top-1 %", "ClapNQ top-5 %", "COVID-QA answer in top-5 %"],
        rows,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer latency repeats")
    parser.add_argument(
        "--chunk-sizes", action="store_true", help="also COVID-QA with other chunk sizes"
    )
    parser.add_argument(
        "--half",
        choices=HALVES,
        help="quality on this half of the questions only (develop on A; B is held out)",
    )
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"shared data not found at {DATA}; nothing to measure", file=sys.stderr)
        return 0 if args.quick else 2
    repeats = 1 if args.quick else 3
    with tempfile.TemporaryDirectory(prefix="aborist-bench-") as tmp:
        root = Path(tmp)
        shards_dir = root / "shards"
        timings: dict[str, tuple[float, int, int]] = {}
        for name in ("clapnq", "covidqa"):
            (root / name).mkdir()
        clap_q = write_clapnq(root / "clapnq")
        covid_q = write_covidqa(root / "covidqa")
        timed = [q for q, _, _ in covid_q[:300]]  # latency: the same questions either way
        if args.half:  # the papers stay whole; only the questions asked are one half
            clap_q = [q for q in clap_q if q[2] == args.half]
            covid_q = [q for q in covid_q if q[2] == args.half]
        for name, src in (
            ("clapnq", root / "clapnq"),
            ("covidqa", root / "covidqa"),
            ("rust-book", DATA / "rust-book" / "src"),
        ):
            t = time.perf_counter()
            report = ingest([src], name, shards_dir=shards_dir)
            timings[name] = (time.perf_counter() - t, len(report.documents), report.n_chunks)

        corpus = Corpus(shards_dir, "clapnq")
        conn = open_shard(corpus.path)
        with Retriever(["clapnq"], shards_dir=shards_dir) as retriever:
            clap = eval_clapnq(retriever, corpus, clap_q, conn)
        conn.close()
        covid = covid_quality(shards_dir, "covidqa", covid_q)
        sensitivity = chunk_size_sensitivity(root, covid_q) if args.chunk_sizes else []

        speed = {
            "covidqa": latency(shards_dir, "covidqa", timed, repeats),
            "rust-book": latency(shards_dir, "rust-book", rust_questions(shards_dir), repeats),
        }

    print(f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
          f"{platform.machine()}\n")  # fmt: skip
    print("Ingest\n")
    print(_table(
        ["shard", "documents", "chunks", "seconds"],
        [[k, str(v[1]), str(v[2]), f"{v[0]:.2f}"] for k, v in timings.items()],
    ))  # fmt: skip
    print("\nQuality (same chunks, same run; half A = development, half B = held out)\n")
    print(_quality_table(clap, covid))
    print(f"\n(ClapNQ: {len(clap_q)} answerable questions over 600 passages, halves "
          f"{_n(clap, 'A')} / {_n(clap, 'B')}; COVID-QA: "
          f"{len(covid_q)} questions over 98 papers, halves {_n(covid, 'A')} / "
          f"{_n(covid, 'B')}; COVID-QA answer in any chunk at all: "
          f"{_pct(covid['answer in any chunk']['all'][0])} %)\n")  # fmt: skip
    if sensitivity:
        print("COVID-QA by chunk size (answer in top-5 %, all questions)\n")
        rows = [["chunk-1 (1200, 300, 2000)", str(timings["covidqa"][2]),
                 *(_pct(covid[n]["all"][0]) for n in SYSTEMS),
                 _pct(covid["answer in any chunk"]["all"][0])]]  # fmt: skip
        rows += [[str(sizes), str(n), *(_pct(sc[name]["all"][0]) for name in SYSTEMS),
                  _pct(sc["answer in any chunk"]["all"][0])]
                 for sizes, n, sc in sensitivity]  # fmt: skip
        print(_table(["(target, min, max) chars", "chunks", *SYSTEMS, "answer in any chunk"],
                     rows))  # fmt: skip
        print()
    print("Latency, median per question (ms)\n")
    print(_table(
        ["shard", "questions", "bare FTS5 OR", "aborist (open shards)", "ratio",
         "aborist one-shot retrieve()"],
        [[k, str(v["n"]), f"{v['bare_ms']:.2f}", f"{v['warm_ms']:.2f}",
          f"{v['warm_ms'] / v['bare_ms']:.2f}x", f"{v['cold_ms']:.2f}"]
         for k, v in speed.items()],
    ))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
