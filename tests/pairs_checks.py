"""The checks every hold-out answer-pairs set (bench/data/pairs_holdout*.jsonl) is held to,
and what each set asks of them: tests/test_pairs_holdout.py runs them over :data:`SETS`.

A set's file parses, its rows are well-formed pairs, every evidence excerpt is verbatim
from its source, and the file is what its builder writes; a later set also shares no
source with the earlier ones. A check that needs shared data or the Python the excerpts
were read with skips, saying which is absent."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO / "bench" / "data"
SHARED = (REPO / ".." / "shared" / "data").resolve()
RUST_BOOK = SHARED / "rust-book" / "src"
if str(DATA_DIR) not in sys.path:
    sys.path.insert(0, str(DATA_DIR))

import holdout_build  # noqa: E402
import pairs  # noqa: E402

# the order in which a check that reads several corpora asks for them
_NEED_ORDER = ("rust-book", "clapnq", "covidqa", "python-reference")
_DATA_FILES = {
    "rust-book": (RUST_BOOK, "the Rust book"),
    "clapnq": (SHARED / holdout_build.CLAPNQ_FILE, "ClapNQ"),
    "covidqa": (SHARED / holdout_build.COVIDQA_FILE, "COVID-QA"),
}


@dataclass(frozen=True)
class HoldoutSet:
    """One set: its builder, the corpora its sources come from, and the set's own demands
    (how many pairs at least; whether every kind of corruption and both modes must be
    written; whether faithful claim-lattice claims are looked for in their evidence; the
    earlier sets' files, those that must be present and those read when present)."""

    name: str
    builder: str
    corpora: tuple[str, ...]
    min_pairs: int
    every_corruption: bool = False
    both_modes: bool = False
    faithful_claims: bool = False
    earlier_required: tuple[str, ...] = ()
    earlier_optional: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return DATA_DIR / f"pairs_{self.name}.jsonl"


SETS = (
    HoldoutSet("holdout", "build_pairs_holdout", ("rust-book", "python-reference"), 60),
    HoldoutSet(
        "holdout2", "build_pairs_holdout2", ("rust-book", "python-reference", "clapnq"), 120,
        every_corruption=True, earlier_required=("pairs.jsonl",),
        earlier_optional=("pairs_holdout.jsonl",),
    ),
    HoldoutSet(
        "holdout3", "build_pairs_holdout3", ("covidqa", "rust-book", "python-reference"), 100,
        every_corruption=True, both_modes=True, faithful_claims=True,
        earlier_optional=("pairs.jsonl", "pairs_holdout.jsonl", "pairs_holdout2.jsonl"),
    ),
    HoldoutSet(
        "holdout4", "build_pairs_holdout4",
        ("rust-book", "python-reference", "covidqa", "clapnq"), 150,
        every_corruption=True, both_modes=True, faithful_claims=True,
        earlier_optional=(
            "pairs.jsonl", "pairs_holdout.jsonl", "pairs_holdout2.jsonl", "pairs_holdout3.jsonl",
        ),
    ),
    HoldoutSet(
        "holdout5", "build_pairs_holdout5",
        ("rust-book", "python-reference", "covidqa", "clapnq"), 120,
        every_corruption=True, both_modes=True, faithful_claims=True,
        earlier_optional=(
            "pairs.jsonl", "pairs_holdout.jsonl", "pairs_holdout2.jsonl", "pairs_holdout3.jsonl",
            "pairs_holdout4.jsonl",
        ),
    ),
    HoldoutSet(
        "holdout6", "build_pairs_holdout6",
        ("rust-book", "python-reference", "covidqa", "clapnq"), 120,
        every_corruption=True, both_modes=True, faithful_claims=True,
        earlier_optional=(
            "pairs.jsonl", "pairs_holdout.jsonl", "pairs_holdout2.jsonl", "pairs_holdout3.jsonl",
            "pairs_holdout4.jsonl", "pairs_holdout5.jsonl",
        ),
    ),
    HoldoutSet(
        "holdout7", "build_pairs_holdout7",
        ("rust-book", "python-reference", "covidqa", "clapnq"), 100,
        every_corruption=True, both_modes=True, faithful_claims=True,
        earlier_optional=(
            "pairs.jsonl", "pairs_holdout.jsonl", "pairs_holdout2.jsonl", "pairs_holdout3.jsonl",
            "pairs_holdout4.jsonl", "pairs_holdout5.jsonl", "pairs_holdout6.jsonl",
        ),
    ),
    HoldoutSet(
        "holdout8", "build_pairs_holdout8", ("rust-book", "covidqa", "clapnq"), 100,
        every_corruption=True, both_modes=True, faithful_claims=True,
        earlier_optional=(
            "pairs.jsonl", "pairs_holdout.jsonl", "pairs_holdout2.jsonl", "pairs_holdout3.jsonl",
            "pairs_holdout4.jsonl", "pairs_holdout5.jsonl", "pairs_holdout6.jsonl",
            "pairs_holdout7.jsonl",
        ),
    ),
    HoldoutSet(
        "holdout9", "build_pairs_holdout9", ("rust-book", "covidqa", "clapnq"), 120,
        every_corruption=True, both_modes=True, faithful_claims=True,
        earlier_optional=(
            "pairs.jsonl", "pairs_holdout.jsonl", "pairs_holdout2.jsonl", "pairs_holdout3.jsonl",
            "pairs_holdout4.jsonl", "pairs_holdout5.jsonl", "pairs_holdout6.jsonl",
            "pairs_holdout7.jsonl", "pairs_holdout8.jsonl",
        ),
    ),
    HoldoutSet(
        "holdout10", "build_pairs_holdout10", ("rust-book", "covidqa", "clapnq"), 130,
        every_corruption=True, both_modes=True, faithful_claims=True,
        earlier_optional=(
            "pairs.jsonl", "pairs_holdout.jsonl", "pairs_holdout2.jsonl", "pairs_holdout3.jsonl",
            "pairs_holdout4.jsonl", "pairs_holdout5.jsonl", "pairs_holdout6.jsonl",
            "pairs_holdout7.jsonl", "pairs_holdout8.jsonl", "pairs_holdout9.jsonl",
        ),
    ),
)  # fmt: skip


@cache
def builder(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, DATA_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows_of(s: HoldoutSet) -> list[dict[str, Any]]:
    return [row for _, row in pairs.read_records(s.path, pairs.FIELDS)]


def need(corpus: str) -> None:
    """Skip unless ``corpus`` can be read as the set's excerpts were."""
    if corpus in _DATA_FILES:
        path, what = _DATA_FILES[corpus]
        if not path.exists():
            pytest.skip(f"{what} is not at {path} (shared data absent)")
    elif sys.version_info[:2] != holdout_build.BUILT_WITH:
        pytest.skip(
            f"the Python reference excerpts are from Python {holdout_build.BUILT_WITH}'s "
            f"pydoc_data; this is {sys.version_info[:2]}, whose topics may be worded differently"
        )


def check_row(s: HoldoutSet, r: dict[str, Any]) -> None:
    corruptions = builder(s.builder).SET.corruptions
    assert re.fullmatch(r"[a-z0-9-]+-[fc]", r["id"]), r["id"]
    faithful = r["id"].endswith("-f")
    assert r["kind"] == ("faithful" if faithful else "corrupted"), r["id"]
    if faithful:
        assert r["corruption"] is None, r["id"]
    else:
        assert r["corruption"] in corruptions, r["id"]
    assert r["mode"] in ("quote", "claim-lattice"), r["id"]
    assert r["source"].partition(":")[0] in s.corpora, r["id"]
    assert r["question"].strip() and r["answer"].strip(), r["id"]
    ev = r["evidence"]
    assert ev and [e["pointer_id"] for e in ev] == [f"E{n}" for n in range(1, len(ev) + 1)]
    assert all(e["title"].strip() and e["text"].strip() for e in ev), r["id"]
    if r["mode"] == "claim-lattice":
        assert all(re.search(r"\[E\d+\]", line) for line in r["answer"].splitlines()), r["id"]


def check_pairs(s: HoldoutSet, rows: list[dict[str, Any]]) -> None:
    """Unique ids, well-formed rows, one faithful and one corrupted row per pair sharing
    question, evidence, mode and source, and the set's own demands."""
    ids = Counter(r["id"] for r in rows)
    assert [i for i, n in ids.items() if n > 1] == []
    by_pair: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        check_row(s, r)
        by_pair.setdefault(r["id"][:-2], {})[r["id"][-1]] = r
    for pid, sides in by_pair.items():
        assert set(sides) == {"f", "c"}, pid
        f, c = sides["f"], sides["c"]
        assert all(f[k] == c[k] for k in ("question", "evidence", "mode", "source")), pid
        assert pairs.normalize(f["answer"]) != pairs.normalize(c["answer"]), pid
    assert len(by_pair) >= s.min_pairs
    if s.every_corruption:
        corruptions = builder(s.builder).SET.corruptions
        assert {r["corruption"] for r in rows} - {None} == set(corruptions)
    if s.both_modes:
        assert {r["mode"] for r in rows} == {"quote", "claim-lattice"}


def check_faithful_claims(rows: list[dict[str, Any]]) -> None:
    lattice = [r for r in rows if r["kind"] == "faithful" and r["mode"] == "claim-lattice"]
    assert lattice
    for r in lattice:
        for line in r["answer"].splitlines():
            cited = [int(n) for n in re.findall(r"\[E(\d+)\]", line)]
            claim = pairs.normalize(re.sub(r"\s*\[E\d+\]", "", line)).rstrip(".")
            texts = [pairs.normalize(r["evidence"][n - 1]["text"]) for n in cited]
            assert any(claim in t for t in texts), f"{r['id']}: {line}"


def check_no_earlier_source(s: HoldoutSet, rows: list[dict[str, Any]]) -> None:
    earlier: set[str] = set()
    for name in s.earlier_required:
        earlier |= {r["source"] for r in pairs.load_pairs(DATA_DIR / name)}
    for name in s.earlier_optional:
        if (DATA_DIR / name).is_file():
            earlier |= {r["source"] for r in pairs.load_pairs(DATA_DIR / name)}
    assert earlier, "no earlier set is present to compare with"
    assert sorted({r["source"] for r in rows} & earlier) == []


def _source_texts(corpus: str) -> dict[str, list[str]]:
    """Each source of ``corpus`` by name: the texts an excerpt of it must lie within."""
    if corpus == "python-reference":
        from pydoc_data.topics import topics

        return {name: [" ".join(body.split())] for name, body in topics.items()}
    path = _DATA_FILES[corpus][0]
    if corpus == "rust-book":
        return {p.name: [pairs.clean_md(p.read_text(encoding="utf-8"))] for p in path.glob("*.md")}
    if corpus == "covidqa":
        papers = json.loads(path.read_text(encoding="utf-8"))["data"]
        return {str(p["document_id"]): [p["context"]] for a in papers for p in a["paragraphs"]}
    records = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return {str(r["id"]): [p["text"] for p in r["passages"]] for r in records}


def check_verbatim(rows: list[dict[str, Any]], corpus: str) -> None:
    """Every excerpt of the rows of ``corpus`` lies within its source; there is one."""
    need(corpus)
    found = [
        (r["id"], name, e["text"])
        for r in rows
        for kind, _, name in [r["source"].partition(":")]
        if kind == corpus
        for e in r["evidence"]
    ]
    assert found
    sources = _source_texts(corpus)
    for rid, name, text in found:
        assert any(text in t for t in sources[name]), f"{rid}: evidence not verbatim in {name}"


def check_rebuilt(s: HoldoutSet, rows: list[dict[str, Any]]) -> None:
    for corpus in _NEED_ORDER:
        if corpus in s.corpora:
            need(corpus)
    assert holdout_build.build(builder(s.builder).SET, SHARED) == rows
