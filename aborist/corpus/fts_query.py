"""Questions → FTS5 MATCH expressions in which every user term is an escaped string.

FTS5's query language gives meaning to ``AND``/``OR``/``NOT``/``NEAR``, quotes, ``*``,
``^``, ``:`` column filters, ``+``, ``-`` and parentheses. A question is *text*, so each
of its terms is emitted only as an FTS5 string literal (``"…"`` with ``"`` doubled,
https://sqlite.org/fts5.html §3.1); the only operators in an expression are the ``AND``
/ ``OR`` this module writes itself. A question therefore can never raise a syntax error
or select a column, whatever it contains. Rules: docs/retrieval.md, "Query".

A *unit* is one whitespace-separated word of the question reduced to its letter/digit
tokens: ``DC-SIGNR`` becomes the phrase ``"dc signr"`` (FTS5 matches the tokens
adjacent, as they were written), ``Rust's`` becomes ``"rust s"``. Units made only of
stopwords are dropped unless nothing else is left; duplicates are dropped; at most
:data:`MAX_UNITS` are kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from aborist.corpus.lexicon import STOPWORDS, tokens

__all__ = ["MAX_UNITS", "fts_and", "fts_or", "fts_string", "query_units"]

MAX_UNITS = 32


def fts_string(text: str) -> str:
    """``text`` as one FTS5 string literal (RFC-free: sqlite.org/fts5.html §3.1)."""
    return '"' + text.replace('"', '""') + '"'


def query_units(question: str) -> list[str]:
    """The question's search units (space-joined tokens), stopword-only units dropped."""
    units: list[str] = []
    fallback: list[str] = []
    for word in question.split():
        toks = tokens(word)
        if not toks:
            continue
        unit = " ".join(toks)
        if all(t in STOPWORDS for t in toks):
            if unit not in fallback:
                fallback.append(unit)
            continue
        if unit not in units:
            units.append(unit)
    return (units or fallback)[:MAX_UNITS]


def fts_and(units: Sequence[str]) -> str:
    return " AND ".join(fts_string(u) for u in units)


def fts_or(units: Sequence[str]) -> str:
    return " OR ".join(fts_string(u) for u in units)
