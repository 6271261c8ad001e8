"""Backwards-compatible face of the concept layer (seed map 000, ``qa.concepts``).

The data used to be hand-curated frozensets in this file; it now lives per shard in the
``concepts`` table and is merged into an :class:`~aborist.concepts.ConceptTable`
(:mod:`aborist.concepts`). The legacy call sites keep their three functions; each takes
the table for the shards in play (no table means no corpus-derived relations).
"""

from __future__ import annotations

from aborist.concepts.table import ConceptTable
from aborist.concepts.table import has_compare_phrasing as _has_compare_phrasing

__all__ = ["has_compare_phrasing", "rivalry_excluded", "synonym_expand"]

_EMPTY = ConceptTable()


def synonym_expand(term: str, table: ConceptTable | None = None) -> tuple[str, ...]:
    """``term`` (normalized) followed by the other members of its synonym pool, sorted."""
    return (table or _EMPTY).expand(term)


def rivalry_excluded(
    question: str, title: str, text: str, table: ConceptTable | None = None
) -> bool:
    """True when a chunk (``title`` = document title and section heading) is about a
    rival of the question's concept and the question is not comparative."""
    return (table or _EMPTY).rivalry_hit(question, title, text) is not None


def has_compare_phrasing(question: str) -> bool:
    """True when the question asks for a comparison, so rivals must not be excluded."""
    return _has_compare_phrasing(question)
