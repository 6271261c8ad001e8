"""The fourth answer-pairs set (bench/data/pairs_holdout3.jsonl): the file parses, its rows
are well-formed pairs the batch verifier accepts, every evidence excerpt is verbatim from
its source (a paragraph of a COVID-QA paper, of a Rust book chapter or of a Python
reference topic), no source is shared with an earlier set, and the file is what its
builder writes.

No verifier figures are asserted here: bench/verifier_eval.py measures them."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO / "bench" / "data"
HOLDOUT3 = DATA_DIR / "pairs_holdout3.jsonl"
EARLIER = ("pairs.jsonl", "pairs_holdout.jsonl", "pairs_holdout2.jsonl")
SHARED = (REPO / ".." / "shared" / "data").resolve()
RUST_BOOK = SHARED / "rust-book" / "src"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, DATA_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


builder = _load("build_pairs_holdout3")
pairs = _load("pairs")
COVIDQA = SHARED / builder.COVIDQA_FILE


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return [row for _, row in pairs.read_records(HOLDOUT3, pairs.FIELDS)]


def _need(path: Path, what: str) -> None:
    if not path.exists():
        pytest.skip(f"{what} is not at {path} (shared data absent)")


def _need_python_reference() -> None:
    if sys.version_info[:2] != builder.BUILT_WITH:
        pytest.skip(
            f"the Python reference excerpts are from Python {builder.BUILT_WITH}'s pydoc_data; "
            f"this is {sys.version_info[:2]}, whose topics may be worded differently"
        )


def _evidence_of(rows: list[dict[str, Any]], corpus: str) -> list[tuple[str, str, str]]:
    """(row id, source name, excerpt) for every evidence object of the rows of ``corpus``."""
    out = []
    for r in rows:
        kind, _, name = r["source"].partition(":")
        if kind == corpus:
            out += [(r["id"], name, e["text"]) for e in r["evidence"]]
    return out


def _check_row(r: dict[str, Any]) -> None:
    assert re.fullmatch(r"[a-z0-9-]+-[fc]", r["id"]), r["id"]
    faithful = r["id"].endswith("-f")
    assert r["kind"] == ("faithful" if faithful else "corrupted"), r["id"]
    if faithful:
        assert r["corruption"] is None, r["id"]
    else:
        assert r["corruption"] in builder.CORRUPTIONS, r["id"]
    assert r["mode"] in ("quote", "claim-lattice"), r["id"]
    assert r["source"].partition(":")[0] in builder.SOURCES.values(), r["id"]
    assert r["question"].strip() and r["answer"].strip(), r["id"]
    ev = r["evidence"]
    assert ev and [e["pointer_id"] for e in ev] == [f"E{n}" for n in range(1, len(ev) + 1)]
    assert all(e["title"].strip() and e["text"].strip() for e in ev), r["id"]
    if r["mode"] == "claim-lattice":
        assert all(re.search(r"\[E\d+\]", line) for line in r["answer"].splitlines()), r["id"]


def test_rows_are_well_formed_pairs(rows: list[dict[str, Any]]) -> None:
    ids = Counter(r["id"] for r in rows)
    assert [i for i, n in ids.items() if n > 1] == []
    by_pair: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        _check_row(r)
        by_pair.setdefault(r["id"][:-2], {})[r["id"][-1]] = r
    for pid, sides in by_pair.items():
        assert set(sides) == {"f", "c"}, pid
        f, c = sides["f"], sides["c"]
        assert all(f[k] == c[k] for k in ("question", "evidence", "mode", "source")), pid
        assert pairs.normalize(f["answer"]) != pairs.normalize(c["answer"]), pid
    assert len(by_pair) >= 100
    # every kind of corruption the set names is written at least once, and both modes
    assert {r["corruption"] for r in rows} - {None} == set(builder.CORRUPTIONS)
    assert {r["mode"] for r in rows} == {"quote", "claim-lattice"}


def test_faithful_claims_are_in_the_evidence_they_cite(rows: list[dict[str, Any]]) -> None:
    lattice = [r for r in rows if r["kind"] == "faithful" and r["mode"] == "claim-lattice"]
    assert lattice
    for r in lattice:
        for line in r["answer"].splitlines():
            cited = [int(n) for n in re.findall(r"\[E(\d+)\]", line)]
            claim = pairs.normalize(re.sub(r"\s*\[E\d+\]", "", line)).rstrip(".")
            texts = [pairs.normalize(r["evidence"][n - 1]["text"]) for n in cited]
            assert any(claim in t for t in texts), f"{r['id']}: {line}"


def test_sources_are_not_those_of_the_earlier_sets(rows: list[dict[str, Any]]) -> None:
    earlier: set[str] = set()
    for name in EARLIER:
        path = DATA_DIR / name
        if path.is_file():
            earlier |= {r["source"] for r in pairs.load_pairs(path)}
    assert earlier, "no earlier set is present to compare with"
    assert sorted({r["source"] for r in rows} & earlier) == []


def test_every_row_is_accepted_by_the_batch_reader(rows: list[dict[str, Any]]) -> None:
    from cli.verify_cmd import verify_batch_line

    for r in rows:
        verify_batch_line(json.dumps(r, ensure_ascii=False), r["mode"])


def test_covidqa_evidence_is_verbatim(rows: list[dict[str, Any]]) -> None:
    _need(COVIDQA, "COVID-QA")
    papers = json.loads(COVIDQA.read_text(encoding="utf-8"))["data"]
    contexts = {str(p["document_id"]): p["context"] for a in papers for p in a["paragraphs"]}
    found = _evidence_of(rows, "covidqa")
    assert found
    for rid, name, text in found:
        assert text in contexts[name], f"{rid}: evidence not verbatim in COVID-QA paper {name}"


def test_rust_book_evidence_is_verbatim(rows: list[dict[str, Any]]) -> None:
    _need(RUST_BOOK, "the Rust book")
    found = _evidence_of(rows, "rust-book")
    assert found
    for rid, name, text in found:
        chapter = pairs.clean_md((RUST_BOOK / name).read_text(encoding="utf-8"))
        assert text in chapter, f"{rid}: evidence not verbatim in {name}"


def test_python_reference_evidence_is_verbatim(rows: list[dict[str, Any]]) -> None:
    _need_python_reference()
    from pydoc_data.topics import topics

    found = _evidence_of(rows, "python-reference")
    assert found
    for rid, name, text in found:
        assert text in " ".join(topics[name].split()), f"{rid}: evidence not verbatim in {name}"


def test_the_file_is_what_the_builder_writes(rows: list[dict[str, Any]]) -> None:
    _need(RUST_BOOK, "the Rust book")
    _need(COVIDQA, "COVID-QA")
    _need_python_reference()
    assert builder.build(SHARED) == rows
