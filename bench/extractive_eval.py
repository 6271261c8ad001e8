"""Does the extractive answerer answer the question? Measured through the real pipeline.

``bench/data/extractive_questions.jsonl`` holds questions written over the Rust book
(``../shared/data/rust-book/src``) and Python's language reference (``pydoc_data.topics``):
each answerable one with a *gold* span, a phrase any right answer contains, and questions
neither corpus answers (``"gold": null``). Both corpora are ingested as shards into a
fresh SQLite ledger in a temporary directory, and every question is answered by
``aborist.pipeline.query.query`` over all shards with the :class:`ExtractiveClient`, in
claim-lattice and in quote mode, without the cache.

Measured, per mode:

- answerable: how many answers are STRICT and contain the gold (target >= 80 %), STRICT
  without the gold (an answer that does not answer), not STRICT, refused;
- unanswerable: how many got a STRICT answer (target: none) and how many were refused.

Before anything is answered the questions file is checked (fields, unique ids, every gold
span occurs in its corpus once emphasis marks and whitespace are normalized), and so is
``bench/data/pairs.jsonl`` (:mod:`data.pairs`). A gold span that is not in the corpus, or
a malformed line, stops the run with exit 1. A full run also exits 1 when a target is
missed.

``bench/data/extractive_questions_holdout.jsonl`` is a second set in the same format,
written without reading the answerer's rules or the first set: run it with
``--questions bench/data/extractive_questions_holdout.jsonl``.
``bench/data/extractive_questions_holdout3.jsonl`` is a fourth set, written blind the same way.
``bench/data/extractive_questions_holdout4.jsonl`` is a fifth, written blind the same way.

Usage: ``.venv/bin/python bench/extractive_eval.py [--data DIR] [--questions PATH]
[--mode MODE] [--quick] [--show-misses]``; ``--quick`` answers six answerable and three
unanswerable questions in claim-lattice mode and checks the same things (a few seconds
after the ingest).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import export_pyref, markdown_table  # noqa: E402
from data.pairs import (  # noqa: E402
    PAIRS_PATH,
    check_pairs,
    load_pairs,
    normalize,
    read_records,
)

from aborist.clients.extractive import ExtractiveClient  # noqa: E402
from aborist.corpus.ingest import ingest  # noqa: E402
from aborist.migrations import upgrade  # noqa: E402
from aborist.pipeline.query import query  # noqa: E402
from aborist.pipeline.run import Governance  # noqa: E402
from aborist.projections import RunProjection  # noqa: E402
from ledger.engine import ledger_engine  # noqa: E402
from ledger.store import Ledger  # noqa: E402

QUESTIONS_PATH = ROOT / "bench" / "data" / "extractive_questions.jsonl"
HOLDOUT_PATH = ROOT / "bench" / "data" / "extractive_questions_holdout.jsonl"
DEFAULT_DATA = ROOT / ".." / "shared" / "data"
SHARDS = ("rust-book", "python-reference")
TARGET_GOLD = 0.80


@dataclass(frozen=True)
class Question:
    id: str
    shard: str | None
    question: str
    gold: str | None


def load_questions(path: Path = QUESTIONS_PATH) -> list[Question]:
    """The questions file; raises ``ValueError`` naming the line of a malformed record."""
    out: list[Question] = []
    seen: set[str] = set()
    for n, row in read_records(path, ("id", "shard", "question", "gold")):
        if row["id"] in seen:
            raise ValueError(f"{path.name} line {n}: id {row['id']!r} appears twice")
        seen.add(row["id"])
        if (row["gold"] is None) != (row["shard"] is None) or row["shard"] not in (None, *SHARDS):
            raise ValueError(f"{path.name} line {n}: a gold span needs its shard, and only it")
        out.append(Question(row["id"], row["shard"], row["question"], row["gold"]))
    return out


def check_gold(questions: list[Question], corpora: dict[str, str]) -> list[str]:
    """Problems: a gold span its corpus does not hold."""
    return [
        f"{q.id}: gold {q.gold!r} is not in {q.shard}"
        for q in questions
        if q.gold is not None and q.shard is not None and normalize(q.gold) not in corpora[q.shard]
    ]


def build(tmp: Path, rust_src: Path) -> tuple[Ledger, Path, dict[str, str]]:
    engine = ledger_engine(f"sqlite:///{tmp / 'ledger.db'}")
    upgrade(engine)
    ledger = Ledger(engine, projections=[RunProjection()])
    pyref = export_pyref(tmp / "pyref")
    shards = tmp / "shards"
    ingest([tmp / "pyref"], "python-reference", shards_dir=shards, ledger=ledger)
    ingest([rust_src], "rust-book", shards_dir=shards, ledger=ledger)
    return ledger, shards, corpus_texts(rust_src, pyref)


def corpus_texts(rust_src: Path, pyref: list[tuple[str, str]]) -> dict[str, str]:
    """Each shard's whole text, normalized, for :func:`check_gold`: the Rust book's
    Markdown files and the (topic, text) pairs :func:`export_pyref` returned."""
    rust_text = " ".join(p.read_text(encoding="utf-8") for p in sorted(rust_src.glob("*.md")))
    return {
        "python-reference": normalize(" ".join(body for _, body in pyref)),
        "rust-book": normalize(rust_text),
    }


def answer_all(
    questions: list[Question], ledger: Ledger, shards: Path, mode: str
) -> list[dict[str, Any]]:
    client = ExtractiveClient()
    rows = []
    for q in questions:
        r = query(q.question, ledger=ledger, client=client, shards_dir=shards,
                  governance=Governance(mode=mode), use_cache=False)  # fmt: skip
        has_gold = q.gold is not None and normalize(q.gold) in normalize(r.answer)
        refused = r.answer.startswith("I cannot answer")
        retrieved = q.gold is not None and any(
            normalize(q.gold) in normalize(e["text"]) for e in r.evidence
        )
        rows.append({"q": q, "audit_mode": r.audit_mode, "label": r.label,
                     "answer": r.answer, "gold": has_gold, "refused": refused,
                     "retrieved": retrieved})  # fmt: skip
    return rows


def pct(k: int, n: int) -> str:
    return f"{k / n:.1%} ({k}/{n})" if n else "-"


def summarize(mode: str, rows: list[dict[str, Any]]) -> tuple[list[str], bool]:
    ans = [r for r in rows if r["q"].gold is not None]
    una = [r for r in rows if r["q"].gold is None]
    strict_gold = sum(r["audit_mode"] == "STRICT" and r["gold"] for r in ans)
    strict_wrong = sum(r["audit_mode"] == "STRICT" and not r["gold"] for r in ans)
    not_strict = sum(r["audit_mode"] != "STRICT" and not r["refused"] for r in ans)
    refused = sum(r["refused"] for r in ans)
    una_strict = sum(r["audit_mode"] == "STRICT" for r in una)
    una_refused = sum(r["refused"] for r in una)
    ok = (not ans or strict_gold / len(ans) >= TARGET_GOLD) and una_strict == 0
    cells = [
        mode,
        pct(strict_gold, len(ans)),
        pct(strict_wrong, len(ans)),
        pct(not_strict, len(ans)),
        pct(refused, len(ans)),
        pct(una_strict, len(una)),
        pct(una_refused, len(una)),
    ]
    return cells, ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--questions", type=Path, default=QUESTIONS_PATH,
                    help="the questions file (default: %(default)s)")  # fmt: skip
    ap.add_argument("--mode", choices=["both", "claim-lattice", "quote"], default="both")
    ap.add_argument("--quick", action="store_true", help="a few questions, one mode")
    ap.add_argument("--show-misses", action="store_true", help="print every answer missed")
    args = ap.parse_args(argv)
    rust_src = (args.data / "rust-book" / "src").resolve()
    if not rust_src.is_dir():
        print(f"error: the Rust book is not at {rust_src}", file=sys.stderr)
        return 1
    try:
        questions = load_questions(args.questions)
        pairs = load_pairs(PAIRS_PATH)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    problems = check_pairs(pairs, args.data)
    modes = ["claim-lattice", "quote"] if args.mode == "both" else [args.mode]
    if args.quick:
        ans = [q for q in questions if q.gold is not None]
        questions = ans[::9][:6] + [q for q in questions if q.gold is None][:3]
        modes = modes[:1]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="aborist-extractive-") as tmp:
        ledger, shards, corpora = build(Path(tmp), rust_src)
        problems += check_gold(questions, corpora)
        for p in problems:
            print(f"self-check: {p}", file=sys.stderr)
        if problems:
            return 1
        n_ans = sum(q.gold is not None for q in questions)
        print(f"{n_ans} answerable and {len(questions) - n_ans} unanswerable questions; "
              f"{len(pairs)} pair rows pass the self-check")  # fmt: skip
        table, all_ok = [], True
        for mode in modes:
            rows = answer_all(questions, ledger, shards, mode)
            cells, ok = summarize(mode, rows)
            table.append(cells)
            all_ok &= ok
            if args.show_misses:
                for r in rows:
                    good = r["gold"] if r["q"].gold else r["audit_mode"] != "STRICT"
                    if not (good and (r["q"].gold is None or r["audit_mode"] == "STRICT")):
                        where = "gold retrieved" if r["retrieved"] else "gold not retrieved"
                        print(f"--- {mode} {r['q'].id} {r['audit_mode']} ({where}): "
                              f"{r['q'].question}")  # fmt: skip
                        print("    " + r["answer"].replace("\n", "\n    "))
        ledger.engine.dispose()
    headers = ["mode", "STRICT with gold", "STRICT without gold", "not STRICT", "refused",
               "unanswerable STRICT", "unanswerable refused"]  # fmt: skip
    print(markdown_table(headers, table))
    print(f"targets: STRICT with gold >= {TARGET_GOLD:.0%} of answerable, no STRICT answer to "
          f"an unanswerable question: {'met' if all_ok else 'MISSED'}"
          f"  ({time.perf_counter() - started:.1f} s)")  # fmt: skip
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
