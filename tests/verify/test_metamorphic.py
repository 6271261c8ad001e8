"""Metamorphic tests of the verifier (docs/verifier.md §1, "Invariance").

Answer, question and evidence go through one canonicalization, so a verdict's label, rung
and audit mode must not change when any of them is rewritten into a canonically equivalent
form (tests/verify/test_metamorphic_rewrites.py: dashes, quotes, spaces, soft line breaks
inside a paragraph, CR LF, NFD, zero-width characters, ellipsis, padding). Checked on every
row of the bench pair sets (bench/data/pairs*.jsonl), on the first 200 HaluEval QA rows and
on Markdown chunks of the Rust book when the shared data dir is there (skipped, with the
reason, when not), and on small generated texts with several rewrites in a row.

``PYTHONPATH=. python tests/verify/test_metamorphic.py`` runs the whole grid (every rewrite
on every part of every row) and prints how many rows each rewrite changes; the fixes of
this class were counted with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.text.sentences import split_sentences
from aborist.verify.text.textcanon import canonicalize
from aborist.verify.verify import verify_answer
from tests.verify.test_metamorphic_rewrites import LINE_SAFE, REWRITES, Rewrite

REPO = Path(__file__).resolve().parents[2]
HALUEVAL = REPO.parent / "shared" / "data" / "halueval" / "qa_one-turn_data.json"
RUST_BOOK = REPO.parent / "shared" / "data" / "rust-book" / "src"
TARGETS = ("text", "title", "answer", "question", "all")


@dataclass(frozen=True)
class Row:
    rid: str
    question: str | None
    answer: str
    mode: str
    evidence: tuple[Any, ...]


def pair_rows() -> list[Row]:
    rows = []
    for path in sorted((REPO / "bench" / "data").glob("pairs*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                rid = f"{path.stem}:{r['id']}"
                ev = tuple(r["evidence"])
                rows.append(Row(rid, r.get("question"), r["answer"], r.get("mode", "quote"), ev))
    return rows


def halueval_rows(limit: int = 200) -> list[Row]:
    rows = []
    for i, line in enumerate(HALUEVAL.read_text(encoding="utf-8").splitlines()[:limit]):
        r = json.loads(line)
        for key in ("right_answer", "hallucinated_answer"):
            rows.append(
                Row(f"halueval:{i}:{key}", r["question"], r[key], "quote", (r["knowledge"],))
            )
    return rows


def markdown_rows() -> list[Row]:
    """Rows on Markdown evidence (headings, lists, blank lines, which the pair sets hardly
    have): chunks of six paragraphs of every third chapter of the Rust book, each asked
    for one of its sentences, a quotation of that sentence's first words, the same
    sentence as a claim, and a quotation of its first heading without the last word."""
    rows = []
    for path in sorted(RUST_BOOK.glob("*.md"))[::3]:
        paras = path.read_text(encoding="utf-8").split("\n\n")
        for k in range(0, min(len(paras), 30), 6):
            chunk = "\n\n".join(paras[k : k + 6])
            sents = [x for x in split_sentences(chunk) if len(x.split()) > 3]
            if "```" in chunk or len(chunk) < 200 or not sents:
                continue
            words = sents[k % len(sents)].lstrip("#- ").split()
            heads = [ln.lstrip("# ").split() for ln in chunk.splitlines() if ln.startswith("#")]
            answers = [
                (" ".join(words), "quote"),
                ('"' + " ".join(words[: 2 + k % 6]) + '"', "quote"),
                (" ".join(words) + " [E1]", "claim-lattice"),
            ] + [('"' + " ".join(h[: max(1, len(h) - 1)]) + '"', "quote") for h in heads[:1]]
            question = "What is " + words[-1].strip(".,:") + "?" if k % 12 else None
            ev = ({"text": chunk, "title": path.name},)
            rows += [
                Row(f"{path.name}:{k}:{n}", question, a, m, ev) for n, (a, m) in enumerate(answers)
            ]
    return rows


def _item(item: Any, text: Rewrite, title: Rewrite) -> Any:
    if isinstance(item, str):
        return text(item)
    out: dict[str, Any] = {k: v for k, v in item.items() if k != "pointer_id"}
    out["text"] = text(item["text"])
    if out.get("title"):
        out["title"] = title(out["title"])
    return out


def _same(text: str) -> str:
    return text


def rewritten(row: Row, name: str, target: str) -> Row:
    """The row with rewrite ``name`` applied to ``target`` (``text``, ``title``, ``answer``,
    ``question`` or ``all``). Line breaks are never added to an answer (a line of it is a
    unit, §4, §9): under ``all`` the answer then stays as it is."""
    f = REWRITES[name]

    def on(*targets: str) -> Rewrite:
        return f if target in targets else _same

    answer = on("answer", "all") if name in LINE_SAFE else _same
    items = tuple(_item(x, on("text", "all"), on("title", "all")) for x in row.evidence)
    q = row.question and on("question", "all")(row.question)
    return Row(row.rid, q, answer(row.answer), row.mode, items)


def signature(row: Row, name: str = "", target: str = "") -> tuple[Any, ...]:
    """(label, rung, audit_mode) of the row, with rewrite ``name`` applied to ``target``."""
    if name:
        row = rewritten(row, name, target)
    evidence = build_evidence([_item(x, _same, _same) for x in row.evidence])
    v = verify_answer(row.answer, evidence, question=row.question, mode=row.mode)
    return v.label, v.rung, v.audit_mode


def jobs() -> list[tuple[str, str]]:
    """Every (rewrite, target) pair that rewrites something."""
    return [(n, t) for n in REWRITES for t in TARGETS if t != "answer" or n in LINE_SAFE]


_BEFORE: dict[str, tuple[Any, ...]] = {}


def _before(row: Row) -> tuple[Any, ...]:
    """The row's own signature, computed once per row id."""
    if row.rid not in _BEFORE:
        _BEFORE[row.rid] = signature(row)
    return _BEFORE[row.rid]


