"""Corpus-derived concepts: extraction, the merged table, synonym expansion, rivalry."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aborist.concepts import ConceptTable, extract_relations, has_compare_phrasing

_EMPTY = ConceptTable()


def synonym_expand(term: str, table: ConceptTable | None = None) -> tuple[str, ...]:
    return (table or _EMPTY).expand(term)


def rivalry_excluded(
    question: str, title: str, text: str, table: ConceptTable | None = None
) -> bool:
    return (table or _EMPTY).rivalry_hit(question, title, text) is not None


def _pairs(text: str, kind: str) -> set[tuple[str, str]]:
    return {(r.a, r.b) for r in extract_relations(text) if r.kind == kind}


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("CPython has a Global Interpreter Lock (GIL) that serializes bytecode.",
         ("global interpreter lock", "gil")),
        ("Mother-to-child transmission (MTCT) is the main cause.",
         ("mother-to-child transmission", "mtct")),
        ("The GIL (Global Interpreter Lock) is simple.", ("gil", "global interpreter lock")),
        ("Store it in a vector, also known as a growable array.", ("vector", "growable array")),
        ("The Rc type, also called the reference counter, is useful.",
         ("rc type", "reference counter")),
        ("Use recv, short for receive, to block.", ("recv", "receive")),
    ],
)  # fmt: skip
def test_synonym_patterns(text: str, pair: tuple[str, str]) -> None:
    assert pair in _pairs(text, "synonym")


def test_acronym_must_match_its_long_form() -> None:
    assert _pairs("We measured the weather today (GIL) again.", "synonym") == set()


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("Performance in loops vs. iterators matters.", ("loops", "iterators")),
        ("We chose PostgreSQL versus MySQL last year.", ("postgresql", "mysql")),
        ("Unlike MySQL, PostgreSQL supports transactional DDL.", ("mysql", "postgresql")),
        ("Compared to threads, async tasks are cheap.", ("threads", "async tasks")),
    ],
)
def test_rivalry_patterns(text: str, pair: tuple[str, str]) -> None:
    assert pair in _pairs(text, "rivalry")


@given(st.text(max_size=300))
def test_extraction_never_raises(text: str) -> None:
    for rel in extract_relations(text):
        assert rel.kind in {"synonym", "rivalry"} and rel.a != rel.b


def _table() -> ConceptTable:
    return ConceptTable.from_pairs(
        synonyms=[("global interpreter lock", "GIL"), ("GIL", "interpreter lock")],
        rivalries=[("mysql", "postgresql")],
    )


def test_synonym_pools_are_connected_components() -> None:
    table = _table()
    assert synonym_expand("GIL", table) == ("gil", "global interpreter lock", "interpreter lock")
    assert synonym_expand("unknown term", table) == ("unknown term",)
    assert synonym_expand("GIL") == ("gil",)
    (inj,) = table.synonym_injections("How does the GIL affect threads?")
    assert inj.matched == "gil"
    assert inj.added == ("global interpreter lock", "interpreter lock")


def test_longest_phrase_wins_and_named_members_are_not_added() -> None:
    (inj,) = _table().synonym_injections("Why have a global interpreter lock at all?")
    assert inj.matched == "global interpreter lock"
    assert inj.added == ("gil",)  # "interpreter lock" is already in the question


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("MySQL vs PostgreSQL?", True),
        ("How does PostgreSQL compare with MySQL?", True),
        ("What is the difference between them?", True),
        ("Which is faster, MySQL or PostgreSQL?", True),
        ("Is Rc better than Arc?", True),
        ("How does PostgreSQL replication work?", False),
        ("What is ownership?", False),
    ],
)
def test_compare_phrasing(question: str, expected: bool) -> None:
    assert has_compare_phrasing(question) is expected


def test_rivalry_exclusion_rules() -> None:
    table = _table()
    q = "How does PostgreSQL replication work?"
    assert rivalry_excluded(q, "MySQL Replication", "Binary logs ship changes.", table)
    assert rivalry_excluded(q, "Replication", "MySQL uses binlogs; MySQL replicas pull.", table)
    assert not rivalry_excluded(q, "MySQL", "Unlike PostgreSQL, it ...", table)
    assert not rivalry_excluded(q, "Replication", "MySQL uses binlogs.", table)
    assert not rivalry_excluded("PostgreSQL vs MySQL replication", "MySQL", "x", table)
    assert not rivalry_excluded(q, "MySQL Replication", "Binary logs.", None)
    hit = table.rivalry_hit(q, "MySQL", "text")
    assert hit is not None and hit.to_dict() == {
        "concept": "postgresql",
        "rival": "mysql",
        "where": "title",
    }
