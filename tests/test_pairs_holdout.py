"""The hold-out answer pairs (bench/data/pairs_holdout.jsonl): the file parses, its rows
are well-formed pairs the batch verifier accepts, and every evidence excerpt is verbatim
from its source (a paragraph of a Rust book chapter or of a Python reference topic).

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
HOLDOUT = DATA_DIR / "pairs_holdout.jsonl"
SHARED = (REPO / ".." / "shared" / "data").resolve()
RUST_BOOK = SHARED / "rust-book" / "src"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, DATA_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


builder = _load("build_pairs_holdout")
pairs = _load("pairs")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return [row for _, row in pairs.read_records(HOLDOUT, pairs.FIELDS)]


def _need_rust_book() -> None:
    if not RUST_BOOK.is_dir():
        pytest.skip(f"the Rust book is not at {RUST_BOOK} (shared data absent)")


def _need_python_reference() -> None:
    if sys.version_info[:2] != builder.BUILT_WITH:
        pytest.skip(
            f"the Python reference excerpts are from Python {builder.BUILT_WITH}'s pydoc_data; "
            f"this is {sys.version_info[:2]}, whose topics may be worded differently"
        )


def test_rows_are_well_formed_pairs(rows: list[dict[str, Any]]) -> None:
    ids = Counter(r["id"] for r in rows)
    assert [i for i, n in ids.items() if n > 1] == []
    by_pair: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        assert re.fullmatch(r"[a-z0-9-]+-[fc]", r["id"]), r["id"]
        faithful = r["id"].endswith("-f")
        assert r["kind"] == ("faithful" if faithful else "corrupted"), r["id"]
        if faithful:
            assert r["corruption"] is None, r["id"]
        else:
            assert r["corruption"] in builder.CORRUPTIONS, r["id"]
        assert r["mode"] in ("quote", "claim-lattice"), r["id"]
        assert r["source"].partition(":")[0] in ("rust-book", "python-reference"), r["id"]
        assert r["question"].strip() and r["answer"].strip(), r["id"]
        ev = r["evidence"]
        assert ev and [e["pointer_id"] for e in ev] == [f"E{n}" for n in range(1, len(ev) + 1)]
        if r["mode"] == "claim-lattice":
            assert all(re.search(r"\[E\d+\]", line) for line in r["answer"].splitlines())
        by_pair.setdefault(r["id"][:-2], {})[r["id"][-1]] = r
    for pid, sides in by_pair.items():
        assert set(sides) == {"f", "c"}, pid
        f, c = sides["f"], sides["c"]
        assert all(f[k] == c[k] for k in ("question", "evidence", "mode", "source")), pid
        assert pairs.normalize(f["answer"]) != pairs.normalize(c["answer"]), pid
    kinds = Counter(r["kind"] for r in rows)
    assert kinds["faithful"] >= 60 and kinds["corrupted"] >= 60


def test_every_row_is_accepted_by_the_batch_reader(rows: list[dict[str, Any]]) -> None:
    from cli.verify_cmd import verify_batch_line

    for r in rows:
        verify_batch_line(json.dumps(r, ensure_ascii=False), r["mode"])


def test_rust_book_evidence_is_verbatim(rows: list[dict[str, Any]]) -> None:
    _need_rust_book()
    checked = 0
    for r in rows:
        corpus, _, name = r["source"].partition(":")
        if corpus != "rust-book":
            continue
        chapter = pairs.clean_md((RUST_BOOK / name).read_text(encoding="utf-8"))
        for e in r["evidence"]:
            assert e["text"] in chapter, f"{r['id']}: evidence not verbatim in {name}"
            checked += 1
    assert checked > 0


def test_python_reference_evidence_is_verbatim(rows: list[dict[str, Any]]) -> None:
    _need_python_reference()
    from pydoc_data.topics import topics

    checked = 0
    for r in rows:
        corpus, _, name = r["source"].partition(":")
        if corpus != "python-reference":
            continue
        topic = " ".join(topics[name].split())
        for e in r["evidence"]:
            assert e["text"] in topic, f"{r['id']}: evidence not verbatim in topic {name}"
            checked += 1
    assert checked > 0


def test_the_file_is_what_the_builder_writes(rows: list[dict[str, Any]]) -> None:
    _need_rust_book()
    _need_python_reference()
    assert builder.build(SHARED) == rows
