"""Faithful / corrupted answer pairs over Python's reference and the Rust book: loader and
self-check.

``bench/data/pairs.jsonl`` holds one verification record per line, in the form
``aborist verify --batch`` reads (docs/verifier.md), plus what a benchmark needs to score
it:

=============  ==========================================================================
field          meaning
=============  ==========================================================================
id             ``<pair>-f`` for the faithful answer, ``<pair>-c`` for its corruption
question       the question the answer answers
answer         claim-lattice form (one claim per line with ``[E1]`` pointers) or quote
               form (prose with "verbatim quotations")
mode           ``claim-lattice`` or ``quote``
evidence       a list of ``{"pointer_id", "title", "text"}``, E1, E2 … in order; each text
               an excerpt of the corpus, stored here (not the whole page)
kind           ``faithful`` or ``corrupted``
corruption     ``null`` for a faithful answer, else one of :data:`CORRUPTIONS`
source         ``python-reference:<topic>`` or ``rust-book:<file>.md``
=============  ==========================================================================

Every pair shares its question and evidence between its two answers; the corrupted answer
differs from the faithful one by exactly the stated corruption. The faithful answers were
written from the evidence, the corruptions by hand.

:func:`check_pairs` is the self-check: fields and values, a faithful and a corrupted row
per pair with the same question and evidence, every evidence excerpt found in its corpus
(whitespace and emphasis marks normalized), every claim-lattice claim of a faithful answer
found in the evidence it cites, and every record accepted by the batch verifier's reader.
``python bench/data/pairs.py [--data DIR]`` runs it and prints the counts.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

PAIRS_PATH = Path(__file__).resolve().parent / "pairs.jsonl"
CORRUPTIONS = (
    "swapped_entity",
    "changed_number",
    "dropped_negation",
    "added_negation",
    "title_fragment",
    "bare_name",
)
FIELDS = ("id", "question", "answer", "mode", "evidence", "kind", "corruption", "source")
_MARKS = re.compile(r"[*_`\"“”]")
_POINTER = re.compile(r"\s*\[E(\d+)\]")


_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\](?:<!--\s*ignore\s*-->)?")
_EMPHASIS = re.compile(r"(?<![\w])[_*]+(?=\S)|(?<=\S)[_*]+(?![\w])")


def clean_md(markdown: str) -> str:
    """Markdown as prose: block-quote marks, link targets, emphasis and code marks
    removed, whitespace collapsed (how an excerpt of the Rust book is stored)."""
    lines = [re.sub(r"^\s*>\s?", "", line) for line in markdown.splitlines()]
    text = _LINK.sub(r"\1", " ".join(lines))
    text = _EMPHASIS.sub("", text).replace("`", "")
    return " ".join(text.split())


def normalize(text: str) -> str:
    """Casefolded, typographic apostrophes straight, emphasis marks and quotes dropped,
    whitespace collapsed: how a gold span or a quoted sentence is looked for in a text."""
    text = text.replace("’", "'").replace("‘", "'")
    return " ".join(_MARKS.sub("", text).casefold().split())


def read_records(path: Path, fields: tuple[str, ...]) -> list[tuple[int, dict[str, Any]]]:
    """Each record of the JSON-lines file ``path`` with its line number (blank lines
    skipped); raises ``ValueError`` naming a line that is not a JSON object with exactly
    ``fields``."""
    rows: list[tuple[int, dict[str, Any]]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path.name} line {n}: not JSON ({e.msg})") from e
        if not isinstance(row, dict) or set(row) != set(fields):
            raise ValueError(f"{path.name} line {n}: expected the fields {', '.join(fields)}")
        rows.append((n, row))
    return rows


def load_pairs(path: Path = PAIRS_PATH) -> list[dict[str, Any]]:
    """The records of ``path``; raises ``ValueError`` naming a line that is not a JSON
    object with exactly :data:`FIELDS`."""
    return [row for _, row in read_records(path, FIELDS)]


def _corpora(data: Path) -> dict[str, str]:
    from pydoc_data.topics import topics

    rust = data / "rust-book" / "src"
    if not rust.is_dir():
        raise ValueError(f"the Rust book is not at {rust}")
    return {
        "python-reference": normalize(" ".join(topics.values())),
        "rust-book": normalize(
            " ".join(clean_md(p.read_text(encoding="utf-8")) for p in sorted(rust.glob("*.md")))
        ),
    }


def _row_problems(row: dict[str, Any], corpora: dict[str, str]) -> list[str]:
    rid = row["id"]
    out: list[str] = []
    if not isinstance(rid, str) or not re.fullmatch(r"[a-z0-9-]+-[fc]", rid):
        return [f"{rid!r}: id must be <pair>-f or <pair>-c"]
    if row["kind"] != ("faithful" if rid.endswith("-f") else "corrupted"):
        out.append(f"{rid}: kind {row['kind']!r} does not match the id")
    if (row["kind"] == "faithful") != (row["corruption"] is None):
        out.append(f"{rid}: a faithful row has no corruption, a corrupted one has one")
    if row["corruption"] is not None and row["corruption"] not in CORRUPTIONS:
        out.append(f"{rid}: unknown corruption {row['corruption']!r}")
    if row["mode"] not in ("claim-lattice", "quote"):
        out.append(f"{rid}: mode must be claim-lattice or quote")
    corpus, _, _where = str(row["source"]).partition(":")
    if corpus not in corpora:
        return [*out, f"{rid}: source must start with python-reference: or rust-book:"]
    ev = row["evidence"]
    if not isinstance(ev, list) or not ev:
        return [*out, f"{rid}: evidence must be a non-empty list"]
    for n, item in enumerate(ev, start=1):
        if item.get("pointer_id", f"E{n}") != f"E{n}":
            out.append(f"{rid}: evidence {n} has pointer_id {item.get('pointer_id')!r}")
        if normalize(item.get("text", "")) not in corpora[corpus]:
            out.append(f"{rid}: evidence {n} is not an excerpt of {corpus}")
    if row["kind"] == "faithful" and row["mode"] == "claim-lattice":
        for line in str(row["answer"]).splitlines():
            cited = [int(p) for p in _POINTER.findall(line)]
            claim = normalize(_POINTER.sub("", line))
            texts = [normalize(ev[p - 1]["text"]) for p in cited if 0 < p <= len(ev)]
            if not cited or not any(claim.rstrip(".") in t for t in texts):
                out.append(f"{rid}: faithful claim not found in the evidence it cites: {line}")
    return out


def check_pairs(rows: list[dict[str, Any]], data: Path) -> list[str]:
    """Every problem of ``rows`` (empty when the file is sound); see the module doc."""
    try:
        corpora = _corpora(data)
    except ValueError as e:
        return [str(e)]
    repo = Path(__file__).resolve().parents[2]
    if str(repo) not in sys.path:
        sys.path.insert(0, str(repo))
    from aborist.errors import AboristError
    from cli.verify_cmd import verify_batch_line

    problems: list[str] = []
    ids = Counter(r["id"] for r in rows)
    problems += [f"{i}: appears {n} times" for i, n in ids.items() if n > 1]
    pairs: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        problems += _row_problems(row, corpora)
        pairs.setdefault(str(row["id"])[:-2], {})[str(row["id"])[-1]] = row
        try:
            verify_batch_line(json.dumps(row, ensure_ascii=False), row["mode"])
        except AboristError as e:
            problems.append(f"{row['id']}: the batch verifier refuses it: {e}")
    for pair, sides in pairs.items():
        if set(sides) != {"f", "c"}:
            problems.append(f"{pair}: needs one faithful (-f) and one corrupted (-c) row")
            continue
        f, c = sides["f"], sides["c"]
        for key in ("question", "evidence", "mode", "source"):
            if f[key] != c[key]:
                problems.append(f"{pair}: the two rows differ in {key}")
        if normalize(f["answer"]) == normalize(c["answer"]):
            problems.append(f"{pair}: the corrupted answer is the faithful one")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description="Self-check of bench/data/pairs.jsonl.")
    repo = Path(__file__).resolve().parents[2]
    ap.add_argument("--data", type=Path, default=repo / ".." / "shared" / "data")
    args = ap.parse_args()
    try:
        rows = load_pairs()
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    problems = check_pairs(rows, args.data)
    for p in problems:
        print(p, file=sys.stderr)
    kinds = Counter(r["corruption"] or "faithful" for r in rows)
    modes = Counter(r["mode"] for r in rows)
    sources = Counter(str(r["source"]).split(":")[0] for r in rows)
    print(f"{len(rows)} rows, {len(rows) // 2} pairs; {dict(sorted(kinds.items()))}; "
          f"{dict(sorted(modes.items()))}; {dict(sorted(sources.items()))}")  # fmt: skip
    print("self-check: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
