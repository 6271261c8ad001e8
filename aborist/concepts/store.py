"""Per-shard concept storage: the ``concepts`` table inside each shard file.

One row per distinct relation (kind, a, b) with the first chunk that taught it, so an
auditor can see where a synonym or rivalry used at retrieval came from.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from aborist.concepts.extract import Relation
from aborist.concepts.table import ConceptTable

__all__ = ["CONCEPTS_DDL", "load_concepts", "write_concepts"]

CONCEPTS_DDL = """
CREATE TABLE concepts (
    kind TEXT NOT NULL CHECK (kind IN ('synonym', 'rivalry')),
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    chunk_hash TEXT NOT NULL,
    evidence TEXT NOT NULL,
    PRIMARY KEY (kind, a, b)
) WITHOUT ROWID
"""


def write_concepts(conn: sqlite3.Connection, found: Iterable[tuple[str, Relation]]) -> int:
    """Insert (chunk_hash, relation) pairs, keeping the first source of each relation;
    returns the number of distinct relations stored."""
    rows: dict[tuple[str, str, str], tuple[str, str]] = {}
    for chunk_hash, rel in found:
        a, b = (rel.a, rel.b) if rel.kind == "synonym" or rel.a <= rel.b else (rel.b, rel.a)
        rows.setdefault((rel.kind, a, b), (chunk_hash, rel.evidence))
    conn.executemany(
        "INSERT INTO concepts (kind, a, b, chunk_hash, evidence) VALUES (?, ?, ?, ?, ?)",
        [(k, a, b, h, e) for (k, a, b), (h, e) in rows.items()],
    )
    return len(rows)


def load_concepts(conn: sqlite3.Connection, table: ConceptTable | None = None) -> ConceptTable:
    """Add one shard's relations to ``table`` (a new table when None) and return it."""
    table = table if table is not None else ConceptTable()
    rows = conn.execute("SELECT kind, a, b FROM concepts ORDER BY kind, a, b").fetchall()
    table.add(
        synonyms=[(a, b) for kind, a, b in rows if kind == "synonym"],
        rivalries=[(a, b) for kind, a, b in rows if kind == "rivalry"],
    )
    return table
