"""What the answer-pair builders share: the pair type, the readers of each kind of source,
the step from a table of pairs to rows, and the writing of the file.

A source is named ``<kind>:<name>``: ``rb:`` a Rust book chapter file, ``py:`` a topic of
``pydoc_data.topics``, ``cq:`` a ClapNQ record id (:data:`CLAPNQ_FILE`), ``cv:`` a
COVID-QA ``document_id`` (:data:`COVIDQA_FILE`). :func:`source_paragraphs` reads it as
excerpts are stored: for the Rust book code blocks dropped and Markdown marks removed by
``pairs.clean_md``, for Python's reference whitespace collapsed, for ClapNQ the record's
passages as they are, for COVID-QA the blank-line separated blocks of the paper's context.
Each phrase of a pair picks the paragraph of its source that holds it; that paragraph is
the evidence, so every excerpt is verbatim.

A builder keeps its table of pairs and a :class:`PairSet` naming its file, its kinds of
corruption and how it reads titles; ``main`` writes the file. The Python reference
excerpts are those of the Python the files were built with (:data:`BUILT_WITH`): another
version's ``pydoc_data`` words some topics differently.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import NamedTuple

from pairs import CORRUPTIONS as FIRST_CORRUPTIONS
from pairs import clean_md, normalize

BUILT_WITH = (3, 11)
CLAPNQ_FILE = Path("clapnq") / "clapnq_dev_answerable.jsonl"
COVIDQA_FILE = Path("covidqa") / "200423_covidQA.json"
SOURCES = {"rb": "rust-book", "py": "python-reference", "cq": "clapnq", "cv": "covidqa"}
CL, QM = "claim-lattice", "quote"
HOLDOUT_CORRUPTIONS = (*FIRST_CORRUPTIONS, "swapped_direction", "wrong_combination")
LATER_CORRUPTIONS = (*HOLDOUT_CORRUPTIONS, "role_swap", "unit_or_scale", "scope")
_FENCE = re.compile(r"^```.*?^```[^\n]*$", re.MULTILINE | re.DOTALL)


class Pair(NamedTuple):
    pid: str
    src: str
    phrases: tuple[str, ...]
    question: str
    faithful: str
    corrupted: str
    corruption: str
    mode: str = QM


@dataclass(frozen=True)
class PairSet:
    """A set's table and parameters. ``title_heading`` is the prefix of the Rust book line
    whose text is a chapter's title: ``"# "`` the first top-level heading, ``"#"`` the
    first heading at any level."""

    path: Path
    pairs: Sequence[Pair]
    corruptions: tuple[str, ...]
    title_heading: str = "# "


@cache
def _clapnq(data: Path) -> dict[str, dict[str, object]]:
    path = data / CLAPNQ_FILE
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return {str(r["id"]): r for r in rows}


@cache
def _covidqa(data: Path) -> dict[str, str]:
    """Each COVID-QA paper's context by its ``document_id``."""
    papers = json.loads((data / COVIDQA_FILE).read_text(encoding="utf-8"))["data"]
    return {str(p["document_id"]): str(p["context"]) for a in papers for p in a["paragraphs"]}


def covidqa_paragraphs(context: str) -> list[str]:
    """The paragraphs of a COVID-QA context: its blank-line separated blocks, stripped."""
    return [p.strip() for p in re.split(r"\n\s*\n", context) if p.strip()]


def rust_book_paragraphs(name: str, data: Path, title_heading: str) -> tuple[str, list[str]]:
    """The title (the first line starting with ``title_heading``, its ``#`` marks dropped;
    else ``name``) and the paragraphs of a Rust book chapter."""
    raw = (data / "rust-book" / "src" / name).read_text(encoding="utf-8")
    lines = raw.splitlines()
    title = next((ln.lstrip("#").strip() for ln in lines if ln.startswith(title_heading)), name)
    body = _FENCE.sub("", raw)
    return title, [clean_md(p) for p in re.split(r"\n\s*\n", body) if p.strip()]


def source_paragraphs(src: str, data: Path, title_heading: str = "# ") -> tuple[str, list[str]]:
    """The title and the paragraphs of the source ``src``, as excerpts are stored (see the
    module doc)."""
    kind, _, name = src.partition(":")
    if kind == "rb":
        return rust_book_paragraphs(name, data, title_heading)
    if kind == "cq":
        passages = _clapnq(data)[name]["passages"]
        assert isinstance(passages, list)
        return str(passages[0]["title"]), [str(p["text"]).strip() for p in passages]
    if kind == "cv":
        paras = covidqa_paragraphs(_covidqa(data)[name])
        return paras[0].splitlines()[0].strip(), paras
    from pydoc_data.topics import topics

    body = topics[name]
    title = body.strip().splitlines()[0].strip()
    return title, [" ".join(p.split()) for p in re.split(r"\n\s*\n", body) if p.strip()]


def source_name(src: str) -> str:
    """The ``source`` field of a row: the source with its kind spelled out."""
    kind, _, name = src.partition(":")
    return f"{SOURCES[kind]}:{name}"


def pair_rows(p: Pair, evidence: list[dict[str, str]], source: str) -> list[dict[str, object]]:
    """The faithful row and the corrupted row of ``p``."""
    return [
        {
            "id": f"{p.pid}-{side}", "question": p.question, "answer": answer,
            "mode": p.mode, "evidence": evidence,
            "kind": "faithful" if side == "f" else "corrupted",
            "corruption": corruption, "source": source,
        }
        for side, answer, corruption in (("f", p.faithful, None), ("c", p.corrupted, p.corruption))
    ]  # fmt: skip


def build(pset: PairSet, data: Path) -> list[dict[str, object]]:
    """The rows of the set's file; raises ``SystemExit`` when a phrase is in no paragraph of
    its source or in more than one, or when a pair names a corruption the set lacks."""
    rows: list[dict[str, object]] = []
    for p in pset.pairs:
        if p.corruption not in pset.corruptions:
            raise SystemExit(f"{p.pid}: unknown corruption {p.corruption!r}")
        title, paras = source_paragraphs(p.src, data, pset.title_heading)
        evidence = []
        for n, phrase in enumerate(p.phrases, start=1):
            hits = [t for t in paras if normalize(phrase) in normalize(t)]
            if len(hits) != 1:
                raise SystemExit(f"{p.pid}: {len(hits)} paragraphs of {p.src} hold {phrase!r}")
            evidence.append({"pointer_id": f"E{n}", "title": title, "text": hits[0]})
        rows += pair_rows(p, evidence, source_name(p.src))
    return rows


def write_rows(path: Path, rows: list[dict[str, object]]) -> None:
    """``rows`` as JSON lines, non-ASCII characters kept."""
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def data_arg(description: str, *, warn_version: bool = True) -> Path:
    """The ``--data`` directory from the command line (default: the shared data beside the
    repository); warns when this Python is not :data:`BUILT_WITH`."""
    ap = argparse.ArgumentParser(description=description)
    repo = Path(__file__).resolve().parents[2]
    ap.add_argument("--data", type=Path, default=repo / ".." / "shared" / "data")
    args = ap.parse_args()
    if warn_version and sys.version_info[:2] != BUILT_WITH:
        print(f"warning: built with Python {BUILT_WITH}; pydoc_data may differ", file=sys.stderr)
    return Path(args.data)


def main(pset: PairSet, doc: str | None) -> int:
    """Build the set from ``--data`` and write its file."""
    rows = build(pset, data_arg((doc or "").splitlines()[0]))
    write_rows(pset.path, rows)
    print(f"wrote {len(rows)} rows ({len(pset.pairs)} pairs) to {pset.path}")
    return 0