def changes(rows: list[Row], name: str, targets: tuple[str, ...] = TARGETS) -> dict[str, list[Any]]:
    """Per target, the rows whose verdict the rewrite changes: (row id, before, after). A
    rewrite that leaves the row as it is (no hyphen to rewrite, no title) is not run."""
    out: dict[str, list[Any]] = {}
    for row in rows:
        for target in targets:
            if (name, target) not in JOBS:
                continue
            changed = rewritten(row, name, target)
            if changed == row:
                continue
            before = _before(row)
            after = signature(changed)
            if after != before:
                out.setdefault(target, []).append((row.rid, before, after))
    return out


JOBS = frozenset(jobs())


@pytest.fixture(scope="module")
def pairs() -> list[Row]:
    return pair_rows()


@pytest.fixture(scope="module")
def halueval() -> list[Row]:
    if not HALUEVAL.is_file():
        pytest.skip(f"HaluEval data not found at {HALUEVAL} (the shared data dir is absent)")
    return halueval_rows()


def test_every_rewrite_is_a_canonical_equivalence(pairs: list[Row]) -> None:
    texts = [t for r in pairs[::7] for t in (r.answer, r.question or "", *map(_text, r.evidence))]
    for name, f in REWRITES.items():
        for t in texts:
            assert canonicalize(f(t)) == canonicalize(t), (name, t[:80])
    sample = 'A “well‐known” café – naïve, isn’t it... "Yes," it\'s\nNext line - here'

    assert all(f(sample) != sample for f in REWRITES.values())  # each rewrite rewrites


def _text(item: Any) -> str:
    return item if isinstance(item, str) else str(item["text"])


#: Each rewrite runs on every part at once on every row, and on each part alone on every
#: fourth row (a different quarter for each rewrite): the whole grid is what
#: ``main`` counts, a quarter of it keeps the test near 25 s.
STRIDE = 4


def _sampled(rows: list[Row], name: str) -> dict[str, list[Any]]:
    found = changes(rows, name, ("all",))
    offset = sorted(REWRITES).index(name) % STRIDE
    for target, rows_changed in changes(rows[offset::STRIDE], name, TARGETS[:-1]).items():
        found.setdefault(target, []).extend(rows_changed)
    return found


@pytest.mark.parametrize("name", sorted(REWRITES))
def test_pair_set_verdicts_are_invariant(pairs: list[Row], name: str) -> None:
    found = _sampled(pairs, name)
    assert not found, {t: c[:3] for t, c in found.items()}


