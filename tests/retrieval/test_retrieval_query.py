"""Query rules of retrieval (docs/retrieval.md, "Query" and "Repair"): possessives,
keyword-like stopwords kept as the subject, proximity pairs (NEAR and phrase boosts), and
the rewrites of units no chunk holds (split, relax, spelling, unmatched)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aborist.corpus.ingest import ingest
from aborist.corpus.shard import open_shard, shard_path
from aborist.retrieval.fts import (
    MAX_PAIRS,
    ProximityPair,
    fts_and,
    fts_near,
    fts_or,
    proximity_pairs,
    query_terms,
    query_units,
)
from aborist.retrieval.records import QueryRewrite, RetrievalResult
from aborist.retrieval.retriever import Retriever

# A small language reference: "with", "else", "for" are ordinary words in most chunks
# and the subject of a few.
DOCS = {
    "with.md": "# The with statement\n\nThe with statement wraps the execution of a block "
    "with methods defined by a context manager, so cleanup runs on exit.\n",
    "if.md": "# The if statement\n\nThe if statement is used for conditional execution; "
    "each statement in the suite runs when the condition holds.\n",
    "try.md": "# The try statement\n\nThe try statement specifies exception handlers and "
    "cleanup code for a group of statements. It works with any exception.\n",
    "loops.md": "# Loops\n\nA for loop can have an else clause: the else clause runs when "
    "the loop ends without break. While loops work the same way.\n",
    "style.md": "# Style\n\nWork with the team on every statement of intent; else nothing "
    "ships. A statement for every release, with notes for everyone else.\n",
    "epidemic.md": "# Seasonal influenza\n\nInfluenza epidemics peak in winter. The "
    "COVID-19 pandemic changed the season; carrageenan nasal sprays were tested.\n",
    "owner.md": "# Ownership\n\nRust's ownership rules decide when memory is freed. The "
    "main cause of leaks is a reference cycle.\n",
    "causes.md": "# Causes\n\nThe cause of the outage was a full disk. The main problem "
    "was a missing alert.\n",
}


@pytest.fixture(scope="module")
def shards_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ref")
    for name, text in DOCS.items():
        (root / name).write_text(text, encoding="utf-8")
    out = root / "shards"
    ingest([root], "ref", shards_dir=out)
    return out


@pytest.fixture(scope="module")
def retriever(shards_dir: Path) -> Iterator[Retriever]:
    with Retriever(["ref"], shards_dir=shards_dir) as r:
        yield r


def _top_file(result: RetrievalResult) -> str:
    return result.chunks[0].source_uri.rsplit("/", 1)[-1]


# --- units ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "units", "kept"),
    [
        ("What does the with statement do?", ["with statement"], ["with statement"]),
        (
            "How does the else clause of a for loop work?",
            ["else clause", "for loop", "work"],
            ["else clause", "for loop"],
        ),
        ("What is an if let expression?", ["if let expression"], ["if let expression"]),
        ("What does `with` do?", ["with"], ["with"]),
        ('When does "else" run?', ["else", "run"], ["else"]),
        ("How do I work with files?", ["work", "files"], []),  # an ordinary "with"
        ("What is in this clause?", ["clause"], []),  # "this" is not a keyword here
        ("Is that as provided in clause 5?", ["provided", "clause", "5"], []),  # no article
        ("For loop or a while loop?", ["for loop", "while loop"], ["for loop", "while loop"]),
        ("What is Rust's ownership?", ["rust", "ownership"], []),  # possessive dropped
        ("Who wrote Shakespeare’s plays?", ["wrote", "shakespeare", "plays"], []),
        ("What is it?", ["what", "is", "it"], []),  # stopwords only: all kept
    ],
)
def test_query_units(question: str, units: list[str], kept: list[str]) -> None:
    terms = query_terms(question)
    assert list(terms.units) == units == query_units(question)
    assert list(terms.kept) == kept


def test_keys_keep_the_stopwords_of_kept_units_only() -> None:
    assert query_terms("How does the else clause work with loops?").keys == {
        "else",
        "claus",
        "work",
        "loop",
    }
    assert query_terms("What is it?").keys == {"what", "is", "it"}


# --- proximity pairs ----------------------------------------------------------------------


def test_proximity_pairs_follow_the_question() -> None:
    terms = query_terms("What is the main cause of HIV-1 infection in children?")
    pairs = proximity_pairs(terms.units, terms.positions, terms.words)
    assert [(p.a, p.b, p.span) for p in pairs] == [
        ("main", "cause", "main cause"),
        ("cause", "hiv 1", "cause of hiv 1"),
        ("hiv 1", "infection", "hiv 1 infection"),
        ("infection", "children", "infection in children"),
    ]
    # adjacent in the question: exact phrase and NEAR; further apart: NEAR only
    assert pairs[0].boost() == ['"main cause"', 'NEAR("main" "cause", 6)']
    assert pairs[1].boost() == ['NEAR("cause" "hiv 1", 6)']


def test_words_far_apart_make_no_pair_and_pairs_are_capped() -> None:
    terms = query_terms("backups of all of the logs")
    assert proximity_pairs(terms.units, terms.positions, terms.words) == []
    many = query_terms(" ".join(f"w{i}" for i in range(40)))
    assert len(proximity_pairs(many.units, many.positions, many.words)) == MAX_PAIRS


def test_rewritten_units_have_no_span() -> None:
    pair = proximity_pairs(["covid 19", "symptoms"], [0, 1], [("covid19",), ("symptoms",)])
    assert pair == [ProximityPair("covid 19", "symptoms", "")]
    assert pair[0].boost() == ['NEAR("covid 19" "symptoms", 6)']


def test_boost_groups_are_escaped_strings() -> None:
    assert fts_near('a"b', "c") == 'NEAR("a""b" "c", 6)'
    assert fts_or(["a"], ['NEAR("a" "b", 6)']) == '"a" OR NEAR("a" "b", 6)'
    assert fts_and(["a", "b"]) == '"a" AND "b"'
    assert fts_and(["a", "b"], ['"a b"'], "b") == '"a" AND "b" AND ("a b" OR "b")'
    assert fts_and(["a"], ['"a b"'], "zzz") == '"a"'  # an anchor that is no unit: no boost


_word = st.sampled_from(
    ["with", "statement", "else", "clause", "loop", "for", "the", "cleanup", "block",
     "runs", "team", "NEAR", '"', "(", "*"]
)  # fmt: skip


@given(st.lists(_word, min_size=1, max_size=8))
def test_the_boost_never_changes_which_chunks_match(words: list[str]) -> None:
    """``AND (boost… OR anchor)`` and ``OR boost…`` match exactly the plain rows."""
    terms = query_terms(" ".join(words))
    if not terms.units:
        return
    units = list(terms.units)
    boost = [g for p in proximity_pairs(units, terms.positions, terms.words) for g in p.boost()]
    with sqlite3.connect(":memory:") as conn:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
        conn.executemany("INSERT INTO t (body) VALUES (?)", [(d,) for d in DOCS.values()])

        def rows(expr: str) -> set[int]:
            return {r[0] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,))}

        assert rows(fts_and(units, boost, units[-1])) == rows(fts_and(units))
        assert rows(fts_or(units, boost)) == rows(fts_or(units))


# --- keyword-like stopwords as the subject ------------------------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What does the with statement do?", "with.md"),
        ("When does the else clause of a for loop run?", "loops.md"),
        ("What does the if statement do?", "if.md"),
    ],
)
def test_keyword_subjects_find_their_construct(
    retriever: Retriever, question: str, expected: str
) -> None:
    result = retriever.retrieve(question)
    assert _top_file(result) == expected
    assert result.kept_keywords


def test_the_phrase_is_what_is_searched(retriever: Retriever) -> None:
    result = retriever.retrieve("What does the with statement do?")
    assert result.units == ["with statement"]
    assert result.query == '"with statement"'


# --- rewrites of units no chunk holds -----------------------------------------------------


def test_letters_and_digits_written_together_are_split(retriever: Retriever) -> None:
    result = retriever.retrieve("How did covid19 change influenza seasons?")
    assert result.rewrites == [QueryRewrite("covid19", "split", ("covid 19",))]
    assert "covid 19" in result.units
    assert _top_file(result) == "epidemic.md"


def test_long_misspelled_words_are_corrected(retriever: Retriever) -> None:
    result = retriever.retrieve("Were carageenan sprays tested?")
    assert result.rewrites == [QueryRewrite("carageenan", "spelling", ("carrageenan",))]
    assert _top_file(result) == "epidemic.md"


def test_short_unknown_words_are_not_corrected(retriever: Retriever) -> None:
    # "clauze" is one edit from "clause", but words under 8 letters are not corrected
    result = retriever.retrieve("Which loop clauze?")
    assert result.rewrites == [QueryRewrite("clauze", "unmatched", ())]
    assert result.units == ["loop"]


def test_phrases_that_never_occur_are_relaxed(retriever: Retriever) -> None:
    result = retriever.retrieve("What is ownership-cycle cleanup?")
    assert result.rewrites == [QueryRewrite("ownership cycle", "relax", ("ownership", "cycle"))]
    assert result.units == ["ownership", "cycle", "cleanup"]


def test_nothing_matching_keeps_the_question_and_finds_nothing(retriever: Retriever) -> None:
    result = retriever.retrieve("zzyzx qqqq")
    assert result.units == ["zzyzx", "qqqq"]
    assert [r.rule for r in result.rewrites] == ["unmatched", "unmatched"]
    assert result.chunks == []


def test_rewrites_and_pairs_are_in_the_record(retriever: Retriever) -> None:
    data = retriever.retrieve("Were carageenan nasal sprays tested?").to_dict()
    json.dumps(data)
    assert data["rewrites"] == [{"unit": "carageenan", "rule": "spelling", "to": ["carrageenan"]}]
    assert {"a": "nasal", "b": "sprays", "span": "nasal sprays"} in data["proximity"]
    assert data["constants"]["near_distance"] == 6
    assert data["constants"]["spelling_min_letters"] == 8
    assert data["constants"]["max_pairs"] == MAX_PAIRS


def test_near_keys_of_a_shard(shards_dir: Path) -> None:
    from aborist.corpus.shard_reader import ShardReader

    reader = ShardReader(shard_path(shards_dir, "ref"))
    try:
        near = reader.near_keys("carageenan", 1)
        assert [(k, d) for k, d, _ in near] == [("carrageenan", 1)]
        assert reader.near_keys("xyz", 1) == []
    finally:
        reader.close()
    open_shard(shard_path(shards_dir, "ref")).close()