@pytest.fixture(scope="module")
def markdown() -> list[Row]:
    if not RUST_BOOK.is_dir():
        pytest.skip(f"the Rust book's Markdown not found at {RUST_BOOK} (no shared data dir)")
    return markdown_rows()


@pytest.mark.parametrize("name", sorted(REWRITES))
def test_markdown_verdicts_are_invariant(markdown: list[Row], name: str) -> None:
    found = changes(markdown, name, ("text", "all"))
    assert not found, {t: c[:3] for t, c in found.items()}


@pytest.mark.parametrize("name", sorted(REWRITES))
def test_halueval_verdicts_are_invariant(halueval: list[Row], name: str) -> None:
    found = _sampled(halueval, name)
    assert not found, {t: c[:3] for t, c in found.items()}


WORDS = [
    "the", "of", "and", "in", "was", "is", "not", "never", "no", "by", "river", "museum",
    "opened", "founded", "Bergen", "Zürich", "café", "naïve", "Émile", "Anna", "Holm",
    "well-known", "self\u2010hosted", "1902", "1844\u20131846", "3.5", "1,200", "it's",
    "don\u2019t", "O'Neil", "“Rug Swept”", '"the lock"', "wait...", "approved", "budget",
]  # fmt: skip
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=9).map(
    lambda ws: " ".join(ws)[:1].upper() + " ".join(ws)[1:] + "."
)
#: Evidence lines: a sentence, several, a heading, a list item, a flattened list, a blank.
line = st.one_of(
    sentence,
    st.lists(sentence, min_size=2, max_size=3).map(" ".join),
    sentence.map(lambda s: "# " + s.rstrip(".")),
    sentence.map(lambda s: "- " + s),
    st.lists(sentence, min_size=2, max_size=3).map(lambda ss: "- " + " - ".join(ss)),
    st.just(""),
)
QUESTIONS = [
    None, "Who founded the museum?", "When was the museum opened?",
    "Which opened first, the museum or the café?", "What is the lock?",
    "Was the budget approved?", "What does the museum in Zürich hold?",
]  # fmt: skip


@st.composite
def generated_rows(draw: st.DrawFn) -> Row:
    texts = [
        "\n".join(draw(st.lists(line, min_size=1, max_size=5)))
        for _ in range(draw(st.integers(1, 2)))
    ]
    mode = draw(st.sampled_from(["quote", "claim-lattice"]))
    source = draw(st.sampled_from(texts)).replace("# ", "").replace("- ", "").split(". ")
    words = draw(st.sampled_from(source)).split()
    a = draw(st.integers(0, max(0, len(words) - 1)))
    b = draw(st.integers(a + 1, max(a + 1, len(words))))
    answer = " ".join(words[a:b]) or "the museum"
    answer = draw(st.sampled_from([answer, f'"{answer}"', "- " + answer, answer + "."]))
    if mode == "claim-lattice":
        answer += " [E1]"
    titled = draw(st.booleans())
    evidence = tuple(
        {"text": t, "title": "Émile\u2019s well-known café \u2013 Zürich"} if titled else t
        for t in texts
    )
    return Row("generated", draw(st.sampled_from(QUESTIONS)), answer, mode, evidence)


@settings(max_examples=300, deadline=None)
@given(
    generated_rows(),
    st.lists(st.sampled_from(sorted(REWRITES)), min_size=1, max_size=3),
    st.sampled_from(TARGETS),
)
def test_generated_verdicts_are_invariant(row: Row, names: list[str], target: str) -> None:
    """Several rewrites in a row, on one part or on all of them (a line break is never
    added to an answer)."""
    expected = signature(row)
    for name in names:
        row = rewritten(row, name, target)
    assert signature(row) == expected


def main() -> None:
    """Print how many rows each rewrite changes, per target and in all (rows counted once)."""
    rows = pair_rows() + (halueval_rows() if HALUEVAL.is_file() else [])
    rows += markdown_rows() if RUST_BOOK.is_dir() else []
    total: set[str] = set()
    for name in REWRITES:
        found = changes(rows, name)
        ids = {rid for c in found.values() for rid, _b, _a in c}
        total |= ids
        per = ", ".join(f"{t} {len(c)}" for t, c in sorted(found.items()))
        print(f"{name:22} rows changed {len(ids):3}  {per}")
    print(f"rows: {len(rows)}; changed by some rewrite: {len(total)}")


if __name__ == "__main__":
    main()
